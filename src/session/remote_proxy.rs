//! `elicit proxy URL`: a client on stdio talks to a remote server through
//! elicit, message by message over the [`Transport`] seam (like the npm
//! `mcp-remote` bridge), with elicitations answered here exactly as the
//! stdio proxy answers them.
//!
//! Byte-exact relay is not possible across transports (HTTP carries JSON
//! bodies, not lines), so messages are parsed and re-serialised: their
//! order and content (as JSON values) are kept. What elicit changes is the
//! same as in [`super::proxy`]: `initialize` and 2026 per-request
//! capabilities declare elicitation (the same rewrite,
//! [`super::proxy::add_elicitation_modes`]); `elicitation/create` requests
//! and `input_required` results elicit can settle are withheld, resolved by
//! the same [`ElicitHandler`], and answered (or retried) towards the server.
//!
//! Threads: this one relays server -> client; one reads the client; one
//! resolves elicitations, one at a time.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::handler::{ElicitHandler, HandlerError};
use super::proxy::{
    add_elicitation_modes, Modes, CAPS_META, RETRYABLE, RETRY_PREFIX, VERSION_META,
};
use crate::error::{rpc_code, ElicitError};
use crate::protocol::ELICITATION_METHOD;
use crate::resolve::Resolver;
use crate::transport::{Incoming, Transport};
use crate::ScriptedAnswers;

/// The longest line read from the client.
const MAX_LINE: u64 = 64 * 1024 * 1024;
/// How long the relay holds the transport while waiting for a message (the
/// other threads get it in between).
const SLICE: Duration = Duration::from_millis(20);

/// Settings of a remote relay.
pub struct RemoteProxyOptions {
    /// Leave elicitations of a mode the client declared to the client.
    pub passthrough_declared: bool,
    pub verbose: bool,
}

#[derive(Default)]
struct State {
    client_modes: Modes,
    /// 2026 requests that may come back `input_required`, by id text.
    tracked: HashMap<String, Value>,
    /// Our retry ids -> the client's id text.
    retries: HashMap<String, String>,
    /// Server request ids (text) of elicitations being resolved.
    pending: HashSet<String>,
}

enum Job {
    ServerRequest { id: Value, params: Value },
    InputRequired { client_id: String, result: Value },
}

struct Relay {
    server: Mutex<Box<dyn Transport>>,
    to_client: Mutex<Box<dyn Write + Send>>,
    state: Mutex<State>,
    next_retry: AtomicU64,
    client_gone: AtomicBool,
    options: RemoteProxyOptions,
}

impl Relay {
    fn note(&self, text: &str) {
        if self.options.verbose {
            eprintln!("elicit proxy: {}", crate::sanitize::sanitize_line(text));
        }
    }

    fn to_client(&self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("values serialise");
        line.push(b'\n');
        let mut w = self.to_client.lock().expect("client writer lock");
        let _ = w.write_all(&line).and_then(|_| w.flush());
    }

    /// Sends to the server; a request that cannot be sent is answered to the
    /// client with an error (when it came from the client), never dropped.
    fn to_server(&self, msg: &Value, client_id: Option<&Value>) {
        let sent = self.server.lock().expect("server lock").send(msg);
        if let Err(e) = sent {
            eprintln!(
                "elicit proxy: {}",
                crate::sanitize::sanitize_block(&e.to_string())
            );
            if let Some(id) = client_id {
                self.to_client(&json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": rpc_code::INTERNAL_ERROR, "message": e.to_string()}}));
            }
        }
    }

    fn handles(&self, mode: Option<&str>) -> bool {
        if !self.options.passthrough_declared {
            return true;
        }
        let declared = self.state.lock().expect("state lock").client_modes;
        match mode {
            Some("url") => !declared.url,
            _ => !declared.form,
        }
    }

    fn declare(&self, caps: &mut Value) {
        if let Some((declared, _)) = add_elicitation_modes(caps) {
            self.state.lock().expect("state lock").client_modes = declared;
        }
    }

    /// The client's message, as it goes to the server.
    fn rewrite_client_message(&self, msg: &mut Value) {
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if method == "initialize" {
            if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                let caps = params.entry("capabilities").or_insert_with(|| json!({}));
                self.declare(caps);
            }
        }
        let meta = msg
            .get_mut("params")
            .and_then(|p| p.get_mut("_meta"))
            .and_then(Value::as_object_mut);
        let Some(meta) = meta else {
            return;
        };
        if !meta.contains_key(VERSION_META) && !meta.contains_key(CAPS_META) {
            return;
        }
        let caps = meta.entry(CAPS_META).or_insert_with(|| json!({}));
        self.declare(caps);
        let id = msg.get("id").filter(|i| !i.is_null()).map(Value::to_string);
        if let (true, Some(id)) = (RETRYABLE.contains(&method.as_str()), id) {
            self.state
                .lock()
                .expect("state lock")
                .tracked
                .insert(id, msg.clone());
        }
    }
}

