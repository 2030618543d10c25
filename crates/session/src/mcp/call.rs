//! `elicit call`: one `tools/call` against a live server, every elicitation
//! on the way resolved, both protocol generations carried.

use serde_json::{Map, Value};

use super::client::{call_params, short, McpClient, Reply};
use super::handler::ElicitHandler;
use super::tasks;
use elicit_core::elicitation::protocol::wire;
use elicit_core::elicitation::protocol::URL_ELICITATION_REQUIRED;
use elicit_core::error::{ElicitError, ServerError};

/// At most this many `input_required` rounds for one call: a server that
/// keeps asking forever (a lost `requestState`, say) is stopped, not obeyed.
pub const MAX_INPUT_ROUNDS: usize = 32;

/// How a `tools/call` ended, when the server answered it at all.
#[derive(Debug, Clone)]
pub enum CallEnd {
    /// The final result, which may be an `isError` one.
    Result(Value),
    /// The server answered the call with a JSON-RPC error: the error object,
    /// and the failure in words.
    Refused {
        /// The error, as given.
        error: Value,
        /// The message, as shown.
        message: String,
    },
}

/// Calls `tool` and returns how it ended, resolving on the way:
/// - server-to-client `elicitation/create` requests (2025 handshake), inside
///   [`McpClient::request`];
/// - `input_required` results (2026-07-28): answered and retried with
///   `inputResponses` and the echoed `requestState`, until complete;
/// - a `-32042` URL-elicitation-required error: resolved, then retried once.
///
/// A JSON-RPC error reply is a [`CallEnd::Refused`], kept apart from a
/// broken session (an `Err`). Whether a call may be made again is
/// [`crate::mcp::session::Session`]'s to decide.
pub(crate) fn call_tool_end(
    client: &mut McpClient,
    handler: &mut ElicitHandler<'_>,
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<CallEnd, ElicitError> {
    let mut retried_url_required = false;
    let as_task = needs_task(client, handler, tool)?;
    let call_params = |tool: &str, arguments: &Map<String, Value>| {
        let mut params = call_params(tool, arguments);
        if as_task {
            tasks::with_task(&mut params);
        }
        params
    };
    let mut params = call_params(tool, arguments);
    for _ in 0..MAX_INPUT_ROUNDS {
        let reply = match client.request(wire::TOOLS_CALL, params.clone(), handler)? {
            Reply::Result(created) if as_task && tasks::created_task(&created).is_some() => {
                let id = tasks::created_task(&created).unwrap_or_default();
                match client.request(wire::TASKS_RESULT, tasks::result_params(&id), handler) {
                    Err(gave_up @ ElicitError::Server(ServerError::NoReply { .. })) => {
                        // As for an extension task: nobody waits for it any more.
                        let _ =
                            client.request(wire::TASKS_CANCEL, tasks::result_params(&id), handler);
                        return Err(gave_up);
                    }
                    reply => reply?,
                }
            }
            Reply::Result(created) if tasks::extension_task(&created).is_some() => {
                let id = tasks::extension_task(&created).unwrap_or_default();
                follow_extension_task(client, handler, &id, &created)?
            }
            reply => reply,
        };
        match reply {
            Reply::Result(result)
                if result.get("resultType").and_then(Value::as_str) == Some("input_required") =>
            {
                let responses = handler.input_responses(&result)?;
                params = call_params(tool, arguments);
                let p = params.as_object_mut().expect("params are an object");
                p.insert("inputResponses".into(), Value::Object(responses));
                // Echoed exactly as received; absent when the server sent none.
                if let Some(state) = result.get("requestState") {
                    p.insert("requestState".into(), state.clone());
                }
            }
            Reply::Result(result) => return Ok(CallEnd::Result(result)),
            Reply::Error(e)
                if e.get("code").and_then(Value::as_i64) == Some(URL_ELICITATION_REQUIRED)
                    && !retried_url_required =>
            {
                retried_url_required = true;
                let list = e
                    .get("data")
                    .and_then(|d| d.get("elicitations"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let total = list.len();
                for (i, item) in list.iter().enumerate() {
                    let position = (total > 1).then_some((i + 1, total));
                    let result = handler.elicit(item, position).map_err(|e| match e {
                        super::handler::HandlerError::Fatal(e) => e,
                        super::handler::HandlerError::Rpc { message, .. } => {
                            ElicitError::Server(ServerError::BadUrlRequired(message))
                        }
                    })?;
                    if result.action != elicit_core::elicitation::protocol::Action::Accept {
                        return Err(ElicitError::Server(ServerError::UrlRequiredNotAccepted {
                            action: result.action.as_str(),
                        }));
                    }
                }
                params = call_params(tool, arguments);
            }
            Reply::Error(e) => {
                let again = if retried_url_required
                    && e.get("code").and_then(Value::as_i64) == Some(URL_ELICITATION_REQUIRED)
                {
                    " (still, after its URL elicitation was resolved and the call retried once)"
                } else {
                    ""
                };
                let message = format!("tools/call {tool} failed: {}{again}", short(&e));
                return Ok(CallEnd::Refused { error: e, message });
            }
        }
    }
    Err(ElicitError::Server(ServerError::TooManyRounds {
        rounds: MAX_INPUT_ROUNDS,
    }))
}

/// Follows a task of the 2026-07-28 tasks extension to its end: polls
/// `tasks/get` (at the task's `pollIntervalMs`, within
/// [`tasks::POLL_INTERVAL_BOUNDS`]), answers each question of an
/// `input_required` task once with `tasks/update`, and returns the task's
/// result (`completed`) or error (`failed`, `cancelled`) as the call's
/// reply. Polling stops after `--timeout` (else the task lifetime elicit
/// asks for, [`tasks::TASK_TTL_MS`]) without counting the time a person
/// spends answering.
fn follow_extension_task(
    client: &mut McpClient,
    handler: &mut ElicitHandler<'_>,
    task_id: &str,
    created: &Value,
) -> Result<Reply, ElicitError> {
    let budget = client
        .timeout
        .unwrap_or(std::time::Duration::from_millis(tasks::TASK_TTL_MS));
    let started = std::time::Instant::now();
    let answering_before = handler.answering;
    let mut answered = std::collections::HashSet::new();
    let mut interval = tasks::poll_interval(created);
    let mut rounds = 0;
    let mut first = true;
    loop {
        if !first {
            let spent = started
                .elapsed()
                .saturating_sub(handler.answering.saturating_sub(answering_before));
            if spent >= budget {
                // Nobody waits for the task any more: the server is asked
                // to stop it rather than run it for nobody. Its reply (or
                // none, within the same timeout) changes nothing.
                let _ = client.request(wire::TASKS_CANCEL, tasks::get_params(task_id), handler);
                return Err(ElicitError::Server(ServerError::NoReply {
                    method: format!("{} (the task did not end)", wire::TASKS_GET),
                    waited: budget,
                }));
            }
            std::thread::sleep(interval.min(budget - spent));
        }
        first = false;
        let task = match client.request(wire::TASKS_GET, tasks::get_params(task_id), handler)? {
            Reply::Result(task) => task,
            error => return Ok(error),
        };
        interval = tasks::poll_interval(&task);
        match tasks::status(&task) {
            tasks::Status::Completed => {
                return Ok(Reply::Result(
                    task.get("result").cloned().unwrap_or(Value::Null),
                ))
            }
            tasks::Status::Failed => {
                return Ok(Reply::Error(task.get("error").cloned().unwrap_or_else(
                    || {
                        serde_json::json!({"code": elicit_core::error::rpc_code::INTERNAL_ERROR,
                        "message": "the task failed and gave no error"})
                    },
                )))
            }
            tasks::Status::Cancelled => {
                return Ok(Reply::Error(serde_json::json!({
                    "code": elicit_core::error::rpc_code::INTERNAL_ERROR,
                    "message": "the server cancelled the task",
                })))
            }
            tasks::Status::InputRequired => {
                let Some(questions) = tasks::new_questions(&task, &answered) else {
                    continue;
                };
                rounds += 1;
                if rounds > MAX_INPUT_ROUNDS {
                    return Err(ElicitError::Server(ServerError::TooManyRounds {
                        rounds: MAX_INPUT_ROUNDS,
                    }));
                }
                let responses = handler.input_responses(&questions)?;
                answered.extend(responses.keys().cloned());
                let update = tasks::update_params(task_id, responses);
                if let Reply::Error(e) = client.request(wire::TASKS_UPDATE, update, handler)? {
                    return Ok(Reply::Error(e));
                }
                // Answered: the next poll comes at once.
                first = true;
            }
            tasks::Status::Working | tasks::Status::Other => {}
        }
    }
}

/// Whether `tool` must be called as a task ([`tasks`]). The tool list is
/// read first when the server runs tool calls as tasks and it was not read
/// yet in this session (a replay calls without listing); a server that
/// cannot list its tools is called plainly, and says so itself.
fn needs_task(
    client: &mut McpClient,
    handler: &mut ElicitHandler<'_>,
    tool: &str,
) -> Result<bool, ElicitError> {
    if !tasks::server_runs_tool_tasks(client.server_capabilities.as_ref()) {
        return Ok(false);
    }
    if client.tools.is_none() {
        if let Err(e) = client.list_tools(handler) {
            if !matches!(e, ElicitError::Server(ServerError::ToolsListFailed { .. })) {
                return Err(e);
            }
        }
    }
    Ok(tasks::needs_task(
        client.server_capabilities.as_ref(),
        client.tools.as_deref().unwrap_or_default(),
        tool,
    ))
}

/// Builds a tool's arguments from `--args JSON` and `--arg KEY=VALUE`
/// pairs, each value read by the kind the tool's `inputSchema` gives it
/// (the same schema model and coercion as form answers).
pub fn tool_arguments(
    input_schema: Option<&Value>,
    json: Option<&str>,
    pairs: &[String],
) -> Result<Map<String, Value>, ElicitError> {
    let mut args = match json {
        Some(text) => match elicit_core::elicitation::input::parse_json(text)
            .map_err(|e| ElicitError::Usage(format!("--args: {e}")))?
        {
            Value::Object(m) => m,
            other => {
                return Err(ElicitError::Usage(format!(
                    "--args must be a JSON object, found {}",
                    elicit_core::elicitation::json_kind(&other)
                )))
            }
        },
        None => Map::new(),
    };
    let form = input_schema
        .filter(|s| s.is_object())
        .and_then(|s| elicit_core::elicitation::schema::FormSchema::parse(s).ok());
    for pair in pairs {
        let (name, text) = pair
            .split_once('=')
            .ok_or_else(|| ElicitError::Usage(format!("--arg {pair:?}: expected KEY=VALUE")))?;
        let value = match form.as_ref().and_then(|f| f.field(name)) {
            Some(field) => field
                .coerce(text)
                .map_err(|reason| ElicitError::Usage(format!("--arg {name}: {reason}")))?,
            // No schema for it: JSON when it parses as JSON, else a string.
            None => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())),
        };
        match (args.get_mut(name), value) {
            // Repeating a multi-select name appends, as with --answer.
            (Some(Value::Array(existing)), Value::Array(more)) => existing.extend(more),
            (_, value) => {
                args.insert(name.to_string(), value);
            }
        }
    }
    Ok(args)
}

/// The tools a server lists, as `(name, label)` pairs for a picker: the
/// label adds the first line of the description.
pub fn tool_choices(tools: &[Value]) -> Vec<(String, String)> {
    tools
        .iter()
        .filter_map(|t| {
            let name = t.get("name")?.as_str()?.to_string();
            let label = match t.get("description").and_then(Value::as_str) {
                Some(d) => format!("{name} — {}", d.lines().next().unwrap_or("")),
                None => name.clone(),
            };
            Some((name, label))
        })
        .collect()
}

/// The `inputSchema` of the tool called `name`, if the server lists it.
pub fn input_schema<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|t| t.get("inputSchema"))
}

