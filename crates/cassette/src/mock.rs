//! `elicit mock`: recorded cassettes served as an MCP server. Its tools are
//! the cassettes' tools (an input schema derived from the recorded
//! arguments); a call sends the recorded elicitations in order and returns
//! the recorded result. Both protocol generations: on a handshake
//! connection (2025-06-18, 2025-11-25) each elicitation is a server request
//! `elicitation/create`; on 2026-07-28 each is one `input_required` round,
//! its place in the flow carried in `requestState`.
//!
//! The client's answers are checked against the recorded ones with the
//! comparison `elicit test` uses for results (`super::diff::result_diff`),
//! leaving out the entry's `ignore` pointers and any value recorded as a
//! secret (`{"$env": …}`). A mismatch is said on stderr and appended to the
//! result (a text block, and `_meta."elicit/mock".mismatches`); with
//! `strict`, the call returns a tool error instead of the recorded result.
//!
//! This is transport-free: [`Mock::handle`] takes one client message and
//! gives the messages to send, each with the call it belongs to
//! ([`stdio`] and [`http`] carry them).

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::diff::result_diff;
use super::{AnswerSpec, Cassette, Exchange, SECRET_VALUE_KEY};
use elicit_core::elicitation::answers::FormPlan;
use elicit_core::elicitation::protocol::results::complete_result;
use elicit_core::elicitation::protocol::{wire, Revision};
use elicit_core::elicitation::schema::FormSchema;
use elicit_core::error::rpc_code;
use elicit_core::text::sanitize::sanitize_line;

pub mod http;
pub mod stdio;

/// The `_meta` key of the mismatches added to a result.
pub const MISMATCH_META: &str = "elicit/mock";

/// A message to send, and the client request (`tools/call`) it belongs to:
/// an elicitation it asks, or its final response.
#[derive(Debug, Clone, PartialEq)]
pub struct Out {
    /// The id of the `tools/call` it belongs to (None: no call).
    pub call: Option<Value>,
    /// The message itself.
    pub message: Value,
}

/// A handshake call in flight, waiting for the answer to one elicitation.
struct Pending {
    call: Value,
    tool: usize,
    step: usize,
    mismatches: Vec<String>,
}

/// The served cassettes and the calls in flight.
pub struct Mock {
    cassettes: Vec<Cassette>,
    strict: bool,
    /// Our `elicitation/create` ids, each with its call.
    pending: HashMap<String, Pending>,
    next_id: u64,
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The JSON type name of a recorded argument, for the derived input schema.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A tool's input schema from its recorded arguments: each one a property
/// of its JSON type, its recorded value as the default, none required.
pub fn input_schema(arguments: &Map<String, Value>) -> Value {
    let properties: Map<String, Value> = arguments
        .iter()
        .map(|(k, v)| (k.clone(), json!({"type": type_of(v), "default": v})))
        .collect();
    json!({"type": "object", "properties": properties})
}

/// Whether a request speaks 2026-07-28 (its `_meta` names the version).
fn stateless(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(wire::VERSION_META))
        .and_then(Value::as_str)
        == Some(wire::V2026_07_28)
}

/// The revision a request is answered in: 2026-07-28 when it says so,
/// else the handshake's (whose results carry nothing more).
fn revision_of(params: &Value) -> Revision {
    if stateless(params) {
        Revision::V2026_07_28
    } else {
        Revision::V2025_11_25
    }
}

/// `result` as the reply to `method` in `revision`, with what the revision
/// requires of every result (`resultType`, a list's caching hints).
fn reply_in(id: &Value, method: &str, revision: Revision, mut result: Value) -> Value {
    complete_result(method, revision, &mut result);
    reply(id, result)
}

/// What the cassette holds as the answer to `exchange`, as an ElicitResult
/// (`action`, `content`), and the pointers not compared: the entry's
/// `ignore`, and each value recorded as a secret.
fn expected(exchange: &Exchange) -> (Value, Vec<String>) {
    let mut ignore = exchange.ignore.clone();
    let value = match &exchange.answer {
        AnswerSpec::Result(v) => {
            let mut r = Map::new();
            for key in ["action", "content"] {
                if let Some(x) = v.get(key) {
                    r.insert(key.into(), x.clone());
                }
            }
            Value::Object(r)
        }
        other => planned(exchange, other),
    };
    if let Some(content) = value.get("content").and_then(Value::as_object) {
        for (name, v) in content {
            if v.get(SECRET_VALUE_KEY).is_some() {
                ignore.push(format!("/content/{}", super::escape_pointer_token(name)));
            }
        }
    }
    (value, ignore)
}

