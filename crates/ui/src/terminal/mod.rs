//! The person at the terminal: the form flow ([`form`]) and the URL flow
//! ([`url`]), drawn on `/dev/tty` so only the JSON result reaches stdout.
//!
//! Each elicitation is resolved on a worker thread while the calling thread
//! keeps the clock: when `--timeout` runs out, the prompt is abandoned, the
//! terminal restored, and the answer is the contract's `expired` (an MCP
//! `cancel`). An abandoned prompt is told to stop ([`keys::abandon`]): its
//! key reads fail at once, it clears what it drew and its thread ends, so
//! the next elicitation of the run is shown and answered normally.

pub mod color;
pub mod form;
mod interrupt;
pub mod keys;
pub mod render;
pub mod tty;
pub mod url;
pub mod widgets;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use console::style;

use elicit_core::elicitation::contract::{
    Answer, REASON_CANCELLED, REASON_DECLINED, REASON_EXPIRED,
};
use elicit_core::elicitation::protocol::Mode;
use elicit_core::elicitation::resolve::{Elicitation, Pending, Resolver};
use elicit_core::error::ElicitError;
use tty::Screen;
use widgets::Interrupt;

/// The fallback name in the header when nothing names the server.
pub(crate) const UNKNOWN_SERVER: &str = "An MCP server";

/// Settings of the terminal resolver (from the command line).
#[derive(Debug, Clone, Default)]
pub struct TerminalOptions {
    /// `--server NAME`: shown in the header.
    pub server: Option<String>,
    /// `--timeout` / `--prompt-timeout`: how long the person has for each
    /// elicitation, counted from when its prompt appears.
    pub timeout: Option<Duration>,
    /// `--browser COMMAND` / `ELICIT_BROWSER` (a command line).
    pub browser: Option<String>,
    /// `--no-open`.
    pub no_open: bool,
}

/// Resolves elicitations by asking the person at the terminal.
pub struct TerminalResolver {
    tty: Arc<tty::Tty>,
    options: TerminalOptions,
    /// Set once a timeout abandoned a prompt: its thread may still hold the
    /// terminal, so nothing else is asked.
    abandoned: bool,
    /// The flag that set [`TerminalOptions::timeout`], named on the screen
    /// (`--timeout` when resolving, `--prompt-timeout` for `call`/`proxy`).
    timeout_flag: &'static str,
}

impl TerminalResolver {
    /// Opens the terminal. `Err` carries why there is none, for the message
    /// that suggests `--answer`.
    pub fn open(options: TerminalOptions) -> Result<Self, String> {
        let tty = tty::Tty::open()?;
        Ok(TerminalResolver {
            tty: Arc::new(tty),
            options,
            abandoned: false,
            timeout_flag: "--timeout",
        })
    }

    /// Names `flag` as the one that set the prompt timeout, on the screen.
    pub fn with_timeout_flag(mut self, flag: &'static str) -> Self {
        self.timeout_flag = flag;
        self
    }
}

impl TerminalResolver {
    /// Lets the person pick one of `items` (sanitised here). `None` when
    /// they cancel.
    pub fn pick(&self, prompt: &str, items: &[String]) -> Result<Option<usize>, ElicitError> {
        let _server_stderr_held = elicit_platform::handlers::Prompt::start();
        // On Windows, drawn on the console even with stderr redirected.
        let _on_console = elicit_platform::terminal::on_console();
        let items: Vec<String> = items
            .iter()
            .map(|i| render::truncate(&elicit_core::text::sanitize::sanitize_line(i), 100))
            .collect();
        widgets::discard_typeahead(&self.tty.term);
        elicit_platform::handlers::set_prompting(true);
        let picked = widgets::select(&self.tty.term, prompt, &items, Some(0));
        elicit_platform::handlers::set_prompting(false);
        match picked {
            Ok(i) => Ok(Some(i)),
            Err(Interrupt::Cancelled | Interrupt::Abandoned) => {
                self.tty.restore();
                Ok(None)
            }
            Err(Interrupt::Io(e)) => {
                self.tty.restore();
                Err(ElicitError::Terminal(e.to_string()))
            }
        }
    }
}

/// Why waiting for the prompt thread ended without its outcome.
enum Waited {
    /// `--timeout` ran out.
    TimedOut,
    /// Ctrl-C was pressed and the prompt did not notice.
    Interrupted,
    /// The prompt thread ended without an answer (a panic).
    Gone,
}

