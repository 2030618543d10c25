//! The HTTP client both HTTP transports share: the one ureq agent and its TLS roots,
//! how each exchange is bounded in time (`Bound`, `off_thread`), `execute` with the sign-in
//! hook ([`Authenticator`]) and its 401/403 retries, and reading bodies under the size cap.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;
use ureq::http::Response;
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::{Agent, Body};

use super::{ACK_BODY_WAIT, MAX_AUTH_RETRIES, MAX_MESSAGE_BYTES};
use crate::transport::MessageLog;
use elicit_core::error::{ElicitError, ServerError};

/// How one HTTP exchange is bounded in time.
#[derive(Clone, Copy)]
pub(crate) enum Bound {
    /// A request whose reply may stream for as long as the server works
    /// (a tool that elicits): only the wait for the response head is
    /// bounded, by the session's `receive` and the stream's own reads.
    Stream,
    /// The whole exchange, body included, within this time.
    Whole(Duration),
    /// An acknowledgement: the response within this time, any body within
    /// [`ACK_BODY_WAIT`].
    Ack(Duration),
    /// A stream opened with GET: its response head within this time.
    Head(Duration),
}

impl Bound {
    /// The request with this bound's ureq timeouts.
    pub(crate) fn apply<B>(self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match self {
            Bound::Stream => req,
            Bound::Whole(d) => req.config().timeout_global(Some(d)).build(),
            Bound::Ack(d) => req
                .config()
                .timeout_global(Some(d))
                .timeout_recv_body(Some(d.min(ACK_BODY_WAIT)))
                .build(),
            Bound::Head(d) => req.config().timeout_recv_response(Some(d)).build(),
        }
    }
}

/// What is left of `limit`, and of the time until `deadline` when one is
/// given (at least a millisecond: ureq reads zero as no timeout at all).
pub(crate) fn within(limit: Duration, deadline: Option<Instant>) -> Duration {
    let left = deadline.map_or(limit, |d| {
        limit.min(d.saturating_duration_since(Instant::now()))
    });
    left.max(Duration::from_millis(1))
}

/// Runs one exchange the session thread would otherwise block on, on a
/// thread of its own, and waits for it: a Ctrl-C for the server ends the
/// wait at once (a blocked socket read would not notice it); not one that
/// a prompt owns (it cancels that elicitation), nor one during a sign-in
/// (it answers Ctrl-C itself). The exchange's own ureq timeouts end the
/// thread.
pub(crate) fn off_thread<T: Send + 'static>(
    client: &Client,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ElicitError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    let interrupts = elicit_platform::handlers::ctrl_c_for_server();
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(v) => return Ok(v),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(ElicitError::Server(ServerError::NoOutcome))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if elicit_platform::handlers::ctrl_c_for_server() != interrupts
            && !client.sign_in_activity().0
        {
            return Err(ElicitError::Server(ServerError::Interrupted));
        }
    }
}

/// Supplies credentials for a remote server (the OAuth sign-in plugs in
/// here). See the module docs.
pub trait Authenticator: Send {
    /// The `Authorization` header value to send, if any.
    fn authorization(&mut self, url: &str) -> Option<String>;
    /// The credential headers for one request (`method` to `url`):
    /// `Authorization`, and a `DPoP` proof for a DPoP-bound token.
    fn credentials(&mut self, _method: &str, url: &str) -> Vec<(String, String)> {
        self.authorization(url)
            .map(|v| vec![("Authorization".to_string(), v)])
            .unwrap_or_default()
    }
    /// A response from `url` carried a `DPoP-Nonce` (RFC 9449 §9).
    fn dpop_nonce(&mut self, _url: &str, _nonce: &str) {}
    /// The server answered 401 or 403. Returns true to send the request once
    /// more (after a sign-in, say), false to give up with the usual error.
    fn challenge(
        &mut self,
        url: &str,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<bool, ElicitError>;
}

/// What an HTTP transport is opened with.
pub(crate) struct HttpOptions {
    /// `--header`s: sent on every request. Values are never printed.
    pub headers: Vec<(String, String)>,
    pub auth: Option<Box<dyn Authenticator>>,
    pub log: Option<MessageLog>,
    /// Fall back to the legacy HTTP+SSE transport when `initialize` is
    /// refused (`--transport auto`).
    pub(crate) legacy_fallback: bool,
    /// The most each exchange the session waits on may take (`--timeout`).
    pub timeout: Duration,
}

/// What the two HTTP transports share: the agent, the headers, the sign-in
/// hook, the log.
pub(crate) struct Client {
    pub agent: Agent,
    pub headers: Vec<(String, String)>,
    pub auth: Mutex<Option<Box<dyn Authenticator>>>,
    pub log: Option<MessageLog>,
    /// The most each exchange the session waits on may take (`--timeout`).
    pub timeout: Duration,
    /// True while the sign-in hook runs (a person may be signing in: the
    /// time does not count against `--timeout`).
    signing_in: AtomicBool,
    /// Successful sign-ins so far: a request that got 401 while another one
    /// signed in is retried with the new credentials, not signed in again.
    sign_ins: AtomicU64,
    /// Time spent in the sign-in hook so far, and since when the one
    /// running (if any) started: credited back to the wait for a reply.
    sign_in_time: Mutex<(Duration, Option<Instant>)>,
}

/// The root certificates elicit trusts: the system's store (read by
/// `rustls-native-certs`: `SSL_CERT_FILE`/`SSL_CERT_DIR`, else the
/// distribution's bundle) plus Mozilla's bundled roots (`webpki-root-certs`),
/// so a company CA installed on the machine works, and a machine without a
/// usable store still reaches public servers. Read once per process.
pub(super) fn root_certs() -> RootCerts {
    static ROOTS: OnceLock<RootCerts> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let system = rustls_native_certs::load_native_certs();
            let mut certs: Vec<Certificate<'static>> = system
                .certs
                .iter()
                .map(|c| Certificate::from_der(c.as_ref()).to_owned())
                .collect();
            certs.extend(
                webpki_root_certs::TLS_SERVER_ROOT_CERTS
                    .iter()
                    .map(|c| Certificate::from_der(c.as_ref()).to_owned()),
            );
            RootCerts::new_with_certs(&certs)
        })
        .clone()
}

