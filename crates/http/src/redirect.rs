//! A loopback listener for one redirect (a sign-in's, RFC 8252 §7.3):
//! bound on a loopback address only, served by [`Serving`] for as long as
//! one wait lasts, with a head time shorter than the page's (a browser
//! sends its redirect at once).
//!
//! The caller judges the redirect itself: the query of each `GET` of
//! [`REDIRECT_PATH`] comes to it, one complete request at a time, on the
//! waiting thread, and its [`Answer`] says which page to show and whether
//! the wait ends. Everything else is answered here: another path gets a
//! `404` page, a request that is no `GET` of a path a `400` page, and the
//! wait goes on. A page's title and text are escaped here, so nothing a
//! caller quotes from the query reaches the page as markup.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{Request, Serving};

/// The path the redirect comes back to.
pub const REDIRECT_PATH: &str = "/callback";

/// How long one connection may take to send its whole request head (a
/// browser sends it at once).
pub const REDIRECT_HEAD_TIME: Duration = Duration::from_secs(5);

/// How long a connection's thread waits for the wait to answer its
/// request (the wait answers each as it comes; this only bounds a wait
/// that ended meanwhile).
const ANSWER_TIME: Duration = Duration::from_secs(15);

/// How often the wait looks at the clock and its stop flag.
const POLL: Duration = Duration::from_millis(25);

/// The page a redirect is answered with and, when it ends the wait, what
/// the wait returns.
pub struct Answer<T> {
    /// The HTTP status: 200, 400 or 404.
    pub status: u16,
    /// The page's title (plain text: escaped here).
    pub title: String,
    /// The page's one paragraph (plain text: escaped here).
    pub text: String,
    /// `Some`: the wait ends with this.
    pub outcome: Option<T>,
}

/// Why a wait ended without an outcome.
#[derive(Debug)]
pub enum WaitEnd {
    /// Its time passed.
    TimedOut,
    /// Its stop flag was set.
    Stopped,
    /// The listener could not be served.
    CannotServe(io::Error),
    /// The listener's accept loop ended under the wait.
    ListenerEnded,
}

impl fmt::Display for WaitEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitEnd::TimedOut => f.write_str("the wait timed out"),
            WaitEnd::Stopped => f.write_str("stopped"),
            WaitEnd::CannotServe(e) => write!(f, "cannot serve the listener: {e}"),
            WaitEnd::ListenerEnded => f.write_str("the listener ended"),
        }
    }
}

/// A bound listener on a loopback address, for one wait.
pub struct RedirectListener {
    listener: TcpListener,
    address: SocketAddr,
}

