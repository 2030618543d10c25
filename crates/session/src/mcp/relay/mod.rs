//! `elicit proxy`: elicit stands between an MCP client and a server and
//! answers the server's elicitations itself, so a client that declares no
//! elicitation support still gets the server's eliciting tools.
//!
//! One relay core ([`Relay`]) for the two ways of reaching the server:
//!
//! - [`stdio`] runs the server as a child process and relays lines byte for
//!   byte (splice(2) for bulk traffic), parsing only the lines that may
//!   concern elicit ([`classify`]);
//! - [`remote`] talks to a URL through the [`crate::transport::Transport`]
//!   seam, message by message (like the npm `mcp-remote` bridge).
//!
//! What the core decides, the same for both: the capability rewrite
//! (`initialize` and 2026 per-request capabilities declare elicitation),
//! which `elicitation/create` requests and `input_required` results elicit
//! withholds and settles, the retries of `input_required` rounds, the
//! resolver thread (one elicitation at a time: there is one person), what a
//! client hang-up does to pending elicitations, and the `-v` notes. A side
//! only moves messages: it implements [`Sides`] (send to the server, send
//! to the client) and hands the core what it reads.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::call::MAX_INPUT_ROUNDS;

/// The most elicitations a server may have waiting for an answer at once:
/// each is held until a person answers, so a server that floods them is
/// refused past this rather than growing elicit without bound.
pub(crate) const MAX_PENDING_ELICITATIONS: usize = 64;
/// The most memory the elicitations waiting for an answer may hold at once
/// (their parsed params, weighed by [`weigh`]): a server cannot hold 64
/// elicitations of 64 MiB each. One over it alone is refused too.
pub const MAX_PENDING_ELICITATION_BYTES: usize = 8 << 20;
use super::handler::{ElicitHandler, HandlerError};
use super::modes::ElicitModes;
use super::strict::Strict;
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::protocol::wire;
use elicit_core::elicitation::protocol::ELICITATION_METHOD;
use elicit_core::elicitation::resolve::Resolver;
use elicit_core::error::rpc_code;
use elicit_core::lint::Revision;

mod capabilities;
pub mod classify;
pub(crate) mod notes;
pub mod remote;
pub mod stdio;

use capabilities::{add_elicitation_modes, modes_in_revision};
pub(crate) use classify::RETRY_PREFIX;
use elicit_core::elicitation::protocol::wire::{CAPS_META, RETRYABLE, VERSION_META};

/// The two ends a relay writes to. Each call delivers one whole message;
/// a side never blocks the core on the other side's behalf for long (the
/// remote side queues, the stdio side writes to a pipe).
pub(crate) trait Sides: Send + Sync + 'static {
    /// A message elicit wrote goes to the server: an answer to one of its
    /// elicitations, or the retry of a request. `for_client` is the client
    /// request a retry stands for (answered with an error by a side that
    /// cannot send it).
    fn to_server(&self, message: &Value, for_client: Option<&Value>);

    /// A message elicit wrote goes to the client: a retried request's final
    /// reply under the client's id, an error, a question handed on.
    fn to_client(&self, message: &Value);
}

/// Which elicitation modes the client declared itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Modes {
    pub form: bool,
    pub url: bool,
}

impl Modes {
    /// Whether elicit answers an elicitation of `mode` itself: always,
    /// unless `--passthrough-declared` leaves the client's own modes to it.
    pub(crate) fn left_to_elicit(self, passthrough_declared: bool, mode: Option<&str>) -> bool {
        if !passthrough_declared {
            return true;
        }
        match mode {
            Some("url") => !self.url,
            _ => !self.form,
        }
    }
}

