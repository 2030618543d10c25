//! Tool calls that run as tasks (2025-11-25 tasks, SEP-1686).
//!
//! A tool whose `execution.taskSupport` is `required` cannot be called
//! plainly: the call carries `task` and the server answers with a task
//! (`CreateTaskResult`) instead of the tool's result. elicit then waits on
//! `tasks/result`, which the server answers when the task ends; meanwhile it
//! sends the task's own requests (its elicitations, tied to the task by the
//! related-task `_meta`, which the answer echoes) over the same session, and
//! they are resolved like any other. A tool that merely allows tasks
//! (`optional`) is called plainly: its result comes back the same way, with
//! no task to follow.
//!
//! The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663): a server that offers it (in `server/discover`'s
//! `capabilities.extensions`) may answer a tool call that declared it with a
//! task (`resultType: "task"`). elicit then polls `tasks/get`; a task in
//! `input_required` carries its questions in `inputRequests` (each key asked
//! once over the task's life), answered with `tasks/update` and
//! `inputResponses`; a `completed` task carries the tool's result, a
//! `failed` one the JSON-RPC error.

use std::collections::HashSet;
use std::time::Duration;

use elicit_core::elicitation::protocol::wire::TASKS_EXTENSION;
use serde_json::{json, Map, Value};

/// How long the server is asked to keep a task (and its result) once it
/// ends: long enough for a person to answer its questions, short enough
/// that an abandoned task does not linger on the server.
pub const TASK_TTL_MS: u64 = 10 * 60 * 1000;

/// Whether calling `tool` needs a task: the tool says `taskSupport:
/// "required"` and the server can run tool calls as tasks.
pub fn needs_task(server_capabilities: Option<&Value>, tools: &[Value], tool: &str) -> bool {
    let server_runs_tasks = server_capabilities
        .and_then(|c| c.pointer("/tasks/requests/tools/call"))
        .is_some();
    let required = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))
        .and_then(|t| t.pointer("/execution/taskSupport"))
        .and_then(Value::as_str)
        == Some("required");
    server_runs_tasks && required
}

/// Whether the server might say a tool needs a task (so its tool list is
/// worth reading before the call).
pub fn server_runs_tool_tasks(server_capabilities: Option<&Value>) -> bool {
    server_capabilities
        .and_then(|c| c.pointer("/tasks/requests/tools/call"))
        .is_some()
}

/// The call's params with the task request added.
pub fn with_task(params: &mut Value) {
    if let Some(p) = params.as_object_mut() {
        p.insert("task".into(), json!({ "ttl": TASK_TTL_MS }));
    }
}

