//! Settling an `input_required` result (2026-07-28): the answers go back
//! in a retry of the client's request under an id of elicit's, at most
//! [`MAX_INPUT_ROUNDS`] rounds per request.

use std::sync::atomic::Ordering;

use serde_json::{json, Map, Value};

use super::envelope::RequestId;
use super::state::Waiting;
use super::{notes, Relay, Sides, RETRY_PREFIX};
use elicit_core::elicitation::protocol::wire;
use elicit_core::error::rpc_code;
use elicit_session::mcp::call::MAX_INPUT_ROUNDS;
use elicit_session::mcp::handler::ElicitHandler;

impl<S: Sides> Relay<S> {
    /// Answers a task's new questions (tasks extension) and sends the
    /// answers to the server in a `tasks/update` of elicit's own (its reply
    /// is withheld from the client), then counts them waiting no more.
    pub(super) fn settle_task_input(
        &self,
        handler: &mut ElicitHandler<'_>,
        task_id: String,
        questions: Value,
        meta: Value,
        tool: Option<String>,
    ) {
        // A task elicit runs for the client (it names the tool): the client
        // sees nothing of it, not even the task working.
        let ours = tool.is_some();
        let gone = {
            let st = self.lock();
            handler.server_name = st.server_name.clone();
            handler.tool_name = tool;
            st.client_gone
        };
        let outcome = (!gone).then(|| handler.input_responses(&questions));
        {
            let mut st = self.lock();
            let weight = st.pending.remove(&Waiting::TaskInput(task_id.clone()));
            st.pending_bytes -= weight.unwrap_or(0);
        }
        let responses = match outcome {
            Some(Ok(r)) => r,
            Some(Err(e)) => {
                eprintln!(
                    "elicit proxy: {}",
                    elicit_core::text::sanitize::sanitize_block(&e.to_string())
                );
                // A task elicit runs for a client cannot go on without the
                // answers: the client's call fails, and the task stops.
                self.run_unanswered(&task_id, &format!("elicit proxy: {e}"));
                return;
            }
            None => return,
        };
        let n = self.next_retry.fetch_add(1, Ordering::SeqCst);
        let id = format!("{RETRY_PREFIX}{n}");
        let mut params = elicit_session::mcp::tasks::update_params(&task_id, responses);
        if !meta.is_null() {
            params["_meta"] = meta;
        }
        self.lock().task_updates.insert(RequestId::from(id.clone()));
        self.note(&notes::task_answered(&task_id, &id, ours));
        self.side.to_server(
            &json!({"jsonrpc": "2.0", "id": id, "method": wire::TASKS_UPDATE, "params": params}),
            None,
        );
    }

    /// Settles an `input_required` round, then counts it waiting no more.
    pub(super) fn settle_input_required(
        &self,
        handler: &mut ElicitHandler<'_>,
        client_id: RequestId,
        result: Value,
    ) {
        let waiting = Waiting::InputRequired(client_id.clone());
        self.settle_input_required_round(handler, client_id, result);
        let mut st = self.lock();
        let weight = st.pending.remove(&waiting);
        st.pending_bytes -= weight.unwrap_or(0);
    }

    fn settle_input_required_round(
        &self,
        handler: &mut ElicitHandler<'_>,
        client_id: RequestId,
        result: Value,
    ) {
        let (rounds, original) = {
            let mut st = self.lock();
            if st.client_gone {
                return;
            }
            handler.server_name = notes::server_name(&result).or(st.server_name.clone());
            handler.tool_name = st.tool_calls.get(&client_id).cloned();
            let n = st.rounds.entry(client_id.clone()).or_insert(0);
            *n += 1;
            (*n, st.tracked.get(&client_id).cloned())
        };
        if rounds >= MAX_INPUT_ROUNDS {
            let (message, reply) = too_many_rounds(&client_id);
            self.note(&message);
            self.untrack(&client_id);
            self.side.to_client(&reply);
            return;
        }
        let responses = match (original, handler.input_responses(&result)) {
            (Some(original), Ok(r)) => (original, r),
            (_, outcome) => {
                let why = match outcome {
                    Err(e) => {
                        eprintln!(
                            "elicit proxy: {}",
                            elicit_core::text::sanitize::sanitize_block(&e.to_string())
                        );
                        "elicit could not answer it"
                    }
                    Ok(_) => "the original request is not known",
                };
                self.note(&notes::input_required_passed(&client_id, why));
                // Hand the question to the client, under its own id.
                self.untrack(&client_id);
                self.side
                    .to_client(&json!({"jsonrpc": "2.0", "id": client_id, "result": result}));
                return;
            }
        };
        let (original, responses) = responses;
        let n = self.next_retry.fetch_add(1, Ordering::SeqCst);
        let retry_id = RequestId::from(format!("{RETRY_PREFIX}{n}"));
        let retry = retry_request(original, &retry_id, responses, &result);
        self.note(&notes::retried(
            &client_id,
            rounds,
            retry
                .pointer("/params/inputResponses")
                .and_then(Value::as_object)
                .unwrap_or(&Map::new()),
            &retry_id,
        ));
        self.lock().retries.insert(retry_id, client_id.clone());
        self.side.to_server(&retry, Some(&client_id));
    }
}

/// The JSON-RPC error a client gets when its request came back
/// `input_required` [`MAX_INPUT_ROUNDS`] times: a server that keeps asking
/// (a lost requestState, say) is stopped, not obeyed, and the client learns
/// why. Returns the message (for `-v`) and the reply.
fn too_many_rounds(client_id: &RequestId) -> (String, Value) {
    let message = format!(
        "elicit stopped: the server asked for input {MAX_INPUT_ROUNDS} times in a row for this request"
    );
    let reply = json!({"jsonrpc": "2.0", "id": client_id,
        "error": {"code": rpc_code::INTERNAL_ERROR, "message": message}});
    (message, reply)
}

/// The retry of a request that came back `input_required`: a new id, the
/// answers in `inputResponses`, and the server's `requestState` echoed as
/// received (left out when it sent none).
fn retry_request(
    mut original: Value,
    retry_id: &RequestId,
    responses: Map<String, Value>,
    result: &Value,
) -> Value {
    original["id"] = retry_id.to_value();
    if let Some(p) = original.get_mut("params").and_then(Value::as_object_mut) {
        p.insert("inputResponses".into(), Value::Object(responses));
        match result.get("requestState") {
            Some(s) => {
                p.insert("requestState".into(), s.clone());
            }
            None => {
                p.remove("requestState");
            }
        }
    }
    original
}
