//! The relay core ([`Relay`]): its shared state, the questions both sides
//! ask it (which modes elicit answers, whether `--strict` is on), and what
//! a client's hang-up does.

use std::sync::atomic::AtomicU64;
use std::sync::{mpsc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::envelope::RequestId;
use super::state::{Job, State, Waiting};
use super::{RelayOptions, Sides};

/// The relay core, over a pair of [`Sides`].
pub(crate) struct Relay<S: Sides> {
    pub(crate) side: S,
    pub(crate) state: Mutex<State>,
    pub(super) options: RelayOptions,
    pub(super) next_retry: AtomicU64,
    pub(super) jobs: mpsc::Sender<Job>,
    /// Scripted field answers no form has had so far (warned about at the end).
    pub(super) unused_answers: Mutex<Vec<String>>,
    /// Time the resolver spent on finished elicitations, in microseconds,
    /// since when it works on the current ones (None: idle), and how many
    /// it works on (more than one when the person can answer several at
    /// once: the browser page).
    pub(super) resolving: Mutex<(u64, Option<Instant>, usize)>,
    /// The relay itself, for the threads that follow the tasks it runs
    /// for a client ([`super::runs`]): they end when it is dropped.
    pub(super) me: Weak<Self>,
}

impl<S: Sides> Relay<S> {
    /// A `-v` note on stderr (server text in it sanitised).
    pub(crate) fn note(&self, text: &str) {
        if self.options.verbose {
            eprintln!(
                "elicit proxy: {}",
                elicit_core::text::sanitize::sanitize_line(text)
            );
        }
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether elicit answers an elicitation of `mode` itself.
    pub(crate) fn handles(&self, mode: Option<&str>) -> bool {
        let declared = self.lock().client_modes;
        if !self.options.modes.declares(mode) {
            // Not declared by elicit (`--modes`): the client's own to
            // answer when it declared it, else elicit refuses it (-32602).
            let client = match mode {
                Some("url") => declared.url,
                _ => declared.form,
            };
            return !client;
        }
        declared.left_to_elicit(self.options.passthrough_declared, mode)
    }

    /// Shows a server message to `--strict`, when on.
    pub(super) fn observe(&self, msg: &Value, request: Option<&RequestId>) {
        if let Some(strict) = &self.options.strict {
            strict.observe(msg, request.map(RequestId::to_string).as_deref());
        }
    }

    /// How long the resolver has worked on elicitations so far (a person
    /// answering), the current one included: time no request timeout
    /// should count.
    pub(crate) fn resolving_time(&self) -> Duration {
        let r = self.resolving.lock().unwrap_or_else(|e| e.into_inner());
        Duration::from_micros(r.0) + r.1.map(|s| s.elapsed()).unwrap_or_default()
    }

    pub(super) fn queue(&self, job: Job) {
        let _ = self.jobs.send(job);
    }

    /// Forgets a client request once its final reply has gone out (or the
    /// client was told it failed), with any retry standing for it.
    pub(crate) fn untrack(&self, client_id: &RequestId) {
        let mut st = self.lock();
        st.tracked.remove(client_id);
        st.tool_calls.remove(client_id);
        st.rounds.remove(client_id);
        st.progress.remove(client_id);
        st.retries.retain(|_, c| c != client_id);
        // A task elicit runs for this request, and nobody waits for it any
        // more (the client was told it failed): the server stops it.
        let run = st.runs.remove(client_id);
        drop(st);
        if let Some(run) = run {
            self.cancel_task(client_id, &run);
        }
    }

    /// The client's id a request sent to the server stands for: the
    /// client's own, or the one a retry of ours replaces.
    pub(crate) fn client_id_of(&self, sent_id: &RequestId) -> RequestId {
        self.lock()
            .retries
            .get(sent_id)
            .cloned()
            .unwrap_or_else(|| sent_id.clone())
    }

    /// The client hung up: pending elicitations are answered `cancel`, no
    /// more are asked, and a prompt left on the terminal is torn down. The
    /// side then closes its connection to the server.
    pub(crate) fn client_hung_up(&self) {
        self.cancel_runs("the client hung up");
        let pending: Vec<Waiting> = {
            let mut st = self.lock();
            st.client_gone = true;
            st.pending_bytes = 0;
            st.pending.drain().map(|(waiting, _)| waiting).collect()
        };
        for waiting in &pending {
            if let Waiting::Elicitation(id) = waiting {
                self.side.to_server(
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"action": "cancel"}}),
                    None,
                );
            }
        }
        if !pending.is_empty() {
            elicit_platform::handlers::restore_terminal();
            self.note("the client hung up: pending elicitations answered cancel");
        }
    }

    /// Scripted answers no form of the session had, as warnings on stderr.
    pub(crate) fn warn_unused(&self) {
        if let Ok(unused) = self.unused_answers.lock() {
            for name in unused.iter() {
                eprintln!(
                    "elicit proxy: warning: {}",
                    elicit_session::mcp::handler::unused_answer_warning(name)
                );
            }
        }
    }
}