/// The task a call was answered with, when it was (a `CreateTaskResult`:
/// `task.taskId`, and no tool result of its own).
pub fn created_task(result: &Value) -> Option<String> {
    if result.get("content").is_some() || result.get("structuredContent").is_some() {
        return None;
    }
    result
        .pointer("/task/taskId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// `tasks/result`'s params.
pub fn result_params(task_id: &str) -> Value {
    let mut p = Map::new();
    p.insert("taskId".into(), json!(task_id));
    Value::Object(p)
}

/// The shortest and longest wait between two polls of a task, whatever
/// `pollIntervalMs` the server suggests: a server cannot make elicit spin,
/// nor leave a person waiting long after the task moved on.
pub const POLL_INTERVAL_BOUNDS: (Duration, Duration) =
    (Duration::from_millis(20), Duration::from_secs(5));

/// Whether the server offers the tasks extension (`capabilities.extensions`).
pub fn server_offers_extension(server_capabilities: Option<&Value>) -> bool {
    server_capabilities
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some()
}

/// Declares the tasks extension in per-request client capabilities.
pub fn declare_extension(capabilities: &mut Value) {
    if let Some(caps) = capabilities.as_object_mut() {
        let extensions = caps.entry("extensions").or_insert_with(|| json!({}));
        if let Some(e) = extensions.as_object_mut() {
            e.insert(TASKS_EXTENSION.into(), json!({}));
        }
    }
}

/// The task a request was answered with under the tasks extension: its
/// id, when the result says `resultType: "task"` and names one.
pub fn extension_task(result: &Value) -> Option<String> {
    if result.get("resultType").and_then(Value::as_str) != Some("task") {
        return None;
    }
    result
        .get("taskId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// A task's status, as `tasks/get` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Still running: poll again.
    Working,
    /// Waiting for answers to its `inputRequests`.
    InputRequired,
    /// Done: its `result` is the tool's.
    Completed,
    /// Failed with the JSON-RPC `error` it carries.
    Failed,
    /// Cancelled: no result will come.
    Cancelled,
    /// A status this revision does not know (polled again, like working).
    Other,
}

/// The status of a task (a `tasks/get` result).
pub fn status(task: &Value) -> Status {
    match task.get("status").and_then(Value::as_str) {
        Some("working") => Status::Working,
        Some("input_required") => Status::InputRequired,
        Some("completed") => Status::Completed,
        Some("failed") => Status::Failed,
        Some("cancelled") => Status::Cancelled,
        _ => Status::Other,
    }
}

/// How long to wait before polling a task again: its `pollIntervalMs`,
/// within [`POLL_INTERVAL_BOUNDS`] (a second when it suggests none).
pub fn poll_interval(task: &Value) -> Duration {
    let (least, most) = POLL_INTERVAL_BOUNDS;
    task.get("pollIntervalMs")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(1))
        .clamp(least, most)
}

/// The questions of an `input_required` task not answered yet (by key), as
/// an `input_required` result elicit resolves like any other; `None` when
/// every key it lists was answered already (a poll that came before the
/// server took the answers in).
pub fn new_questions(task: &Value, answered: &HashSet<String>) -> Option<Value> {
    let requests = task.get("inputRequests")?.as_object()?;
    let fresh: Map<String, Value> = requests
        .iter()
        .filter(|(k, _)| !answered.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if fresh.is_empty() {
        return None;
    }
    Some(json!({"resultType": "input_required", "inputRequests": fresh}))
}

/// `tasks/get`'s params.
pub fn get_params(task_id: &str) -> Value {
    json!({ "taskId": task_id })
}

/// `tasks/update`'s params: the answers, keyed as the task asked.
pub fn update_params(task_id: &str, responses: Map<String, Value>) -> Value {
    json!({ "taskId": task_id, "inputResponses": responses })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_needed_only_when_the_tool_requires_it_and_the_server_runs_them() {
        let caps = json!({"tasks": {"requests": {"tools": {"call": {}}}}});
        let tools = vec![
            json!({"name": "research", "execution": {"taskSupport": "required"}}),
            json!({"name": "maybe", "execution": {"taskSupport": "optional"}}),
            json!({"name": "plain"}),
        ];
        assert!(needs_task(Some(&caps), &tools, "research"));
        assert!(!needs_task(Some(&caps), &tools, "maybe"));
        assert!(!needs_task(Some(&caps), &tools, "plain"));
        assert!(!needs_task(Some(&caps), &tools, "unknown"));
        assert!(!needs_task(Some(&json!({})), &tools, "research"));
        assert!(!needs_task(None, &tools, "research"));
    }

    #[test]
    fn only_a_result_without_content_that_names_a_task_is_a_created_task() {
        let created = json!({"task": {"taskId": "t-1", "status": "working"}});
        assert_eq!(created_task(&created).as_deref(), Some("t-1"));
        let tool_result = json!({"content": [], "task": {"taskId": "t-1"}});
        assert_eq!(created_task(&tool_result), None);
        assert_eq!(created_task(&json!({"task": {"taskId": ""}})), None);
        assert_eq!(
            created_task(&json!({"content": [{"type": "text", "text": "x"}]})),
            None
        );
    }

    #[test]
    fn an_extension_task_is_a_task_result_type_with_an_id() {
        let created = json!({"resultType": "task", "taskId": "t-1", "status": "working"});
        assert_eq!(extension_task(&created).as_deref(), Some("t-1"));
        assert_eq!(
            extension_task(&json!({"resultType": "complete", "taskId": "t"})),
            None
        );
        assert_eq!(
            extension_task(&json!({"resultType": "task", "taskId": ""})),
            None
        );
        assert_eq!(extension_task(&json!({"taskId": "t"})), None);
    }

    #[test]
    fn the_extension_is_declared_beside_elicitation_and_read_from_the_server() {
        let mut caps = json!({"elicitation": {"form": {}}});
        declare_extension(&mut caps);
        assert_eq!(caps["elicitation"], json!({"form": {}}));
        assert!(server_offers_extension(Some(&caps)));
        assert!(!server_offers_extension(Some(&json!({"extensions": {}}))));
        assert!(!server_offers_extension(None));
    }

    #[test]
    fn only_unanswered_questions_are_asked_and_the_poll_interval_is_bounded() {
        let task = json!({"status": "input_required", "inputRequests": {
            "a": {"method": "elicitation/create", "params": {}},
            "b": {"method": "elicitation/create", "params": {}}}});
        assert_eq!(status(&task), Status::InputRequired);
        let mut answered = HashSet::new();
        let q = new_questions(&task, &answered).unwrap();
        assert_eq!(q["resultType"], "input_required");
        assert_eq!(q["inputRequests"].as_object().unwrap().len(), 2);
        answered.insert("a".to_string());
        let q = new_questions(&task, &answered).unwrap();
        assert!(q["inputRequests"].get("a").is_none());
        answered.insert("b".to_string());
        assert_eq!(new_questions(&task, &answered), None);
        assert_eq!(
            poll_interval(&json!({"pollIntervalMs": 0})),
            POLL_INTERVAL_BOUNDS.0
        );
        assert_eq!(
            poll_interval(&json!({"pollIntervalMs": 999_999})),
            POLL_INTERVAL_BOUNDS.1
        );
        assert_eq!(
            poll_interval(&json!({"pollIntervalMs": 100})),
            Duration::from_millis(100)
        );
    }
}