/// How often the waiting thread looks at the Ctrl-C flag.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// How long a prompt gets to report Ctrl-C itself once the flag is set.
const INTERRUPT_GRACE: Duration = Duration::from_millis(200);

impl TerminalResolver {
    /// Waits for the prompt thread's outcome, the deadline, or Ctrl-C.
    fn wait<T>(&self, rx: &mpsc::Receiver<T>, deadline: Option<Instant>) -> Result<T, Waited> {
        let mut interrupted_at: Option<Instant> = None;
        loop {
            let now = Instant::now();
            let mut slice = INTERRUPT_POLL;
            if let Some(d) = deadline {
                if now >= d {
                    return Err(Waited::TimedOut);
                }
                slice = slice.min(d - now);
            }
            match rx.recv_timeout(slice) {
                Ok(v) => return Ok(v),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Waited::Gone),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if elicit_platform::handlers::interrupted() {
                // A prompt that read the Ctrl-C key itself reports it at
                // once; give it a moment before abandoning it.
                let since = *interrupted_at.get_or_insert(now);
                if now.duration_since(since) >= INTERRUPT_GRACE {
                    return Err(Waited::Interrupted);
                }
            }
        }
    }
}

enum Outcome {
    Accept(Option<serde_json::Map<String, serde_json::Value>>),
    Decline,
}

/// How long an abandoned prompt gets to notice, clear what it drew and end.
const ABANDON_GRACE: Duration = Duration::from_millis(1000);

impl TerminalResolver {
    /// Stops the prompt thread (timeout, missed Ctrl-C) and waits for it to
    /// clear its lines and end. `false` if it did not end in time: then it
    /// may still hold the terminal, and nothing else is asked this run.
    fn abandon_prompt<T>(&mut self, rx: &mpsc::Receiver<T>) -> bool {
        keys::abandon();
        let ended = !matches!(
            rx.recv_timeout(ABANDON_GRACE),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        if !ended {
            self.abandoned = true;
            let _ = self.tty.term.write_line("");
        }
        elicit_platform::handlers::restore_terminal();
        ended
    }
}

impl Resolver for TerminalResolver {
    fn warn_early(&mut self, warnings: &[String]) -> bool {
        elicit_core::elicitation::resolve::print_warnings(warnings);
        true
    }

    fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        let _server_stderr_held = elicit_platform::handlers::Prompt::start();
        // On Windows, drawn on the console even with stderr redirected.
        let _on_console = elicit_platform::terminal::on_console();
        let id = e.request.id.clone();
        if self.abandoned && elicit_platform::handlers::interrupted() {
            return Ok(Answer::refused(&id, REASON_CANCELLED));
        }
        if self.abandoned {
            return Ok(Answer::refused(&id, REASON_EXPIRED));
        }
        // The clock starts now, as this elicitation's prompt appears: each
        // one gets the whole timeout, however long earlier ones took.
        let deadline = self.options.timeout.map(|t| Instant::now() + t);
        // A Ctrl-C cancels the elicitation it was pressed at, not every one
        // after it: a long `elicit proxy` session asks many.
        elicit_platform::handlers::clear_interrupt();
        let server = self.server_name(e);
        if let Some(d) = deadline {
            self.say_time_left(d);
        }
        elicit_platform::handlers::set_prompting(true);
        let rx = self.prompt_on_a_thread(e.clone(), pending, server);
        let received = self.wait(&rx, deadline);
        if received.is_ok() {
            elicit_platform::handlers::set_prompting(false);
        }
        self.answer(&id, received, &rx)
    }
}

/// What a prompt thread sends back.
type Prompt = widgets::Prompted<Outcome>;

impl TerminalResolver {
    /// Who asks, as the header names them.
    fn server_name(&self, e: &Elicitation) -> String {
        if e.asked_by_elicit {
            "elicit".to_string()
        } else {
            self.options
                .server
                .clone()
                .or_else(|| e.server.clone())
                .unwrap_or_else(|| UNKNOWN_SERVER.to_string())
        }
    }

    /// Says how long the person has, rounded up to whole seconds ("within
    /// 2s" for a 2s timeout, not "1s").
    fn say_time_left(&self, deadline: Instant) {
        let left = deadline.saturating_duration_since(Instant::now());
        let left = Duration::from_secs(left.as_millis().div_ceil(1000).max(1) as u64);
        let _ = self.tty.term.write_line(&format!(
            "{} answer within {} ({}), or it is cancelled",
            style("⏱").dim(),
            humantime::format_duration(left),
            self.timeout_flag
        ));
    }

