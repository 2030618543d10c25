//! elicit's HTTP/1.1 listener for its loopback servers (the browser page,
//! `elicit mock --http`): std's `TcpListener`, one thread per
//! connection, the request head parsed by `httparse` (the parser hyper and
//! ureq use), a response per connection (`Connection: close`).
//!
//! Written here rather than taken from a server crate because what these
//! servers need is the connection handling, and no small blocking server does it:
//! `tiny_http` 0.12 (used before) reads a header line without any bound
//! (300 MiB of memory for 300 MiB sent) and its accept loop ends for good at
//! the first failed `accept` (out of file descriptors); hyper and its
//! frameworks bring an async runtime elicit does not otherwise have. The
//! parsing itself stays with `httparse`; what is here is the bounds:
//!
//! - the request line and headers together are at most [`MAX_HEAD`] bytes
//!   and [`MAX_HEADERS`] lines (`431` past either), and must arrive within
//!   [`HEAD_TIME`]: a connection never holds more than that much memory, or
//!   a slot longer than that, before it has sent a whole request;
//! - at most [`MAX_CONNECTIONS`] connections are open at once. A new one
//!   past that sheds the oldest connection still sending its head (an idle
//!   one); when every one is busy with a request, the new one gets `503`.
//!   A connection its handler keeps open on purpose ([`Request::hold`]: the
//!   mock's event streams, which wait on a client's answer) no longer counts
//!   then: it cannot take the slot of a request it waits for, and the
//!   handler bounds how many it holds;
//! - a failed `accept` (no file descriptor left, a connection reset before
//!   it was taken) never stops the loop: it sheds an idle connection when
//!   descriptors ran out, waits a moment, and accepts again, for as long as
//!   the process lives.
//!
//! [`serve`] runs for the life of the process (the page, the mock). A
//! listener needed for one wait only is served by [`Serving::start`]
//! instead: the same connection handling, with a head time of its own, and
//! the accept loop ends (closing the listener) when the [`Serving`] is
//! dropped. The sign-in redirect's listener is built on it
//! ([`redirect::RedirectListener`]: loopback only, one wait, a page per
//! request; the caller judges the redirect's query).
#![warn(missing_docs)]

pub mod redirect;

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The request line and headers, together (room for a browser's cookies
/// for 127.0.0.1 from other local servers too; 64 connections' heads are
/// then 4 MiB at most).
pub const MAX_HEAD: usize = 64 * 1024;

/// Header lines in one request.
pub const MAX_HEADERS: usize = 64;

/// Connections open at once (each has a thread).
pub const MAX_CONNECTIONS: usize = 64;

/// How long a connection may take to send its whole request head.
pub const HEAD_TIME: Duration = Duration::from_secs(10);

/// How long a whole body may take to arrive, and one write of a response
/// may wait.
const IO_TIME: Duration = Duration::from_secs(10);

/// After a response, how much of what the client still sends is read and
/// dropped (so that closing does not reset the connection before the
/// client has read the response), and for how long at most.
const DRAIN_BYTES: u64 = 1024 * 1024;
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// How often a stoppable accept loop ([`Serving`]) looks at its stop flag
/// when no connection is pending.
const STOP_POLL: Duration = Duration::from_millis(25);

/// One parsed request, with its connection.
pub struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    /// Bytes read past the head: the start of the body.
    leftover: Vec<u8>,
    stream: TcpStream,
    /// The connection's entry in its listener's table (for [`Self::hold`]).
    slot: Option<(Table, u64)>,
}

impl Request {
    /// The request method as sent (`GET`, `POST`, …).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request target as sent (`/path?query`).
    pub fn url(&self) -> &str {
        &self.target
    }