/// The agent every remote request goes through (MCP and sign-in alike).
pub fn new_agent() -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        // Redirects are not followed for POST (the body would be lost or
        // sent somewhere unexpected): a 3xx is reported.
        .max_redirects(0)
        .max_redirects_will_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .user_agent(format!("elicit/{}", env!("CARGO_PKG_VERSION")))
        .tls_config(TlsConfig::builder().root_certs(root_certs()).build())
        .build()
        .into()
}

impl Client {
    pub fn new(
        headers: Vec<(String, String)>,
        auth: Option<Box<dyn Authenticator>>,
        log: Option<MessageLog>,
        timeout: Duration,
    ) -> Self {
        Client {
            agent: new_agent(),
            headers,
            auth: Mutex::new(auth),
            log,
            timeout,
            signing_in: AtomicBool::new(false),
            sign_ins: AtomicU64::new(0),
            sign_in_time: Mutex::new((Duration::ZERO, None)),
        }
    }

    /// Whether a sign-in is running, and how many finished.
    pub(crate) fn sign_in_activity(&self) -> (bool, u64) {
        (
            self.signing_in.load(Ordering::SeqCst),
            self.sign_ins.load(Ordering::SeqCst),
        )
    }

    /// The time spent signing in so far (the one running included): a
    /// wait for the server gets it back.
    pub(crate) fn sign_in_spent(&self) -> Duration {
        let t = self.sign_in_time.lock().expect("sign-in time lock");
        t.0 + t.1.map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// Sends a request built by `build` (called again for a retry after a
    /// sign-in), with the `--header`s and `Authorization` added. 401/403 go
    /// to the sign-in hook, else become an error naming `--header`.
    pub fn execute(
        &self,
        url: &str,
        what: &str,
        build: &dyn Fn(&Agent) -> Result<Response<Body>, ureq::Error>,
    ) -> Result<Response<Body>, ElicitError> {
        // One retry after a sign-in; a 403 step-up may need a few more.
        let mut retries = 0;
        let mut resent = false;
        loop {
            let before = self.sign_ins.load(Ordering::SeqCst);
            let response = match build(&self.agent) {
                Ok(r) => r,
                // A server may close an idle kept-alive connection just as
                // elicit reuses it: the request never reached it. Sent once
                // more, on a new connection.
                Err(e) if !resent && stale_connection(&e) => {
                    resent = true;
                    continue;
                }
                Err(e) => return Err(network_error(url, what, e)),
            };
            let status = response.status().as_u16();
            // Only then the lock: a sign-in elsewhere holds it meanwhile.
            if let Some(n) = header(&response, "dpop-nonce") {
                if let Some(a) = self.auth.lock().expect("auth lock").as_mut() {
                    a.dpop_nonce(url, &n);
                }
            }
            if status != 401 && status != 403 {
                return Ok(response);
            }
            let www = header(&response, "www-authenticate");
            let mut auth = self.auth.lock().expect("auth lock");
            if auth.is_some() && retries < MAX_AUTH_RETRIES {
                retries += 1;
                if self.sign_ins.load(Ordering::SeqCst) != before {
                    // Another request signed in meanwhile: use its token.
                    continue;
                }
                let a = auth.as_mut().expect("checked above");
                self.signing_in.store(true, Ordering::SeqCst);
                let started = Instant::now();
                self.sign_in_time.lock().expect("sign-in time lock").1 = Some(started);
                let outcome = a.challenge(url, status, www.as_deref());
                {
                    let mut t = self.sign_in_time.lock().expect("sign-in time lock");
                    t.0 += started.elapsed();
                    t.1 = None;
                }
                self.signing_in.store(false, Ordering::SeqCst);
                if outcome? {
                    self.sign_ins.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
            }
            return Err(auth_error(status, www.as_deref(), auth.is_some()));
        }
    }

    /// The `--header`s and the credentials for one `method` request to
    /// `url` (`Authorization`, and `DPoP` for a DPoP-bound token), in order.
    pub(crate) fn base_headers(&self, method: &str, url: &str) -> Vec<(String, String)> {
        let mut out = self.headers.clone();
        if let Some(a) = self.auth.lock().expect("auth lock").as_mut() {
            for (name, v) in a.credentials(method, url) {
                out.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                out.push((name, v));
            }
        }
        out
    }

    pub fn record(&self, dir: &str, message: Result<&Value, &str>) {
        if let Some(l) = &self.log {
            l.record(dir, message);
        }
    }
}

/// A response header as text.
pub(crate) fn header(response: &Response<Body>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The media type of a response, lower-cased, without parameters.
pub(crate) fn content_type(response: &Response<Body>) -> String {
    header(response, "content-type")
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// A network failure in words a person can act on.
pub(crate) fn network_error(url: &str, what: &str, e: ureq::Error) -> ElicitError {
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| format!("{h}:{}", u.port_or_known_default().unwrap_or(0)))
        })
        .unwrap_or_else(|| url.to_string());
    let text = match &e {
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("cannot connect to {host}: connection refused (is the server running, and on that port?)")
        }
        ureq::Error::HostNotFound => {
            format!("cannot resolve the host name of {url} (check the spelling, or the network)")
        }
        ureq::Error::Rustls(t) => format!(
            "TLS failure with {host}: {t} (a self-signed or otherwise untrusted certificate is refused)"
        ),
        ureq::Error::Tls(t) => format!("TLS failure with {host}: {t}"),
        ureq::Error::Timeout(_) => {
            format!("timed out talking to {host}: no answer within the time allowed (--timeout)")
        }
        ureq::Error::BodyExceedsLimit(n) => {
            format!("a message from {host} is over the limit of {n} bytes")
        }
        ureq::Error::BadUri(u) => format!("bad URL {u}"),
        ureq::Error::ConnectionFailed => format!("cannot connect to {host}"),
        // rustls reports through io::Error (InvalidData) during the handshake.
        ureq::Error::Io(io) if is_https(url) && looks_like_tls(io) => format!(
            "TLS failure with {host}: {io} (a self-signed or otherwise untrusted certificate is refused)"
        ),
        ureq::Error::Io(io) => format!("connection to {host} failed: {io}"),
        other => format!("request to {host} failed: {other}"),
    };
    ElicitError::Server(ServerError::Network {
        what: what.to_string(),
        detail: text,
    })
}