/// What became of a tool's arguments form.
#[derive(Debug, Clone, PartialEq)]
pub enum AskedArguments {
    /// The arguments, submitted.
    Given(Map<String, Value>),
    /// The schema has no properties: there was nothing to ask.
    NothingToAsk,
    /// Declined or cancelled: the tool is not called.
    Refused(elicit_core::elicitation::protocol::Action),
}

/// Asks a tool's arguments with the form engine, from its `inputSchema`
/// (a flat schema is a form like any elicitation's): the fields in
/// `missing`, with `given` already filled in. The form is elicit's own,
/// not the server's, and its header says so.
pub fn ask_arguments(
    tool: &str,
    schema: &Value,
    given: Map<String, Value>,
    missing: Option<Vec<String>>,
    handler: &mut ElicitHandler<'_>,
) -> Result<AskedArguments, ElicitError> {
    let has_fields = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if !has_fields {
        return Ok(AskedArguments::NothingToAsk);
    }
    let of = handler
        .server_name
        .as_deref()
        .map(|s| format!(" of {s}"))
        .unwrap_or_default();
    let params = elicit_core::elicitation::protocol::ElicitationParams::form(
        format!("The arguments to call the tool {tool}{of} with"),
        schema.clone(),
    );
    let mut e =
        elicit_core::elicitation::resolve::Elicitation::prepare(params, &mut handler.cache)?;
    e.server = Some("elicit".into());
    e.asked_by_elicit = true;
    let missing = missing.unwrap_or_else(|| {
        e.form
            .as_ref()
            .map(|f| f.fields.iter().map(|f| f.name.clone()).collect())
            .unwrap_or_default()
    });
    let answer = handler.person.resolve(
        &e,
        elicit_core::elicitation::resolve::Pending::Form {
            values: given,
            missing,
        },
    )?;
    if !answer.ok {
        let declined =
            answer.reason.as_deref() == Some(elicit_core::elicitation::contract::REASON_DECLINED);
        return Ok(AskedArguments::Refused(if declined {
            elicit_core::elicitation::protocol::Action::Decline
        } else {
            elicit_core::elicitation::protocol::Action::Cancel
        }));
    }
    Ok(AskedArguments::Given(answer.data.unwrap_or_default()))
}

