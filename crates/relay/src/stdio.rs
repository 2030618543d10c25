//! `elicit proxy -- COMMAND`: stands on the stdio pipe between an MCP
//! client and a server it runs, over the relay core (`super::Relay`).
//!
//! Three threads share the work so that neither direction waits on the
//! other, nor on a person answering a form:
//!
//! - client → server: relays lines; the core rewrites only `initialize`
//!   (and 2026 per-request capabilities) to declare `elicitation`, and
//!   remembers 2026 requests that may come back `input_required`;
//! - server → client: relays lines byte for byte; withholds the
//!   `elicitation/create` requests elicit answers, and `input_required`
//!   results it resolves;
//! - the core's resolver: answers those, one at a time, and retries 2026
//!   calls until the client's own request id gets the final result.
//!
//! Lines are only parsed when they might concern elicit (a cheap substring
//! test first, exact for lines without escapes; see [`classify`]), so bulk
//! traffic passes at pipe speed and unaltered (splice(2) on Linux).

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ChildStdin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{classify, Parties, Relay, Sides, Taken};
use classify::client_line_matters;
use elicit_core::error::ElicitError;
#[cfg(target_os = "linux")]
use elicit_platform::pipe::{self as splice, AsRawFd, RawFd};
use elicit_platform::Signal;
use elicit_session::transport::process_group::ProcessGroup;
use elicit_session::transport::stdio::spawn_server;
use elicit_session::transport::MessageLog;

/// Settings of a proxy run.
pub struct ProxyOptions {
    /// The server's command and arguments.
    pub command: Vec<String>,
    /// `--server-log`: a file for the server's stderr.
    pub server_log: Option<PathBuf>,
    /// Every message both ways, when `--log` was given.
    pub log: Option<MessageLog>,
    /// After the client hangs up, how long the server has to exit before it
    /// is sent SIGTERM (and SIGKILL two seconds later).
    pub shutdown_grace: Duration,
    /// Forward SIGINT to the server too (only when no terminal is in use:
    /// at a prompt, Ctrl-C cancels the elicitation instead).
    pub forward_sigint: bool,
    /// The descriptors behind `client_in` and `client_out` (stdin, stdout),
    /// when the relay may move pass-through bytes between them and the
    /// server with splice(2) (see [`splice`]); None: plain reads and writes.
    pub client_fds: Option<(i32, i32)>,
    /// What both proxies share: the relay core's options.
    pub relay: super::RelayOptions,
}

/// The two pipes: the server's stdin and the client's stdout, each written
/// whole lines at a time under its lock.
struct Pipes {
    to_server: Mutex<Option<BufWriter<ChildStdin>>>,
    to_client: Mutex<BufWriter<Box<dyn Write + Send>>>,
    log: Option<MessageLog>,
    record: Option<super::Recording>,
}

type StdioRelay = Relay<Pipes>;

impl Pipes {
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
            match elicit_session::transport::message_limits::parse(text) {
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

    fn send_to_client(&self, line: &[u8], party: &str, flush: bool) {
        self.log("recv", party, line);
        let mut w = self.to_client.lock().expect("client writer lock");
        let _ = w.write_all(line);
        if flush {
            let _ = w.flush();
        }
    }

    /// Closes the server's stdin (the client hung up).
    fn close_server_input(&self) {
        if let Ok(mut w) = self.to_server.lock() {
            if let Some(mut w) = w.take() {
                let _ = w.flush();
            }
        }
    }

    fn flush_client(&self) {
        if let Ok(mut w) = self.to_client.lock() {
            let _ = w.flush();
        }
    }
}

fn line_of(v: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(v).expect("values serialise");
    line.push(b'\n');
    line
}

impl Sides for Pipes {
    fn to_server(&self, message: &Value, _for_client: Option<&super::envelope::RequestId>) {
        // A write that fails means the server is gone: its exit ends the run.
        self.send_to_server(&line_of(message), "elicit", true);
    }

    fn to_client(&self, message: &Value) {
        self.send_to_client(&line_of(message), "client", true);
    }

