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
//! Not here yet: the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663: `tasks/get` polling and `tasks/update` with `inputResponses`).

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
}