pub(super) fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
}

/// Whether a failure looks like the server dropped a kept-alive
/// connection as elicit reused it (reset, or closed before any response).
pub(super) fn stale_connection(e: &ureq::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e, ureq::Error::Io(io) if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof))
}

pub(super) fn looks_like_tls(io: &std::io::Error) -> bool {
    let text = io.to_string().to_ascii_lowercase();
    // Not "peer": a plain "connection reset by peer" is no TLS failure.
    ["certificate", "tls", "handshake"]
        .iter()
        .any(|w| text.contains(w))
}

pub(super) fn auth_error(status: u16, www: Option<&str>, had_hook: bool) -> ElicitError {
    ElicitError::Server(ServerError::Unauthorized {
        status,
        scheme: www
            .and_then(|w| w.split_whitespace().next())
            .map(elicit_core::text::sanitize::sanitize_line),
        tried_sign_in: had_hook,
    })
}

/// Reads a whole body up to [`MAX_MESSAGE_BYTES`].
pub(crate) fn read_body(reader: impl Read) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_MESSAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_MESSAGE_BYTES {
        return Err(format!("the body is over {MAX_MESSAGE_BYTES} bytes"));
    }
    Ok(bytes)
}

/// A short, sanitised preview of a body for an error message.
pub(crate) fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]);
    let line = elicit_core::text::sanitize::sanitize_line(
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .as_str(),
    );
    elicit_core::text::truncate(&line, 160)
}
