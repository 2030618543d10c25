//! The seam between a live session and the server it talks to. `call` and
//! `proxy` (through [`crate::mcp::client::McpClient`]) see only
//! [`Transport`]: send one JSON-RPC message, receive the next one. Whether
//! the server is a child process ([`stdio`]), a Streamable HTTP endpoint or
//! a legacy HTTP+SSE endpoint stays inside the transport, with everything
//! that only one of them has (process groups, sessions, streams,
//! resumption, sign-in).

use std::path::PathBuf;
use std::time::Duration;

use elicit_core::error::ElicitError;

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

mod message_log;
mod receive;
mod seam;

pub use message_log::MessageLog;
pub(crate) use receive::receive_delivery;
pub use receive::receive_from;
pub use seam::{Delivery, Incoming, Transport, Waker, MAX_ANSWER_CREDIT};
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
