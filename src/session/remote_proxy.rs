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
//!
//! Signals, as for a stdio server: Ctrl-C at a prompt cancels that
//! elicitation only, decided when it arrives ([`interrupt`]); a Ctrl-C with
//! no prompt up (or with no terminal) ends the session (DELETE) and elicit
//! exits 130, as a stdio server stopped by it would end the proxy. SIGTERM
//! and SIGHUP end the session the same way (exit 128 + the signal), with
//! the terminal put back if a prompt was up.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::call::MAX_INPUT_ROUNDS;
use super::handler::{ElicitHandler, HandlerError};
use super::proxy::{
    add_elicitation_modes, interrupt, is_resolvable, notes, retry_request, too_many_rounds, State,
    CAPS_META, RETRYABLE, RETRY_PREFIX, VERSION_META,
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
    /// `--record`: told of every message between the client and the
    /// server and every elicitation answered (see the stdio proxy's).
    pub record: Option<Arc<Mutex<crate::cassette::proxy_record::ProxyRecorder>>>,
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
    /// Scripted field answers no form has had so far (warned about at the end).
    unused_answers: Mutex<Vec<String>>,
}

impl Relay {
    fn note(&self, text: &str) {
        if self.options.verbose {
            eprintln!("elicit proxy: {}", crate::sanitize::sanitize_line(text));
        }
    }

    fn to_client(&self, msg: &Value) {
        self.record("recv", msg);
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

    fn record(&self, dir: &str, msg: &Value) {
        if let Some(Ok(mut r)) = self.options.record.as_ref().map(|r| r.lock()) {
            r.message(dir, msg);
        }
    }

    fn handles(&self, mode: Option<&str>) -> bool {
        let declared = self.state.lock().expect("state lock").client_modes;
        declared.left_to_elicit(self.options.passthrough_declared, mode)
    }

    fn declare(&self, caps: &mut Value, target: &str) {
        if let Some((declared, changed)) = add_elicitation_modes(caps) {
            self.state.lock().expect("state lock").client_modes = declared;
            if changed {
                self.note(&notes::capability_added(target, declared));
            }
        }
    }

    /// The client's message, as it goes to the server.
    fn rewrite_client_message(&self, msg: &mut Value) {
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let id = msg.get("id").filter(|i| !i.is_null()).map(Value::to_string);
        if let (true, Some(id)) = (
            method == "initialize" || method == "server/discover",
            id.as_ref(),
        ) {
            self.state
                .lock()
                .expect("state lock")
                .info_ids
                .insert(id.clone());
        }
        if method == "initialize" {
            if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                let caps = params.entry("capabilities").or_insert_with(|| json!({}));
                self.declare(caps, &notes::capability_target(&method, None, false));
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
        self.declare(
            caps,
            &notes::capability_target(&method, id.as_deref(), true),
        );
        if let (true, Some(id)) = (RETRYABLE.contains(&method.as_str()), id) {
            self.state
                .lock()
                .expect("state lock")
                .tracked
                .insert(id, msg.clone());
        }
    }
}

/// Runs the relay until the client hangs up (exit 0), the server is lost
/// (exit 1), or a signal ends it (130 for a Ctrl-C with no prompt up,
/// 128 + the signal for SIGTERM and SIGHUP).
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
        unused_answers: Mutex::new(scripted.field_names().map(str::to_string).collect()),
    });
    interrupt::install();
    let interrupts = interrupt::for_server();
    let terminated = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        let terminated = terminated.clone();
        // SAFETY: the action only stores into an atomic (async-signal-safe).
        let _ = unsafe {
            signal_hook::low_level::register(sig, move || {
                terminated.store(sig as usize, Ordering::SeqCst);
            })
        };
    }
    let (jobs, job_rx) = mpsc::channel::<Job>();
    {
        let relay = relay.clone();
        std::thread::spawn(move || {
            let mut recording = relay
                .options
                .record
                .clone()
                .map(crate::cassette::proxy_record::RecordingObserver);
            let mut handler = ElicitHandler::new(&scripted, person.as_mut());
            handler.observer = recording
                .as_mut()
                .map(|r| r as &mut dyn super::handler::ElicitObserver);
            for job in job_rx {
                let owned = interrupt::Owned::take();
                resolve_job(&relay, &mut handler, job);
                drop(owned);
                if let Ok(mut unused) = relay.unused_answers.lock() {
                    *unused = handler.unused_answers();
                }
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
        let end = if relay.client_gone.load(Ordering::SeqCst) {
            Some((0, "the client hung up"))
        } else if interrupt::for_server() != interrupts {
            Some((128 + libc::SIGINT, "Ctrl-C with no prompt up"))
        } else {
            match terminated.load(Ordering::SeqCst) as i32 {
                0 => None,
                libc::SIGHUP => Some((128 + libc::SIGHUP, "SIGHUP")),
                sig => Some((128 + sig, "SIGTERM")),
            }
        };
        if let Some((code, why)) = end {
            if code != 0 {
                // A prompt may be up (its thread is abandoned): the terminal
                // goes back to how it was before elicit exits.
                crate::terminal::tty::restore_now();
            }
            relay.note(&format!("{why}: ending the session"));
            relay
                .server
                .lock()
                .expect("server lock")
                .close(Duration::from_secs(2));
            warn_unused(&relay);
            return Ok(code);
        }
        let ctrl_c = crate::terminal::tty::interrupt_count();
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
                warn_unused(&relay);
                return Ok(1);
            }
            // A Ctrl-C ended the wait: whose it was is decided above.
            Err(_) if crate::terminal::tty::interrupt_count() != ctrl_c => {}
            Err(e) => {
                eprintln!(
                    "elicit proxy: {}",
                    crate::sanitize::sanitize_block(&e.to_string())
                );
            }
        }
    }
}