/// A hand-written answer (words, values) as the ElicitResult it makes of
/// the recorded form, by the schema model.
fn planned(exchange: &Exchange, answer: &AnswerSpec) -> Value {
    let form = exchange
        .request
        .get("requestedSchema")
        .and_then(|s| FormSchema::parse(s).ok());
    let plan = answer.scripted().ok().and_then(|s| match &form {
        Some(f) => s.plan_form(f, false).ok(),
        None => s
            .plan_url()
            .ok()
            .flatten()
            .map(|a| FormPlan::Decided(a, Map::new())),
    });
    match plan {
        Some(FormPlan::Decided(action, content))
            if form.is_some() && action.as_str() == "accept" =>
        {
            json!({"action": "accept", "content": content})
        }
        Some(FormPlan::Decided(action, _)) => json!({"action": action.as_str()}),
        _ => json!({"action": "accept"}),
    }
}

/// How the answer a client sent to elicitation `n` (1-based) differs from
/// the recorded one: none, or one line naming the fields that differ and
/// each difference.
pub fn answer_mismatch(exchange: &Exchange, n: usize, sent: &Value) -> Vec<String> {
    let (want, ignore) = expected(exchange);
    let mut got = Map::new();
    for key in ["action", "content"] {
        if let Some(x) = sent.get(key) {
            got.insert(key.into(), x.clone());
        }
    }
    let diff = result_diff(&want, &Value::Object(got), &ignore, &[]);
    if diff.is_empty() {
        return Vec::new();
    }
    let mut fields: Vec<String> = Vec::new();
    for name in diff.iter().filter_map(|l| differing_field(l)) {
        if !fields.contains(&name) {
            fields.push(name);
        }
    }
    vec![format!(
        "elicitation {n}: the answer differs from the recorded one ({}): {}",
        fields.join(", "),
        diff.join("; ")
    )]
}

/// The field a difference line (`~ /content/name: …`) is about: the
/// content's key, else the answer's own key (`action`).
fn differing_field(line: &str) -> Option<String> {
    let pointer = line.get(2..)?.split(": ").next()?;
    let mut tokens = pointer.split('/').skip(1);
    let first = tokens.next()?;
    let token = match (first, tokens.next()) {
        ("content", Some(field)) => field,
        _ => first,
    };
    Some(token.replace("~1", "/").replace("~0", "~"))
}

impl Mock {
    /// Serves `cassettes`; a tool recorded in several is served from the
    /// one whose arguments equal the call's, else the first.
    pub fn new(cassettes: Vec<Cassette>, strict: bool) -> Self {
        Mock {
            cassettes,
            strict,
            pending: HashMap::new(),
            next_id: 0,
        }
    }

    /// `tools/list`'s tools: each tool name once.
    pub fn tools(&self) -> Vec<Value> {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for c in &self.cassettes {
            if seen.contains(&c.tool) {
                continue;
            }
            seen.push(c.tool.clone());
            out.push(json!({
                "name": c.tool,
                "description": format!("recorded by elicit: {} elicitation(s)", c.elicitations.len()),
                "inputSchema": input_schema(&c.arguments),
            }));
        }
        out
    }

    /// Handles one message from the client; returns what to send.
    pub fn handle(&mut self, message: &Value) -> Vec<Out> {
        let id = message.get("id").cloned();
        let method = message.get("method").and_then(Value::as_str);
        let params = message.get("params").cloned().unwrap_or(json!({}));
        match (method, id) {
            (Some(m), Some(id)) => self.request(m, &id, &params),
            (Some(_), None) => Vec::new(),
            (None, Some(id)) => self.response(&id, message),
            (None, None) => Vec::new(),
        }
    }

