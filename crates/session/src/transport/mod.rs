//! The seam between a live session and the server it talks to. `call` and
//! `proxy` (through [`crate::mcp::client::McpClient`]) see only
//! [`Transport`]: send one JSON-RPC message, receive the next one. Whether
//! the server is a child process ([`stdio`]), a Streamable HTTP endpoint or
//! a legacy HTTP+SSE endpoint stays inside the transport, with everything
//! that only one of them has (process groups, sessions, streams,
//! resumption, sign-in).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use elicit_core::error::{ElicitError, ServerError};

pub mod http;
pub mod local_server;
/// A test seam, not part of a release build: the crate's own unit tests have
/// it, and other crates' tests enable the `test-seams` feature.
#[cfg(any(test, feature = "test-seams"))]
pub mod memory;
pub mod message_limits;
pub mod process_group;
pub mod queue;
pub(crate) mod recent_ids;
pub mod server_stderr;

pub(crate) mod stdin_writer;
pub mod stdio;

use queue::{QueueEmpty, QueueReceiver};
pub(crate) use stdio::ServerProcess;

/// Where the server is: a command to run (stdio) or a URL (remote).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTarget {
    /// A server started as a command (its argv).
    Command(Vec<String>),
    /// A server at a URL.
    Url(String),
}

impl ServerTarget {
    /// Reads the positional URL or the command after `--`. Something that is
    /// neither (a command written without `--`) gets a hint, not clap's bare
    /// "unexpected argument".
    pub fn from_args(url: Option<&str>, command: &[String]) -> Result<Self, ElicitError> {
        match (url, command.is_empty()) {
            (Some(u), true) if is_remote(u) => Ok(ServerTarget::Url(u.to_string())),
            (Some(u), true) => Err(ElicitError::Usage(format!(
                "{u:?} is not an http:// or https:// URL; to run a stdio server, put its command after `--` (elicit call -- {u} …)"
            ))),
            (None, false) => Ok(ServerTarget::Command(command.to_vec())),
            (Some(_), false) => Err(ElicitError::Usage(
                "give either a server URL or a command after `--`, not both".into(),
            )),
            (None, true) => Err(ElicitError::Usage(
                "no server given: pass its URL (http://…) or its command after `--`".into(),
            )),
        }
    }
}

/// Whether an argument names a remote server rather than a command.
pub fn is_remote(arg: &str) -> bool {
    let lower = arg.get(..8).unwrap_or(arg).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Which transport reaches a URL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TransportChoice {
    /// Streamable HTTP, falling back to the legacy HTTP+SSE transport when
    /// the server refuses the POST (the spec's backwards-compatibility rule).
    #[default]
    Auto,
    /// Streamable HTTP only.
    Http,
    /// The legacy HTTP+SSE transport (2024-11-05): GET the URL, POST to the
    /// endpoint it names.
    Sse,
}

impl TransportChoice {
    /// How `--transport` and a cassette spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportChoice::Auto => "auto",
            TransportChoice::Http => "http",
            TransportChoice::Sse => "sse",
        }
    }
}

/// The most time a person's answers (or a sign-in) add back to one
/// request's deadline: a person may take a while over a form, but a server
/// that keeps asking cannot keep a request open for ever.
pub const MAX_ANSWER_CREDIT: Duration = Duration::from_secs(3600);

/// What every transport is opened with.
#[derive(Default)]
pub struct ConnectOptions {
    /// Where a child process's stderr goes (elicit's stderr, sanitised and
    /// marked `server: `, when None).
    pub server_log: Option<PathBuf>,
    /// Every message both ways, when `--log` was given.
    pub log: Option<MessageLog>,
    /// `--header NAME: VALUE` pairs for remote servers.
    pub headers: Vec<(String, String)>,
    /// Which transport a URL is reached over.
    pub transport: TransportChoice,
    /// Credentials for remote servers (OAuth sign-in), see [`http`].
    pub auth: Option<Box<dyn http::Authenticator>>,
    /// The most each HTTP exchange the session waits on may take
    /// (`--timeout`); None: [`http::DEFAULT_EXCHANGE_TIMEOUT`].
    pub timeout: Option<Duration>,
}

