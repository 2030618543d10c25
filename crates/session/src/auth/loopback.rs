//! The loopback redirect of a sign-in (RFC 8252 §7.3):
//! `http://127.0.0.1:PORT/callback`.
//!
//! The listening is `elicit-http`'s ([`RedirectListener`]): bound on
//! 127.0.0.1 only, the connections bounded as the browser page's are (a
//! capped request head that must arrive within a short head time, a cap on
//! open connections that sheds idle ones first, an accept loop that a
//! failed accept does not end), served for one wait, other paths and
//! unreadable requests answered there, and every page escaped. So a local
//! client that connects and trickles bytes (or sends nothing, or opens
//! many connections) holds a connection for a few seconds at most, and
//! never keeps the real browser's redirect from being served. What is
//! here is the redirect's OAuth side, judged one complete request at a
//! time by the wait: the `state` check, the code or error it carries, and
//! the words of its page.
//!
//! Behaviour: a request whose `state` is not ours gets a 400 page and the
//! wait goes on (it is not our browser); an `error=` response with our
//! state ends the wait with that error; `code` with our state is checked by
//! the caller's validator (the RFC 9207 `iss` rule) and ends the wait
//! either way.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use elicit_http::redirect::{Answer, RedirectListener, WaitEnd};

use super::AuthError;

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
    listener: RedirectListener,
}

impl Loopback {
    /// Binds `preferred` (the port of a redirect URI registered before)
    /// when it is free, else any free port.
    pub fn bind(preferred: Option<u16>) -> Result<Self, AuthError> {
        RedirectListener::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), preferred)
            .map(|listener| Loopback { listener })
            .map_err(|e| AuthError::Listener(format!("cannot listen on 127.0.0.1: {e}")))
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.listener.port()
    }

    /// The redirect URI that reaches this listener.
    pub(crate) fn redirect_uri(&self) -> String {
        self.listener.redirect_uri()
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
        let mut judge = |query: &str| judge(query, expected_state, validate);
        match self.listener.wait(timeout, stop, &mut judge) {
            Ok(outcome) => outcome,
            Err(WaitEnd::TimedOut) => Err(AuthError::Timeout(timeout)),
            Err(WaitEnd::Stopped) => Err(AuthError::NotSignedIn {
                reason: "stopped".into(),
            }),
            Err(WaitEnd::CannotServe(e)) => {
                Err(AuthError::Listener(format!("cannot serve 127.0.0.1: {e}")))
            }
            Err(WaitEnd::ListenerEnded) => Err(AuthError::Listener("the listener ended".into())),
        }
    }
}

/// A page, and whether (with what) the wait ends.
fn page(
    status: u16,
    title: &str,
    text: String,
    outcome: Option<Result<Callback, AuthError>>,
) -> Answer<Result<Callback, AuthError>> {
    Answer {
        status,
        title: title.to_string(),
        text,
        outcome,
    }
}

/// Judges the query of one redirect: our `state`, then an error or a code.
fn judge(
    query: &str,
    expected_state: &str,
    validate: &dyn Fn(&Callback) -> Result<(), AuthError>,
) -> Answer<Result<Callback, AuthError>> {
    let get = |k: &str| {
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    if get("state").as_deref() != Some(expected_state) {
        return page(
            400,
            "Sign-in not accepted",
            "This sign-in response does not belong to the sign-in elicit started (its state does not match). elicit is still waiting; start again from the link elicit showed.".into(),
            None,
        );
    }
    if let Some(err) = get("error") {
        let description = get("error_description");
        let text = format!(
            "The authorization server answered: {}{}. You can close this tab.",
            err,
            description
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        );
        let denied = AuthError::Denied {
            error: err,
            description,
        };
        return page(400, "Sign-in failed", text, Some(Err(denied)));
    }
    let Some(code) = get("code") else {
        return page(
            400,
            "Sign-in failed",
            "The response carries neither a code nor an error. You can close this tab.".into(),
            Some(Err(AuthError::Protocol(
                "the authorization response carries neither `code` nor `error`".into(),
            ))),
        );
    };
    let cb = Callback {
        code,
        iss: get("iss"),
    };
    match validate(&cb) {
        Ok(()) => page(
            200,
            "Signed in",
            "elicit received the sign-in. You can close this tab and return to the terminal."
                .into(),
            Some(Ok(cb)),
        ),
        Err(e) => page(
            400,
            "Sign-in refused",
            format!("elicit refused this response: {e}. You can close this tab."),
            Some(Err(e)),
        ),
    }
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

    /// What the query says is quoted on the page escaped, never as markup.
    #[test]
    fn the_query_reaches_the_page_escaped() {
        let l = Loopback::bind(None).unwrap();
        let port = l.port();
        let stop = AtomicBool::new(false);
        let h = std::thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let query = "error=%3Cscript%3E&error_description=%22%3E%3Cimg%20src%3Dx&state=S1";
            write!(s, "GET /callback?{query} HTTP/1.1\r\n\r\n").unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out
        });
        let r = l.wait("S1", Duration::from_secs(10), &stop, &|_| Ok(()));
        let page = h.join().unwrap();
        assert!(matches!(r, Err(AuthError::Denied { .. })), "{r:?}");
        assert!(page.contains("&lt;script&gt;"), "{page}");
        assert!(
            !page.contains("<script>") && !page.contains("<img"),
            "{page}"
        );
    }

    #[test]
    fn the_wait_is_bounded() {
        let l = Loopback::bind(None).unwrap();
        let stop = AtomicBool::new(false);
        let r = l.wait("S1", Duration::from_millis(100), &stop, &|_| Ok(()));
        assert!(matches!(r, Err(AuthError::Timeout(_))));
    }
}
