//! The person with a browser: a page elicit serves on 127.0.0.1 while an
//! elicitation waits, for the places with no terminal to ask on (a desktop
//! client's `mcpServers`, an editor task, a terminal agent that owns the
//! screen).
//!
//! One `Page` per process lists every pending elicitation in arrival order
//! ([`BrowserResolver`] is a handle on it; clones share it, so a proxy that
//! resolves several at once shows them all). The forms come from the one
//! schema model ([`elicit_core::elicitation::schema`]): the page renders its fields
//! (`html`), and a submission is coerced and validated by it
//! (`submit`) before anything is sent. The HTTP side (`server`) is a
//! listener of our own (`http`) opened at the first elicitation and kept
//! for the process's life (so no other user can take its port over), which
//! refuses whatever does not carry the page's session cookie (given in
//! exchange for a one-time address), host, origin and CSRF token, and
//! proves itself to the page's script on every response.

mod html;
mod posted;
mod server;
mod state;
mod submit;

pub use posted::{cookie_pairs, read_posted_form, PostedForm};
pub use state::PageOptions;
use state::{remember, Ask, Entry, Outcome, Page, State, UNKNOWN_SERVER};

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use elicit_core::elicitation::contract::{
    Answer, REASON_CANCELLED, REASON_DECLINED, REASON_EXPIRED,
};
use elicit_core::elicitation::protocol::Mode;
use elicit_core::elicitation::resolve::{Elicitation, Pending, Resolver};
use elicit_core::error::ElicitError;

/// Resolves elicitations on the local page. Cheap to clone: clones share
/// one page, one listener and one list.
#[derive(Clone)]
pub struct BrowserResolver {
    page: Arc<Page>,
    /// When what this handle asks stops waiting, whatever the page's
    /// timeout says (a parked call's expiry): it leaves the page, and the
    /// answer is a cancel the caller can tell by the time.
    until: Option<Instant>,
}

/// The process's page, made on first use.
static PAGE: std::sync::OnceLock<Arc<Page>> = std::sync::OnceLock::new();

impl BrowserResolver {
    /// A handle on the process's one page (made now with `options` if
    /// there is none yet: the sign-in consent and a proxy's elicitations
    /// share it).
    pub fn new(options: PageOptions) -> Result<Self, ElicitError> {
        if let Some(page) = PAGE.get() {
            return Ok(BrowserResolver {
                page: page.clone(),
                until: None,
            });
        }
        let page = Arc::new(Page::new(options)?);
        Ok(BrowserResolver {
            page: PAGE.get_or_init(|| page).clone(),
            until: None,
        })
    }

    /// This handle, whose elicitations stop waiting at `deadline` (or at
    /// the page's timeout, if sooner).
    pub fn until(self, deadline: Instant) -> Self {
        BrowserResolver {
            until: Some(deadline),
            ..self
        }
    }

    /// A fresh one-time address of the page once it is served (tests and
    /// the bench read it from stderr; this is for callers in the same
    /// process). It is good for one visit, which sets the page's cookie.
    pub fn address(&self) -> Option<String> {
        let mut state = self.page.lock();
        let port = state.port?;
        self.page.one_time_address(&mut state, port).ok()
    }

    /// Says that this process ends once the elicitations it was given are
    /// answered (one document, not `--lines`): the page then tells the
    /// person the answer was sent and the tab can be closed, instead of
    /// promising a next request that will never come.
    pub fn ends_after_answers(&self) {
        self.page.one_shot.store(true, Ordering::Relaxed);
    }
}

/// How often a waiting resolver wakes without news (nothing depends on
/// it: the deadline and answers wake it; this only bounds a lost wake-up).
const WAKE: Duration = Duration::from_millis(500);

impl Resolver for BrowserResolver {
    fn warn_early(&mut self, warnings: &[String]) -> bool {
        elicit_core::elicitation::resolve::print_warnings(warnings);
        true
    }

    fn alongside(&self) -> Option<Box<dyn Resolver + Send>> {
        Some(Box::new(self.clone()))
    }

    fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        let page = &self.page;
        let request_id = e.request.id.clone();
        let (id, opened) = self.list(self.entry(e, pending))?;
        if let Some(opened) = opened {
            if let Err(why) = server::announce(page, opened) {
                if page.options.fail_unless_opened {
                    return Err(self.unlist_unopened(id, &why));
                }
            }
        }
        Ok(match self.wait_for_answer(id) {
            Some(Outcome::Accept(data)) => Answer::accepted(&request_id, data),
            Some(Outcome::Decline) => Answer::refused(&request_id, REASON_DECLINED),
            Some(Outcome::Cancel) => Answer::refused(&request_id, REASON_CANCELLED),
            None => {
                eprintln!("elicit: {}", expired_words(page, self.until, false));
                Answer::refused(&request_id, REASON_EXPIRED)
            }
        })
    }
}

