//! Tasks elicit runs for a client that runs none itself.
//!
//! A tool the server runs only as a task (`execution.taskSupport:
//! "required"` in the tool lists the proxy relays) cannot be called plainly:
//! a client that knows nothing of tasks would get an error. When such a
//! client calls one, elicit makes the call a task as `elicit call` would
//! ([`elicit_session::mcp::tasks`]): `task` in the params (2025-11-25, when the
//! server runs tool calls as tasks), or the tasks extension declared in the
//! call's capabilities (2026-07-28, when the server offers it). The task
//! the server answers with is elicit's: it waits on `tasks/result`
//! (2025-11-25) or polls `tasks/get` at the server's interval (the
//! extension), its questions are answered like any other elicitation, and
//! the client gets the tool's result (or the task's error) under its own
//! id. The task is cancelled (`tasks/cancel`) when the client cancels the
//! call, hangs up, is told the call failed, or when [`Run`]'s bound passes.
//!
//! How elicit knows: 2025-11-25 tool lists say `execution.taskSupport`,
//! and a client calls tools it has listed, so the lists the client asked
//! for decide (a server's refusal of a plain call is not standardised in
//! that revision: each SDK words it its own way). 2026-07-28 lists do not
//! carry it, but the refusal is exact: `-32021` (missing required client
//! capability) naming the tasks extension, after which elicit sends the
//! call again with the extension declared. A client that declared tasks
//! itself gets today's relay unchanged.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::envelope::{Message, RequestId};
use super::questions::{is_resolvable, weigh};
use super::state::{Era, Run, RunRequest, Taken, Waiting};
use super::{notes, Relay, Sides, RETRY_PREFIX};
use elicit_core::elicitation::protocol::results::complete_result;
use elicit_core::elicitation::protocol::wire::{
    self, CAPS_META, CLIENT_INFO_META, TASKS_EXTENSION, VERSION_META,
};
use elicit_core::elicitation::protocol::Revision;
use elicit_core::error::rpc_code;
use elicit_session::mcp::tasks::{self, Status};

/// Notes what a `tools/list` reply says of each tool it lists: whether it
/// runs only as a task.
pub(super) fn listed(task_only: &mut HashSet<String>, tools: &Value) {
    for tool in tools.as_array().into_iter().flatten() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        if tool
            .pointer("/execution/taskSupport")
            .and_then(Value::as_str)
            == Some("required")
        {
            task_only.insert(name.to_string());
        } else {
            task_only.remove(name);
        }
    }
}

/// What each of elicit's requests for an extension task carries: the
/// call's version, client info and capabilities (the extension declared).
fn request_meta(call: &Value) -> Value {
    let kept: Map<String, Value> = call
        .pointer("/params/_meta")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(k, _)| [VERSION_META, CLIENT_INFO_META, CAPS_META].contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(kept)
}

