//! What can go wrong with a live server: the session's transport, the
//! handshake, a call, and the sign-in in front of it. Each kind carries
//! what a caller or a test needs to tell it from the others; its message is
//! the one a person reads, and it names the server's part of the fault.
//!
//! Text a server chose (a body, a content type, a URL, a line it wrote) is
//! kept as it is to be shown: sanitised to one line where it is built, so
//! that no message can carry a server's control characters.

use std::time::Duration;

use super::sign_in::AuthError;

/// A live server misbehaved, refused, or could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Ctrl-C while elicit waited for the server.
    #[error("interrupted (Ctrl-C) while waiting for the server")]
    Interrupted,

    /// The transport's incoming side ended (the stdio server's stdout, the
    /// HTTP session's streams).
    #[error("the server's output ended")]
    OutputEnded,

    /// The server closed its output while elicit waited for a reply.
    #[error("the server closed its output")]
    ClosedOutput,

    /// Writing to a stdio server after its stdin was closed.
    #[error("the server's stdin is closed")]
    StdinClosed,

    /// Writing to a stdio server failed.
    #[error("cannot write to the server: {0} (did it exit?)")]
    CannotWrite(#[source] std::io::Error),

    /// A stdio server left this many bytes elicit sent unread, and more
    /// would pass the bound on what elicit holds for it.
    #[error("the server is not reading its stdin: {pending} bytes elicit sent wait unread")]
    /// A stdio server stopped reading: `pending` bytes wait in its pipe.
    NotReadingStdin {
        /// Bytes sent and not yet read.
        pending: usize,
    },

    /// The other end of an in-memory transport (tests) was dropped.
    #[cfg(feature = "test-seams")]
    #[error("the in-memory server is gone")]
    InMemoryGone,

    /// No reply to a request within `--timeout`.
    #[error("no reply to {method} within {} (--timeout)", humantime::format_duration(*.waited))]
    /// No reply to `method` within the timeout.
    NoReply {
        /// The request's method.
        method: String,
        /// How long elicit waited.
        waited: Duration,
    },

    /// A line that is not JSON-RPC; `line` as shown (one line, truncated).
    #[error("the server wrote a line that is not JSON-RPC ({error}): {line}")]
    /// A line of the server's that is not JSON-RPC: the parser's error and the line.
    NotJsonRpc {
        /// The error, as given.
        error: String,
        /// The line, as shown.
        line: String,
    },

    /// JSON that is not an object (`kind`: "an array", "a string", …).
    #[error("the server sent {kind} instead of a JSON-RPC message")]
    /// JSON that is not a message (an array, a number…): its kind.
    NotAMessage {
        /// What it was, in words.
        kind: &'static str,
    },

    /// Another failure, met while waiting for the reply to `method`.
    #[error("{cause} while waiting for the reply to {method}{}", .detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    WhileWaiting {
        /// The failure.
        cause: Box<ServerError>,
        /// The request whose reply was awaited.
        method: String,
        /// More, as shown.
        detail: Option<String>,
    },

    /// The server speaks the 2026-07-28 protocol but refused
    /// `server/discover`; `detail` is its error, as shown.
    #[error("the server speaks {version} but refused server/discover: {detail}")]
    DiscoverRefused {
        /// The revision the server speaks.
        version: &'static str,
        /// The server's error.
        detail: String,
    },

    #[error("server/discover failed: {detail}; the server may not speak {version} (try --protocol auto)")]
    /// `server/discover` failed (not a refusal: no usable reply).
    DiscoverFailed {
        /// The revision asked for.
        version: &'static str,
        /// What went wrong.
        detail: String,
    },

    #[error("the server does not list {version} in supportedVersions")]
    /// The server does not support the revision asked for.
    VersionNotSupported {
        /// The revision.
        version: &'static str,
    },

    #[error("initialize failed: {detail}")]
    /// The `initialize` handshake failed.
    InitializeFailed {
        /// What went wrong, as shown.
        detail: String,
    },

    #[error("tools/list failed: {detail}")]
    /// `tools/list` failed.
    ToolsListFailed {
        /// What went wrong, as shown.
        detail: String,
    },

    #[error("the server lists no tools")]
    /// The server has no tools to call.
    NoTools,

    /// The server answered `tools/call` with a JSON-RPC error: the error
    /// object, and the failure in words.
    #[error("{message}")]
    CallRefused {
        /// The error object, as sent.
        error: serde_json::Value,
        /// The failure in words.
        message: String,
    },

    /// A tool whose definition breaks the `x-mcp-header` rules is set aside.
    #[error("not calling the tool {tool}: its definition breaks the x-mcp-header rules ({reason}), so elicit set it aside as the MCP spec requires")]
    /// A tool set aside for breaking the `x-mcp-header` rules.
    ToolSetAside {
        /// The tool's name.
        tool: String,
        /// Why, in words.
        reason: String,
    },

    /// The server refused a call's headers (-32020), and its tool, listed
    /// again, breaks the `x-mcp-header` rules.
    #[error("the server refused the headers of tools/call (-32020 header mismatch), and its tool {tool} now breaks the x-mcp-header rules ({reason}): not calling it")]
    /// A header mismatch (-32020) on a tool that breaks the `x-mcp-header` rules.
    HeaderMismatch {
        /// The tool's name.
        tool: String,
        /// Why, in words.
        reason: String,
    },

    /// An `input_required` round or elicitation elicit cannot answer.
    #[error("the server asked for input elicit cannot give: {}", .skipped.join(", "))]
    /// Input requests elicit cannot answer (`skipped`: what they asked).
    CannotGive {
        /// What was asked, in words.
        skipped: Vec<String>,
    },

    /// An elicitation of a mode elicit did not declare (`--modes`).
    #[error("the server asked for a {mode} elicitation, which elicit did not declare (--modes {declared})")]
    UndeclaredMode {
        /// The mode asked for.
        mode: &'static str,
        /// The modes elicit declared.
        declared: String,
    },

    /// The server kept asking for input, round after round.
    #[error("the server asked for input {rounds} times in a row; giving up")]
    /// The server asked for input too many times in a row.
    TooManyRounds {
        /// How many rounds.
        rounds: usize,
    },

    /// A -32042 error whose elicitations cannot be read.
    #[error("bad -32042 elicitation: {0}")]
    BadUrlRequired(String),

    /// The URL elicitation a call needs first was not accepted (`action`:
    /// "decline" or "cancel").
    #[error("tools/call needs a URL elicitation first, and it was {}", past_tense(.action))]
    /// A -32042 URL elicitation that was not accepted (`action`: what was done).
    UrlRequiredNotAccepted {
        /// What was done.
        action: &'static str,
    },

    /// `elicit test`: the server strayed from the cassette, and the replay
    /// ended the session.
    #[error("the replay stopped: the server asked something the cassette did not record")]
    ReplayStopped,

    /// An HTTP request could not be made or completed (`what` the exchange,
    /// `detail` the cause in words).
    #[error("{what}: {detail}")]
    /// The network failed during `what`.
    Network {
        /// The exchange, in words.
        what: String,
        /// What went wrong, as shown.
        detail: String,
    },

    /// A status the exchange does not expect; `body` a preview, as shown.
    #[error("{what}: the server answered HTTP {status}: {body}")]
    HttpStatus {
        /// The exchange, in words.
        what: String,
        /// The HTTP status.
        status: u16,
        /// A preview of the body.
        body: String,
    },

    /// 401 or 403 with no sign-in to fix it; `scheme` the scheme the
    /// server asks for, as shown.
    #[error("HTTP {}{}; {}", unauthorized_what(*.status), .scheme.as_deref().map(|s| format!(" (it asks for {s} credentials)")).unwrap_or_default(), if *.tried_sign_in { "sign-in did not succeed" } else { "pass them with --header 'Authorization: Bearer TOKEN' (or sign in, where supported)" })]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The scheme of `WWW-Authenticate`, if any.
        scheme: Option<String>,
        /// Whether sign-in was tried first.
        tried_sign_in: bool,
    },

    /// Signing in to `server` (after HTTP `status`) failed.
    #[error("signing in to {server} (HTTP {status}): {} (a server without MCP sign-in takes credentials with --header 'Authorization: Bearer TOKEN')", crate::text::sanitize::sanitize_line(&.error.to_string()))]
    SignIn {
        /// As shown.
        server: String,
        /// The HTTP status that asked for sign-in.
        status: u16,
        /// Why signing in failed.
        error: AuthError,
    },

    /// The session ended on the server's side (HTTP 404 for its session
    /// id). `during`: the exchange, on the legacy transport.
    #[error("{}", session_expired_message(.during.as_deref()))]
    SessionExpired {
        /// The exchange, if known.
        during: Option<String>,
    },

    /// Neither transport: the Streamable HTTP POST was refused with
    /// `status`, and the legacy HTTP+SSE GET failed with `legacy`.
    #[error("the server refused the Streamable HTTP POST (HTTP {status}), and the legacy HTTP+SSE GET failed too: {legacy}")]
    NoTransport {
        /// The POST's status.
        status: u16,
        /// Why the legacy GET failed (an `ElicitError`, kept as any error:
        /// `ElicitError` holds this enum, and naming it here would make the
        /// two files import each other).
        legacy: Box<dyn std::error::Error + Send + Sync>,
    },

    #[error("the server accepted {method} (HTTP 202) but sent no reply")]
    /// An HTTP 202 where a reply to `method` was due.
    AcceptedWithoutReply {
        /// The request's method.
        method: String,
    },

    /// A reply of a content type that is not MCP's (both as shown).
    #[error("the server answered {method} with {content_type}, not MCP (application/json or text/event-stream): is {url} an MCP endpoint?")]
    NotMcpReply {
        /// The request.
        method: String,
        /// The reply's content type.
        content_type: String,
        /// The endpoint.
        url: String,
    },

    /// A POST redirected (`to` as shown): elicit does not follow it.
    #[error("the server redirected {method} (HTTP {status}) to {to}; elicit does not follow redirects for POST: use that URL")]
    Redirected {
        /// The request.
        method: String,
        /// The redirect's status.
        status: u16,
        /// Where it points.
        to: String,
    },

    #[error("reading the reply to {method}: {detail}")]
    /// Reading the reply to `method` failed.
    ReadingReply {
        /// The request's method.
        method: String,
        /// What went wrong, as shown.
        detail: String,
    },

    /// A reply's stream closed with no event id to resume from; `why` the
    /// reader's error, when there was one.
    #[error("the server closed the stream for {method} before sending its reply{}", .why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default())]
    /// The stream closed before the reply to `method`.
    StreamClosed {
        /// The request's method.
        method: String,
        /// Why, if known.
        why: Option<String>,
    },

    #[error("the server closed the stream for {method} before its reply, and refused to resume it (GET with Last-Event-ID: HTTP {status})")]
    /// The stream closed before the reply, and resuming it was refused.
    ResumeRefused {
        /// The request's method.
        method: String,
        /// The HTTP status.
        status: u16,
    },

    #[error("the stream for {method} was cut {resumes} times without a reply; giving up")]
    /// The stream was cut too often to resume again.
    StreamCutTooOften {
        /// The request's method.
        method: String,
        /// How many times it was resumed.
        resumes: usize,
    },

    #[error("an HTTP exchange ended without an outcome")]
    /// An HTTP exchange ended with neither a reply nor an error.
    NoOutcome,

    /// The legacy GET did not open an event stream (URL, content type and
    /// body preview as shown).
    #[error("GET {url} answered HTTP {status} ({content_type}) instead of an event stream: is it an MCP endpoint? {body}")]
    NotEventStream {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The content type.
        content_type: String,
        /// A preview of the body.
        body: String,
    },

    /// The legacy event stream's `endpoint` event is missing or unusable.
    #[error("{0}")]
    BadEndpoint(String),

    #[error("the server's event stream sent no `endpoint` event within {}: it is not a legacy HTTP+SSE MCP server", humantime::format_duration(*.waited))]
    /// A legacy event stream sent no `endpoint` event in time.
    NoEndpointEvent {
        /// How long elicit waited.
        waited: Duration,
    },

    #[error("the server's event stream broke: {0}")]
    /// A legacy event stream broke.
    StreamBroke(String),
}