/// What the relay tracks between the two sides.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) client_modes: Modes,
    /// 2026 requests that may come back `input_required`, by the exact JSON
    /// text of their id.
    pub(crate) tracked: HashMap<String, Value>,
    /// Our retry ids → the client's id text.
    pub(crate) retries: HashMap<String, String>,
    /// Server request ids (text) of elicitations being resolved, with what
    /// each holds ([`weigh`]); a request reusing a pending id is refused.
    pub(crate) pending: HashMap<String, usize>,
    /// The sum of `pending`'s weights.
    pub(crate) pending_bytes: usize,
    /// `input_required` rounds so far, by the client's id text: at most
    /// [`MAX_INPUT_ROUNDS`] per request, as in `call`.
    pub(crate) rounds: HashMap<String, usize>,
    /// Ids (text) of the client's `initialize` / `server/discover` requests
    /// whose reply names the server.
    pub(crate) info_ids: HashSet<String>,
    /// The server's name from that reply, for the prompt header.
    pub(crate) server_name: Option<String>,
    /// The client's `tools/call` requests in flight: id text → tool name.
    /// An elicitation of the handshake does not say which call it is for;
    /// with one call in flight it is that one's (answer rules match on
    /// the tool), with several it is not known.
    pub(crate) tool_calls: HashMap<String, String>,
    /// The client hung up: pending elicitations were answered cancel and no
    /// more are asked.
    pub(crate) client_gone: bool,
}

/// Work for the resolver thread.
enum Job {
    ServerRequest { id: Value, params: Value },
    InputRequired { client_id: String, result: Value },
}

/// What becomes of a server message ([`Relay::server_message`]).
#[derive(Debug, PartialEq)]
pub(crate) enum Taken {
    /// elicit settles it; nothing goes to the client now.
    Withheld,
    /// This goes to the client instead (a retry's reply under the client's id).
    Rewritten(Value),
    /// The message goes to the client as it came.
    Relay,
}

/// Who answers elicitations, and the client's two pipes: what either
/// proxy is run with.
pub struct Parties {
    /// `--answer`s, tried first.
    pub scripted: ScriptedAnswers,
    /// Who is asked what the answers leave open (a terminal, or nobody).
    pub person: Box<dyn Resolver + Send>,
    /// What the client sends.
    pub client_in: Box<dyn std::io::Read + Send>,
    /// Where the client's messages go.
    pub client_out: Box<dyn std::io::Write + Send>,
}

/// What both proxies share: the settings of the relay core.
#[derive(Debug, Clone, Default)]
pub struct RelayOptions {
    /// Leave elicitations of a mode the client declared to the client.
    pub passthrough_declared: bool,
    /// `--verbose`: show the messages.
    pub verbose: bool,
    /// The modes elicit declares on the client's behalf (`--modes`).
    pub modes: ElicitModes,
    /// `--strict`: every elicitation the server sends is checked.
    pub strict: Option<Strict>,
    /// `--record`: told of every message relayed and every elicitation
    /// answered, it writes a cassette for each tool call that elicited.
    pub record: Option<Recording>,
}

/// The cassette recorder a proxy shares between its sides and its resolver.
pub(crate) type Recording = Arc<Mutex<crate::cassette::proxy_record::ProxyRecorder>>;

/// The relay core, over a pair of [`Sides`].
pub(crate) struct Relay<S: Sides> {
    pub(crate) side: S,
    pub(crate) state: Mutex<State>,
    options: RelayOptions,
    next_retry: AtomicU64,
    jobs: mpsc::Sender<Job>,
    /// Scripted field answers no form has had so far (warned about at the end).
    unused_answers: Mutex<Vec<String>>,
    /// Time the resolver spent on finished elicitations, in microseconds,
    /// since when it works on the current ones (None: idle), and how many
    /// it works on (more than one when the person can answer several at
    /// once: the browser page).
    resolving: Mutex<(u64, Option<Instant>, usize)>,
}

