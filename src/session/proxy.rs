//! `elicit proxy`: stands on the stdio pipe between an MCP client and a
//! server, and answers elicitations itself, so a client that declares no
//! elicitation support still gets the server's eliciting tools.
//!
//! Three threads share the work so that neither direction waits on the
//! other, nor on a person answering a form:
//!
//! - client → server: relays lines; rewrites only `initialize` (and 2026
//!   per-request capabilities) to declare `elicitation`, and remembers 2026
//!   requests that may come back `input_required`;
//! - server → client: relays lines byte for byte; withholds the
//!   `elicitation/create` requests elicit answers, and `input_required`
//!   results it resolves;
//! - the resolver: answers those, one at a time (there is one person), and
//!   retries 2026 calls until the client's own request id gets the final
//!   result.
//!
//! Lines are only parsed when they might concern elicit (a cheap substring
//! test first, exact for lines without escapes; see [`classify`]), so bulk
//! traffic passes at pipe speed and unaltered.

use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::process::ChildStdin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::call::MAX_INPUT_ROUNDS;
use super::handler::{ElicitHandler, HandlerError};
use crate::error::{rpc_code, ElicitError};
use crate::protocol::ELICITATION_METHOD;
use crate::resolve::Resolver;
use crate::transport::process_group::ProcessGroup;
use crate::transport::stdio::spawn_server;
use crate::transport::MessageLog;
use crate::ScriptedAnswers;