    fn to_client_if(&self, make: &dyn Fn() -> Option<Value>) {
        let mut w = self.to_client.lock().expect("client writer lock");
        let Some(message) = make() else {
            return;
        };
        let line = line_of(&message);
        if let Some(log) = &self.log {
            log.record_party("recv", "client", Ok(&message));
        }
        let _ = w.write_all(&line).and_then(|_| w.flush());
    }
}

/// Runs the proxy until the server exits. Returns the server's exit status
/// (128 + signal when it was killed), after what it wrote has been
/// delivered to the client: the run ends on the server's exit, after a short
/// drain (`EXIT_DRAIN`), even when a process it started still holds its
/// stdout open (that process is ended with the rest of the server).
pub fn run_proxy(options: ProxyOptions, parties: Parties) -> Result<i32, ElicitError> {
    let elicit_session::transport::stdio::Spawned {
        mut child,
        stderr: stderr_relay,
        group,
    } = spawn_server(&options.command, options.server_log.as_deref())?;
    let server_out = child.stdout.take().expect("stdout is piped");
    let server_in = child.stdin.take().expect("stdin is piped");
    #[cfg(target_os = "linux")]
    for fd in [server_out.as_raw_fd(), server_in.as_raw_fd(), 0, 1] {
        splice::grow(fd);
    }
    let client_in_fd = options.client_fds.map(|(fd, _)| fd);
    let pipes = Pipes {
        to_server: Mutex::new(Some(BufWriter::with_capacity(64 * 1024, server_in))),
        to_client: Mutex::new(BufWriter::with_capacity(64 * 1024, parties.client_out)),
        log: options.log.clone(),
        record: options.relay.record.clone(),
    };
    let core = options.relay.clone();
    let relay = Relay::start(pipes, core, parties.scripted, parties.person);
    let client_in = parties.client_in;
    let server_done = Arc::new(AtomicBool::new(false));
    forward_signals(group.clone(), options.forward_sigint);
    if !options.forward_sigint {
        pass_ctrl_c_to_server(group.clone());
    }

    // client → server.
    spawn_client_to_server(
        relay.clone(),
        client_in,
        client_in_fd,
        server_done.clone(),
        options.shutdown_grace,
        group.clone(),
    );

    // server → client, on its own thread; this one waits for the server.
    let reading_since = Arc::new(AtomicU64::new(0));
    let (relay_done_tx, relay_done) = mpsc::channel::<()>();
    {
        let relay = relay.clone();
        let reading_since = reading_since.clone();
        let out_fd = options.client_fds.map(|(_, out)| out);
        std::thread::spawn(move || {
            relay_server(&relay, server_out, &reading_since, out_fd);
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
        relay.note("the server exited but something it started holds its stdout open: ending it");
    }
    // Whatever the server started goes with it (TERM, grace, KILL); its
    // stdout then closes, and what is still in the pipe is delivered. Only
    // a descendant that escaped the group and its tag could keep it open:
    // once the relay has waited on an empty pipe for EXIT_DRAIN, it ends.
    group.terminate(elicit_session::transport::process_group::TERM_GRACE);
    while let Err(mpsc::RecvTimeoutError::Timeout) =
        relay_done.recv_timeout(Duration::from_millis(50))
    {
        let since = reading_since.load(Ordering::SeqCst);
        if since != 0 && millis_now().saturating_sub(since) >= EXIT_DRAIN.as_millis() as u64 {
            break;
        }
    }
    relay.side.flush_client();
    if let Some(stderr_relay) = &stderr_relay {
        stderr_relay.drain(Duration::from_millis(300));
    }
    relay.warn_unused();
    Ok(elicit_platform::process::exit_code(status))
}

/// With a terminal, Ctrl-C at a prompt cancels that elicitation; a
/// Ctrl-C with no prompt up means "stop": it goes to the server. Who
/// it belongs to is decided when it arrives (see `elicit_platform::handlers`).
fn pass_ctrl_c_to_server(group: ProcessGroup) {
    elicit_platform::handlers::install_interrupt_handler();
    std::thread::spawn(move || {
        let mut seen = elicit_platform::handlers::ctrl_c_for_server();
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let now = elicit_platform::handlers::ctrl_c_for_server();
            for _ in seen..now {
                group.signal(Signal::Interrupt);
            }
            seen = now;
        }
    });
}

/// Relays the client's input to the server on a thread of its own; when the
/// client hangs up, the server's stdin is closed and the server given
/// `grace` to exit before it is ended.
fn spawn_client_to_server(
    relay: Arc<StdioRelay>,
    client_in: Box<dyn Read + Send>,
    client_in_fd: Option<i32>,
    server_done: Arc<AtomicBool>,
    grace: Duration,
    group: ProcessGroup,
) {
    std::thread::spawn(move || {
        relay_client(&relay, client_in, client_in_fd);
        relay.client_hung_up();
        relay.side.close_server_input();
        // The server has its stdin closed; give it time to finish.
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if server_done.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        relay.note("the server did not exit after its stdin closed: sending SIGTERM");
        group.terminate(Duration::from_secs(2));
    });
}

/// The longest line held whole (a message and its newline); longer ones
/// are passed through in pieces, unread.
const HELD_LINE_LIMIT: usize = elicit_core::elicitation::protocol::MAX_MESSAGE_BYTES as usize + 1;

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

/// How long a server has to exit after a SIGTERM or SIGHUP the proxy
/// passed on, before its whole tree is sent SIGKILL: a server that ignores
/// the signal cannot keep the proxy (and itself) alive.
const SIGNAL_GRACE: Duration = Duration::from_secs(2);

fn forward_signals(group: ProcessGroup, sigint: bool) {
    let mut list = vec![Signal::Terminate, Signal::HangUp];
    if sigint {
        list.push(Signal::Interrupt);
    }
    elicit_platform::handlers::forward(&list, move |sig| match sig {
        // Passed on, then enforced: the server's exit ends the proxy (with
        // its status, 128 + 9 when it had to be killed).
        Signal::Terminate | Signal::HangUp => group.end_with(sig, SIGNAL_GRACE),
        _ => group.signal(sig),
    });
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

fn relay_client(relay: &StdioRelay, client_in: Box<dyn Read + Send>, in_fd: Option<i32>) {
    let pipes = &relay.side;
    let bulk = |chunk: &[u8]| !classify::client_chunk_matters(chunk) && !pipes.sees_every_line();
    // Borrowed mutably only by the spliced path (Linux).
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let mut emit = |bytes: &[u8], single: bool, flush: bool| {
        let rewritten = if single && client_line_matters(bytes) {
            rewrite_client_message(relay, bytes)
        } else {
            None
        };
        match rewritten {
            Some(v) => pipes.send_to_server(&line_of(&v), "client", flush),
            None => pipes.send_to_server(bytes, "client", flush),
        }
    };
    #[cfg(target_os = "linux")]
    if let Some(fd) = in_fd {
        let to_server = |from: RawFd, len: usize| {
            let mut guard = pipes.to_server.lock().expect("server writer lock");
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

/// The client's request or notification as the core rewrites it, or `None`
/// to relay the original bytes.
fn rewrite_client_message(relay: &StdioRelay, line: &[u8]) -> Option<Value> {
    let mut msg: Value = elicit_session::transport::message_limits::parse_bytes(line).ok()?;
    relay.client_message(&mut msg).then_some(msg)
}

/// A server line (or run of lines) may matter by its text, or because a
/// tracked client request awaits its reply (matched by id, after parsing).
fn server_line_matters(relay: &StdioRelay, bytes: &[u8]) -> bool {
    classify::server_chunk_matters(bytes)
        || relay.awaits_reply_in(bytes)
        // Completion notifications: `--strict` waits for them, and those of
        // elicitations elicit answered are withheld.
        || memchr::memmem::find(bytes, b"elicitation/complete").is_some()
}

fn relay_server(
    relay: &StdioRelay,
    server_out: std::process::ChildStdout,
    reading_since: &AtomicU64,
    out_fd: Option<i32>,
) {
    let pipes = &relay.side;
    let bulk = |chunk: &[u8]| !server_line_matters(relay, chunk) && !pipes.sees_every_line();
    // Borrowed mutably only by the spliced path (Linux).
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let mut emit = |bytes: &[u8], single: bool, flush: bool| {
        if single && server_line_matters(relay, bytes) {
            if relay.refuse_oversized_elicitation(bytes) {
                pipes.log("recv", "elicit", bytes);
                if flush {
                    pipes.flush_client();
                }
                return true;
            }
            if let Ok(msg) = elicit_session::transport::message_limits::parse_bytes(bytes) {
                match relay.server_message(&msg) {
                    Taken::Withheld => {
                        pipes.log("recv", "elicit", bytes);
                        if flush {
                            pipes.flush_client();
                        }
                        return true;
                    }
                    Taken::Rewritten(v) => {
                        pipes.send_to_client(&line_of(&v), "client", flush);
                        return true;
                    }
                    Taken::Relay => {}
                }
            }
        }
        pipes.send_to_client(bytes, "client", flush);
        true
    };
    #[cfg(target_os = "linux")]
    if let Some(out_fd) = out_fd {
        let to_client = |from: RawFd, len: usize| {
            let mut w = pipes.to_client.lock().expect("client writer lock");
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