impl<S: Sides> Relay<S> {
    /// A relay over `side`, with its resolver thread answering through
    /// `scripted` answers, then `person`.
    pub(crate) fn start(
        side: S,
        options: RelayOptions,
        scripted: ScriptedAnswers,
        person: Box<dyn Resolver + Send>,
    ) -> Arc<Self> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let relay = Arc::new(Relay {
            side,
            state: Mutex::new(State::default()),
            options,
            next_retry: AtomicU64::new(1),
            jobs,
            unused_answers: Mutex::new(scripted.field_names().map(str::to_string).collect()),
            resolving: Mutex::new((0, None, 0)),
        });
        let weak = Arc::downgrade(&relay);
        std::thread::spawn(move || resolver(weak, scripted, person, job_rx));
        relay
    }

    /// A `-v` note on stderr (server text in it sanitised).
    pub(crate) fn note(&self, text: &str) {
        if self.options.verbose {
            eprintln!(
                "elicit proxy: {}",
                elicit_core::text::sanitize::sanitize_line(text)
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether elicit answers an elicitation of `mode` itself.
    pub(crate) fn handles(&self, mode: Option<&str>) -> bool {
        let declared = self.lock().client_modes;
        if !self.options.modes.declares(mode) {
            // Not declared by elicit (`--modes`): the client's own to
            // answer when it declared it, else elicit refuses it (-32602).
            let client = match mode {
                Some("url") => declared.url,
                _ => declared.form,
            };
            return !client;
        }
        declared.left_to_elicit(self.options.passthrough_declared, mode)
    }

    /// Whether `--strict` is on.
    pub(crate) fn strict_on(&self) -> bool {
        self.options.strict.is_some()
    }

    /// Shows a server message to `--strict`, when on.
    fn observe(&self, msg: &Value, request: Option<&str>) {
        if let Some(strict) = &self.options.strict {
            strict.observe(msg, request);
        }
    }

    /// How long the resolver has worked on elicitations so far (a person
    /// answering), the current one included: time no request timeout
    /// should count.
    pub(crate) fn resolving_time(&self) -> Duration {
        let r = self.resolving.lock().unwrap_or_else(|e| e.into_inner());
        Duration::from_micros(r.0) + r.1.map(|s| s.elapsed()).unwrap_or_default()
    }

    /// Declares elicitation on the client's behalf in a client message (a
    /// request or notification) and remembers what its reply must be
    /// matched with. Returns whether `msg` was changed.
    pub(crate) fn client_message(&self, msg: &mut Value) -> bool {
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            return false;
        };
        let method = method.to_string();
        let id_text = msg.get("id").filter(|i| !i.is_null()).map(Value::to_string);
        let mut changed = false;
        if let (true, Some(id)) = (
            method == wire::INITIALIZE || method == wire::SERVER_DISCOVER,
            id_text.as_ref(),
        ) {
            self.lock().info_ids.insert(id.clone());
        }
        if let (true, Some(id), Some(tool)) = (
            method == wire::TOOLS_CALL,
            id_text.as_ref(),
            msg.pointer("/params/name").and_then(Value::as_str),
        ) {
            self.lock().tool_calls.insert(id.clone(), tool.to_string());
        }
        if method == wire::INITIALIZE {
            if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                let version = params.get("protocolVersion").and_then(Value::as_str);
                let modes = modes_in_revision(self.options.modes, version);
                let caps = params.entry("capabilities").or_insert_with(|| json!({}));
                let target = notes::capability_target(&method, None, false);
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
        let target = notes::capability_target(&method, id_text.as_deref(), true);
        changed |= self.declare_elicitation(caps, &target, self.options.modes);
        if let (true, Some(id)) = (RETRYABLE.contains(&method.as_str()), id_text) {
            self.lock().tracked.insert(id, msg.clone());
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

    /// Whether a server message may be the reply to a request the relay
    /// watches (by the id's JSON text): the stdio side's cheap test before
    /// parsing a line.
    pub(crate) fn awaits_reply_in(&self, bytes: &[u8]) -> bool {
        let st = self.lock();
        if st.tracked.is_empty() && st.info_ids.is_empty() {
            return false;
        }
        // A reply to a tracked request holds its id's JSON text, exactly as
        // written when the line has no escapes.
        memchr::memchr(b'\\', bytes).is_some()
            || st
                .tracked
                .keys()
                .chain(st.info_ids.iter())
                .any(|id| memchr::memmem::find(bytes, id.as_bytes()).is_some())
    }

    /// A server line longer than [`MAX_PENDING_ELICITATION_BYTES`] that is
    /// an elicitation elicit would answer: refused from its head alone,
    /// before it is parsed (its `params` are skipped, not built, but for
    /// `mode`), since it could never wait within the bound. Parsing it first
    /// would hold the line and its parsed tree at once (some 200 MiB for a
    /// 64 MiB line). Returns whether it was refused; any other line (a
    /// reply, a notification, one that is not JSON) is left to the usual
    /// path.
    pub(crate) fn refuse_oversized_elicitation(&self, bytes: &[u8]) -> bool {
        if bytes.len() <= MAX_PENDING_ELICITATION_BYTES {
            return false;
        }
        #[derive(serde::Deserialize)]
        struct Head {
            method: Option<String>,
            id: Option<Value>,
            params: Option<HeadParams>,
        }
        #[derive(serde::Deserialize)]
        struct HeadParams {
            mode: Option<String>,
        }
        let Ok(head) = serde_json::from_slice::<Head>(bytes) else {
            return false;
        };
        let (Some(ELICITATION_METHOD), Some(id)) =
            (head.method.as_deref(), head.id.filter(|i| !i.is_null()))
        else {
            return false;
        };
        let mode = head.params.and_then(|p| p.mode);
        if !self.handles(mode.as_deref()) {
            return false;
        }
        let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": wire::TOO_MANY_IN_FLIGHT,
            "message": format!("elicit refused this elicitation: it is {} bytes, more than the {} MiB the server's elicitations waiting for an answer may hold", bytes.len(), MAX_PENDING_ELICITATION_BYTES >> 20),
        }});
        self.note(&notes::answered(&id, mode.as_deref(), &refusal));
        self.side.to_server(&refusal, None);
        true
    }

    /// Decides what to do with a parsed server message: withhold it for the
    /// resolver (queued here), rewrite it, or relay it.
    pub(crate) fn server_message(&self, msg: &Value) -> Taken {
        let Some(obj) = msg.as_object() else {
            return Taken::Relay;
        };
        if let Some(method) = obj.get("method").and_then(Value::as_str) {
            self.observe(msg, None);
            let id = obj.get("id").filter(|i| !i.is_null());
            if let (ELICITATION_METHOD, Some(id)) = (method, id) {
                let params = obj.get("params").cloned().unwrap_or(Value::Null);
                let mode = params.get("mode").and_then(Value::as_str);
                if self.handles(mode) {
                    let weight = weigh(&params);
                    let earlier = {
                        let mut st = self.lock();
                        let earlier = st.pending.len();
                        let id_text = id.to_string();
                        let refused = if st.pending.contains_key(&id_text) {
                            Some((wire::INVALID_REQUEST, format!("elicit refused this elicitation: the server's elicitation with id {} still waits for an answer", elicit_core::text::truncate(&id_text, 64))))
                        } else if earlier >= MAX_PENDING_ELICITATIONS {
                            Some((wire::TOO_MANY_IN_FLIGHT, format!("elicit refused this elicitation: {MAX_PENDING_ELICITATIONS} of the server's elicitations already wait for an answer")))
                        } else if st.pending_bytes.saturating_add(weight)
                            > MAX_PENDING_ELICITATION_BYTES
                        {
                            Some((wire::TOO_MANY_IN_FLIGHT, format!("elicit refused this elicitation: the server's elicitations waiting for an answer would hold more than {} MiB", MAX_PENDING_ELICITATION_BYTES >> 20)))
                        } else {
                            None
                        };
                        if let Some((code, message)) = refused {
                            drop(st);
                            let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
                                "code": code,
                                "message": message,
                            }});
                            self.note(&notes::answered(id, mode, &refusal));
                            self.side.to_server(&refusal, None);
                            return Taken::Withheld;
                        }
                        st.pending.insert(id_text, weight);
                        st.pending_bytes += weight;
                        earlier
                    };
                    if let (Some(strict), true) = (&self.options.strict, earlier > 0) {
                        strict.concurrent(msg, earlier);
                    }
                    self.queue(Job::ServerRequest {
                        id: id.clone(),
                        params,
                    });
                    return Taken::Withheld;
                }
                self.note(&notes::passed_through(id, mode));
            }
            return Taken::Relay;
        }
        let Some(id) = obj.get("id").filter(|i| !i.is_null()).map(Value::to_string) else {
            return Taken::Relay;
        };
        let mut st = self.lock();
        if st.info_ids.remove(&id) {
            if let Some(name) = obj.get("result").and_then(notes::server_name) {
                st.server_name = Some(name);
            }
            let version = obj
                .get("result")
                .and_then(|r| r.get("protocolVersion"))
                .and_then(Value::as_str)
                .and_then(Revision::from_version);
            if let (Some(strict), Some(v)) = (&self.options.strict, version) {
                strict.set_revision(v);
            }
        }
        // A reply to one of our retries: it belongs to the client's request.
        let (client_id, ours) = match st.retries.remove(&id) {
            Some(client_id) => (client_id, true),
            None if st.tracked.contains_key(&id) => (id, false),
            None => {
                st.tool_calls.remove(&id);
                return Taken::Relay;
            }
        };
        drop(st);
        self.observe(msg, Some(&client_id));
        let result = obj.get("result");
        if let Some(result) = result.filter(|r| is_resolvable(r, |m| self.handles(m))) {
            // Counted with the server's elicitations, in number and bytes:
            // a round waits for the same person as they do.
            if let Some(message) = self.admit(input_key(&client_id), weigh(result)) {
                self.note(&message);
                self.untrack(&client_id);
                self.side.to_client(&json!({"jsonrpc": "2.0",
                    "id": serde_json::from_str::<Value>(&client_id).unwrap_or(Value::Null),
                    "error": {"code": wire::TOO_MANY_IN_FLIGHT, "message": message}}));
                return Taken::Withheld;
            }
            self.queue(Job::InputRequired {
                client_id,
                result: result.clone(),
            });
            return Taken::Withheld;
        }
        if result
            .and_then(|r| r.get("resultType"))
            .and_then(Value::as_str)
            == Some("input_required")
        {
            self.note(&notes::input_required_passed(
                &client_id,
                "it asks for more than elicitations elicit answers (a mode the client declared, or another kind of request)",
            ));
        }
        self.untrack(&client_id);
        if !ours {
            return Taken::Relay;
        }
        self.note(&notes::retry_done(&client_id));
        let mut reply = msg.clone();
        reply["id"] = serde_json::from_str(&client_id).unwrap_or(Value::Null);
        Taken::Rewritten(reply)
    }

    /// Counts an `input_required` round as waiting (under `key`, with
    /// `weight`), or says why it cannot wait: the bounds of
    /// [`MAX_PENDING_ELICITATIONS`] and [`MAX_PENDING_ELICITATION_BYTES`].
    fn admit(&self, key: String, weight: usize) -> Option<String> {
        let mut st = self.lock();
        if st.pending.len() >= MAX_PENDING_ELICITATIONS {
            return Some(format!("elicit refused this input_required result: {MAX_PENDING_ELICITATIONS} of the server's elicitations already wait for an answer"));
        }
        if st.pending_bytes.saturating_add(weight) > MAX_PENDING_ELICITATION_BYTES {
            return Some(format!("elicit refused this input_required result: the server's elicitations waiting for an answer would hold more than {} MiB", MAX_PENDING_ELICITATION_BYTES >> 20));
        }
        if let Some(old) = st.pending.insert(key, weight) {
            st.pending_bytes -= old;
        }
        st.pending_bytes += weight;
        None
    }

    fn queue(&self, job: Job) {
        let _ = self.jobs.send(job);
    }

    /// Forgets a client request once its final reply has gone out (or the
    /// client was told it failed), with any retry standing for it.
    pub(crate) fn untrack(&self, client_id: &str) {
        let mut st = self.lock();
        st.tracked.remove(client_id);
        st.tool_calls.remove(client_id);
        st.rounds.remove(client_id);
        st.retries.retain(|_, c| c != client_id);
    }

    /// The client's id text a request sent to the server stands for: the
    /// client's own, or the one a retry of ours replaces.
    pub(crate) fn client_id_of(&self, sent_id: &str) -> String {
        self.lock()
            .retries
            .get(sent_id)
            .cloned()
            .unwrap_or_else(|| sent_id.to_string())
    }

    /// The client hung up: pending elicitations are answered `cancel`, no
    /// more are asked, and a prompt left on the terminal is torn down. The
    /// side then closes its connection to the server.
    pub(crate) fn client_hung_up(&self) {
        let pending: Vec<String> = {
            let mut st = self.lock();
            st.client_gone = true;
            st.pending_bytes = 0;
            st.pending.drain().map(|(id, _)| id).collect()
        };
        for id in &pending {
            if let Ok(id) = serde_json::from_str::<Value>(id) {
                self.side.to_server(
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"action": "cancel"}}),
                    None,
                );
            }
        }
        if !pending.is_empty() {
            elicit_platform::handlers::restore_terminal();
            self.note("the client hung up: pending elicitations answered cancel");
        }
    }

    /// Scripted answers no form of the session had, as warnings on stderr.
    pub(crate) fn warn_unused(&self) {
        if let Ok(unused) = self.unused_answers.lock() {
            for name in unused.iter() {
                eprintln!(
                    "elicit proxy: warning: {}",
                    super::handler::unused_answer_warning(name)
                );
            }
        }
    }

    fn resolve(&self, handler: &mut ElicitHandler<'_>, job: Job) {
        match job {
            Job::ServerRequest { id, params } => self.answer_elicitation(handler, id, params),
            Job::InputRequired { client_id, result } => {
                self.settle_input_required(handler, client_id, result)
            }
        }
    }

    fn answer_elicitation(&self, handler: &mut ElicitHandler<'_>, id: Value, params: Value) {
        {
            let st = self.lock();
            if st.client_gone {
                return;
            }
            handler.server_name = st.server_name.clone();
            handler.tool_name = match st.tool_calls.len() {
                1 => st.tool_calls.values().next().cloned(),
                _ => None,
            };
        }
        let reply = match handler.elicit(&params, None) {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r.to_value()}),
            Err(HandlerError::Rpc { code, message }) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
            Err(HandlerError::Fatal(e)) => {
                eprintln!(
                    "elicit proxy: {}",
                    elicit_core::text::sanitize::sanitize_block(&e.to_string())
                );
                json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": rpc_code::INTERNAL_ERROR,
                    "message": format!("elicit could not resolve the elicitation: {e}"),
                }})
            }
        };
        // Answered `cancel` already if the client hung up meanwhile.
        let was_pending = {
            let mut st = self.lock();
            let weight = st.pending.remove(&id.to_string());
            st.pending_bytes -= weight.unwrap_or(0);
            weight.is_some()
        };
        if was_pending {
            let mode = params.get("mode").and_then(Value::as_str);
            self.note(&notes::answered(&id, mode, &reply));
            self.side.to_server(&reply, None);
        }
    }

    /// Settles an `input_required` round, then counts it waiting no more.
    fn settle_input_required(
        &self,
        handler: &mut ElicitHandler<'_>,
        client_id: String,
        result: Value,
    ) {
        let key = input_key(&client_id);
        self.settle_input_required_round(handler, client_id, result);
        let mut st = self.lock();
        let weight = st.pending.remove(&key);
        st.pending_bytes -= weight.unwrap_or(0);
    }

    fn settle_input_required_round(
        &self,
        handler: &mut ElicitHandler<'_>,
        client_id: String,
        result: Value,
    ) {
        let client_id_value = serde_json::from_str::<Value>(&client_id).unwrap_or(Value::Null);
        let (rounds, original) = {
            let mut st = self.lock();
            if st.client_gone {
                return;
            }
            handler.server_name = notes::server_name(&result).or(st.server_name.clone());
            handler.tool_name = st.tool_calls.get(&client_id).cloned();
            let n = st.rounds.entry(client_id.clone()).or_insert(0);
            *n += 1;
            (*n, st.tracked.get(&client_id).cloned())
        };
        if rounds >= MAX_INPUT_ROUNDS {
            let (message, reply) = too_many_rounds(&client_id);
            self.note(&message);
            self.untrack(&client_id);
            self.side.to_client(&reply);
            return;
        }
        let responses = match (original, handler.input_responses(&result)) {
            (Some(original), Ok(r)) => (original, r),
            (_, outcome) => {
                let why = match outcome {
                    Err(e) => {
                        eprintln!(
                            "elicit proxy: {}",
                            elicit_core::text::sanitize::sanitize_block(&e.to_string())
                        );
                        "elicit could not answer it"
                    }
                    Ok(_) => "the original request is not known",
                };
                self.note(&notes::input_required_passed(&client_id, why));
                // Hand the question to the client, under its own id.
                self.untrack(&client_id);
                self.side
                    .to_client(&json!({"jsonrpc": "2.0", "id": client_id_value, "result": result}));
                return;
            }
        };
        let (original, responses) = responses;
        let n = self.next_retry.fetch_add(1, Ordering::SeqCst);
        let retry_id = format!("{RETRY_PREFIX}{n}");
        let retry = retry_request(original, &retry_id, responses, &result);
        let retry_id_text = json!(retry_id).to_string();
        self.note(&notes::retried(
            &client_id,
            rounds,
            retry
                .pointer("/params/inputResponses")
                .and_then(Value::as_object)
                .unwrap_or(&Map::new()),
            &retry_id_text,
        ));
        self.lock().retries.insert(retry_id_text, client_id);
        self.side.to_server(&retry, Some(&client_id_value));
    }
}