    /// Runs the form or URL flow for `job` on a thread of its own (the
    /// calling thread keeps the clock); its outcome arrives on the receiver.
    fn prompt_on_a_thread(
        &self,
        job: Elicitation,
        pending: Pending,
        server: String,
    ) -> mpsc::Receiver<Prompt> {
        let term = self.tty.term.clone();
        let opener = url::Opener {
            program: self.options.browser.clone(),
            never: self.options.no_open,
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            keys::claim();
            let outcome = match (job.mode(), pending, &job.form) {
                (Mode::Form, Pending::Form { values, missing }, Some(form)) => {
                    run_form(&term, &job, &server, form, values, &missing)
                }
                _ => run_url(&term, &job, &server, &opener),
            };
            let _ = tx.send(outcome);
        });
        rx
    }

    /// The answer for what the prompt thread sent, or for why nothing came.
    fn answer(
        &mut self,
        id: &str,
        received: Result<Prompt, Waited>,
        rx: &mpsc::Receiver<Prompt>,
    ) -> Result<Answer, ElicitError> {
        match received {
            Ok(Ok(Outcome::Accept(data))) => Ok(Answer::accepted(id, data.unwrap_or_default())),
            Ok(Ok(Outcome::Decline)) => Ok(Answer::refused(id, REASON_DECLINED)),
            Ok(Err(Interrupt::Cancelled | Interrupt::Abandoned)) => {
                self.tty.restore();
                let _ = self
                    .tty
                    .term
                    .write_line(&format!("{} cancelled", style("✗").red()));
                Ok(Answer::refused(id, REASON_CANCELLED))
            }
            Err(Waited::Interrupted) => {
                // Ctrl-C reached the process while the prompt was between two
                // key reads (cooked mode): the key was turned into SIGINT and
                // the prompt, now blocked reading, will never see it.
                if self.abandon_prompt(rx) {
                    elicit_platform::handlers::set_prompting(false);
                }
                let _ = self
                    .tty
                    .term
                    .write_line(&format!("{} cancelled", style("✗").red()));
                Ok(Answer::refused(id, REASON_CANCELLED))
            }
            Ok(Err(Interrupt::Io(err))) => {
                self.tty.restore();
                Err(ElicitError::Terminal(err.to_string()))
            }
            Err(Waited::TimedOut) => {
                if self.abandon_prompt(rx) {
                    elicit_platform::handlers::set_prompting(false);
                }
                let _ = self.tty.term.write_line(&format!(
                    "{} timed out: no answer within {}; sending cancel",
                    style("⏱").yellow(),
                    humantime::format_duration(self.options.timeout.unwrap_or_default())
                ));
                Ok(Answer::refused(id, REASON_EXPIRED))
            }
            Err(Waited::Gone) => {
                self.tty.restore();
                Err(ElicitError::Terminal(
                    "the prompt ended unexpectedly".into(),
                ))
            }
        }
    }
}

/// The form flow for `job`, on the prompt thread.
fn run_form(
    term: &Screen,
    job: &Elicitation,
    server: &str,
    form: &elicit_core::elicitation::schema::FormSchema,
    values: serde_json::Map<String, serde_json::Value>,
    missing: &[String],
) -> Prompt {
    let asking = form::Asking {
        server,
        message: &job.params.message,
        position: job.position,
        // elicit's own form (a tool's arguments) has no server to decline
        // to: only calling or not.
        decline: !job.asked_by_elicit,
    };
    form::run(term, &asking, form, values, missing).map(|o| match o {
        form::FormOutcome::Submit(v) => Outcome::Accept(Some(v)),
        form::FormOutcome::Decline => Outcome::Decline,
    })
}

/// The URL flow for `job`, on the prompt thread.
fn run_url(term: &Screen, job: &Elicitation, server: &str, opener: &url::Opener) -> Prompt {
    let raw = job.params.url.clone().unwrap_or_default();
    url::run(
        term,
        server,
        &job.params.message,
        job.position,
        &raw,
        opener,
    )
    .map(|o| match o {
        url::UrlOutcome::Completed => Outcome::Accept(None),
        url::UrlOutcome::Declined => Outcome::Decline,
    })
}