    fn request(&mut self, method: &str, id: &Value, params: &Value) -> Vec<Out> {
        let modern = stateless(params);
        let revision = revision_of(params);
        let complete = |r: Value| {
            vec![Out {
                call: None,
                message: reply_in(id, method, revision, r),
            }]
        };
        match method {
            "initialize" => {
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = match asked {
                    Some(v @ (wire::V2025_06_18 | wire::V2025_11_25)) => v,
                    _ => wire::V2025_11_25,
                };
                complete(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": server_info(),
                }))
            }
            // Only 2026-07-28 has it, whatever the request's `_meta` says.
            wire::SERVER_DISCOVER => vec![Out {
                call: None,
                message: reply_in(
                    id,
                    method,
                    Revision::V2026_07_28,
                    json!({
                        "supportedVersions": [wire::V2026_07_28],
                        "capabilities": {"tools": {}},
                        "serverInfo": server_info(),
                    }),
                ),
            }],
            wire::PING => complete(json!({})),
            "tools/list" => complete(json!({"tools": self.tools()})),
            "tools/call" if modern => self.round(id, params),
            "tools/call" => self.call(id, params),
            other => vec![Out {
                call: None,
                message: rpc_error(
                    id,
                    rpc_code::METHOD_NOT_FOUND,
                    &format!("elicit mock does not serve {}", sanitize_line(other)),
                ),
            }],
        }
    }

    /// The cassette for a call: by tool name, then equal arguments.
    fn find(&self, params: &Value) -> Option<usize> {
        let name = params.get("name").and_then(Value::as_str)?;
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let same = |c: &Cassette| c.tool == name;
        self.cassettes
            .iter()
            .position(|c| same(c) && Value::Object(c.arguments.clone()) == args)
            .or_else(|| self.cassettes.iter().position(same))
    }

    fn unknown_tool(&self, id: &Value, params: &Value) -> Vec<Out> {
        let name = params.get("name").and_then(Value::as_str).unwrap_or("");
        vec![Out {
            call: Some(id.clone()),
            message: rpc_error(
                id,
                rpc_code::INVALID_PARAMS,
                &format!("unknown tool {}", sanitize_line(name)),
            ),
        }]
    }

    /// A handshake `tools/call`: the first elicitation, or the result.
    fn call(&mut self, id: &Value, params: &Value) -> Vec<Out> {
        let Some(tool) = self.find(params) else {
            return self.unknown_tool(id, params);
        };
        self.next_step(Pending {
            call: id.clone(),
            tool,
            step: 0,
            mismatches: Vec::new(),
        })
    }

    fn next_step(&mut self, p: Pending) -> Vec<Out> {
        let c = &self.cassettes[p.tool];
        let Some(exchange) = c.elicitations.get(p.step) else {
            let message = match self.recorded_refusal(p.tool, &p.mismatches) {
                Some(error) => json!({"jsonrpc": "2.0", "id": p.call, "error": error}),
                None => reply_in(
                    &p.call,
                    wire::TOOLS_CALL,
                    Revision::V2025_11_25,
                    self.final_result(p.tool, &p.mismatches),
                ),
            };
            return vec![Out {
                call: Some(p.call),
                message,
            }];
        };
        self.next_id += 1;
        let ask_id = format!("elicit-mock-{}", self.next_id);
        let message = json!({
            "jsonrpc": "2.0",
            "id": ask_id,
            "method": wire::ELICITATION_METHOD,
            "params": exchange.request,
        });
        let call = p.call.clone();
        self.pending.insert(ask_id, p);
        vec![Out {
            call: Some(call),
            message,
        }]
    }

    /// Forgets the elicitation `ask` (our `elicitation/create` id) and its
    /// call: the call was abandoned (its stream ended, or it waited past
    /// its time), so no answer is taken for it any more.
    pub fn forget(&mut self, ask: &Value) {
        self.pending.remove(&pending_key(ask));
    }

    /// How many elicitations wait for an answer.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }

    /// The client's reply to one of our elicitations.
    fn response(&mut self, id: &Value, message: &Value) -> Vec<Out> {
        let Some(mut p) = self.pending.remove(&pending_key(id)) else {
            return Vec::new();
        };
        let n = p.step + 1;
        let exchange = &self.cassettes[p.tool].elicitations[p.step];
        let lines = match message.get("result") {
            Some(r) => answer_mismatch(exchange, n, r),
            None => vec![format!(
                "elicitation {n}: the client answered with an error: {}",
                message
                    .get("error")
                    .map(super::diff::show)
                    .unwrap_or_default()
            )],
        };
        say(&lines);
        p.mismatches.extend(lines);
        p.step += 1;
        self.next_step(p)
    }

    /// A 2026-07-28 `tools/call` round: the answer to the last round is
    /// checked, then the next elicitation goes out as `input_required`, or
    /// the result.
    fn round(&mut self, id: &Value, params: &Value) -> Vec<Out> {
        let Some(tool) = self.find(params) else {
            return self.unknown_tool(id, params);
        };
        let state = params
            .get("requestState")
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str::<Value>(s).ok());
        let step = state.as_ref().and_then(|s| s["step"].as_u64()).unwrap_or(0) as usize;
        let mut mismatches: Vec<String> = state
            .as_ref()
            .and_then(|s| serde_json::from_value(s["mismatches"].clone()).ok())
            .unwrap_or_default();
        let c = &self.cassettes[tool];
        if step > 0 {
            if let Some(exchange) = c.elicitations.get(step - 1) {
                let key = round_key(exchange, step - 1);
                let lines = match params.get("inputResponses").and_then(|r| r.get(&key)) {
                    Some(sent) => answer_mismatch(exchange, step, sent),
                    None => vec![format!(
                        "elicitation {step}: no answer under the key {}",
                        sanitize_line(&key)
                    )],
                };
                say(&lines);
                mismatches.extend(lines);
            }
        }
        let result = match c.elicitations.get(step) {
            Some(exchange) => {
                let state = json!({"step": step + 1, "mismatches": mismatches}).to_string();
                json!({
                    wire::RESULT_TYPE: wire::RESULT_INPUT_REQUIRED,
                    "inputRequests": {round_key(exchange, step): {"method": wire::ELICITATION_METHOD, "params": exchange.request}},
                    "requestState": state,
                })
            }
            None => {
                if let Some(error) = self.recorded_refusal(tool, &mismatches) {
                    return vec![Out {
                        call: Some(id.clone()),
                        message: json!({"jsonrpc": "2.0", "id": id, "error": error}),
                    }];
                }
                self.final_result(tool, &mismatches)
            }
        };
        vec![Out {
            call: Some(id.clone()),
            message: reply_in(id, wire::TOOLS_CALL, Revision::V2026_07_28, result),
        }]
    }

    /// The recorded refusal (a cassette with `error`), the mismatches said
    /// in its message; `None` when the cassette recorded a result, or under
    /// `strict` with a mismatch (a tool error names them then).
    fn recorded_refusal(&self, tool: usize, mismatches: &[String]) -> Option<Value> {
        let mut error = self.cassettes[tool].error.clone()?;
        if mismatches.is_empty() {
            return Some(error);
        }
        if self.strict {
            return None;
        }
        let said = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        error["message"] = json!(format!("{said} (elicit mock: {})", mismatches.join("; ")));
        error["data"] = json!({MISMATCH_META: {"mismatches": mismatches}});
        Some(error)
    }

    /// The recorded result, with the mismatches said in it; under
    /// `strict`, a tool error naming them instead.
    fn final_result(&self, tool: usize, mismatches: &[String]) -> Value {
        let recorded = self.cassettes[tool]
            .result
            .clone()
            .unwrap_or_else(|| json!({"content": []}));
        if mismatches.is_empty() {
            return recorded;
        }
        let text = format!("elicit mock: {}", mismatches.join("; "));
        if self.strict {
            return json!({
                "isError": true,
                "content": [{"type": "text", "text": text}],
                "_meta": {MISMATCH_META: {"mismatches": mismatches}},
            });
        }
        let mut r = recorded;
        if let Some(content) = r.get_mut("content").and_then(Value::as_array_mut) {
            content.push(json!({"type": "text", "text": text}));
        }
        if let Some(obj) = r.as_object_mut() {
            let meta = obj.entry("_meta").or_insert_with(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.insert(MISMATCH_META.into(), json!({"mismatches": mismatches}));
            }
        }
        r
    }
}

