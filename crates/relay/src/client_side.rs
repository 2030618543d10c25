//! What the relay core does with a client message: declares elicitation
//! on the client's behalf and remembers which replies it must watch.

use serde_json::{json, Value};

use super::capabilities::{add_elicitation_modes, modes_in_revision};
use super::envelope::{Message, RequestId};
use super::{notes, Relay, Sides};
use elicit_core::elicitation::protocol::wire;
use elicit_core::elicitation::protocol::wire::{CAPS_META, RETRYABLE, VERSION_META};
use elicit_core::lint::Revision;
use elicit_session::mcp::modes::ElicitModes;

impl<S: Sides> Relay<S> {
    /// Declares elicitation on the client's behalf in a client message (a
    /// request or notification) and remembers what its reply must be
    /// matched with; a call of a tool that runs only as a task, from a
    /// client that runs none, is made one ([`super::runs`]), and the
    /// client's cancellation of such a call cancels its task. Returns
    /// whether `msg` was changed. A message that is not a request or a
    /// notification (a reply, garbage) is left as it came.
    pub(crate) fn client_message(&self, msg: &mut Value) -> bool {
        // The envelope, read once; its parts are owned, `msg` is rewritten.
        let (method, id) = match Message::parse(msg) {
            Message::Request { id, method, .. } => (method.to_string(), Some(id)),
            Message::Notification { method, .. } => (method.to_string(), None),
            _ => return false,
        };
        let mut changed = self.declare_for_client(msg, &method, id.as_ref());
        if let Some(id) = &id {
            self.watch_progress(id, msg);
        }
        match (method.as_str(), id) {
            (wire::TOOLS_LIST, Some(id)) => {
                self.lock().list_ids.insert(id);
            }
            (wire::TOOLS_CALL, Some(id)) => {
                if asks_for_a_task(msg) {
                    self.lock().client_makes_tasks = true;
                }
                changed |= self.carry_call(msg, &id)
            }
            (wire::CANCELLED, None) => {
                let cancelled = msg
                    .pointer("/params/requestId")
                    .and_then(RequestId::from_value);
                if let Some(id) = cancelled {
                    self.lock().progress.remove(&id);
                    self.client_cancelled(&id);
                }
            }
            _ => {}
        }
        changed
    }

    /// A request (`id`) or a notification (`method`) of the client's:
    /// elicitation declared on its behalf, and its id noted when its reply
    /// matters.
    fn declare_for_client(&self, msg: &mut Value, method: &str, id: Option<&RequestId>) -> bool {
        let mut changed = false;
        if let (true, Some(id)) = (
            method == wire::INITIALIZE || method == wire::SERVER_DISCOVER,
            id,
        ) {
            self.lock().info_ids.insert(id.clone());
        }
        if let (true, Some(id), Some(tool)) = (
            method == wire::TOOLS_CALL,
            id,
            msg.pointer("/params/name").and_then(Value::as_str),
        ) {
            self.lock().tool_calls.insert(id.clone(), tool.to_string());
        }
        if method == wire::INITIALIZE {
            if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                let version = params.get("protocolVersion").and_then(Value::as_str);
                let modes = modes_in_revision(self.options.modes, version);
                let caps = params.entry("capabilities").or_insert_with(|| json!({}));
                let target = notes::capability_target(method, None, false);
                changed |= self.declare_elicitation(caps, &target, modes);
            }
        }
        let meta = msg
            .get_mut("params")
            .and_then(|p| p.get_mut("_meta"))
            .and_then(Value::as_object_mut)
            .filter(|m| m.contains_key(VERSION_META) || m.contains_key(CAPS_META));
        let Some(meta) = meta else {
            return changed;
        };
        if let Some(strict) = &self.options.strict {
            strict.set_revision(Revision::V2026_07_28);
        }
        let caps = meta.entry(CAPS_META).or_insert_with(|| json!({}));
        let target = notes::capability_target(method, id, true);
        changed |= self.declare_elicitation(caps, &target, self.options.modes);
        if let (true, Some(id)) = (RETRYABLE.contains(&method), id) {
            self.lock().tracked.insert(id.clone(), msg.clone());
        }
        if let (true, Some(id), Some(task)) = (
            method == wire::TASKS_GET,
            id,
            msg.pointer("/params/taskId").and_then(Value::as_str),
        ) {
            let meta = msg.pointer("/params/_meta").cloned().unwrap_or(Value::Null);
            self.lock()
                .task_gets
                .insert(id.clone(), (task.to_string(), meta));
        }
        changed
    }

    /// Adds the `modes` the client lacks to `capabilities.elicitation`.
    fn declare_elicitation(&self, caps: &mut Value, target: &str, modes: ElicitModes) -> bool {
        let Some((declared, changed)) = add_elicitation_modes(caps, modes) else {
            return false;
        };
        self.lock().client_modes = declared;
        if let Some(strict) = &self.options.strict {
            // What the server was told: the client's own modes and elicit's.
            strict.set_modes(ElicitModes {
                form: declared.form || modes.form,
                url: declared.url || modes.url,
            });
        }
        if changed {
            self.note(&notes::capability_added(target, declared));
        }
        changed
    }
}

/// Whether a client's `tools/call` asks for a task itself: `task` in its
/// params (2025-11-25), or the tasks extension declared in its `_meta`
/// (2026-07-28).
fn asks_for_a_task(call: &Value) -> bool {
    let Some(params) = call.get("params") else {
        return false;
    };
    params.get("task").is_some()
        || params
            .pointer("/_meta")
            .and_then(|m| m.get(wire::CAPS_META))
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get(wire::TASKS_EXTENSION))
            .is_some()
}