impl<S: Sides> Relay<S> {
    /// A client's `tools/call` (`id`): made a task elicit runs when the
    /// tool runs only as one and the client did not ask for a task.
    /// Returns whether `msg` was changed.
    pub(super) fn carry_call(&self, msg: &mut Value, id: &RequestId) -> bool {
        let Some(tool) = msg.pointer("/params/name").and_then(Value::as_str) else {
            return false;
        };
        let tool = tool.to_string();
        let (runs_tasks, offers_extension) = {
            let st = self.lock();
            if !st.task_only.contains(&tool) || st.runs.contains_key(id) {
                return false;
            }
            let caps = st.server_capabilities.as_ref();
            (
                tasks::server_runs_tool_tasks(caps),
                tasks::server_offers_extension(caps),
            )
        };
        let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) else {
            return false;
        };
        let meta = params.get_mut("_meta").and_then(Value::as_object_mut);
        let augmented =
            match meta.filter(|m| m.contains_key(VERSION_META) || m.contains_key(CAPS_META)) {
                Some(meta) => {
                    let caps = meta.entry(CAPS_META).or_insert_with(|| json!({}));
                    let declared = caps
                        .pointer("/extensions")
                        .and_then(|e| e.get(TASKS_EXTENSION));
                    if !offers_extension || declared.is_some() {
                        return false;
                    }
                    tasks::declare_extension(caps);
                    false
                }
                None => {
                    if !runs_tasks || params.contains_key("task") {
                        return false;
                    }
                    if let Some(params) = msg.get_mut("params") {
                        tasks::with_task(params);
                    }
                    true
                }
            };
        let era = if augmented {
            Era::Augmented
        } else {
            Era::Extension {
                meta: request_meta(msg),
            }
        };
        self.note(&notes::task_run(id, &tool, matches!(era, Era::Augmented)));
        self.start_run(id, tool, era);
        true
    }

    /// The client cancelled its request `id`: the task elicit runs for it
    /// is cancelled (as soon as the server names it).
    pub(super) fn client_cancelled(&self, id: &RequestId) {
        {
            let mut st = self.lock();
            match st.runs.get_mut(id) {
                Some(run) if run.task_id.is_none() => {
                    run.cancelled = true;
                    return;
                }
                Some(_) => {}
                None => return,
            }
        }
        self.note(&notes::task_run_ended(id, "the client cancelled it"));
        self.end_run(id, None, true);
    }

    /// Every task elicit runs is cancelled, nobody to tell (the client hung
    /// up, or the proxy ends).
    pub(crate) fn cancel_runs(&self, why: &str) {
        let ids: Vec<RequestId> = self.lock().runs.keys().cloned().collect();
        for id in ids {
            self.note(&notes::task_run_ended(&id, why));
            self.end_run(&id, None, true);
        }
    }

    /// A server reply (`reply`, to `id`) that concerns a task elicit runs:
    /// the reply to the call (the task created), a refusal that asks for
    /// the tasks extension, or the reply to one of elicit's own requests.
    /// `None`: not one (or a call the server did not make a task, whose
    /// reply goes on as usual).
    pub(super) fn run_reply(
        &self,
        msg: &Value,
        reply: &Message<'_>,
        id: &RequestId,
    ) -> Option<Taken> {
        let (own, created) = {
            let mut st = self.lock();
            let own = st.run_requests.remove(id);
            let created = own.is_none() && st.runs.get(id).is_some_and(|r| r.task_id.is_none());
            (own, created)
        };
        if let Some((client_id, what)) = own {
            return Some(self.own_replied(msg, reply, &client_id, what));
        }
        if created {
            return self.created(reply, id).then_some(Taken::Withheld);
        }
        self.refused_without_extension(reply, id)
            .then_some(Taken::Withheld)
    }

    /// The reply that makes a call a task: the run follows it (cancelled at
    /// once if the client cancelled meanwhile). Returns false, the run
    /// forgotten, when the reply is not a task.
    fn created(&self, reply: &Message<'_>, client_id: &RequestId) -> bool {
        let result = reply.result();
        let Some((era, cancelled)) = self
            .lock()
            .runs
            .get(client_id)
            .map(|run| (run.era.clone(), run.cancelled))
        else {
            return false;
        };
        let task_id = match era {
            Era::Augmented => result.and_then(tasks::created_task),
            Era::Extension { .. } => result.and_then(tasks::extension_task),
        };
        let Some(task_id) = task_id else {
            self.lock().runs.remove(client_id);
            self.note(&notes::task_run_ended(
                client_id,
                "the server answered the call without a task: its reply goes to the client",
            ));
            return false;
        };
        if let Some(run) = self.lock().runs.get_mut(client_id) {
            run.task_id = Some(task_id.clone());
            run.interval = result.map(tasks::poll_interval).unwrap_or(run.interval);
        }
        if cancelled {
            self.note(&notes::task_run_ended(client_id, "the client cancelled it"));
            self.end_run(client_id, None, true);
            return true;
        }
        self.note(&notes::task_run_created(client_id, &task_id));
        if matches!(era, Era::Augmented) {
            self.own_request(
                client_id,
                RunRequest::Result,
                wire::TASKS_RESULT,
                tasks::result_params(&task_id),
                Some(client_id),
            );
        }
        self.follow(client_id.clone());
        true
    }

    /// The server refused a client's 2026-07-28 `tools/call` (`id`)
    /// because the client did not declare the tasks extension (a
    /// tool that runs only as a task, which the tool list does not say in
    /// this revision): elicit sends the call again with the extension
    /// declared, and runs the task. Returns whether it did.
    fn refused_without_extension(&self, reply: &Message<'_>, id: &RequestId) -> bool {
        let Some(error) = reply.error() else {
            return false;
        };
        let code = error.get("code").and_then(Value::as_i64);
        let wants_tasks = error
            .pointer("/data/requiredCapabilities/extensions")
            .and_then(|e| e.get(TASKS_EXTENSION))
            .is_some();
        // The draft's number too: servers built on it still send it.
        let missing = matches!(
            code,
            Some(wire::MISSING_CAPABILITY | wire::DRAFT_MISSING_CAPABILITY)
        );
        if !(missing && wants_tasks) {
            return false;
        }
        let Some(mut call) = self.lock().tracked.get(id).cloned() else {
            return false;
        };
        if call.get("method").and_then(Value::as_str) != Some(wire::TOOLS_CALL) {
            return false;
        }
        let Some(caps) =
            call.pointer_mut(&format!("/params/_meta/{}", CAPS_META.replace('/', "~1")))
        else {
            return false;
        };
        if caps
            .pointer("/extensions")
            .and_then(|e| e.get(TASKS_EXTENSION))
            .is_some()
        {
            // The client declared it itself: the refusal is its own.
            return false;
        }
        tasks::declare_extension(caps);
        let tool = call
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let era = Era::Extension {
            meta: request_meta(&call),
        };
        self.note(&notes::task_run(id, &tool, false));
        self.start_run(id, tool, era);
        let params = call.get("params").cloned().unwrap_or(Value::Null);
        self.own_request(id, RunRequest::Call, wire::TOOLS_CALL, params, Some(id));
        true
    }

    /// Starts the run of the client's request `client_id`.
    fn start_run(&self, client_id: &RequestId, tool: String, era: Era) {
        let resolving_at_start = self.resolving_time();
        self.lock().runs.insert(
            client_id.clone(),
            Run {
                tool,
                era,
                task_id: None,
                started: Instant::now(),
                resolving_at_start,
                interval: tasks::POLL_INTERVAL_BOUNDS.0,
                polling: false,
                cancelled: false,
            },
        );
    }

    /// The reply to one of elicit's requests for the task of the client's
    /// request `client_id`.
    fn own_replied(
        &self,
        msg: &Value,
        reply: &Message<'_>,
        client_id: &RequestId,
        what: RunRequest,
    ) -> Taken {
        match what {
            RunRequest::Cancel => self.note(&notes::task_run_ended(
                client_id,
                match reply.error() {
                    None => "the server took its tasks/cancel",
                    Some(_) => "the server refused its tasks/cancel (it may have ended already)",
                },
            )),
            RunRequest::Call => {
                if !self.lock().runs.contains_key(client_id) {
                    // Ended meanwhile (cancelled): nobody's.
                    return Taken::Withheld;
                }
                if !self.created(reply, client_id) {
                    // Not a task after all: the call's reply is the client's.
                    self.untrack(client_id);
                    let mut rewritten = msg.clone();
                    rewritten["id"] = client_id.to_value();
                    return Taken::Rewritten(rewritten);
                }
            }
            RunRequest::Result => {
                let body = match (reply.error(), reply.result()) {
                    (Some(e), _) => json!({"error": e}),
                    (None, result) => json!({"result": result.cloned().unwrap_or(Value::Null)}),
                };
                self.note(&notes::task_run_ended(client_id, "the task ended"));
                self.end_run(client_id, Some(body), false);
            }
            RunRequest::Poll => self.polled(reply, client_id),
        }
        Taken::Withheld
    }

    /// A `tasks/get` reply of elicit's (the extension): the task's end goes
    /// to the client, its new questions to the resolver.
    fn polled(&self, reply: &Message<'_>, client_id: &RequestId) {
        let (task_id, meta, tool) = {
            let mut st = self.lock();
            let Some(run) = st.runs.get_mut(client_id) else {
                return;
            };
            run.polling = false;
            if let Some(task) = reply.result() {
                run.interval = tasks::poll_interval(task);
            }
            let meta = match &run.era {
                Era::Extension { meta } => meta.clone(),
                Era::Augmented => Value::Null,
            };
            (
                run.task_id.clone().unwrap_or_default(),
                meta,
                run.tool.clone(),
            )
        };
        let Some(task) = reply.result() else {
            let error = reply.error().cloned().unwrap_or(Value::Null);
            self.end_run(client_id, Some(json!({"error": error})), true);
            return;
        };
        let failure = |message: &str| json!({"error": {"code": rpc_code::INTERNAL_ERROR, "message": message}});
        let end = match tasks::status(task) {
            Status::Completed => Some((
                json!({"result": task.get("result").cloned().unwrap_or(Value::Null)}),
                false,
            )),
            Status::Failed => Some((
                match task.get("error") {
                    Some(e) => json!({"error": e}),
                    None => failure("the task failed and gave no error"),
                },
                false,
            )),
            Status::Cancelled => Some((failure("the server cancelled the task"), false)),
            Status::InputRequired => self
                .ask(task, &task_id, meta, tool)
                .map(|why| (failure(&why), true)),
            Status::Working | Status::Other => None,
        };
        if let Some((body, cancel)) = end {
            self.note(&notes::task_run_ended(client_id, "the task ended"));
            self.end_run(client_id, Some(body), cancel);
        }
    }

    /// Hands the new questions of a task elicit runs to the resolver, or
    /// says why they cannot be answered.
    fn ask(&self, task: &Value, task_id: &str, meta: Value, tool: String) -> Option<String> {
        let taken = self
            .lock()
            .task_questions
            .get(task_id)
            .cloned()
            .unwrap_or_default();
        let questions = tasks::new_questions(task, &taken)?;
        if !is_resolvable(&questions, |m| self.handles(m)) {
            return Some("elicit proxy: the task asks for more than elicitations elicit answers, and the client runs no tasks".into());
        }
        let waiting = Waiting::TaskInput(task_id.to_string());
        if let Some(message) = self.admit(waiting, weigh(&questions)) {
            return Some(message);
        }
        self.take_on(task_id.to_string(), questions, meta, Some(tool));
        None
    }

    /// A task whose questions elicit could not answer: the client's call
    /// fails, and the task is cancelled.
    pub(super) fn run_unanswered(&self, task_id: &str, why: &str) {
        let client_id = self
            .lock()
            .runs
            .iter()
            .find(|(_, r)| r.task_id.as_deref() == Some(task_id))
            .map(|(id, _)| id.clone());
        if let Some(client_id) = client_id {
            let body = json!({"error": {"code": rpc_code::INTERNAL_ERROR, "message": why}});
            self.end_run(&client_id, Some(body), true);
        }
    }

    /// Ends the run of the client's request `client_id`: `reply` (a
    /// `result` or an `error`) goes to the client under its id, and the
    /// task is cancelled when `cancel`.
    fn end_run(&self, client_id: &RequestId, reply: Option<Value>, cancel: bool) {
        let Some(run) = self.lock().runs.remove(client_id) else {
            return;
        };
        if let Some(task_id) = &run.task_id {
            self.lock().task_questions.remove(task_id);
        }
        if cancel {
            self.cancel_task(client_id, &run);
        }
        if let Some(Value::Object(mut body)) = reply {
            // The task's result is the client's `tools/call` result now, in
            // the client's revision (a 2026-07-28 one needs `resultType`).
            let revision = match run.era {
                Era::Extension { .. } => Revision::V2026_07_28,
                Era::Augmented => Revision::V2025_11_25,
            };
            if let Some(result) = body.get_mut("result") {
                complete_result(wire::TOOLS_CALL, revision, result);
            }
            let mut message = Map::new();
            message.insert("jsonrpc".into(), json!("2.0"));
            message.insert("id".into(), client_id.to_value());
            message.extend(body);
            self.side.to_client(&Value::Object(message));
        }
        self.untrack(client_id);
    }

    /// Asks the server to stop the task of `run` (once it has an id).
    pub(super) fn cancel_task(&self, client_id: &RequestId, run: &Run) {
        let Some(task_id) = &run.task_id else {
            return;
        };
        let mut params = tasks::result_params(task_id);
        if let Era::Extension { meta } = &run.era {
            params["_meta"] = meta.clone();
        }
        self.own_request(
            client_id,
            RunRequest::Cancel,
            wire::TASKS_CANCEL,
            params,
            None,
        );
    }

    /// Sends a request of elicit's own for the task of the client's request
    /// `client_id`; `for_client`: the client's id when the reply is to be
    /// the client's (a side answers it with an error if it cannot send).
    fn own_request(
        &self,
        client_id: &RequestId,
        what: RunRequest,
        method: &str,
        params: Value,
        for_client: Option<&RequestId>,
    ) {
        let n = self.next_retry.fetch_add(1, Ordering::SeqCst);
        let id = RequestId::from(format!("{RETRY_PREFIX}{n}"));
        self.lock()
            .run_requests
            .insert(id.clone(), (client_id.clone(), what));
        self.side.to_server(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            for_client,
        );
    }

    /// How long a run may take ([`super::RelayOptions::task_budget`]).
    fn task_budget(&self) -> Duration {
        self.options
            .task_budget
            .unwrap_or(Duration::from_millis(tasks::TASK_TTL_MS))
    }

    /// Follows the run of the client's request `client_id` on a thread of
    /// its own until it ends: polls the task (the extension), and ends it
    /// when its bound passes. The thread holds the relay only while it
    /// looks, so it ends with the relay too.
    fn follow(&self, client_id: RequestId) {
        let me = self.me.clone();
        std::thread::spawn(move || loop {
            let Some(relay) = me.upgrade() else {
                return;
            };
            let Some(wait) = relay.look(&client_id) else {
                return;
            };
            drop(relay);
            std::thread::sleep(wait);
        });
    }

    /// One look at a run: the bound, then a poll when one is due. Returns
    /// how long to wait before the next look, or `None` once it ended.
    fn look(&self, client_id: &RequestId) -> Option<Duration> {
        let resolving = self.resolving_time();
        let budget = self.task_budget();
        let (wait, expired, poll) = {
            let mut st = self.lock();
            let run = st.runs.get_mut(client_id)?;
            let spent = run
                .started
                .elapsed()
                .saturating_sub(resolving.saturating_sub(run.resolving_at_start));
            let left = budget.saturating_sub(spent);
            let poll = match &run.era {
                Era::Extension { meta } if !run.polling && !left.is_zero() => {
                    run.polling = true;
                    let mut params = tasks::get_params(run.task_id.as_deref().unwrap_or_default());
                    params["_meta"] = meta.clone();
                    Some(params)
                }
                _ => None,
            };
            let wait = match run.era {
                Era::Extension { .. } => run.interval,
                Era::Augmented => tasks::POLL_INTERVAL_BOUNDS.1,
            };
            (wait.min(left), left.is_zero(), poll)
        };
        if expired {
            let message = format!(
                "elicit proxy: the task did not end within {} (elicit cancelled it)",
                humantime::format_duration(budget)
            );
            self.note(&notes::task_run_ended(client_id, "its time is up"));
            let body = json!({"error": {"code": wire::REQUEST_TIMED_OUT, "message": message}});
            self.end_run(client_id, Some(body), true);
            return None;
        }
        if let Some(params) = poll {
            self.own_request(client_id, RunRequest::Poll, wire::TASKS_GET, params, None);
        }
        Some(wait)
    }
}

#[cfg(test)]
#[path = "runs_tests.rs"]
mod tests;