    /// The first header with this name (any case).
    pub fn header<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        self.all(name).next()
    }

    /// Every header with this name (any case), in order.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The declared `Content-Length` (`None` when it does not parse or the
    /// body is chunked: these servers take neither).
    pub fn body_length(&self) -> Option<u64> {
        if self.header("Transfer-Encoding").is_some() {
            return None;
        }
        match self.header("Content-Length") {
            None => Some(0),
            Some(v) => v.trim().parse().ok(),
        }
    }

    /// Reads the body of `length` bytes (checked by the caller against its
    /// own cap), all of it within `IO_TIME`.
    pub fn read_body(&mut self, length: u64) -> io::Result<Vec<u8>> {
        let length = usize::try_from(length).map_err(io::Error::other)?;
        let mut body = std::mem::take(&mut self.leftover);
        body.truncate(length);
        let deadline = Instant::now() + IO_TIME;
        let mut chunk = [0u8; 8192];
        while body.len() < length {
            let left = deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or_else(|| io::Error::from(io::ErrorKind::TimedOut))?;
            self.stream.set_read_timeout(Some(left))?;
            let room = (length - body.len()).min(chunk.len());
            match self.stream.read(&mut chunk[..room]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                Ok(n) => body.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(body)
    }

    /// The connection, for a response written in parts (an event
    /// stream); [`Self::respond`] ends it.
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Takes this connection out of the [`MAX_CONNECTIONS`] the listener
    /// shares among requests, for a response that waits on other requests
    /// (an event stream waiting for the client's answer): held, it leaves
    /// them its slot. The caller bounds how many connections it holds.
    pub fn hold(&self) {
        if let Some((table, id)) = &self.slot {
            if let Some(slot) = lock(table).open.get_mut(id) {
                slot.held = true;
            }
        }
    }

    /// Writes the whole response and ends the sending side (the
    /// connection's thread then drains and closes it).
    pub fn respond(self, response: &[u8]) {
        write_response(&self.stream, response);
    }
}

/// Writes `response` and ends the sending side.
fn write_response(mut stream: &TcpStream, response: &[u8]) {
    let _ = stream.set_write_timeout(Some(IO_TIME));
    let _ = stream.write_all(response);
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Write);
}

/// Reads (and drops) what the client still sends, for a bounded time and
/// amount, so that closing does not reset the connection before the client
/// has read the response. The connection counts as idle meanwhile: it is
/// the first shed.
fn drain(mut stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(DRAIN_TIME));
    let until = Instant::now() + DRAIN_TIME;
    let mut sink = [0u8; 8192];
    let mut drained = 0u64;
    while drained < DRAIN_BYTES && Instant::now() < until {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n as u64,
        }
    }
}

/// The open connections: a clone of each stream (to shut an idle one
/// down from the accept loop), and whether it is still sending its head.
#[derive(Default)]
struct Connections {
    next: u64,
    open: BTreeMap<u64, Slot>,
}

struct Slot {
    stream: TcpStream,
    idle: bool,
    /// Held by its handler ([`Request::hold`]): not counted, never shed.
    held: bool,
}

impl Connections {
    /// The connections that count against [`MAX_CONNECTIONS`].
    fn counted(&self) -> usize {
        self.open.values().filter(|s| !s.held).count()
    }

    /// Shuts the oldest idle connection down (its thread then ends).
    fn shed_idle(&mut self) -> bool {
        let idle = self.open.iter().find(|(_, s)| s.idle && !s.held);
        let Some(id) = idle.map(|(id, _)| *id) else {
            return false;
        };
        if let Some(slot) = self.open.remove(&id) {
            let _ = slot.stream.shutdown(Shutdown::Both);
        }
        true
    }
}

type Table = Arc<Mutex<Connections>>;

fn lock(table: &Table) -> MutexGuard<'_, Connections> {
    table.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serves `listener` for the rest of the process's life: each request is
/// handed to `handle` on its connection's own thread.
pub fn serve<F>(listener: TcpListener, handle: F) -> io::Result<()>
where
    F: Fn(Request) + Send + Sync + 'static,
{
    let handle = Arc::new(handle);
    std::thread::Builder::new()
        .name("elicit-page".into())
        .spawn(move || accept_loop(&listener, &handle, HEAD_TIME, None))?;
    Ok(())
}

/// A listener served until this is dropped (or [`Serving::stop`]): for a
/// wait with an end, such as the sign-in redirect. Connections already
/// taken finish on their own threads, within their usual bounds.
pub struct Serving {
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Serving {
    /// Serves `listener` as [`serve`] does, except that a connection has
    /// `head_time` (at most [`HEAD_TIME`]) to send its request head, and
    /// that the accept loop ends when the returned value is dropped.
    pub fn start<F>(listener: TcpListener, head_time: Duration, handle: F) -> io::Result<Serving>
    where
        F: Fn(Request) + Send + Sync + 'static,
    {
        // Non-blocking, so that the loop sees the stop flag without a
        // connection arriving to wake it.
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let handle = Arc::new(handle);
        let accept = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("elicit-listener".into())
                .spawn(move || {
                    accept_loop(&listener, &handle, head_time.min(HEAD_TIME), Some(&stop))
                })?
        };
        Ok(Serving {
            stop,
            accept: Some(accept),
        })
    }