/// The required properties of a tool's `inputSchema` that `arguments` lacks,
/// in the schema's order.
pub fn missing_required(schema: &Value, arguments: &Map<String, Value>) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .filter(|k| required.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    // A required name with no property schema is still required.
    for r in &required {
        if !names.iter().any(|n| n == r) {
            names.push(r.to_string());
        }
    }
    names.retain(|n| !arguments.contains_key(n));
    names
}

/// Up to this many tools, a wrong name lists them all (nearest first).
pub const LIST_ALL_TOOLS_UP_TO: usize = 20;

/// The error for a tool the server does not list: the nearest names first
/// (by edit distance, so `get_sum` finds `get-sum`); every name when there
/// are few ([`LIST_ALL_TOOLS_UP_TO`]), else the five nearest and how many
/// more. Edit distance alone misses a differently worded name (`add` for
/// `get-sum`), and a short list costs nothing to read.
pub fn unknown_tool(name: &str, tools: &[Value]) -> ElicitError {
    let mut names: Vec<(f64, &str)> = tools
        .iter()
        .filter_map(|t| t.get("name")?.as_str())
        .map(|n| (strsim::normalized_damerau_levenshtein(name, n), n))
        .collect();
    names.sort_by(|a, b| b.0.total_cmp(&a.0));
    let shown = if names.len() <= LIST_ALL_TOOLS_UP_TO {
        names.len()
    } else {
        5
    };
    let near: Vec<String> = names
        .iter()
        .take(shown)
        .map(|(_, n)| elicit_core::text::sanitize::sanitize_line(n))
        .collect();
    let more = names.len().saturating_sub(near.len());
    let tail = match (more, names.len()) {
        (0, 1) => " (its only tool)".to_string(),
        (0, n) => format!(" (all {n} of its tools)"),
        (more, _) => format!(" (and {more} more)"),
    };
    ElicitError::Usage(format!(
        "the server has no tool named {:?}; nearest: {}{tail}",
        elicit_core::text::sanitize::sanitize_line(name),
        near.join(", ")
    ))
}