impl BrowserResolver {
    /// The page's entry for `e` (its id given when it is listed).
    fn entry(&self, e: &Elicitation, pending: Pending) -> Entry {
        let server = self
            .page
            .options
            .server
            .clone()
            .or_else(|| e.server.clone())
            .unwrap_or_else(|| UNKNOWN_SERVER.to_string());
        let ask = match (e.mode(), pending, &e.form) {
            (Mode::Form, Pending::Form { values, missing }, Some(form)) => Ask::Form {
                form: form.clone(),
                given: values,
                missing,
            },
            _ => Ask::Url {
                assessment: elicit_core::text::url_safety::assess_url(
                    e.params.url.as_deref().unwrap_or_default(),
                ),
            },
        };
        let warnings = e
            .form
            .as_ref()
            .map(|f| f.warnings.clone())
            .unwrap_or_default();
        Entry {
            id: 0,
            server,
            message: e.params.message.clone(),
            position: e.position,
            ask,
            deadline: match (self.page.options.timeout, self.until) {
                (Some(t), Some(until)) => Some((Instant::now() + t).min(until)),
                (Some(t), None) => Some(Instant::now() + t),
                (None, until) => until,
            },
            warnings,
        }
    }

    /// Lists `entry` on the page, listening first if the page is not up:
    /// its id, and the page to announce when nothing waited before it.
    fn list(&self, mut entry: Entry) -> Result<(u64, Option<server::Opened>), ElicitError> {
        let page = &self.page;
        let mut state = page.lock();
        state.next_id += 1;
        let id = state.next_id;
        entry.id = id;
        // The page is announced (a new one-time address, the browser
        // opened) when nothing waited before this one.
        let announce = state.pending.is_empty();
        state.pending.push(entry);
        state.version += 1;
        let opened = match server::ensure_listening(page, &mut state, announce) {
            Ok(o) => o,
            Err(err) => {
                state.pending.retain(|x| x.id != id);
                return Err(err);
            }
        };
        page.changed.notify_all();
        Ok((id, opened))
    }

    /// Takes entry `id` off the page, no browser having opened it (`why`),
    /// as the error that says what is left unanswered.
    fn unlist_unopened(&self, id: u64, why: &str) -> ElicitError {
        let page = &self.page;
        let missing = {
            let mut state = page.lock();
            let at = state.pending.iter().position(|x| x.id == id);
            let entry = at.map(|at| state.pending.remove(at));
            state.version += 1;
            page.changed.notify_all();
            entry
        };
        let detail = format!("{}: {why}", elicit_core::error::NO_BROWSER_DETAIL);
        match missing.map(|e| e.ask) {
            Some(Ask::Form { missing, .. }) => ElicitError::NeedsAnswers {
                fields: missing,
                detail: Some(detail),
            },
            _ => ElicitError::NeedsUrlAnswer { detail },
        }
    }

    /// Waits for entry `id`'s answer; `None` when its deadline passed first
    /// (the entry is then taken off the page, remembered as expired).
    fn wait_for_answer(&self, id: u64) -> Option<Outcome> {
        let page = &self.page;
        let mut state = page.lock();
        loop {
            if let Some(outcome) = state.answered.remove(&id) {
                return Some(outcome);
            }
            let deadline = state
                .pending
                .iter()
                .find(|x| x.id == id)
                .and_then(|x| x.deadline);
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                if let Some(at) = state.pending.iter().position(|x| x.id == id) {
                    let entry = state.pending.remove(at);
                    remember(&mut state, &entry, expired_words(page, self.until, true));
                    state.version += 1;
                    page.changed.notify_all();
                }
                return None;
            }
            let wait = deadline.map_or(WAKE, |d| (d - now).min(WAKE));
            state = page
                .changed
                .wait_timeout(state, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// What became of an elicitation nobody answered in time, for the page's
/// list (`listed`) or stderr: the page's timeout, or the handle's own
/// deadline (the question expired).
fn expired_words(page: &Page, until: Option<Instant>, listed: bool) -> String {
    match page.options.timeout {
        Some(limit) if until.is_none_or(|u| Instant::now() < u) => {
            let limit = humantime::format_duration(limit);
            if listed {
                format!("expired: no answer within {limit}; cancel sent")
            } else {
                format!("no answer on the page within {limit}; sending cancel")
            }
        }
        _ => "the question expired before an answer on the page".to_string(),
    }
}