/// Settings of a proxy run.
pub struct ProxyOptions {
    pub command: Vec<String>,
    pub server_log: Option<PathBuf>,
    pub log: Option<MessageLog>,
    /// Leave elicitations of a mode the client declared to the client.
    pub passthrough_declared: bool,
    pub verbose: bool,
    /// After the client hangs up, how long the server has to exit before it
    /// is sent SIGTERM (and SIGKILL two seconds later).
    pub shutdown_grace: Duration,
    /// Forward SIGINT to the server too (only when no terminal is in use:
    /// at a prompt, Ctrl-C cancels the elicitation instead).
    pub forward_sigint: bool,
    /// The descriptors behind `client_in` and `client_out` (stdin, stdout),
    /// when the relay may move pass-through bytes between them and the
    /// server with splice(2) (see [`splice`]); None: plain reads and writes.
    pub client_fds: Option<(RawFd, RawFd)>,
    /// `--record`: told of every line relayed and every elicitation
    /// answered, it writes a cassette for each call that elicited.
    pub record: Option<Arc<Mutex<crate::cassette::proxy_record::ProxyRecorder>>>,
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

/// The JSON-RPC error a client gets when its request came back
/// `input_required` [`MAX_INPUT_ROUNDS`] times: a server that keeps asking
/// (a lost requestState, say) is stopped, not obeyed, and the client learns
/// why. Returns the message (for `-v`) and the reply.
pub(crate) fn too_many_rounds(client_id: &str) -> (String, Value) {
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
/// received (left out when it sent none). Shared by both proxies.
pub(crate) fn retry_request(
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
/// (`handles` decides by mode). Shared by both proxies.
pub(crate) fn is_resolvable(result: &Value, handles: impl Fn(Option<&str>) -> bool) -> bool {
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

/// What a proxy tracks between the two sides; shared by the stdio proxy and
/// the remote one.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) client_modes: Modes,
    /// 2026 requests that may come back `input_required`, by the exact JSON
    /// text of their id.
    pub(crate) tracked: HashMap<String, Value>,
    /// Our retry ids → the client's id text.
    pub(crate) retries: HashMap<String, String>,
    /// Server request ids (text) of elicitations being resolved.
    pub(crate) pending: HashSet<String>,
    /// `input_required` rounds so far, by the client's id text: at most
    /// [`MAX_INPUT_ROUNDS`] per request, as in `call`.
    pub(crate) rounds: HashMap<String, usize>,
    /// Ids (text) of the client's `initialize` / `server/discover` requests
    /// whose reply names the server.
    pub(crate) info_ids: HashSet<String>,
    /// The server's name from that reply, for the prompt header.
    pub(crate) server_name: Option<String>,
    /// The client hung up (stdio proxy: pending elicitations are answered
    /// cancel and no more are asked).
    pub(crate) client_gone: bool,
}

enum Job {
    ServerRequest { id: Value, params: Value },
    InputRequired { client_id: String, result: Value },
}

struct Shared {
    state: Mutex<State>,
    to_server: Mutex<Option<BufWriter<ChildStdin>>>,
    to_client: Mutex<BufWriter<Box<dyn Write + Send>>>,
    log: Option<MessageLog>,
    next_retry: AtomicU64,
    passthrough_declared: bool,
    verbose: bool,
    /// Scripted field answers no form has had so far (warned about at the end).
    unused_answers: Mutex<Vec<String>>,
    record: Option<Arc<Mutex<crate::cassette::proxy_record::ProxyRecorder>>>,
}

pub mod classify;
pub(crate) mod interrupt;
pub(crate) mod notes;
#[cfg(target_os = "linux")]
pub mod splice;

use classify::client_line_matters;
pub(crate) use classify::{CAPS_META, RETRYABLE, RETRY_PREFIX, VERSION_META};

impl Shared {
    fn handles(&self, mode: Option<&str>) -> bool {
        let declared = self.state.lock().expect("state lock").client_modes;
        declared.left_to_elicit(self.passthrough_declared, mode)
    }

    fn note(&self, text: &str) {
        if self.verbose {
            eprintln!("elicit proxy: {}", crate::sanitize::sanitize_line(text));
        }
    }

    /// Whether every line must be seen one by one (`--log`, `--record`),
    /// never passed on in bulk.
    fn sees_every_line(&self) -> bool {
        self.log.is_some() || self.record.is_some()
    }

    fn log(&self, dir: &str, party: &str, line: &[u8]) {
        if let Some(record) = &self.record {
            if let Ok(mut r) = record.lock() {
                r.line(dir, party, line);
            }
        }
        if let Some(log) = &self.log {
            let text = String::from_utf8_lossy(line);
            let text = text.trim_end_matches(['\n', '\r']);
            match serde_json::from_str::<Value>(text) {
                Ok(v) => log.record_party(dir, party, Ok(&v)),
                Err(_) => log.record_party(dir, party, Err(text)),
            }
        }
    }

    /// Writes one line to the server (whole, under the lock).
    fn send_to_server(&self, line: &[u8], party: &str, flush: bool) -> bool {
        self.log("send", party, line);
        let mut guard = self.to_server.lock().expect("server writer lock");
        let Some(w) = guard.as_mut() else {
            return false;
        };
        let ok = w.write_all(line).is_ok() && (!flush || w.flush().is_ok());
        if !ok {
            *guard = None;
        }
        ok
    }

    fn send_value_to_server(&self, v: &Value) {
        let mut line = serde_json::to_vec(v).expect("values serialise");
        line.push(b'\n');
        self.send_to_server(&line, "elicit", true);
    }

    fn send_to_client(&self, line: &[u8], party: &str, flush: bool) {
        self.log("recv", party, line);
        let mut w = self.to_client.lock().expect("client writer lock");
        let _ = w.write_all(line);
        if flush {
            let _ = w.flush();
        }
    }
}

impl MessageLog {
    /// Records a proxied line: `dir` is relative to the server (`send` /
    /// `recv`), `party` who wrote (`client`, `elicit`) or got it
    /// (`client`, `elicit`).
    pub fn record_party(&self, dir: &str, party: &str, message: Result<&Value, &str>) {
        let key = if dir == "send" { "by" } else { "to" };
        let time = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        let entry = match message {
            Ok(m) => json!({"dir": dir, key: party, "time": time, "message": m}),
            Err(raw) => json!({"dir": dir, key: party, "time": time, "raw": raw}),
        };
        self.write_entry(&entry);
    }
}

/// Runs the proxy until the server exits. Returns the server's exit status
/// (128 + signal when it was killed), after what it wrote has been
/// delivered to the client: the run ends on the server's exit, after a short
/// drain ([`EXIT_DRAIN`]), even when a process it started still holds its
/// stdout open (that process is ended with the rest of the server).
pub fn run_proxy(
    options: ProxyOptions,
    scripted: ScriptedAnswers,
    mut person: Box<dyn Resolver + Send>,
    client_in: Box<dyn Read + Send>,
    client_out: Box<dyn Write + Send>,
) -> Result<i32, ElicitError> {
    let crate::transport::stdio::Spawned {
        mut child,
        stderr: stderr_relay,
        group,
    } = spawn_server(&options.command, options.server_log.as_deref())?;
    let server_out = child.stdout.take().expect("stdout is piped");
    let server_in = child.stdin.take().expect("stdin is piped");
    for fd in [server_out.as_raw_fd(), server_in.as_raw_fd(), 0, 1] {
        grow_pipe(fd);
    }
    let client_in_fd = options.client_fds.map(|(fd, _)| fd);
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        to_server: Mutex::new(Some(BufWriter::with_capacity(64 * 1024, server_in))),
        to_client: Mutex::new(BufWriter::with_capacity(64 * 1024, client_out)),
        log: options.log.clone(),
        next_retry: AtomicU64::new(1),
        passthrough_declared: options.passthrough_declared,
        verbose: options.verbose,
        unused_answers: Mutex::new(scripted.field_names().map(str::to_string).collect()),
        record: options.record.clone(),
    });
    let server_done = Arc::new(AtomicBool::new(false));
    forward_signals(group.clone(), options.forward_sigint);
    if !options.forward_sigint {
        // With a terminal, Ctrl-C at a prompt cancels that elicitation; a
        // Ctrl-C with no prompt up means "stop": it goes to the server. Who
        // it belongs to is decided when it arrives (see `interrupt`).
        interrupt::install();
        let group = group.clone();
        std::thread::spawn(move || {
            let mut seen = interrupt::for_server();
            loop {
                std::thread::sleep(Duration::from_millis(50));
                let now = interrupt::for_server();
                for _ in seen..now {
                    group.signal(libc::SIGINT);
                }
                seen = now;
            }
        });
    }

    let (jobs, job_rx) = mpsc::channel::<Job>();

    // The resolver: one elicitation at a time.
    {
        let shared = shared.clone();
        std::thread::spawn(move || {
            let mut recording = options
                .record
                .clone()
                .map(crate::cassette::proxy_record::RecordingObserver);
            let mut handler = ElicitHandler::new(&scripted, person.as_mut());
            handler.observer = recording
                .as_mut()
                .map(|r| r as &mut dyn super::handler::ElicitObserver);
            for job in job_rx {
                let owned = interrupt::Owned::take();
                resolve_job(&shared, &mut handler, job);
                drop(owned);
                if let Ok(mut unused) = shared.unused_answers.lock() {
                    *unused = handler.unused_answers();
                }
            }
        });
    }

    // client → server.
    {
        let shared = shared.clone();
        let server_done = server_done.clone();
        let grace = options.shutdown_grace;
        let group = group.clone();
        std::thread::spawn(move || {
            relay_client(&shared, client_in, client_in_fd);
            client_hung_up(&shared);
            // The server has its stdin closed; give it time to finish.
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline {
                if server_done.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            shared.note("the server did not exit after its stdin closed: sending SIGTERM");
            group.terminate(Duration::from_secs(2));
        });
    }

    // server → client, on its own thread; this one waits for the server.
    let reading_since = Arc::new(AtomicU64::new(0));
    let (relay_done_tx, relay_done) = mpsc::channel::<()>();
    {
        let shared = shared.clone();
        let reading_since = reading_since.clone();
        let out_fd = options.client_fds.map(|(_, out)| out);
        std::thread::spawn(move || {
            relay_server(&shared, server_out, &reading_since, out_fd, &jobs);
            let _ = relay_done_tx.send(());
        });
    }
    // The proxy ends on the server's exit, not on the end of its stdout: a
    // process it started may hold that open long after.
    let status = child
        .wait()
        .map_err(|e| ElicitError::io("waiting for the server", e))?;
    server_done.store(true, Ordering::SeqCst);
    // A short drain: what the server wrote before it exited still reaches
    // the client (normally its stdout closes and the relay ends at once).
    if relay_done.recv_timeout(EXIT_DRAIN).is_err() {
        shared.note("the server exited but something it started holds its stdout open: ending it");
    }
    // Whatever the server started goes with it (TERM, grace, KILL); its
    // stdout then closes, and what is still in the pipe is delivered. Only
    // a descendant that escaped the group and its tag could keep it open:
    // once the relay has waited on an empty pipe for EXIT_DRAIN, it ends.
    group.terminate(crate::transport::process_group::TERM_GRACE);
    while let Err(mpsc::RecvTimeoutError::Timeout) =
        relay_done.recv_timeout(Duration::from_millis(50))
    {
        let since = reading_since.load(Ordering::SeqCst);
        if since != 0 && millis_now().saturating_sub(since) >= EXIT_DRAIN.as_millis() as u64 {
            break;
        }
    }
    flush_client(&shared);
    if let Some(relay) = &stderr_relay {
        relay.drain(Duration::from_millis(300));
    }
    if let Ok(unused) = shared.unused_answers.lock() {
        for name in unused.iter() {
            eprintln!(
                "elicit proxy: warning: {}",
                super::handler::unused_answer_warning(name)
            );
        }
    }
    use std::os::unix::process::ExitStatusExt;
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    })
}

