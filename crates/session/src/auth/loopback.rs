//! The loopback redirect listener (RFC 8252 §7.3): `http://127.0.0.1:PORT/callback`.
//!
//! Hand-written on `std::net::TcpListener`: the browser makes one GET and
//! elicit needs only its request-target, then answers a short page. An HTTP
//! server crate would bring a thread pool and routing for one line of
//! parsing. Each connection's request head is read on its own thread, with
//! a size cap and a total deadline (`HEAD_DEADLINE`, not a per-read
//! timeout), at most `MAX_READERS` at a time; the wait itself only judges
//! complete heads. So a local client that connects and trickles bytes (or
//! sends nothing) holds one reader for a few seconds at most, and never
//! keeps the real browser's redirect from being served.
//!
//! Behaviour: other paths (`/favicon.ico`) get a 404 and the wait goes on;
//! a request whose `state` is not ours gets a 400 page and the wait goes on
//! (it is not our browser); an `error=` response with our state ends the
//! wait with that error; `code` with our state is checked by the caller's
//! validator (the RFC 9207 `iss` rule) and ends the wait either way.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use url::Url;

use super::AuthError;

/// The largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its whole request head (a
/// browser sends it at once).
const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// Connections whose heads are read at the same time; more are closed
/// at once (each reader ends by [`HEAD_DEADLINE`]).
const MAX_READERS: usize = 64;
/// How often the accept loop looks at the clock.
const POLL: Duration = Duration::from_millis(25);

/// What came back on the redirect, with our `state` already checked.
#[derive(Clone, PartialEq, Eq)]
pub struct Callback {
    /// The authorization code.
    pub code: String,
    /// `iss`, when the server returned it (RFC 9207).
    pub iss: Option<String>,
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callback")
            .field("code", &"<redacted>")
            .field("iss", &self.iss)
            .finish()
    }
}

/// A bound listener on 127.0.0.1.
pub struct Loopback {
    listener: TcpListener,
    port: u16,
}