impl RedirectListener {
    /// Binds `ip`, which must be a loopback address (anything else is
    /// refused: the redirect is for this machine only), on `preferred`
    /// (the port of a redirect URI registered before) when it is free,
    /// else on any free port.
    pub fn bind(ip: IpAddr, preferred: Option<u16>) -> io::Result<Self> {
        if !ip.is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{ip} is not a loopback address: a redirect listener listens on this machine only"),
            ));
        }
        let listener = match preferred.and_then(|p| TcpListener::bind((ip, p)).ok()) {
            Some(listener) => listener,
            None => TcpListener::bind((ip, 0))?,
        };
        let address = listener.local_addr()?;
        Ok(RedirectListener { listener, address })
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// The redirect URI that reaches this listener
    /// (`http://127.0.0.1:PORT/callback`, `http://[::1]:PORT/callback`).
    pub fn redirect_uri(&self) -> String {
        format!("http://{}{REDIRECT_PATH}", self.address)
    }

    /// Serves the listener until `judge` ends the wait with an outcome,
    /// `timeout` passes, or `stop` is set; the listener is closed (its
    /// port free) when this returns.
    pub fn wait<T>(
        self,
        timeout: Duration,
        stop: &AtomicBool,
        judge: &mut dyn FnMut(&str) -> Answer<T>,
    ) -> Result<T, WaitEnd> {
        let deadline = Instant::now() + timeout;
        // Each complete request comes here with a sender whose drop tells
        // its connection's thread that it was answered: that thread (which
        // then drains and closes the connection) holds it until then.
        let (requests, arrived) = mpsc::channel::<(Request, mpsc::Sender<()>)>();
        // Dropped on return: the listener closes with the wait.
        let _serving = Serving::start(self.listener, REDIRECT_HEAD_TIME, move |request| {
            let (answered, done) = mpsc::channel();
            if requests.send((request, answered)).is_ok() {
                let _ = done.recv_timeout(ANSWER_TIME);
            }
        })
        .map_err(WaitEnd::CannotServe)?;
        loop {
            if stop.load(Ordering::SeqCst) {
                return Err(WaitEnd::Stopped);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(WaitEnd::TimedOut);
            }
            match arrived.recv_timeout(POLL.min(deadline - now)) {
                Ok((request, _answered)) => {
                    if let Some(outcome) = answer(request, judge) {
                        return Ok(outcome);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(WaitEnd::ListenerEnded),
            }
        }
    }
}

/// Answers one request: a redirect as `judge` says, anything else here.
/// `Some` ends the wait.
fn answer<T>(request: Request, judge: &mut dyn FnMut(&str) -> Answer<T>) -> Option<T> {
    let target = request.url();
    if request.method() != "GET" || !target.starts_with('/') {
        respond(
            request,
            400,
            "Bad request",
            "elicit could not read this request.",
        );
        return None;
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != REDIRECT_PATH {
        respond(request, 404, "Not found", "Nothing here.");
        return None;
    }
    let Answer {
        status,
        title,
        text,
        outcome,
    } = judge(query);
    respond(request, status, &title, &text);
    outcome
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

/// Writes a page of one title and one paragraph, both escaped.
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
    use std::net::{Ipv4Addr, Ipv6Addr, TcpStream};

    /// Sends one raw request head and returns the whole response.
    fn send(address: SocketAddr, head: &str) -> String {
        let mut s = TcpStream::connect(address).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    /// A judge that quotes the query on its page and ends the wait with
    /// it when it holds `end`.
    fn quoting(query: &str) -> Answer<String> {
        Answer {
            status: 200,
            title: "Got <it>".into(),
            text: format!("query: {query}"),
            outcome: query.contains("end").then(|| query.to_string()),
        }
    }

    #[test]
    fn only_a_loopback_address_is_bound() {
        for ip in [
            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        ] {
            let e = RedirectListener::bind(ip, None).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{ip}: {e}");
        }
        let l = RedirectListener::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), None).unwrap();
        assert_eq!(
            l.redirect_uri(),
            format!("http://127.0.0.1:{}/callback", l.port())
        );
    }

    /// Other paths and other methods are answered here and the wait goes
    /// on; the redirect's page is escaped; the outcome ends the wait and
    /// frees the port.
    #[test]
    fn the_redirect_is_judged_and_everything_else_answered_here() {
        let l = RedirectListener::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), None).unwrap();
        let address = l.address;
        let client = std::thread::spawn(move || {
            [
                "GET /favicon.ico HTTP/1.1\r\n\r\n",
                "POST /callback?end HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
                "GET /callback?x=<script> HTTP/1.1\r\n\r\n",
                "GET /callback?end=1 HTTP/1.1\r\n\r\n",
            ]
            .map(|head| send(address, head))
        });
        let stop = AtomicBool::new(false);
        let outcome = l.wait(Duration::from_secs(20), &stop, &mut quoting);
        let pages = client.join().unwrap();
        assert!(pages[0].starts_with("HTTP/1.1 404"), "{}", pages[0]);
        assert!(pages[1].starts_with("HTTP/1.1 400"), "{}", pages[1]);
        assert!(pages[2].starts_with("HTTP/1.1 200"), "{}", pages[2]);
        assert!(pages[2].contains("query: x=&lt;script&gt;"), "{}", pages[2]);
        assert!(pages[2].contains("Got &lt;it&gt;"), "{}", pages[2]);
        assert!(!pages[2].contains("<script>"), "{}", pages[2]);
        assert_eq!(outcome.unwrap(), "end=1");
        assert!(TcpListener::bind(address).is_ok(), "the port is still held");
    }

    #[test]
    fn the_wait_is_bounded_and_can_be_stopped() {
        let l = RedirectListener::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), None).unwrap();
        let stop = AtomicBool::new(false);
        let r = l.wait(Duration::from_millis(100), &stop, &mut quoting);
        assert!(matches!(r, Err(WaitEnd::TimedOut)), "{r:?}");
        let l = RedirectListener::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), None).unwrap();
        let stop = AtomicBool::new(true);
        let r = l.wait(Duration::from_secs(20), &stop, &mut quoting);
        assert!(matches!(r, Err(WaitEnd::Stopped)), "{r:?}");
    }

    /// On `::1` (where the machine has IPv6 loopback), the URI names it
    /// in brackets and the redirect is served there.
    #[test]
    fn an_ipv6_loopback_listener_serves_its_redirect() {
        let Ok(l) = RedirectListener::bind(IpAddr::V6(Ipv6Addr::LOCALHOST), None) else {
            eprintln!("no IPv6 loopback here: nothing to check");
            return;
        };
        assert_eq!(
            l.redirect_uri(),
            format!("http://[::1]:{}/callback", l.port())
        );
        let address = l.address;
        let client =
            std::thread::spawn(move || send(address, "GET /callback?end HTTP/1.1\r\n\r\n"));
        let stop = AtomicBool::new(false);
        assert_eq!(
            l.wait(Duration::from_secs(20), &stop, &mut quoting)
                .unwrap(),
            "end"
        );
        assert!(client.join().unwrap().starts_with("HTTP/1.1 200"));
    }
}