/// The longest line held whole (a message and its newline); longer ones
/// are passed through in pieces, unread.
const HELD_LINE_LIMIT: usize = crate::input::MAX_INPUT_BYTES as usize + 1;

/// How long the server's output is drained after it exits, before what it
/// started is ended; and how long an idle pipe is waited on after that.
const EXIT_DRAIN: Duration = Duration::from_millis(500);

/// Milliseconds on a monotonic clock (never 0).
fn millis_now() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// The server's stdout, noting when a read started (0: not in a read), so
/// that the end of a run can tell an idle pipe from one still delivering.
struct WatchedRead<'a, R> {
    inner: R,
    reading_since: &'a AtomicU64,
}

impl<R: Read> Read for WatchedRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reading_since.store(millis_now(), Ordering::SeqCst);
        let n = self.inner.read(buf);
        self.reading_since.store(0, Ordering::SeqCst);
        n
    }
}

/// Asks for a 1 MiB pipe buffer (Linux; the default is 64 KiB): with two
/// extra hops on the path, fewer context switches is most of the relay cost.
/// A descriptor that is not a pipe just refuses, harmlessly.
fn grow_pipe(fd: std::os::fd::RawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on a descriptor number; F_SETPIPE_SZ only resizes a
    // pipe's buffer and fails with EBADF/EINVAL on anything else.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, 1024 * 1024);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

fn forward_signals(group: ProcessGroup, sigint: bool) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut list = vec![SIGTERM, SIGHUP];
    if sigint {
        list.push(SIGINT);
    }
    if let Ok(mut signals) = signal_hook::iterator::Signals::new(&list) {
        std::thread::spawn(move || {
            for sig in signals.forever() {
                group.signal(sig);
            }
        });
    }
}