/// The key of a pending elicitation: its id's text.
fn pending_key(id: &Value) -> String {
    id.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| id.to_string())
}

/// The `inputRequests` key of a round: the recorded one, else a made one.
fn round_key(exchange: &Exchange, step: usize) -> String {
    exchange
        .key
        .clone()
        .unwrap_or_else(|| format!("elicitation-{}", step + 1))
}

fn server_info() -> Value {
    json!({"name": "elicit-mock", "version": env!("CARGO_PKG_VERSION")})
}

/// Says each mismatch on stderr.
fn say(lines: &[String]) {
    for l in lines {
        eprintln!("elicit mock: {}", sanitize_line(l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mock(strict: bool) -> Mock {
        let c = Cassette::from_value(&json!({
            "elicit": "cassette/1",
            "server": {"command": ["x"]},
            "tool": "ask",
            "arguments": {"n": 1},
            "elicitations": [{"request": {"message": "Name?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}}},
                "answer": {"action": "accept", "content": {"name": "Ada"}}}],
            "result": {"content": [{"type": "text", "text": "hi Ada"}]}
        }))
        .unwrap();
        Mock::new(vec![c], strict)
    }

    #[test]
    fn a_handshake_call_asks_then_returns_the_recorded_result() {
        let mut m = mock(false);
        let out = m.handle(
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}}),
        );
        assert_eq!(out[0].message["method"], "elicitation/create");
        let ask = out[0].message["id"].clone();
        let out = m.handle(&json!({"jsonrpc": "2.0", "id": ask, "result": {"action": "accept", "content": {"name": "Ada"}}}));
        assert_eq!(
            out[0].message,
            json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi Ada"}]}})
        );
    }

    #[test]
    fn a_recorded_refusal_is_sent_as_the_error_with_mismatches_said() {
        let refusing = |strict: bool| {
            let mut m = mock(strict);
            m.cassettes[0].result = None;
            m.cassettes[0].error = Some(json!({"code": -32602, "message": "bad content"}));
            m
        };
        let call =
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}});
        let mut m = refusing(false);
        let out = m.handle(&call);
        let ask = out[0].message["id"].clone();
        let out = m.handle(&json!({"jsonrpc": "2.0", "id": ask, "result": {"action": "accept", "content": {"name": "Ada"}}}));
        assert_eq!(
            out[0].message,
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad content"}})
        );
        // A wrong answer: said in the refusal; under strict, a tool error.
        for strict in [false, true] {
            let mut m = refusing(strict);
            let out = m.handle(&call);
            let ask = out[0].message["id"].clone();
            let out = m.handle(&json!({"jsonrpc": "2.0", "id": ask, "result": {"action": "accept", "content": {"name": "Bob"}}}));
            let sent = &out[0].message;
            if strict {
                assert_eq!(sent["result"]["isError"], true, "{sent}");
            } else {
                assert_eq!(sent["error"]["code"], -32602, "{sent}");
                let said = sent["error"]["message"].as_str().unwrap();
                assert!(said.starts_with("bad content (elicit mock: "), "{said}");
            }
        }
        // 2026-07-28: the last round is answered with the error.
        let mut m = refusing(false);
        let p = json!({"name": "ask", "_meta": {wire::VERSION_META: wire::V2026_07_28}});
        let out =
            m.handle(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p}));
        let mut retry = p.clone();
        retry["requestState"] = out[0].message["result"]["requestState"].clone();
        retry["inputResponses"] =
            json!({"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}});
        let out =
            m.handle(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}));
        assert_eq!(
            out[0].message["error"]["code"], -32602,
            "{}",
            out[0].message
        );
    }

    /// Every result the mock sends a 2026-07-28 client is valid there: a
    /// `resultType` on each, the caching hints on `server/discover` and
    /// `tools/list`, though the cassette was recorded on the handshake; a
    /// handshake client gets none of them.
    #[test]
    fn every_result_carries_what_its_revision_requires() {
        let mut m = mock(false);
        let meta = json!({wire::VERSION_META: wire::V2026_07_28});
        let ask = |m: &mut Mock, method: &str, params: Value| {
            let out =
                m.handle(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
            out[0].message["result"].clone()
        };
        for method in [wire::SERVER_DISCOVER, wire::TOOLS_LIST] {
            let r = ask(&mut m, method, json!({"_meta": meta}));
            assert_eq!(
                (&r["resultType"], &r["ttlMs"], &r["cacheScope"]),
                (&json!("complete"), &json!(0), &json!("private")),
                "{method}: {r}"
            );
        }
        let r = ask(
            &mut m,
            wire::TOOLS_CALL,
            json!({"name": "ask", "_meta": meta}),
        );
        assert_eq!(r["resultType"], "input_required", "{r}");
        let r = ask(&mut m, wire::TOOLS_LIST, json!({}));
        assert!(
            r.get("resultType").is_none() && r.get("ttlMs").is_none(),
            "{r}"
        );
        // A result recorded under 2026-07-28, to a handshake client.
        m.cassettes[0].elicitations.clear();
        m.cassettes[0].result = Some(json!({"content": [], "resultType": "complete"}));
        let r = ask(&mut m, wire::TOOLS_CALL, json!({"name": "ask"}));
        assert_eq!(r, json!({"content": []}));
    }

    #[test]
    fn a_wrong_answer_is_reported_and_strict_makes_it_an_error() {
        for strict in [false, true] {
            let mut m = mock(strict);
            let p = json!({"name": "ask", "_meta": {wire::VERSION_META: wire::V2026_07_28}});
            let out =
                m.handle(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p}));
            let r = &out[0].message["result"];
            assert_eq!(r["resultType"], "input_required");
            let mut retry = p.clone();
            retry["requestState"] = r["requestState"].clone();
            retry["inputResponses"] =
                json!({"elicitation-1": {"action": "accept", "content": {"name": "Bob"}}});
            let out = m.handle(
                &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}),
            );
            let r = &out[0].message["result"];
            let said = r["_meta"][MISMATCH_META]["mismatches"][0].as_str().unwrap();
            assert!(said.contains("/content/name"), "{said}");
            assert_eq!(r["isError"] == json!(true), strict);
        }
    }
}