impl Loopback {
    /// Binds `preferred` (the port of a redirect URI registered before)
    /// when it is free, else any free port.
    pub fn bind(preferred: Option<u16>) -> Result<Self, AuthError> {
        let listener = preferred
            .and_then(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).ok())
            .map(Ok)
            .unwrap_or_else(|| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
            .map_err(|e| AuthError::Listener(format!("cannot listen on 127.0.0.1: {e}")))?;
        let port = listener
            .local_addr()
            .map(|a: SocketAddr| a.port())
            .map_err(|e| AuthError::Listener(e.to_string()))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| AuthError::Listener(e.to_string()))?;
        Ok(Loopback { listener, port })
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The redirect URI that reaches this listener.
    pub(crate) fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits until the browser arrives with our `state`, `timeout`, or
    /// `stop` (the person declined).
    /// `validate` decides on a response carrying a code (the `iss` check);
    /// its error is shown on the page and returned.
    pub fn wait(
        self,
        expected_state: &str,
        timeout: Duration,
        stop: &AtomicBool,
        validate: &dyn Fn(&Callback) -> Result<(), AuthError>,
    ) -> Result<Callback, AuthError> {
        let deadline = Instant::now() + timeout;
        let (heads, complete) = mpsc::channel::<(TcpStream, Option<String>)>();
        let readers = Arc::new(AtomicUsize::new(0));
        loop {
            if stop.load(Ordering::SeqCst) {
                return Err(AuthError::NotSignedIn {
                    reason: "stopped".into(),
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(AuthError::Timeout(timeout));
            }
            // Pending connections get their readers first (a bounded
            // number per turn: a flood cannot keep the wait from its clock).
            for _ in 0..MAX_READERS {
                match self.listener.accept() {
                    Ok((stream, _)) => spawn_reader(stream, &heads, &readers),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(AuthError::Listener(format!("accept failed: {e}"))),
                }
            }
            match complete.recv_timeout(POLL.min(deadline - now)) {
                Ok((mut stream, target)) => {
                    if let Some(done) = handle(&mut stream, target, expected_state, validate) {
                        return done;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(AuthError::Listener("the listener ended".into()))
                }
            }
        }
    }
}

/// Reads one connection's request head on a thread of its own (by
/// [`HEAD_DEADLINE`]) and hands the stream and its target to the wait;
/// past [`MAX_READERS`] the connection is closed at once.
fn spawn_reader(
    stream: TcpStream,
    heads: &mpsc::Sender<(TcpStream, Option<String>)>,
    readers: &Arc<AtomicUsize>,
) {
    if readers.fetch_add(1, Ordering::SeqCst) >= MAX_READERS {
        readers.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let heads = heads.clone();
    let count = readers.clone();
    let spawned = std::thread::Builder::new()
        .name("sign-in reader".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let mut stream = stream;
            let _ = stream.set_nonblocking(false);
            let target = read_target(&mut stream, Instant::now() + HEAD_DEADLINE);
            count.fetch_sub(1, Ordering::SeqCst);
            // The wait may be over: then the stream just closes.
            let _ = heads.send((stream, target));
        });
    if spawned.is_err() {
        readers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers one connection whose head was read (`target`: its
/// request-target, `None` when it was not a readable GET in time). `Some`
/// ends the wait.
fn handle(
    stream: &mut TcpStream,
    target: Option<String>,
    expected_state: &str,
    validate: &dyn Fn(&Callback) -> Result<(), AuthError>,
) -> Option<Result<Callback, AuthError>> {
    // The page is small; a client that does not read it cannot hold the
    // wait for long either.
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let Some(target) = target else {
        respond(
            stream,
            400,
            "Bad request",
            "elicit could not read this request.",
        );
        return None;
    };
    let Ok(url) = Url::parse(&format!("http://127.0.0.1{target}")) else {
        respond(
            stream,
            400,
            "Bad request",
            "elicit could not read this request.",
        );
        return None;
    };
    if url.path() != "/callback" {
        respond(stream, 404, "Not found", "Nothing here.");
        return None;
    }
    let get = |k: &str| {
        url.query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    if get("state").as_deref() != Some(expected_state) {
        respond(
            stream,
            400,
            "Sign-in not accepted",
            "This sign-in response does not belong to the sign-in elicit started (its state does not match). elicit is still waiting; start again from the link elicit showed.",
        );
        return None;
    }
    if let Some(err) = get("error") {
        let description = get("error_description");
        respond(
            stream,
            400,
            "Sign-in failed",
            &format!(
                "The authorization server answered: {}{}. You can close this tab.",
                err,
                description
                    .as_deref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
        );
        return Some(Err(AuthError::Denied {
            error: err,
            description,
        }));
    }
    let Some(code) = get("code") else {
        respond(
            stream,
            400,
            "Sign-in failed",
            "The response carries neither a code nor an error. You can close this tab.",
        );
        return Some(Err(AuthError::Protocol(
            "the authorization response carries neither `code` nor `error`".into(),
        )));
    };
    let cb = Callback {
        code,
        iss: get("iss"),
    };
    match validate(&cb) {
        Ok(()) => {
            respond(
                stream,
                200,
                "Signed in",
                "elicit received the sign-in. You can close this tab and return to the terminal.",
            );
            Some(Ok(cb))
        }
        Err(e) => {
            respond(
                stream,
                400,
                "Sign-in refused",
                &format!("elicit refused this response: {e}. You can close this tab."),
            );
            Some(Err(e))
        }
    }
}

/// Reads the request head, all of it by `deadline`, and returns its
/// request-target (`/path?query`).
fn read_target(stream: &mut TcpStream, deadline: Instant) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && !buf.windows(2).any(|w| w == b"\n\n") {
        if buf.len() > MAX_HEAD {
            return None;
        }
        let left = deadline.checked_duration_since(Instant::now())?;
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return None;
        }
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let line = head.lines().next()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?;
    let target = parts.next()?;
    (method == "GET" && target.starts_with('/')).then(|| target.to_string())
}

fn html_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '&' => "&amp;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&#39;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

fn respond(stream: &mut TcpStream, status: u16, title: &str, text: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>elicit: {t}</title></head>\
         <body style=\"font-family:sans-serif;max-width:40em;margin:3em auto\"><h1>{t}</h1><p>{x}</p></body></html>",
        t = html_escape(title),
        x = html_escape(text)
    );
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends one raw GET and returns the status line.
    fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(s, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out.lines().next().unwrap_or("").to_string()
    }

    fn run(
        requests: &'static [&'static str],
        validate: fn(&Callback) -> Result<(), AuthError>,
    ) -> (Vec<String>, Result<Callback, AuthError>) {
        let l = Loopback::bind(None).unwrap();
        let port = l.port();
        let stop = AtomicBool::new(false);
        let h =
            std::thread::spawn(move || requests.iter().map(|r| get(port, r)).collect::<Vec<_>>());
        let r = l.wait("S1", Duration::from_secs(10), &stop, &validate);
        (h.join().unwrap(), r)
    }

    #[test]
    fn wrong_state_and_other_paths_keep_waiting_then_the_right_one_ends_it() {
        let (statuses, r) = run(
            &[
                "/favicon.ico",
                "/callback?code=c&state=WRONG",
                "/callback?code=c",
                "/callback?code=good&state=S1&iss=x",
            ],
            |_| Ok(()),
        );
        assert!(statuses[0].contains("404"), "{statuses:?}");
        assert!(statuses[1].contains("400"), "{statuses:?}");
        assert!(statuses[2].contains("400"), "{statuses:?}");
        assert!(statuses[3].contains("200"), "{statuses:?}");
        let cb = r.unwrap();
        assert_eq!(cb.code, "good");
        assert_eq!(cb.iss.as_deref(), Some("x"));
        assert!(!format!("{cb:?}").contains("good"));
    }

    #[test]
    fn an_error_response_is_reported() {
        let (statuses, r) = run(
            &["/callback?error=access_denied&error_description=no%20thanks&state=S1"],
            |_| Ok(()),
        );
        assert!(statuses[0].contains("400"));
        match r {
            Err(AuthError::Denied { error, description }) => {
                assert_eq!(error, "access_denied");
                assert_eq!(description.as_deref(), Some("no thanks"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_validator_refusal_ends_the_wait_with_its_error() {
        let (statuses, r) = run(&["/callback?code=c&state=S1&iss=evil"], |_| {
            Err(AuthError::Protocol("bad iss".into()))
        });
        assert!(statuses[0].contains("400"));
        assert!(matches!(r, Err(AuthError::Protocol(_))));
    }

    #[test]
    fn garbage_requests_do_not_stop_the_listener() {
        let l = Loopback::bind(None).unwrap();
        let port = l.port();
        let stop = AtomicBool::new(false);
        let h = std::thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(b"\x00\xff garbage\r\n\r\n").unwrap();
            let _ = s.read_to_string(&mut String::new());
            drop(TcpStream::connect(("127.0.0.1", port)).unwrap()); // connects, sends nothing
            get(port, "/callback?code=c&state=S1")
        });
        let r = l.wait("S1", Duration::from_secs(20), &stop, &|_| Ok(()));
        assert!(h.join().unwrap().contains("200"));
        assert_eq!(r.unwrap().code, "c");
    }

    #[test]
    fn the_wait_is_bounded() {
        let l = Loopback::bind(None).unwrap();
        let stop = AtomicBool::new(false);
        let r = l.wait("S1", Duration::from_millis(100), &stop, &|_| Ok(()));
        assert!(matches!(r, Err(AuthError::Timeout(_))));
    }
}