/// Reads `input` in large chunks and hands over whole lines: a run of lines
/// that `bulk` says elicit need not look at goes out in one piece (this is
/// what keeps relaying at pipe speed), the others one at a time. The last
/// line of the stream is handed over even without a final newline.
/// `emit(bytes, is_single_line, end_of_batch)` returns false to stop.
///
/// Memory is bounded by the message limit: a line is held whole (so that
/// elicit can read it) up to `limit` ([`HELD_LINE_LIMIT`]); a longer one is not a
/// message elicit would act on (the input limit refuses it), so it is passed
/// on as it comes, in pieces (`is_single_line` false), never held whole.
fn for_each_line_batch(
    mut input: impl Read,
    limit: usize,
    bulk: impl Fn(&[u8]) -> bool,
    mut emit: impl FnMut(&[u8], bool, bool) -> bool,
) {
    const INITIAL: usize = 256 * 1024;
    let mut buf: Vec<u8> = vec![0; INITIAL.min(limit)];
    let mut filled = 0usize;
    // Inside a line over the limit: the rest of it streams through.
    let mut streaming = false;
    loop {
        if !streaming && buf.len() > INITIAL && filled < INITIAL {
            // A long line is done: its buffer is not kept for the session.
            let mut small = vec![0; INITIAL];
            small[..filled].copy_from_slice(&buf[..filled]);
            buf = small;
        }
        if filled == buf.len() {
            if buf.len() >= limit {
                // The buffer holds one partial line, and it is over the limit.
                if !emit(&buf[..filled], false, false) {
                    return;
                }
                filled = 0;
                streaming = true;
            } else {
                // One line longer than the buffer (a 20 MB message): one
                // move to the largest buffer, in fresh zeroed memory whose
                // pages only become resident as the line fills them (growing
                // step by step would leave every smaller step resident too).
                let mut bigger = vec![0; limit];
                bigger[..filled].copy_from_slice(&buf[..filled]);
                buf = bigger;
            }
        }
        let n = match input.read(&mut buf[filled..]) {
            Ok(0) => {
                if filled > 0 {
                    emit(&buf[..filled], !streaming, true);
                }
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let mut scan_from = filled;
        filled += n;
        if streaming {
            let Some(end) = memchr::memchr(b'\n', &buf[scan_from..filled]).map(|i| scan_from + i)
            else {
                if !emit(&buf[..filled], false, false) {
                    return;
                }
                filled = 0;
                continue;
            };
            if !emit(&buf[..=end], false, true) {
                return;
            }
            buf.copy_within(end + 1..filled, 0);
            filled -= end + 1;
            streaming = false;
            scan_from = 0;
        }
        let Some(last_nl) = memchr::memrchr(b'\n', &buf[scan_from..filled]).map(|i| scan_from + i)
        else {
            continue;
        };
        let complete = &buf[..=last_nl];
        let keep_going = if bulk(complete) {
            emit(complete, false, true)
        } else {
            let mut start = 0;
            let mut ok = true;
            for nl in memchr::memchr_iter(b'\n', complete) {
                let line = &complete[start..=nl];
                start = nl + 1;
                if !emit(line, true, start == complete.len()) {
                    ok = false;
                    break;
                }
            }
            ok
        };
        if !keep_going {
            return;
        }
        buf.copy_within(last_nl + 1..filled, 0);
        filled -= last_nl + 1;
    }
}

fn relay_client(shared: &Shared, client_in: Box<dyn Read + Send>, in_fd: Option<RawFd>) {
    let bulk = |chunk: &[u8]| !classify::client_chunk_matters(chunk) && !shared.sees_every_line();
    let mut emit = |bytes: &[u8], single: bool, flush: bool| {
        let rewritten = if single && client_line_matters(bytes) {
            rewrite_client_message(shared, bytes)
        } else {
            None
        };
        match rewritten {
            Some(v) => {
                let mut line = serde_json::to_vec(&v).expect("values serialise");
                line.push(b'\n');
                shared.send_to_server(&line, "client", flush)
            }
            None => shared.send_to_server(bytes, "client", flush),
        }
    };
    #[cfg(target_os = "linux")]
    if let Some(fd) = in_fd {
        let to_server = |from: RawFd, len: usize| {
            let mut guard = shared.to_server.lock().expect("server writer lock");
            let Some(w) = guard.as_mut() else {
                return splice::Moved::Failed { moved: 0 };
            };
            if w.flush().is_err() {
                *guard = None;
                return splice::Moved::Failed { moved: 0 };
            }
            splice::splice_exact(from, w.get_ref().as_raw_fd(), len)
        };
        if splice::for_each_line_batch(fd, HELD_LINE_LIMIT, bulk, &mut emit, to_server, |_| {}) {
            return;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = in_fd;
    for_each_line_batch(client_in, HELD_LINE_LIMIT, bulk, emit);
}

/// Declares elicitation on the client's behalf; returns the rewritten
/// message, or `None` to relay the original bytes.
fn rewrite_client_message(shared: &Shared, line: &[u8]) -> Option<Value> {
    let mut msg: Value = serde_json::from_slice(line).ok()?;
    let method = msg.get("method")?.as_str()?.to_string();
    let id_text = msg.get("id").filter(|i| !i.is_null()).map(Value::to_string);
    let mut changed = false;
    if let (true, Some(id)) = (
        method == "initialize" || method == "server/discover",
        id_text.as_ref(),
    ) {
        shared
            .state
            .lock()
            .expect("state lock")
            .info_ids
            .insert(id.clone());
    }
    if method == "initialize" {
        if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
            let caps = params.entry("capabilities").or_insert_with(|| json!({}));
            let target = notes::capability_target(&method, None, false);
            changed |= declare_elicitation(shared, caps, &target);
        }
    }
    let is_2026 = msg
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(VERSION_META).or_else(|| m.get(CAPS_META)))
        .is_some();
    if is_2026 {
        if let Some(meta) = msg
            .get_mut("params")
            .and_then(|p| p.get_mut("_meta"))
            .and_then(Value::as_object_mut)
        {
            let caps = meta.entry(CAPS_META).or_insert_with(|| json!({}));
            let target = notes::capability_target(&method, id_text.as_deref(), true);
            changed |= declare_elicitation(shared, caps, &target);
        }
        if let (true, Some(id)) = (RETRYABLE.contains(&method.as_str()), id_text) {
            shared
                .state
                .lock()
                .expect("state lock")
                .tracked
                .insert(id, msg.clone());
        }
    }
    changed.then_some(msg)
}

/// Adds the modes the client lacks to `capabilities.elicitation`. `{}`
/// means form only, so it is spelled out when url is added.
fn declare_elicitation(shared: &Shared, caps: &mut Value, target: &str) -> bool {
    let Some((declared, changed)) = add_elicitation_modes(caps) else {
        return false;
    };
    shared.state.lock().expect("state lock").client_modes = declared;
    if changed {
        shared.note(&notes::capability_added(target, declared));
    }
    changed
}

/// The capability rewrite shared with the remote relay: returns the modes
/// the client declared itself and whether `caps` was changed (None when
/// `caps` is not an object).
pub(crate) fn add_elicitation_modes(caps: &mut Value) -> Option<(Modes, bool)> {
    let caps = caps.as_object_mut()?;
    let declared = match caps.get("elicitation") {
        Some(Value::Object(e)) if e.is_empty() => Modes {
            form: true,
            url: false,
        },
        Some(Value::Object(e)) => Modes {
            form: e.contains_key("form"),
            url: e.contains_key("url"),
        },
        _ => Modes::default(),
    };
    if declared.form && declared.url {
        return Some((declared, false));
    }
    let mut e = match caps.get("elicitation") {
        Some(Value::Object(e)) => e.clone(),
        _ => Map::new(),
    };
    e.entry("form").or_insert_with(|| json!({}));
    e.entry("url").or_insert_with(|| json!({}));
    caps.insert("elicitation".into(), Value::Object(e));
    Some((declared, true))
}

/// The client hung up: pending elicitations are answered `cancel`, the
/// server's stdin is closed, and a prompt left on the terminal is torn down.
fn client_hung_up(shared: &Shared) {
    let pending: Vec<String> = {
        let mut st = shared.state.lock().expect("state lock");
        st.client_gone = true;
        st.pending.drain().collect()
    };
    for id in &pending {
        if let Ok(id) = serde_json::from_str::<Value>(id) {
            shared.send_value_to_server(
                &json!({"jsonrpc": "2.0", "id": id, "result": {"action": "cancel"}}),
            );
        }
    }
    if !pending.is_empty() {
        crate::terminal::tty::restore_global();
        shared.note("the client hung up: pending elicitations answered cancel");
    }
    if let Ok(mut w) = shared.to_server.lock() {
        if let Some(mut w) = w.take() {
            let _ = w.flush();
        }
    }
}

/// A server line (or run of lines) may matter by its text, or because a
/// tracked client request awaits its reply (matched by id, after parsing).
fn server_line_matters(shared: &Shared, bytes: &[u8]) -> bool {
    if classify::server_chunk_matters(bytes) {
        return true;
    }
    let st = shared.state.lock().expect("state lock");
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

fn relay_server(
    shared: &Shared,
    server_out: std::process::ChildStdout,
    reading_since: &AtomicU64,
    out_fd: Option<RawFd>,
    jobs: &mpsc::Sender<Job>,
) {
    let bulk = |chunk: &[u8]| !server_line_matters(shared, chunk) && !shared.sees_every_line();
    let mut emit = |bytes: &[u8], single: bool, flush: bool| {
        if single && server_line_matters(shared, bytes) {
            if let Ok(msg) = serde_json::from_slice::<Value>(bytes) {
                match take_server_message(shared, msg) {
                    Taken::Job(job) => {
                        shared.log("recv", "elicit", bytes);
                        let _ = jobs.send(job);
                        if flush {
                            flush_client(shared);
                        }
                        return true;
                    }
                    Taken::Rewritten(v) => {
                        let mut line = serde_json::to_vec(&v).expect("values serialise");
                        line.push(b'\n');
                        shared.send_to_client(&line, "client", flush);
                        return true;
                    }
                    Taken::Relay => {}
                }
            }
        }
        shared.send_to_client(bytes, "client", flush);
        true
    };
    #[cfg(target_os = "linux")]
    if let Some(out_fd) = out_fd {
        let to_client = |from: RawFd, len: usize| {
            let mut w = shared.to_client.lock().expect("client writer lock");
            let _ = w.flush();
            splice::splice_exact(from, out_fd, len)
        };
        let watch = |waiting: bool| {
            reading_since.store(if waiting { millis_now() } else { 0 }, Ordering::SeqCst);
        };
        let fd = server_out.as_raw_fd();
        if splice::for_each_line_batch(fd, HELD_LINE_LIMIT, bulk, &mut emit, to_client, watch) {
            return;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = out_fd;
    let server_out = WatchedRead {
        inner: server_out,
        reading_since,
    };
    for_each_line_batch(server_out, HELD_LINE_LIMIT, bulk, emit);
}

fn flush_client(shared: &Shared) {
    if let Ok(mut w) = shared.to_client.lock() {
        let _ = w.flush();
    }
}

enum Taken {
    Job(Job),
    Rewritten(Value),
    Relay,
}

/// Decides what to do with a parsed server message.
fn take_server_message(shared: &Shared, msg: Value) -> Taken {
    let Some(obj) = msg.as_object() else {
        return Taken::Relay;
    };
    if let Some(method) = obj.get("method").and_then(Value::as_str) {
        let id = obj.get("id").filter(|i| !i.is_null());
        if method == ELICITATION_METHOD {
            if let Some(id) = id {
                let params = obj.get("params").cloned().unwrap_or(Value::Null);
                let mode = params.get("mode").and_then(Value::as_str);
                if shared.handles(mode) {
                    shared
                        .state
                        .lock()
                        .expect("state lock")
                        .pending
                        .insert(id.to_string());
                    return Taken::Job(Job::ServerRequest {
                        id: id.clone(),
                        params,
                    });
                }
                shared.note(&notes::passed_through(id, mode));
            }
        }
        return Taken::Relay;
    }
    let Some(id) = obj.get("id").filter(|i| !i.is_null()).map(Value::to_string) else {
        return Taken::Relay;
    };
    let mut st = shared.state.lock().expect("state lock");
    if st.info_ids.remove(&id) {
        if let Some(name) = obj.get("result").and_then(notes::server_name) {
            st.server_name = Some(name);
        }
    }
    // A reply to one of our retries: it belongs to the client's request.
    let (client_id, ours) = match st.retries.remove(&id) {
        Some(client_id) => (client_id, true),
        None if st.tracked.contains_key(&id) => (id, false),
        None => return Taken::Relay,
    };
    drop(st);
    let result = obj.get("result");
    if let Some(result) = result.filter(|r| is_resolvable(r, |m| shared.handles(m))) {
        return Taken::Job(Job::InputRequired {
            client_id,
            result: result.clone(),
        });
    }
    if result
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str)
        == Some("input_required")
    {
        shared.note(&notes::input_required_passed(
            &client_id,
            "it asks for more than elicitations elicit answers (a mode the client declared, or another kind of request)",
        ));
    }
    untrack(shared, &client_id);
    if !ours {
        return Taken::Relay;
    }
    shared.note(&notes::retry_done(&client_id));
    let mut reply = msg.clone();
    reply["id"] = serde_json::from_str(&client_id).unwrap_or(Value::Null);
    Taken::Rewritten(reply)
}

/// Forgets a client request once its final reply has gone out.
fn untrack(shared: &Shared, client_id: &str) {
    let mut st = shared.state.lock().expect("state lock");
    st.tracked.remove(client_id);
    st.rounds.remove(client_id);
}

fn resolve_job(shared: &Shared, handler: &mut ElicitHandler<'_>, job: Job) {
    match job {
        Job::ServerRequest { id, params } => {
            let id_text = id.to_string();
            {
                let st = shared.state.lock().expect("state lock");
                if st.client_gone {
                    return;
                }
                handler.server_name = st.server_name.clone();
            }
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
            // Answered `cancel` already if the client hung up meanwhile.
            if shared
                .state
                .lock()
                .expect("state lock")
                .pending
                .remove(&id_text)
            {
                let mode = params.get("mode").and_then(Value::as_str);
                shared.note(&notes::answered(&id, mode, &reply));
                shared.send_value_to_server(&reply);
            }
        }
        Job::InputRequired { client_id, result } => {
            let rounds = {
                let mut st = shared.state.lock().expect("state lock");
                handler.server_name = notes::server_name(&result).or(st.server_name.clone());
                let n = st.rounds.entry(client_id.clone()).or_insert(0);
                *n += 1;
                *n
            };
            if rounds >= MAX_INPUT_ROUNDS {
                let (message, reply) = too_many_rounds(&client_id);
                shared.note(&message);
                untrack(shared, &client_id);
                let mut line = serde_json::to_vec(&reply).expect("values serialise");
                line.push(b'\n');
                shared.send_to_client(&line, "client", true);
                return;
            }
            let original = shared
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
                    shared.note(&notes::input_required_passed(&client_id, why));
                    // Hand the question to the client, under its own id.
                    let reply = json!({"jsonrpc": "2.0",
                        "id": serde_json::from_str::<Value>(&client_id).unwrap_or(Value::Null),
                        "result": result});
                    untrack(shared, &client_id);
                    let mut line = serde_json::to_vec(&reply).expect("values serialise");
                    line.push(b'\n');
                    shared.send_to_client(&line, "client", true);
                    return;
                }
            };
            let n = shared.next_retry.fetch_add(1, Ordering::SeqCst);
            let retry_id = format!("{RETRY_PREFIX}{n}");
            let retry = retry_request(
                original.expect("checked above"),
                &retry_id,
                responses,
                &result,
            );
            shared.note(&notes::retried(
                &client_id,
                rounds,
                retry
                    .pointer("/params/inputResponses")
                    .and_then(Value::as_object)
                    .unwrap_or(&Map::new()),
                &json!(retry_id).to_string(),
            ));
            shared
                .state
                .lock()
                .expect("state lock")
                .retries
                .insert(json!(retry_id).to_string(), client_id);
            shared.send_value_to_server(&retry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces handed over, as (text, whole line?).
    fn pieces(input: &[u8], limit: usize) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        // A reader that gives 3 bytes at a time, as a slow pipe would.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(3).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        for_each_line_batch(
            Trickle(input),
            limit,
            |_| false,
            |b, single, _| {
                out.push((String::from_utf8_lossy(b).into_owned(), single));
                true
            },
        );
        out
    }

    #[test]
    fn a_line_over_the_limit_streams_through_and_the_rest_is_whole() {
        let input = b"ab\n0123456789abcdef\ncd\nef";
        let got = pieces(input, 8);
        let joined: String = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(joined.as_bytes(), input, "every byte passes, in order");
        assert!(got.contains(&("ab\n".into(), true)), "{got:?}");
        assert!(got.contains(&("cd\n".into(), true)), "{got:?}");
        assert!(got.contains(&("ef".into(), true)), "{got:?}");
        for (t, single) in &got {
            if t.contains('5') {
                assert!(
                    !single,
                    "the long line was handed over as a message: {got:?}"
                );
            }
            assert!(t.len() <= 8, "more than the limit held: {got:?}");
        }
    }
}