/// Reads a `--header 'Name: Value'`. The value is never echoed back in an
/// error: it is usually a secret.
pub fn parse_header(text: &str) -> Result<(String, String), ElicitError> {
    let Some((name, value)) = text.split_once(':') else {
        return Err(ElicitError::Usage(format!(
            "--header {:?}: expected 'Name: Value'",
            text.split_whitespace().next().unwrap_or("")
        )));
    };
    let name = name.trim();
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(ElicitError::Usage(format!(
            "--header: {name:?} is not a valid header name"
        )));
    }
    let value = value.trim();
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(ElicitError::Usage(format!(
            "--header {name}: <redacted> holds a line break or NUL, which cannot go in a header"
        )));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Whether a URL's host is this machine (plain http there stays local).
fn is_loopback_url(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Opens the transport for `target`.
pub fn connect(
    target: &ServerTarget,
    options: ConnectOptions,
) -> Result<Box<dyn Transport>, ElicitError> {
    match target {
        ServerTarget::Command(command) => Ok(Box::new(ServerProcess::spawn(
            command,
            options.server_log.as_deref(),
            options.log,
        )?)),
        ServerTarget::Url(url) => {
            let parsed = url::Url::parse(url)
                .map_err(|e| ElicitError::Usage(format!("bad server URL {url:?}: {e}")))?;
            if parsed.scheme() == "http" && !is_loopback_url(&parsed) {
                eprintln!(
                    "elicit: warning: {} is plain http to another machine: messages and headers travel unencrypted",
                    elicit_core::text::sanitize::sanitize_line(url)
                );
            }
            let timeout = options.timeout.unwrap_or(http::DEFAULT_EXCHANGE_TIMEOUT);
            match options.transport {
                TransportChoice::Sse => Ok(Box::new(http::sse::SseTransport::connect(
                    url,
                    http::Client::new(options.headers, options.auth, options.log, timeout),
                )?)),
                choice => Ok(Box::new(http::HttpTransport::new(
                    url,
                    http::HttpOptions {
                        headers: options.headers,
                        auth: options.auth,
                        log: options.log,
                        legacy_fallback: choice == TransportChoice::Auto,
                        timeout,
                    },
                ))),
            }
        }
    }
}

/// One way of reaching an MCP server.
pub trait Transport: Send {
    /// Sends one JSON-RPC message (request, response or notification).
    fn send(&mut self, message: &Value) -> Result<(), ElicitError>;

    /// [`Self::send`], with whatever it waits for (an HTTP exchange) ended
    /// by `deadline` too: a reply sent while waiting for a request's reply
    /// must not outlast that request's `--timeout`.
    fn send_by(&mut self, message: &Value, deadline: Option<Instant>) -> Result<(), ElicitError> {
        let _ = deadline;
        self.send(message)
    }

    /// Waits for the next message from the server, up to `timeout` (None:
    /// forever). A Ctrl-C pressed meanwhile ends the wait with an error.
    fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError>;

    /// Ends the connection politely, then firmly: `grace` is how long the
    /// server gets to finish on its own.
    fn close(&mut self, grace: Duration);

    /// Why the server went away, when the transport knows ("the server
    /// exited (exit status: 1)"): added to errors about a lost server.
    fn gone_detail(&mut self) -> Option<String> {
        None
    }

    /// A way for another thread to end a [`Transport::receive`] wait at once
    /// (it returns [`Incoming::TimedOut`]), so that the thread that owns the
    /// transport can wait for the server and still send without delay what
    /// other threads queue for it. None: the owner waits in short slices.
    fn waker(&self) -> Option<Waker> {
        None
    }
}

/// See [`Transport::waker`].
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// What arrives from the server.
#[derive(Debug)]
pub enum Incoming {
    /// One parsed JSON-RPC message.
    Message(Value),
    /// A line that is not JSON (the server wrote something else to stdout).
    Malformed {
        /// The line, as shown.
        line: String,
        /// The error, as given.
        error: String,
    },
    /// The server closed its stdout (it exited or is exiting), or the
    /// connection to it ended.
    Closed,
    /// Nothing arrived within the time asked for.
    TimedOut,
}

/// Records every message, both ways, as JSON lines:
/// `{"dir":"send"|"recv","time":RFC 3339,"message":…}` (or `"raw"` for a
/// line that was not JSON). A recorded session can be replayed as fixtures.
#[derive(Clone)]
pub struct MessageLog {
    file: Arc<Mutex<File>>,
}

impl MessageLog {
    /// A log written to `path`.
    pub fn create(path: &Path) -> Result<Self, ElicitError> {
        let file = File::create(path)
            .map_err(|e| ElicitError::io(format!("cannot create log {}", path.display()), e))?;
        Ok(MessageLog {
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// Writes one message (or a line that was not one) sent or received (`dir`: `send` or `recv`).
    pub fn record(&self, dir: &str, message: Result<&Value, &str>) {
        let time = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
        let entry = match message {
            Ok(m) => json!({"dir": dir, "time": time, "message": m}),
            Err(raw) => json!({"dir": dir, "time": time, "raw": raw}),
        };
        self.write_entry(&entry);
    }

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

    /// One `write` per entry: formatting a `Value` straight onto the file
    /// (`writeln!`) made a system call for every token, a few hundred per
    /// message, and let a reader of the growing log see half an entry.
    pub(crate) fn write_entry(&self, entry: &Value) {
        let mut line = entry.to_string().into_bytes();
        line.push(b'\n');
        if let Ok(mut f) = self.file.lock() {
            let _ = f.write_all(&line);
        }
    }
}

/// What a network transport's reader threads hand over: a message, or the
/// failure that ended a stream.
pub type Delivery = Result<Incoming, ElicitError>;

/// [`receive_from`] for a channel of [`Delivery`]s.
pub(crate) fn receive_delivery(
    incoming: &QueueReceiver<Delivery>,
    timeout: Option<Duration>,
) -> Result<Incoming, ElicitError> {
    match wait_on(incoming, timeout)? {
        Some(d) => d,
        None => Ok(Incoming::TimedOut),
    }
}

/// Waits on a transport's channel of incoming messages, up to `timeout`
/// (None: forever); [`Incoming::TimedOut`] when it passes. A Ctrl-C pressed
/// meanwhile ends the wait with an error.
pub fn receive_from(
    incoming: &QueueReceiver<Incoming>,
    timeout: Option<Duration>,
) -> Result<Incoming, ElicitError> {
    Ok(wait_on(incoming, timeout)?.unwrap_or(Incoming::TimedOut))
}

/// The next item of `incoming`, or None when `timeout` passes.
fn wait_on<T>(
    incoming: &QueueReceiver<T>,
    timeout: Option<Duration>,
) -> Result<Option<T>, ElicitError> {
    let started = Instant::now();
    let interrupts = elicit_platform::handlers::interrupt_count();
    loop {
        if elicit_platform::handlers::interrupt_count() != interrupts {
            return Err(ElicitError::Server(ServerError::Interrupted));
        }
        let mut slice = Duration::from_millis(100);
        if let Some(t) = timeout {
            let left = t.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Ok(None);
            }
            slice = slice.min(left);
        }
        match incoming.recv_timeout(slice) {
            Ok(m) => return Ok(Some(m)),
            Err(QueueEmpty::Timeout) => {}
            Err(QueueEmpty::Disconnected) => {
                return Err(ElicitError::Server(ServerError::OutputEnded))
            }
        }
    }
}
