//! The loopback redirect listener (RFC 8252 §7.3): `http://127.0.0.1:PORT/callback`.
//!
//! The connections are `elicit-http`'s (the listener of the browser page
//! and the mock), with its bounds: a capped request head that must arrive
//! within `HEAD_TIME` (shorter than the page's: a browser sends its
//! redirect at once), a cap on open connections that sheds idle ones
//! first, an accept loop that a failed accept does not end. So a local
//! client that connects and trickles bytes (or sends nothing, or opens
//! many connections) holds a connection for a few seconds at most, and
//! never keeps the real browser's redirect from being served. What is
//! here is the redirect's own logic, judged one complete request at a
//! time by the wait.
//!
//! Behaviour: other paths (`/favicon.ico`) get a 404 and the wait goes on;
//! a request whose `state` is not ours gets a 400 page and the wait goes on
//! (it is not our browser); an `error=` response with our state ends the
//! wait with that error; `code` with our state is checked by the caller's
//! validator (the RFC 9207 `iss` rule) and ends the wait either way.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use elicit_http::Request;
use url::Url;

use super::AuthError;

/// How long one connection may take to send its whole request head (a
/// browser sends it at once).
const HEAD_TIME: Duration = Duration::from_secs(5);
/// How long a connection's thread waits for the wait to answer its
/// request (the wait answers each as it comes; this only bounds a wait
/// that ended meanwhile).
const ANSWER_TIME: Duration = Duration::from_secs(15);
/// How often the wait looks at the clock and its stop flag.
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
        // Each complete request comes here with a sender whose drop tells
        // its connection's thread that it was answered: that thread (which
        // then drains and closes the connection) holds it until then.
        let (requests, arrived) = mpsc::channel::<(Request, mpsc::Sender<()>)>();
        // Dropped on return: the listener closes with the wait.
        let _serving = elicit_http::Serving::start(self.listener, HEAD_TIME, move |request| {
            let (answered, done) = mpsc::channel();
            if requests.send((request, answered)).is_ok() {
                let _ = done.recv_timeout(ANSWER_TIME);
            }
        })
        .map_err(|e| AuthError::Listener(format!("cannot serve 127.0.0.1: {e}")))?;
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
            match arrived.recv_timeout(POLL.min(deadline - now)) {
                Ok((request, _answered)) => {
                    if let Some(done) = handle(request, expected_state, validate) {
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

/// Answers one request. `Some` ends the wait.
fn handle(
    request: Request,
    expected_state: &str,
    validate: &dyn Fn(&Callback) -> Result<(), AuthError>,
) -> Option<Result<Callback, AuthError>> {
    let target = request.url();
    let readable = request.method() == "GET" && target.starts_with('/');
    let Some(url) = readable
        .then(|| Url::parse(&format!("http://127.0.0.1{target}")).ok())
        .flatten()
    else {
        respond(
            request,
            400,
            "Bad request",
            "elicit could not read this request.",
        );
        return None;
    };
    if url.path() != "/callback" {
        respond(request, 404, "Not found", "Nothing here.");
        return None;
    }
    let get = |k: &str| {
        url.query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    if get("state").as_deref() != Some(expected_state) {
        respond(
            request,
            400,
            "Sign-in not accepted",
            "This sign-in response does not belong to the sign-in elicit started (its state does not match). elicit is still waiting; start again from the link elicit showed.",
        );
        return None;
    }
    if let Some(err) = get("error") {
        let description = get("error_description");
        respond(
            request,
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
            request,
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
                request,
                200,
                "Signed in",
                "elicit received the sign-in. You can close this tab and return to the terminal.",
            );
            Some(Ok(cb))
        }
        Err(e) => {
            respond(
                request,
                400,
                "Sign-in refused",
                &format!("elicit refused this response: {e}. You can close this tab."),
            );
            Some(Err(e))
        }
    }
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

fn respond(request: Request, status: u16, title: &str, text: &str) {
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
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    request.respond(response.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

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

    /// More idle connections than the listener keeps open (a local
    /// flood) do not keep the browser out: the oldest idle ones are shed
    /// for it, and its redirect ends the wait.
    #[test]
    fn a_flood_of_idle_connections_does_not_keep_the_redirect_out() {
        let l = Loopback::bind(None).unwrap();
        let port = l.port();
        let stop = AtomicBool::new(false);
        let h = std::thread::spawn(move || {
            let flood: Vec<TcpStream> = (0..elicit_http::MAX_CONNECTIONS * 2)
                .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
                .collect();
            let status = get(port, "/callback?code=c&state=S1");
            drop(flood);
            status
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