/// The resolver thread: one job at a time, each under [`elicit_platform::handlers::PromptOwnsCtrlC`]
/// (a Ctrl-C meanwhile is the prompt's), at a terminal (one person, one
/// screen); each job on its own thread when the person's resolver can show
/// several at once ([`Resolver::alongside`]: the browser page). Ends when the
/// relay is dropped.
fn resolver<S: Sides>(
    relay: std::sync::Weak<Relay<S>>,
    scripted: ScriptedAnswers,
    mut person: Box<dyn Resolver + Send>,
    jobs: mpsc::Receiver<Job>,
) {
    let scripted = Arc::new(scripted);
    let recording = relay.upgrade().and_then(|r| r.options.record.clone());
    let mut observer = recording
        .clone()
        .map(crate::cassette::proxy_record::RecordingObserver);
    let mut handler = ElicitHandler::new(&scripted, person.as_mut());
    if let Some(relay) = relay.upgrade() {
        handler.modes = relay.options.modes;
        handler.strict = relay.options.strict.clone();
    }
    handler.observer = observer
        .as_mut()
        .map(|o| o as &mut dyn crate::mcp::handler::ElicitObserver);
    for job in jobs {
        let Some(relay) = relay.upgrade() else {
            return;
        };
        if let Some(mut alongside) = handler.person.alongside() {
            let scripted = scripted.clone();
            let seen = handler.seen_fields.clone();
            let recording = recording.clone();
            std::thread::spawn(move || {
                let mut observer = recording.map(crate::cassette::proxy_record::RecordingObserver);
                let mut handler = ElicitHandler::new(&scripted, alongside.as_mut());
                handler.seen_fields = seen;
                handler.modes = relay.options.modes;
                handler.strict = relay.options.strict.clone();
                handler.observer = observer
                    .as_mut()
                    .map(|o| o as &mut dyn crate::mcp::handler::ElicitObserver);
                relay.resolve_timed(&mut handler, job);
            });
            continue;
        }
        relay.resolving.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(Instant::now());
        let owned = elicit_platform::handlers::PromptOwnsCtrlC::take();
        relay.resolve_timed(&mut handler, job);
        drop(owned);
    }
}