fn past_tense(action: &str) -> String {
    match action {
        "decline" => "declined".into(),
        "cancel" => "cancelled".into(),
        other => format!("{other}ed"),
    }
}

fn unauthorized_what(status: u16) -> &'static str {
    if status == 401 {
        "401 Unauthorized: the server needs credentials"
    } else {
        "403 Forbidden: the credentials sent are not enough"
    }
}

fn session_expired_message(during: Option<&str>) -> String {
    match during {
        None => "the server no longer knows this session (HTTP 404): it ended or expired on the server's side; run the command again to start a new one".into(),
        Some(what) => format!("{what}: the server no longer knows this session (HTTP 404 from its message endpoint): it ended or expired; run the command again"),
    }
}

impl ServerError {
    /// The cause, under any [`ServerError::WhileWaiting`] context.
    pub fn root(&self) -> &ServerError {
        match self {
            ServerError::WhileWaiting { cause, .. } => cause.root(),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages are the ones elicit printed when these were strings:
    /// scripts and people match on them.
    #[test]
    fn messages_read_as_before() {
        let cases: Vec<(ServerError, &str)> = vec![
            (ServerError::Interrupted, "interrupted (Ctrl-C) while waiting for the server"),
            (
                ServerError::NoReply { method: "tools/call".into(), waited: Duration::from_secs(2) },
                "no reply to tools/call within 2s (--timeout)",
            ),
            (
                ServerError::WhileWaiting {
                    cause: Box::new(ServerError::ClosedOutput),
                    method: "initialize".into(),
                    detail: Some("the server exited (exit status: 3)".into()),
                },
                "the server closed its output while waiting for the reply to initialize: the server exited (exit status: 3)",
            ),
            (
                ServerError::WhileWaiting {
                    cause: Box::new(ServerError::OutputEnded),
                    method: "tools/list".into(),
                    detail: None,
                },
                "the server's output ended while waiting for the reply to tools/list",
            ),
            (
                ServerError::UrlRequiredNotAccepted { action: "decline" },
                "tools/call needs a URL elicitation first, and it was declined",
            ),
            (
                ServerError::UrlRequiredNotAccepted { action: "cancel" },
                "tools/call needs a URL elicitation first, and it was cancelled",
            ),
            (
                ServerError::Unauthorized { status: 401, scheme: Some("Bearer".into()), tried_sign_in: false },
                "HTTP 401 Unauthorized: the server needs credentials (it asks for Bearer credentials); pass them with --header 'Authorization: Bearer TOKEN' (or sign in, where supported)",
            ),
            (
                ServerError::Unauthorized { status: 403, scheme: None, tried_sign_in: true },
                "HTTP 403 Forbidden: the credentials sent are not enough; sign-in did not succeed",
            ),
            (
                ServerError::SessionExpired { during: None },
                "the server no longer knows this session (HTTP 404): it ended or expired on the server's side; run the command again to start a new one",
            ),
            (
                ServerError::SessionExpired { during: Some("sending tools/call".into()) },
                "sending tools/call: the server no longer knows this session (HTTP 404 from its message endpoint): it ended or expired; run the command again",
            ),
            (
                ServerError::StreamClosed { method: "tools/call".into(), why: Some("reset".into()) },
                "the server closed the stream for tools/call before sending its reply (reset)",
            ),
            (
                ServerError::StreamClosed { method: "tools/call".into(), why: None },
                "the server closed the stream for tools/call before sending its reply",
            ),
            (
                ServerError::NoEndpointEvent { waited: Duration::from_secs(10) },
                "the server's event stream sent no `endpoint` event within 10s: it is not a legacy HTTP+SSE MCP server",
            ),
            (
                ServerError::CannotGive { skipped: vec!["a".into(), "b".into()] },
                "the server asked for input elicit cannot give: a, b",
            ),
        ];
        for (error, message) in cases {
            assert_eq!(error.to_string(), message, "{error:?}");
        }
    }

    #[test]
    fn a_sign_in_failure_keeps_its_kind_and_shows_on_one_line() {
        let e = ServerError::SignIn {
            server: "http://127.0.0.1:1/mcp".into(),
            status: 401,
            error: AuthError::Denied {
                error: "access_denied\nFAKE: line".into(),
                description: None,
            },
        };
        let shown = e.to_string();
        assert!(!shown.contains('\n'), "{shown}");
        assert!(shown.starts_with("signing in to http://127.0.0.1:1/mcp (HTTP 401): the authorization server refused the sign-in: access_denied"), "{shown}");
        assert!(matches!(
            e,
            ServerError::SignIn {
                error: AuthError::Denied { .. },
                ..
            }
        ));
        let wrapped = ServerError::WhileWaiting {
            cause: Box::new(e),
            method: "tools/call".into(),
            detail: None,
        };
        assert!(matches!(wrapped.root(), ServerError::SignIn { .. }));
    }
}
