//! The page's state, below the resolver and the HTTP side that both work
//! on it: the options, the list of pending elicitations and what became of
//! them, and the page's secrets.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use elicit_core::elicitation::schema::FormSchema;
use elicit_core::error::ElicitError;
use elicit_core::text::url_safety::UrlAssessment;
use elicit_platform::opener::Opener;

/// Settings of the page (from the command line).
#[derive(Debug, Clone, Default)]
pub struct PageOptions {
    /// `--server NAME`: shown in each elicitation's header.
    pub server: Option<String>,
    /// `--timeout` / `--prompt-timeout`: how long the person has for each
    /// elicitation, counted from when it appears on the page.
    pub timeout: Option<Duration>,
    /// `--browser COMMAND` / `ELICIT_BROWSER`: what opens the page.
    pub browser: Option<String>,
    /// `--no-open`: print the page's address on stderr, open nothing.
    pub no_open: bool,
    /// Nobody asked for the page (`--ui auto` with no terminal): an
    /// elicitation fails at once, as with no terminal, when no browser
    /// opens the page, instead of waiting for a person who will never see
    /// it.
    pub fail_unless_opened: bool,
}

impl Page {
    /// Whether nothing more will come to this page: a one-shot run with
    /// nothing left waiting.
    pub(super) fn finished(&self, state: &State) -> bool {
        self.one_shot.load(Ordering::Relaxed) && state.pending.is_empty()
    }
}

impl PageOptions {
    /// The opener the page uses: the same chain as URL mode.
    pub(super) fn opener(&self) -> Opener {
        Opener {
            program: self.browser.clone(),
            never: self.no_open,
        }
    }
}

/// How one elicitation ended on the page.
#[derive(Debug, Clone)]
pub(super) enum Outcome {
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// What a pending elicitation asks for.
pub(super) enum Ask {
    Form {
        form: Arc<FormSchema>,
        /// Given by `--answer`: shown, not asked.
        given: Map<String, Value>,
        /// Asked, in schema order.
        missing: Vec<String>,
    },
    Url {
        assessment: UrlAssessment,
    },
}

/// One elicitation on the page.
pub(super) struct Entry {
    pub(super) id: u64,
    pub(super) server: String,
    pub(super) message: String,
    pub(super) position: Option<(usize, usize)>,
    pub(super) ask: Ask,
    pub(super) deadline: Option<Instant>,
    pub(super) warnings: Vec<String>,
}

/// A line of the page's "recently" list: what became of an elicitation.
#[derive(Clone)]
pub(super) struct Finished {
    pub(super) id: u64,
    pub(super) server: String,
    /// The question, so a list of answers says which was which.
    pub(super) message: String,
    pub(super) what: String,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) next_id: u64,
    /// Bumped on every change of the list: the page's script waits on it.
    pub(super) version: u64,
    pub(super) pending: Vec<Entry>,
    /// Answers given on the page, waiting for their resolver to take them.
    pub(super) answered: HashMap<u64, Outcome>,
    pub(super) recent: VecDeque<Finished>,
    /// The listener's port, once opened: it stays bound for the process's
    /// life, so no one else can take the port a page in the browser uses.
    pub(super) port: Option<u16>,
    /// One-time addresses handed out and not yet used (newest last).
    pub(super) one_time: VecDeque<String>,
    /// The last one-time addresses spent (newest last): one used again
    /// is said on stderr.
    pub(super) spent: VecDeque<String>,
    /// When a page last asked for news, and how many are asking now: a
    /// page that is open does not need the browser opened again.
    pub(super) last_seen: Option<Instant>,
    pub(super) watching: usize,
}

/// The server's name on the page when nothing names it (the terminal's
/// header says the same).
pub(super) const UNKNOWN_SERVER: &str = "An MCP server";

/// How many finished elicitations the page remembers.
pub(super) const RECENT: usize = 20;

/// How many one-time addresses wait to be used at most (the oldest is
/// dropped past it).
pub(super) const ONE_TIME: usize = 8;

pub(crate) struct Page {
    pub(super) options: PageOptions,
    /// The path secret: 128 random bits, hex. Never in a browser's command
    /// line: only in the redirect that answers a one-time address.
    pub(super) token: String,
    /// The session cookie's value: 128 random bits, hex. HttpOnly.
    pub(super) session: String,
    /// The CSRF token every POST must carry: 128 random bits, hex.
    pub(super) csrf: String,
    /// The key the server proves itself with to the page's script (HMAC
    /// over the script's challenge): 256 random bits, hex. Only in the
    /// page itself, never sent by the script.
    pub(super) proof_key: String,
    pub(super) state: Mutex<State>,
    pub(super) changed: Condvar,
    /// elicit ends once the elicitations it has are answered (a one-shot
    /// run, not `--lines` or a session): an empty page then says the tab
    /// can be closed, and its script asks for nothing more.
    pub(super) one_shot: AtomicBool,
}

/// 128 random bits as 32 hex digits.
pub(super) fn random_hex() -> Result<String, ElicitError> {
    random_hex_of::<16>()
}

/// `N` random bytes as hex.
pub(super) fn random_hex_of<const N: usize>() -> Result<String, ElicitError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| {
        ElicitError::io(
            "no randomness for the page's secret token",
            std::io::Error::other(e.to_string()),
        )
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Page {
    pub(super) fn new(options: PageOptions) -> Result<Self, ElicitError> {
        Ok(Page {
            options,
            token: random_hex()?,
            session: random_hex()?,
            csrf: random_hex()?,
            proof_key: random_hex_of::<32>()?,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            one_shot: AtomicBool::new(false),
        })
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A handler thread that panicked leaves the list as it was: go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new one-time address: good for one visit, which sets the page's
    /// cookie and redirects to the page. This is what a browser is given
    /// (its command line is readable by every local user) and what stderr
    /// shows.
    pub(super) fn one_time_address(
        &self,
        state: &mut State,
        port: u16,
    ) -> Result<String, ElicitError> {
        let once = random_hex()?;
        if state.one_time.len() >= ONE_TIME {
            state.one_time.pop_front();
        }
        state.one_time.push_back(once.clone());
        Ok(format!("http://127.0.0.1:{port}/open/{once}"))
    }

    /// Takes `id` off the list for the answer given on the page, if it
    /// still waits (`false` when it does not: answered already, expired,
    /// unknown; then nothing is sent). The answer itself goes to its
    /// resolver by [`Page::deliver`], once the page that confirms it has
    /// been written: elicit may exit as soon as it has the answer.
    pub(super) fn take(&self, state: &mut State, id: u64, outcome: &Outcome) -> bool {
        let Some(at) = state.pending.iter().position(|e| e.id == id) else {
            return false;
        };
        let entry = state.pending.remove(at);
        let what = match outcome {
            Outcome::Accept(_) => "answered (accept)",
            Outcome::Decline => "declined",
            Outcome::Cancel => "cancelled",
        };
        remember(state, &entry, what.to_string());
        state.version += 1;
        true
    }

    /// Hands the answer taken by [`Page::take`] to its resolver.
    pub(super) fn deliver(&self, id: u64, outcome: Outcome) {
        let mut state = self.lock();
        state.answered.insert(id, outcome);
        self.changed.notify_all();
    }
}

pub(super) fn remember(state: &mut State, entry: &Entry, what: String) {
    if state.recent.len() >= RECENT {
        state.recent.pop_back();
    }
    state.recent.push_front(Finished {
        id: entry.id,
        server: entry.server.clone(),
        message: entry.message.clone(),
        what,
    });
}