/// A tool result for a person at a terminal: each text block as text,
/// other content named (`[image image/png, 2.1 KiB]`), structured content
/// as indented JSON, an error marked. Everything is server text, so all of
/// it is sanitised.
pub fn readable_tool_result(result: &Value) -> String {
    use elicit_core::text::sanitize::{sanitize_block, sanitize_line};
    let mut parts: Vec<String> = Vec::new();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        parts.push("The tool reported an error:".into());
    }
    for item in result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("?");
        let field = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
        parts.push(match kind {
            "text" => sanitize_block(field("text")),
            "image" | "audio" => format!(
                "[{kind} {}, {} of base64 data]",
                sanitize_line(field("mimeType")),
                size(field("data").len())
            ),
            "resource_link" => format!("[link {}]", sanitize_line(field("uri"))),
            "resource" => {
                let r = item.get("resource").cloned().unwrap_or(Value::Null);
                let uri = r.get("uri").and_then(Value::as_str).unwrap_or("");
                match r.get("text").and_then(Value::as_str) {
                    Some(t) => format!("[resource {}]\n{}", sanitize_line(uri), sanitize_block(t)),
                    None => format!("[resource {}]", sanitize_line(uri)),
                }
            }
            other => format!("[{} content]", sanitize_line(other)),
        });
    }
    // Structured content that only repeats a text block (FastMCP wraps a
    // string result as {"result": TEXT}; SDKs put the JSON of a text block
    // there too) is not shown twice.
    let texts: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|i| i.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|i| i.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let repeats = |structured: &Value| {
        let wrapped = structured
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("result"));
        texts.iter().any(|t| {
            wrapped.and_then(Value::as_str) == Some(*t)
                || serde_json::from_str::<Value>(t).ok().as_ref() == Some(structured)
                || wrapped
                    .is_some_and(|w| serde_json::from_str::<Value>(t).ok().as_ref() == Some(w))
        })
    };
    if let Some(structured) = result.get("structuredContent").filter(|s| !repeats(s)) {
        let json = serde_json::to_string_pretty(structured).unwrap_or_default();
        parts.push(format!("Structured content:\n{}", sanitize_block(&json)));
    }
    if parts.is_empty() {
        parts.push("(the tool returned no content)".into());
    }
    parts.join("\n")
}

fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_coerced_by_the_input_schema() {
        let schema = json!({"type":"object","properties":{
            "n":{"type":"integer"},"flag":{"type":"boolean"},"name":{"type":"string"},
            "tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}});
        let args = tool_arguments(
            Some(&schema),
            Some(r#"{"name":"base"}"#),
            &[
                "n=3".into(),
                "flag=yes".into(),
                "tags=a".into(),
                "tags=b".into(),
                "extra=[1]".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"name":"base","n":3,"flag":true,"tags":["a","b"],"extra":[1]})
        );
        assert!(tool_arguments(Some(&schema), None, &["n=x".into()]).is_err());
        assert!(tool_arguments(None, Some("[1]"), &[]).is_err());
        let bad = tool_arguments(None, Some("{message:1}"), &[]).unwrap_err();
        assert!(
            bad.to_string()
                .starts_with("--args: invalid JSON at line 1, column 2"),
            "{bad}"
        );
    }

    #[test]
    fn required_arguments_are_found_in_schema_order() {
        let schema = json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c":{}},"required":["b","a","z"]});
        let mut given = Map::new();
        given.insert("a".into(), json!(2));
        assert_eq!(missing_required(&schema, &given), vec!["b", "z"]);
    }

    #[test]
    fn tool_results_read_as_text_with_server_text_neutralised() {
        let r = json!({"isError": true, "content": [
            {"type":"text","text":"line one\nline \u{1b}]52;c;AAAA\u{7}two"},
            {"type":"image","mimeType":"image/png","data":"AAAA"},
            {"type":"resource_link","uri":"file:///x"}
        ], "structuredContent": {"n": 1}});
        let text = readable_tool_result(&r);
        assert!(
            text.starts_with("The tool reported an error:\nline one\nline two"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.contains("[image image/png, 4 B of base64 data]"));
        assert!(text.contains("[link file:///x]"));
        assert!(text.contains("Structured content:\n{\n  \"n\": 1\n}"));
    }

    #[test]
    fn structured_content_that_repeats_a_text_block_is_shown_once() {
        let fastmcp = json!({"content": [{"type": "text", "text": "deployed to eu"}],
            "structuredContent": {"result": "deployed to eu"}, "isError": false});
        assert_eq!(readable_tool_result(&fastmcp), "deployed to eu");
        let sdk = json!({"content": [{"type": "text", "text": "{\"n\": 1}"}],
            "structuredContent": {"n": 1}});
        assert!(!readable_tool_result(&sdk).contains("Structured content"));
        let other = json!({"content": [{"type": "text", "text": "done"}],
            "structuredContent": {"n": 1}});
        assert!(readable_tool_result(&other).contains("Structured content"));
    }

    #[test]
    fn unknown_tools_name_the_nearest() {
        let tools = vec![
            json!({"name":"get-sum"}),
            json!({"name":"echo"}),
            json!({"name":"get-env"}),
        ];
        let e = unknown_tool("get_sum", &tools).to_string();
        assert!(
            e.contains("nearest: get-sum, get-env, echo (all 3 of its tools)"),
            "{e}"
        );
        assert!(!e.contains("more"));
        // A name edit distance misses is still listed when the tools are few.
        let many: Vec<Value> = (0..19)
            .map(|i| json!({"name": format!("tool-{i}")}))
            .chain([json!({"name": "get-sum"})])
            .collect();
        let e = unknown_tool("add", &many).to_string();
        assert!(e.contains("get-sum"), "{e}");
        assert!(!e.contains("more"), "{e}");
        let more: Vec<Value> = (0..21).map(|i| json!({"name": format!("t{i}")})).collect();
        let e = unknown_tool("x", &more).to_string();
        assert!(
            e.contains("; nearest: ") && e.ends_with("(and 16 more)"),
            "{e}"
        );
    }
}