    /// Stops accepting and closes the listener (what dropping does).
    pub fn stop(self) {}
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The loop looks at the flag every `STOP_POLL`: when this returns,
        // the port is free.
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept_loop<F>(
    listener: &TcpListener,
    handle: &Arc<F>,
    head_time: Duration,
    stop: Option<&AtomicBool>,
) where
    F: Fn(Request) + Send + Sync + 'static,
{
    let table: Table = Arc::default();
    let stopped = || stop.is_some_and(|s| s.load(Ordering::SeqCst));
    while !stopped() {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(STOP_POLL);
                continue;
            }
            Err(e) => {
                // Out of descriptors (EMFILE, ENFILE) or memory: make room
                // by shedding an idle connection, and go on accepting.
                if elicit_platform::fs::out_of_descriptors(&e) {
                    lock(&table).shed_idle();
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
        };
        // Accepted from a non-blocking listener, a connection is
        // non-blocking too on some systems; its reads wait with timeouts.
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        let id = {
            let mut t = lock(&table);
            if t.counted() >= MAX_CONNECTIONS && !t.shed_idle() {
                drop(t);
                busy(stream);
                continue;
            }
            let Ok(clone) = stream.try_clone() else {
                continue;
            };
            t.next += 1;
            let id = t.next;
            t.open.insert(
                id,
                Slot {
                    stream: clone,
                    idle: true,
                    held: false,
                },
            );
            id
        };
        let table2 = table.clone();
        let handle = handle.clone();
        let spawned = std::thread::Builder::new()
            .name("elicit-page-conn".into())
            .spawn(move || {
                connection(stream, id, head_time, &table2, handle.as_ref());
                lock(&table2).open.remove(&id);
            });
        if spawned.is_err() {
            if let Some(slot) = lock(&table).open.remove(&id) {
                let _ = slot.stream.shutdown(Shutdown::Both);
            }
        }
    }
}

/// Every connection busy with a request: `503` at once, without reading.
fn busy(stream: TcpStream) {
    let _ = stream.set_nonblocking(true);
    let mut s = &stream;
    let _ = s.write_all(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
          Content-Length: 5\r\nConnection: close\r\nCache-Control: no-store\r\n\r\nbusy\n",
    );
    let _ = stream.shutdown(Shutdown::Both);
}

fn connection<F: Fn(Request)>(
    mut stream: TcpStream,
    id: u64,
    head_time: Duration,
    table: &Table,
    handle: &F,
) {
    let set_idle = |idle: bool| match lock(table).open.get_mut(&id) {
        Some(slot) => {
            slot.idle = idle;
            slot.held = false;
            true
        }
        None => false, // shed meanwhile
    };
    match read_head(&mut stream, head_time) {
        Ok(mut request) => {
            if !set_idle(false) {
                return;
            }
            request.slot = Some((table.clone(), id));
            handle(request);
        }
        Err(Some((status, text))) => {
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{text}\n",
                text.len() + 1
            );
            write_response(&stream, response.as_bytes());
        }
        Err(None) => return,
    }
    if set_idle(true) {
        drain(stream);
    }
}