impl<S: Sides> Relay<S> {
    /// Resolves one job with the clock of [`Relay::resolving_time`]
    /// running, and records which scripted answers it used.
    fn resolve_timed(&self, handler: &mut ElicitHandler<'_>, job: Job) {
        {
            let mut r = self.resolving.lock().unwrap_or_else(|e| e.into_inner());
            if r.2 == 0 {
                r.1 = Some(Instant::now());
            }
            r.2 += 1;
        }
        self.resolve(handler, job);
        {
            let mut r = self.resolving.lock().unwrap_or_else(|e| e.into_inner());
            r.2 = r.2.saturating_sub(1);
            if r.2 == 0 {
                if let Some(since) = r.1.take() {
                    r.0 += since.elapsed().as_micros() as u64;
                }
            }
        }
        // An answer is unused when no form of any job had it.
        let used_here = handler.unused_answers();
        self.unused_answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|n| used_here.contains(n));
    }
}

/// The key an `input_required` round waits under in `State::pending`
/// (beside the server's elicitations, keyed by their id's JSON text, which
/// never starts with a letter other than t, f or n).
fn input_key(client_id: &str) -> String {
    format!("input_required:{client_id}")
}

/// About how much memory a parsed value holds: each value its `Value`
/// (some 80 bytes, with its share of a map or vector) and the bytes of its
/// strings and keys. What [`MAX_PENDING_ELICITATION_BYTES`] counts.
pub(crate) fn weigh(v: &Value) -> usize {
    const NODE: usize = 80;
    match v {
        Value::String(s) => NODE + s.len(),
        Value::Array(a) => NODE + a.iter().map(weigh).sum::<usize>(),
        Value::Object(o) => {
            NODE + o
                .iter()
                .map(|(k, v)| NODE + k.len() + weigh(v))
                .sum::<usize>()
        }
        Value::Number(n) => NODE + n.as_str().len(),
        _ => NODE,
    }
}

