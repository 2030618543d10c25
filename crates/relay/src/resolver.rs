//! The resolver thread: where the elicitations the relay withholds are
//! answered (scripted answers first, then the person).

use std::sync::{mpsc, Arc};
use std::time::Instant;

use serde_json::{json, Value};

use super::envelope::RequestId;
use super::state::{Job, Waiting};
use super::{notes, Relay, Sides};
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::protocol::ElicitResult;
use elicit_core::elicitation::resolve::Resolver;
use elicit_core::error::rpc_code;
use elicit_session::mcp::handler::{ElicitHandler, HandlerError};

impl<S: Sides> Relay<S> {
    fn resolve(&self, handler: &mut ElicitHandler<'_>, job: Job) {
        match job {
            Job::ServerRequest { id, params } => self.answer_elicitation(handler, id, params),
            Job::InputRequired { client_id, result } => {
                self.settle_input_required(handler, client_id, result)
            }
            Job::TaskInput {
                task_id,
                questions,
                meta,
                tool,
            } => self.settle_task_input(handler, task_id, questions, meta, tool),
        }
    }

    fn answer_elicitation(&self, handler: &mut ElicitHandler<'_>, id: RequestId, params: Value) {
        {
            let st = self.lock();
            if st.client_gone {
                return;
            }
            handler.server_name = st.server_name.clone();
            handler.tool_name = match st.tool_calls.len() {
                1 => st.tool_calls.values().next().cloned(),
                _ => None,
            };
        }
        let reply = match handler.elicit(&params, None) {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r.to_value()}),
            Err(HandlerError::Rpc { code, message }) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
            Err(HandlerError::Fatal(e)) => {
                eprintln!(
                    "elicit proxy: {}",
                    elicit_core::text::sanitize::sanitize_block(&e.to_string())
                );
                json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": rpc_code::INTERNAL_ERROR,
                    "message": format!("elicit could not resolve the elicitation: {e}"),
                }})
            }
        };
        // Answered `cancel` already if the client hung up meanwhile.
        let was_pending = {
            let mut st = self.lock();
            let weight = st.pending.remove(&Waiting::Elicitation(id.clone()));
            st.pending_bytes -= weight.unwrap_or(0);
            weight.is_some()
        };
        if was_pending {
            let mode = params.get("mode").and_then(Value::as_str);
            self.note(&notes::answered(&id, mode, &reply));
            self.side.to_server(&reply, None);
        }
    }
}

/// The resolver thread: one job at a time, each under [`elicit_platform::handlers::PromptOwnsCtrlC`]
/// (a Ctrl-C meanwhile is the prompt's), at a terminal (one person, one
/// screen); each job on its own thread when the person's resolver can show
/// several at once ([`Resolver::alongside`]: the browser page). Ends when the
/// relay is dropped.
pub(super) fn resolver<S: Sides>(
    relay: std::sync::Weak<Relay<S>>,
    scripted: ScriptedAnswers,
    mut person: Box<dyn Resolver + Send>,
    jobs: mpsc::Receiver<Job>,
) {
    let scripted = Arc::new(scripted);
    let recording = relay.upgrade().and_then(|r| r.options.record.clone());
    let mut observer = recording.clone().map(RecordingObserver);
    let mut handler = ElicitHandler::new(&scripted, person.as_mut());
    if let Some(relay) = relay.upgrade() {
        handler.modes = relay.options.modes;
        handler.strict = relay.options.strict.clone();
    }
    handler.observer = observer
        .as_mut()
        .map(|o| o as &mut dyn elicit_session::mcp::handler::ElicitObserver);
    for job in jobs {
        let Some(relay) = relay.upgrade() else {
            return;
        };
        if let Some(mut alongside) = handler.person.alongside() {
            let scripted = scripted.clone();
            let seen = handler.seen_fields.clone();
            let recording = recording.clone();
            std::thread::spawn(move || {
                let mut observer = recording.map(RecordingObserver);
                let mut handler = ElicitHandler::new(&scripted, alongside.as_mut());
                handler.seen_fields = seen;
                handler.modes = relay.options.modes;
                handler.strict = relay.options.strict.clone();
                handler.observer = observer
                    .as_mut()
                    .map(|o| o as &mut dyn elicit_session::mcp::handler::ElicitObserver);
                relay.resolve_timed(&mut handler, job);
            });
            continue;
        }
        relay.resolving.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(Instant::now());
        let owned = elicit_platform::handlers::PromptOwnsCtrlC::take();
        relay.resolve_timed(&mut handler, job);
        drop(owned);
    }
}

impl<S: Sides> Relay<S> {
    /// Resolves one job with the clock of [`Relay::resolving_time`]
    /// running, and records which scripted answers it used.
    fn resolve_timed(&self, handler: &mut ElicitHandler<'_>, job: Job) {
        {
            let mut r = self.resolving.lock().unwrap_or_else(|e| e.into_inner());
            if r.2 == 0 {
                r.1 = Some(Instant::now());
            }
            r.2 += 1;
        }
        self.resolve(handler, job);
        {
            let mut r = self.resolving.lock().unwrap_or_else(|e| e.into_inner());
            r.2 = r.2.saturating_sub(1);
            if r.2 == 0 {
                if let Some(since) = r.1.take() {
                    r.0 += since.elapsed().as_micros() as u64;
                }
            }
        }
        // An answer is unused when no form of any job had it.
        let used_here = handler.unused_answers();
        self.unused_answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|n| used_here.contains(n));
    }
}

/// The shared recorder as a resolver's handler sees it: each elicitation
/// answered goes to the recorder.
struct RecordingObserver(crate::Recording);

impl elicit_session::mcp::handler::ElicitObserver for RecordingObserver {
    fn answered(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult) {
        if let Ok(mut r) = self.0.lock() {
            r.elicitation(request, key, result);
        }
    }
}