/// Reads and parses a request head: at most [`MAX_HEAD`] bytes within
/// `head_time`. `Err(Some(status, text))`: answer that and close;
/// `Err(None)`: just close (the client went away or took too long).
fn read_head(
    stream: &mut TcpStream,
    head_time: Duration,
) -> Result<Request, Option<(&'static str, &'static str)>> {
    const TOO_LARGE: (&str, &str) = (
        "431 Request Header Fields Too Large",
        "refused: the request's head is too large",
    );
    let deadline = Instant::now() + head_time;
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    loop {
        let left = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(None)?;
        stream.set_read_timeout(Some(left)).map_err(|_| None)?;
        let room = (MAX_HEAD + 1 - buf.len()).min(chunk.len());
        let n = match stream.read(&mut chunk[..room]) {
            Ok(0) => return Err(None),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(None),
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let request = Request {
                    method: parsed.method.unwrap_or_default().to_string(),
                    target: parsed.path.unwrap_or_default().to_string(),
                    headers: parsed
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_string(),
                                String::from_utf8_lossy(h.value).into_owned(),
                            )
                        })
                        .collect(),
                    leftover: buf[len..].to_vec(),
                    stream: stream.try_clone().map_err(|_| None)?,
                    slot: None,
                };
                return Ok(request);
            }
            Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => return Err(Some(TOO_LARGE)),
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => return Err(Some(TOO_LARGE)),
            Err(_) => return Err(Some(("400 Bad Request", "not an HTTP request"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener whose handler answers `200` with the request's target.
    fn echo() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        serve(listener, |r: Request| {
            let body = r.url().to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            r.respond(head.as_bytes());
        })
        .unwrap();
        port
    }

    fn get(port: u16, head: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = s.write_all(head);
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn a_head_past_the_cap_is_refused_and_a_normal_one_served() {
        let port = echo();
        let ok = get(port, b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200") && ok.ends_with("/x"), "{ok}");
        let long = format!("GET /x HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert!(get(port, long.as_bytes()).starts_with("HTTP/1.1 431"));
        let many: String = (0..MAX_HEADERS + 1)
            .map(|i| format!("H{i}: v\r\n"))
            .collect();
        let many = format!("GET /x HTTP/1.1\r\n{many}\r\n");
        assert!(get(port, many.as_bytes()).starts_with("HTTP/1.1 431"));
        assert!(get(port, b"\x16\x03\x01garbage\r\n\r\n").starts_with("HTTP/1.1 400"));
    }

    #[test]
    fn idle_connections_are_shed_for_new_ones() {
        let port = echo();
        let idle: Vec<TcpStream> = (0..MAX_CONNECTIONS * 2)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let ok = get(port, b"GET /y HTTP/1.1\r\n\r\n");
        assert!(ok.ends_with("/y"), "{ok}");
        drop(idle);
    }

    /// Answered connections the client keeps open are idle while elicit
    /// waits for them to close: they are shed too, never a reason for 503.
    #[test]
    fn answered_connections_left_open_are_shed_too() {
        let port = echo();
        let held: Vec<TcpStream> = (0..MAX_CONNECTIONS * 2)
            .map(|_| {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.write_all(b"GET /held HTTP/1.1\r\n\r\n").unwrap();
                s
            })
            .collect();
        let ok = get(port, b"GET /z HTTP/1.1\r\n\r\n");
        assert!(ok.ends_with("/z"), "{ok}");
        drop(held);
    }

    /// Connections their handler holds (event streams waiting on an
    /// answer) do not count against the requests' slots: with more of them
    /// open than [`MAX_CONNECTIONS`], a request is still served, not `503`.
    #[test]
    fn held_connections_leave_the_slots_to_requests() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        let (started, holding) = std::sync::mpsc::channel::<()>();
        let started = Mutex::new(started);
        serve(listener, move |r: Request| {
            if r.url() == "/hold" {
                r.hold();
                let _ = started.lock().unwrap().send(());
                // Every holder ends when the test drops `release`.
                let _ = released.lock().unwrap().recv();
            }
            r.respond(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        })
        .unwrap();
        let held: Vec<TcpStream> = (0..MAX_CONNECTIONS + 8)
            .map(|_| {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.write_all(b"GET /hold HTTP/1.1\r\n\r\n").unwrap();
                holding.recv_timeout(Duration::from_secs(20)).unwrap();
                s
            })
            .collect();
        let ok = get(port, b"GET /x HTTP/1.1\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        drop(release);
        drop(held);
    }

    /// A stopped [`Serving`] no longer holds its port, and its head time
    /// is its own: a client that never finishes its head is let go by
    /// then, not by [`HEAD_TIME`].
    #[test]
    fn a_stoppable_listener_keeps_its_head_time_and_frees_its_port() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let serving = Serving::start(listener, Duration::from_millis(300), |r: Request| {
            r.respond(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        })
        .unwrap();
        assert!(get(port, b"GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 204"));
        let started = Instant::now();
        let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
        slow.write_all(b"GET / HT").unwrap();
        slow.set_read_timeout(Some(HEAD_TIME)).unwrap();
        assert_eq!(slow.read(&mut [0u8; 64]).unwrap_or(0), 0);
        assert!(started.elapsed() < HEAD_TIME / 2, "{:?}", started.elapsed());
        drop(serving);
        assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
    }
}
