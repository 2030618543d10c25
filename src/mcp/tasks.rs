//! Tools that run as tasks (2025-11-25 tasks, SEP-1686): a tool whose
//! `execution.taskSupport` is `"required"` is called with a `task` param;
//! the server answers with a task (`CreateTaskResult`), and `tasks/result`
//! waits for its end. While it waits, a task in `input_required` sends its
//! elicitations as ordinary `elicitation/create` requests tied to the task
//! (`_meta."io.modelcontextprotocol/related-task"`, echoed in the answer):
//! they reach the same handler, resolvers, recorder and replayer as any
//! other. The 2026-07-28 tasks extension (`tasks/update` with
//! `inputResponses`) is not handled here.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::call::CallEnd;
use super::client::{call_params, short, Generation, McpClient, Reply};
use super::handler::ElicitHandler;
use crate::elicitation::protocol::wire;
use crate::error::ElicitError;

/// The task's time to live asked for (ms); the server may choose another.
pub const TASK_TTL_MS: u64 = 300_000;

/// The method that waits for a task's result.
pub const TASKS_RESULT: &str = "tasks/result";

/// The names of the tools in `tools` (a `tools/list`) that must run as
/// tasks.
pub fn task_tools(tools: &[Value]) -> HashSet<String> {
    tools
        .iter()
        .filter(|t| t.pointer("/execution/taskSupport").and_then(Value::as_str) == Some("required"))
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Whether `tool` must run as a task: on a handshake connection whose
/// server declared task-augmented `tools/call`, when its `tools/list` says
/// so (listed now if the session has not yet: `elicit test` does not list
/// otherwise). A list that fails is taken as "no": the call then goes out
/// as usual.
pub fn needs_task(client: &mut McpClient, handler: &mut ElicitHandler<'_>, tool: &str) -> bool {
    if !matches!(client.generation, Generation::Handshake(_)) {
        return false;
    }
    if client.task_tools.is_none() {
        // list_tools fills task_tools.
        if client.list_tools(handler).is_err() {
            client.task_tools = Some(HashSet::new());
        }
    }
    client.task_tools.as_ref().is_some_and(|t| t.contains(tool))
}

/// Calls `tool` as a task, then waits for its result with `tasks/result`
/// (bounded by the client's `--timeout`, as every reply is), resolving the
/// task's elicitations on the way.
pub fn call_as_task(
    client: &mut McpClient,
    handler: &mut ElicitHandler<'_>,
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<CallEnd, ElicitError> {
    let mut params = call_params(tool, arguments);
    params["task"] = json!({ "ttl": TASK_TTL_MS });
    let created = match client.request(wire::TOOLS_CALL, params, handler)? {
        Reply::Result(r) => r,
        Reply::Error(e) => return Ok(refused(tool, e)),
    };
    let Some(id) = created.pointer("/task/taskId").cloned() else {
        // The server ran it at once after all: that is the result.
        return Ok(CallEnd::Result(created));
    };
    match client.request(TASKS_RESULT, json!({ "taskId": id }), handler)? {
        Reply::Result(r) => Ok(CallEnd::Result(r)),
        Reply::Error(e) => Ok(refused(tool, e)),
    }
}

fn refused(tool: &str, error: Value) -> CallEnd {
    let message = format!("tools/call {tool} (as a task) failed: {}", short(&error));
    CallEnd::Refused { error, message }
}