/// The JSON-RPC error a client gets when its request came back
/// `input_required` [`MAX_INPUT_ROUNDS`] times: a server that keeps asking
/// (a lost requestState, say) is stopped, not obeyed, and the client learns
/// why. Returns the message (for `-v`) and the reply.
fn too_many_rounds(client_id: &str) -> (String, Value) {
    let message = format!(
        "elicit stopped: the server asked for input {MAX_INPUT_ROUNDS} times in a row for this request"
    );
    let reply = json!({"jsonrpc": "2.0",
        "id": serde_json::from_str::<Value>(client_id).unwrap_or(Value::Null),
        "error": {"code": rpc_code::INTERNAL_ERROR, "message": message}});
    (message, reply)
}

/// The retry of a request that came back `input_required`: a new id, the
/// answers in `inputResponses`, and the server's `requestState` echoed as
/// received (left out when it sent none).
fn retry_request(
    mut original: Value,
    retry_id: &str,
    responses: Map<String, Value>,
    result: &Value,
) -> Value {
    original["id"] = json!(retry_id);
    if let Some(p) = original.get_mut("params").and_then(Value::as_object_mut) {
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
    original
}

/// An `input_required` result that holds only elicitations elicit handles
/// (`handles` decides by mode).
fn is_resolvable(result: &Value, handles: impl Fn(Option<&str>) -> bool) -> bool {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return false;
    }
    let Some(reqs) = result.get("inputRequests").and_then(Value::as_object) else {
        return false;
    };
    !reqs.is_empty()
        && reqs.values().all(|r| {
            r.get("method").and_then(Value::as_str) == Some(ELICITATION_METHOD)
                && handles(
                    r.get("params")
                        .and_then(|p| p.get("mode"))
                        .and_then(Value::as_str),
                )
        })
}

#[cfg(test)]
mod tests;
