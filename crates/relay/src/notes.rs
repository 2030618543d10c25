//! What `elicit proxy -v` says: one line per decision the proxy takes on
//! the traffic (capability added, elicitation answered or passed on,
//! `input_required` resolved and retried), in words. The same sentences for
//! the stdio and the remote relay. Server text in them (ids, names) is
//! sanitised by the caller's `note`, and cut short here.

use serde_json::Value;

use super::envelope::RequestId;
use super::Modes;
use elicit_core::elicitation::input::SERVER_INFO_META;

/// The longest id or name quoted in a note.
const QUOTE_CHARS: usize = 60;

/// A JSON-RPC id or a name, as quoted in a note.
pub fn quote(text: &str) -> String {
    elicit_core::text::truncate(text, QUOTE_CHARS)
}

/// The capability rewrite, in words. `target` says where: "its initialize",
/// "the _meta of its tools/call 5".
pub fn capability_added(target: &str, declared: Modes) -> String {
    let added = match (declared.form, declared.url) {
        (false, false) => "form and url",
        (true, false) => "url",
        (false, true) => "form",
        (true, true) => "nothing",
    };
    format!("declared elicitation ({added}) for the client in {target}")
}

/// Where a capability went, for [`capability_added`].
pub(crate) fn capability_target(method: &str, id: Option<&RequestId>, in_meta: bool) -> String {
    let id = id
        .map(|i| format!(" {}", quote(&i.to_string())))
        .unwrap_or_default();
    if in_meta {
        format!("the _meta of its {method}{id}")
    } else {
        format!("its {method}{id}")
    }
}

/// The action of an elicitation result (`accept`, `decline`, `cancel`).
fn action_of(result: &Value) -> &str {
    result
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("an answer")
}

/// An elicitation answered towards the server: `reply` is the JSON-RPC
/// response sent.
pub fn answered(id: &RequestId, mode: Option<&str>, reply: &Value) -> String {
    let mode = mode.unwrap_or("form");
    let outcome = match (reply.get("result"), reply.get("error")) {
        (Some(r), _) => action_of(r).to_string(),
        (_, Some(e)) => format!(
            "a JSON-RPC error {} ({})",
            e.get("code").and_then(Value::as_i64).unwrap_or(0),
            e.get("message").and_then(Value::as_str).unwrap_or("")
        ),
        _ => "nothing".into(),
    };
    format!(
        "answered the server's elicitation {} ({mode} mode): {outcome}",
        quote(&id.to_string())
    )
}

/// An elicitation left to the client (`--passthrough-declared`).
pub(crate) fn passed_through(id: &RequestId, mode: Option<&str>) -> String {
    format!(
        "passed the server's elicitation {} ({} mode) to the client: it declared that mode itself (--passthrough-declared)",
        quote(&id.to_string()),
        mode.unwrap_or("form")
    )
}

/// An `input_required` result resolved, and the request sent again.
pub fn retried(
    client_id: &RequestId,
    round: usize,
    responses: &serde_json::Map<String, Value>,
    retry_id: &RequestId,
) -> String {
    let answers: Vec<String> = responses
        .iter()
        .map(|(k, v)| format!("{}: {}", quote(k), action_of(v)))
        .collect();
    format!(
        "resolved input_required for the client's request {} (round {round}; {}) and sent it again as {retry_id}",
        quote(&client_id.to_string()),
        answers.join(", ")
    )
}

/// The final reply to a retried request.
pub(crate) fn retry_done(client_id: &RequestId) -> String {
    format!(
        "the server answered the retried request {}: the reply goes to the client under its own id",
        quote(&client_id.to_string())
    )
}

/// An `input_required` result left to the client.
pub(crate) fn input_required_passed(client_id: &RequestId, why: &str) -> String {
    format!(
        "passed the input_required result for the client's request {} to the client: {why}",
        quote(&client_id.to_string())
    )
}

/// A task's questions answered by elicit (tasks extension).
/// `ours`: a task elicit runs for the client, which sees none of it.
pub(crate) fn task_answered(task_id: &str, update_id: &str, ours: bool) -> String {
    let client = if ours {
        "elicit runs the task for the client"
    } else {
        "the client sees the task working meanwhile"
    };
    format!(
        "answered the questions of the task {} in tasks/update {} ({client})",
        quote(task_id),
        quote(update_id)
    )
}

/// The server's reply to one of elicit's `tasks/update` requests.
pub(crate) fn task_updated(update_id: &RequestId, error: Option<&Value>) -> String {
    let update_id = update_id.to_string();
    match error {
        None => format!(
            "the server took the answers of tasks/update {}",
            quote(&update_id)
        ),
        Some(e) => format!(
            "the server refused tasks/update {}: {}",
            quote(&update_id),
            quote(&e.to_string())
        ),
    }
}

/// A task's questions left to the client.
pub(crate) fn task_passed(task_id: &str) -> String {
    format!(
        "passed the questions of the task {} to the client: it asks for more than elicitations elicit answers",
        quote(task_id)
    )
}

/// A client's call made a task elicit runs for it.
pub(crate) fn task_run(client_id: &RequestId, tool: &str, augmented: bool) -> String {
    let how = if augmented {
        "with task"
    } else {
        "with the tasks extension declared"
    };
    format!(
        "the tool {} runs only as a task and the client runs none: its call {} goes {how}, and elicit follows the task",
        quote(tool),
        quote(&client_id.to_string())
    )
}

/// The server made a client's call a task, which elicit follows.
pub(crate) fn task_run_created(client_id: &RequestId, task_id: &str) -> String {
    format!(
        "the call {} is the task {}: elicit follows it to its end",
        quote(&client_id.to_string()),
        quote(task_id)
    )
}

/// A task elicit ran for a client's call ended, or was given up.
pub(crate) fn task_run_ended(client_id: &RequestId, why: &str) -> String {
    format!(
        "the task of the call {}: {why}",
        quote(&client_id.to_string())
    )
}

/// The server's name from a reply to `initialize` or `server/discover`:
/// `serverInfo.name`, or (2026-07-28) `_meta[serverInfo].name`.
pub(crate) fn server_name(result: &Value) -> Option<String> {
    result
        .get("serverInfo")
        .or_else(|| result.get("_meta").and_then(|m| m.get(SERVER_INFO_META)))
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !n.trim().is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_names_come_from_server_info_or_2026_meta() {
        assert_eq!(
            server_name(&json!({"serverInfo": {"name": "weather"}})).as_deref(),
            Some("weather")
        );
        assert_eq!(
            server_name(&json!({"_meta": {SERVER_INFO_META: {"name": "w26"}}})).as_deref(),
            Some("w26")
        );
        assert_eq!(server_name(&json!({"serverInfo": {"name": " "}})), None);
        assert_eq!(server_name(&json!({"serverInfo": 3})), None);
    }

    #[test]
    fn notes_say_what_was_decided() {
        let n = answered(
            &RequestId::from("q-1".to_string()),
            None,
            &json!({"result": {"action": "accept", "content": {}}}),
        );
        assert_eq!(
            n,
            r#"answered the server's elicitation "q-1" (form mode): accept"#
        );
        let n = capability_added(
            &capability_target(
                elicit_core::elicitation::protocol::wire::INITIALIZE,
                None,
                false,
            ),
            Modes::default(),
        );
        assert_eq!(
            n,
            "declared elicitation (form and url) for the client in its initialize"
        );
    }
}