/// Runs the relay until the client hangs up (exit 0) or the server is lost
/// (exit 1).
pub fn run_remote_proxy(
    server: Box<dyn Transport>,
    options: RemoteProxyOptions,
    scripted: ScriptedAnswers,
    mut person: Box<dyn Resolver + Send>,
    client_in: Box<dyn Read + Send>,
    client_out: Box<dyn Write + Send>,
) -> Result<i32, ElicitError> {
    let relay = Arc::new(Relay {
        server: Mutex::new(server),
        to_client: Mutex::new(client_out),
        state: Mutex::new(State::default()),
        next_retry: AtomicU64::new(1),
        client_gone: AtomicBool::new(false),
        options,
    });
    let (jobs, job_rx) = mpsc::channel::<Job>();
    {
        let relay = relay.clone();
        std::thread::spawn(move || {
            let mut handler = ElicitHandler::new(&scripted, person.as_mut());
            for job in job_rx {
                resolve_job(&relay, &mut handler, job);
            }
        });
    }
    {
        let relay = relay.clone();
        std::thread::spawn(move || {
            relay_client(&relay, client_in);
            relay.client_gone.store(true, Ordering::SeqCst);
        });
    }
    loop {
        if relay.client_gone.load(Ordering::SeqCst) {
            relay.note("the client hung up: ending the session");
            relay
                .server
                .lock()
                .expect("server lock")
                .close(Duration::from_secs(2));
            return Ok(0);
        }
        let incoming = relay
            .server
            .lock()
            .expect("server lock")
            .receive(Some(SLICE));
        match incoming {
            Ok(Incoming::Message(msg)) => take_server_message(&relay, msg, &jobs),
            Ok(Incoming::TimedOut) => {}
            Ok(Incoming::Malformed { line, error }) => eprintln!(
                "elicit proxy: the server sent something that is not JSON ({error}): {}",
                crate::terminal::render::truncate(&crate::sanitize::sanitize_line(&line), 200)
            ),
            Ok(Incoming::Closed) => {
                eprintln!("elicit proxy: the server closed the connection");
                return Ok(1);
            }
            Err(e) => {
                eprintln!(
                    "elicit proxy: {}",
                    crate::sanitize::sanitize_block(&e.to_string())
                );
            }
        }
    }
}

fn relay_client(relay: &Relay, client_in: Box<dyn Read + Send>) {
    let mut reader = BufReader::new(client_in);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut reader).take(MAX_LINE + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.len() as u64 > MAX_LINE {
            eprintln!("elicit proxy: the client sent a line over {MAX_LINE} bytes; stopping");
            return;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let mut msg = match serde_json::from_str::<Value>(text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!(
                    "elicit proxy: the client sent a line that is not JSON ({e}); not relayed"
                );
                continue;
            }
        };
        relay.rewrite_client_message(&mut msg);
        let id = msg
            .get("id")
            .filter(|i| !i.is_null() && msg.get("method").is_some())
            .cloned();
        relay.to_server(&msg, id.as_ref());
    }
}