/// Scripted answers no form of the session had, as a warning.
fn warn_unused(relay: &Relay) {
    if let Ok(unused) = relay.unused_answers.lock() {
        for name in unused.iter() {
            eprintln!(
                "elicit proxy: warning: {}",
                super::handler::unused_answer_warning(name)
            );
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
        relay.record("send", &msg);
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
            relay.note(&notes::passed_through(
                id,
                params.get("mode").and_then(Value::as_str),
            ));
        }
        return relay.to_client(&msg);
    }
    let Some(id) = obj.get("id").filter(|i| !i.is_null()).map(Value::to_string) else {
        return relay.to_client(&msg);
    };
    let mut st = relay.state.lock().expect("state lock");
    if st.info_ids.remove(&id) {
        if let Some(name) = obj.get("result").and_then(notes::server_name) {
            st.server_name = Some(name);
        }
    }
    let (client_id, ours) = match st.retries.remove(&id) {
        Some(client_id) => (client_id, true),
        None if st.tracked.contains_key(&id) => (id, false),
        None => {
            drop(st);
            return relay.to_client(&msg);
        }
    };
    drop(st);
    if let Some(result) = obj
        .get("result")
        .filter(|r| is_resolvable(r, |m| relay.handles(m)))
    {
        let _ = jobs.send(Job::InputRequired {
            client_id,
            result: result.clone(),
        });
        return;
    }
    if obj
        .get("result")
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str)
        == Some("input_required")
    {
        relay.note(&notes::input_required_passed(
            &client_id,
            "it asks for more than elicitations elicit answers (a mode the client declared, or another kind of request)",
        ));
    }
    untrack(relay, &client_id);
    let mut reply = msg.clone();
    if ours {
        relay.note(&notes::retry_done(&client_id));
        reply["id"] = serde_json::from_str(&client_id).unwrap_or(Value::Null);
    }
    relay.to_client(&reply);
}

/// Forgets a client request once its final reply has gone out.
fn untrack(relay: &Relay, client_id: &str) {
    let mut st = relay.state.lock().expect("state lock");
    st.tracked.remove(client_id);
    st.rounds.remove(client_id);
}

fn resolve_job(relay: &Relay, handler: &mut ElicitHandler<'_>, job: Job) {
    match job {
        Job::ServerRequest { id, params } => {
            handler.server_name = relay.state.lock().expect("state lock").server_name.clone();
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
            let mode = params.get("mode").and_then(Value::as_str);
            relay.note(&notes::answered(&id, mode, &reply));
            relay.to_server(&reply, None);
        }
        Job::InputRequired { client_id, result } => {
            let client_id_value = serde_json::from_str::<Value>(&client_id).unwrap_or(Value::Null);
            let rounds = {
                let mut st = relay.state.lock().expect("state lock");
                handler.server_name = notes::server_name(&result).or(st.server_name.clone());
                let n = st.rounds.entry(client_id.clone()).or_insert(0);
                *n += 1;
                *n
            };
            if rounds >= MAX_INPUT_ROUNDS {
                let (message, reply) = too_many_rounds(&client_id);
                relay.note(&message);
                untrack(relay, &client_id);
                relay.to_client(&reply);
                return;
            }
            let original = relay
                .state
                .lock()
                .expect("state lock")
                .tracked
                .get(&client_id)
                .cloned();
            let responses = match (original.as_ref(), handler.input_responses(&result)) {
                (Some(_), Ok(r)) => r,
                (_, outcome) => {
                    let why = match outcome {
                        Err(e) => {
                            eprintln!(
                                "elicit proxy: {}",
                                crate::sanitize::sanitize_block(&e.to_string())
                            );
                            "elicit could not answer it"
                        }
                        Ok(_) => "the original request is not known",
                    };
                    relay.note(&notes::input_required_passed(&client_id, why));
                    // Hand the question to the client, under its own id.
                    untrack(relay, &client_id);
                    relay.to_client(
                        &json!({"jsonrpc": "2.0", "id": client_id_value, "result": result}),
                    );
                    return;
                }
            };
            let n = relay.next_retry.fetch_add(1, Ordering::SeqCst);
            let retry_id = format!("{RETRY_PREFIX}{n}");
            let retry = retry_request(
                original.expect("checked above"),
                &retry_id,
                responses,
                &result,
            );
            relay.note(&notes::retried(
                &client_id,
                rounds,
                retry
                    .pointer("/params/inputResponses")
                    .and_then(Value::as_object)
                    .unwrap_or(&serde_json::Map::new()),
                &json!(retry_id).to_string(),
            ));
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