/// Decides what to do with a server message: withhold it for the
/// resolver, rewrite it (a retry's reply goes out under the client's id),
/// or relay it.
fn take_server_message(relay: &Relay, msg: Value, jobs: &mpsc::Sender<Job>) {
    let Some(obj) = msg.as_object() else {
        return relay.to_client(&msg);
    };
    if let Some(method) = obj.get("method").and_then(Value::as_str) {
        let id = obj.get("id").filter(|i| !i.is_null());
        if let (ELICITATION_METHOD, Some(id)) = (method, id) {
            let params = obj.get("params").cloned().unwrap_or(Value::Null);
            if relay.handles(params.get("mode").and_then(Value::as_str)) {
                relay
                    .state
                    .lock()
                    .expect("state lock")
                    .pending
                    .insert(id.to_string());
                let _ = jobs.send(Job::ServerRequest {
                    id: id.clone(),
                    params,
                });
                return;
            }
        }
        return relay.to_client(&msg);
    }
    let Some(id) = obj.get("id").filter(|i| !i.is_null()).map(Value::to_string) else {
        return relay.to_client(&msg);
    };
    let mut st = relay.state.lock().expect("state lock");
    let (client_id, ours) = match st.retries.remove(&id) {
        Some(client_id) => (client_id, true),
        None if st.tracked.contains_key(&id) => (id, false),
        None => {
            drop(st);
            return relay.to_client(&msg);
        }
    };
    drop(st);
    if let Some(result) = obj.get("result").filter(|r| is_resolvable(relay, r)) {
        let _ = jobs.send(Job::InputRequired {
            client_id,
            result: result.clone(),
        });
        return;
    }
    relay
        .state
        .lock()
        .expect("state lock")
        .tracked
        .remove(&client_id);
    let mut reply = msg.clone();
    if ours {
        reply["id"] = serde_json::from_str(&client_id).unwrap_or(Value::Null);
    }
    relay.to_client(&reply);
}

/// An `input_required` result that holds only elicitations elicit handles.
fn is_resolvable(relay: &Relay, result: &Value) -> bool {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return false;
    }
    let Some(reqs) = result.get("inputRequests").and_then(Value::as_object) else {
        return false;
    };
    !reqs.is_empty()
        && reqs.values().all(|r| {
            r.get("method").and_then(Value::as_str) == Some(ELICITATION_METHOD)
                && relay.handles(
                    r.get("params")
                        .and_then(|p| p.get("mode"))
                        .and_then(Value::as_str),
                )
        })
}

fn resolve_job(relay: &Relay, handler: &mut ElicitHandler<'_>, job: Job) {
    match job {
        Job::ServerRequest { id, params } => {
            let reply = match handler.elicit(&params, None) {
                Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r.to_value()}),
                Err(HandlerError::Rpc { code, message }) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                }
                Err(HandlerError::Fatal(e)) => {
                    eprintln!(
                        "elicit proxy: {}",
                        crate::sanitize::sanitize_block(&e.to_string())
                    );
                    json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": rpc_code::INTERNAL_ERROR,
                        "message": format!("elicit could not resolve the elicitation: {e}"),
                    }})
                }
            };
            relay
                .state
                .lock()
                .expect("state lock")
                .pending
                .remove(&id.to_string());
            relay.to_server(&reply, None);
        }
        Job::InputRequired { client_id, result } => {
            let original = relay
                .state
                .lock()
                .expect("state lock")
                .tracked
                .get(&client_id)
                .cloned();
            let client_id_value = serde_json::from_str::<Value>(&client_id).unwrap_or(Value::Null);
            let responses = match (original.as_ref(), handler.input_responses(&result)) {
                (Some(_), Ok(r)) => r,
                (_, outcome) => {
                    if let Err(e) = outcome {
                        eprintln!(
                            "elicit proxy: {}",
                            crate::sanitize::sanitize_block(&e.to_string())
                        );
                    }
                    // Hand the question to the client, under its own id.
                    relay
                        .state
                        .lock()
                        .expect("state lock")
                        .tracked
                        .remove(&client_id);
                    relay.to_client(
                        &json!({"jsonrpc": "2.0", "id": client_id_value, "result": result}),
                    );
                    return;
                }
            };
            let mut retry = original.expect("checked above");
            let n = relay.next_retry.fetch_add(1, Ordering::SeqCst);
            let retry_id = format!("{RETRY_PREFIX}{n}");
            retry["id"] = json!(retry_id);
            if let Some(p) = retry.get_mut("params").and_then(Value::as_object_mut) {
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
            relay
                .state
                .lock()
                .expect("state lock")
                .retries
                .insert(json!(retry_id).to_string(), client_id);
            relay.to_server(&retry, Some(&client_id_value));
        }
    }
}
