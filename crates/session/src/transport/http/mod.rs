//! Streamable HTTP: the MCP endpoint is one URL; every message is a POST.
//!
//! Both generations are carried without [`crate::mcp::client::McpClient`]
//! knowing which one it speaks: everything HTTP-specific is derived here from
//! the messages themselves.
//!
//! - 2025-06-18 / 2025-11-25: `Mcp-Session-Id` is taken from the initialize
//!   response and sent on every later request; `MCP-Protocol-Version` is the
//!   version the initialize result names; a request's reply is JSON or an SSE
//!   stream that may carry server requests (answered by POSTing the
//!   response); the optional GET stream is opened once the session is
//!   initialized (a server may send an elicitation there; 405: the server
//!   has none); a stream that
//!   closes before its response is resumed with GET + `Last-Event-ID` after
//!   the server's `retry:` time; DELETE ends the session on the way out.
//! - 2026-07-28: a request whose `_meta` names the protocol version gets
//!   `MCP-Protocol-Version` from it, plus `Mcp-Method`, `Mcp-Name` and
//!   `Mcp-Param-*` for tool parameters marked `x-mcp-header` (learnt from
//!   the `tools/list` results that pass through; tools whose annotations
//!   break the spec's rules are removed from those results, as the spec
//!   requires of HTTP clients).
//! - A request refused with 400 `HeaderMismatchError` (-32020) is sent once
//!   more, as the spec recommends; for `tools/call`, after reading
//!   `tools/list` again (the tool's `x-mcp-header` parameters may have
//!   changed since it was listed).
//! - An HTTP failure answering a request becomes a JSON-RPC error reply to
//!   that request, so the client's era fallback (`server/discover`, then
//!   `initialize`) works as on stdio; an `initialize` POST refused with
//!   400/404/405 (and no modern JSON-RPC error) switches to the legacy
//!   HTTP+SSE transport ([`sse`]) when `--transport auto`.
//!
//! Why `ureq` 3: blocking with rustls, streaming bodies readable on a plain
//! thread, one keep-alive agent reused for the session; elicit's transports
//! are thread-per-stream, so an async stack (reqwest's blocking mode runs a
//! tokio runtime inside) would add weight and nothing else.
//!
//! TLS trusts the system's root certificates (`rustls-native-certs`: the
//! distribution bundle, or `SSL_CERT_FILE`/`SSL_CERT_DIR`) plus Mozilla's
//! bundled roots (`webpki-root-certs`): ureq's own `platform-verifier`
//! would use the system store alone, and a machine without one would reach
//! nothing.
//!
//! Every body is read with a cap ([`MAX_MESSAGE_BYTES`]): a JSON reply over
//! it, or an SSE event over it, ends that stream with an error.
//!
//! # Sign-in hook
//!
//! [`Authenticator`] is how OAuth sign-in plugs in: before each request it is
//! asked for an `Authorization` value; on 401/403 it is called with the
//! status and the `WWW-Authenticate` header, and returns `true` to have the
//! request sent once more (with the new `Authorization`). Without one, 401
//! and 403 end the session with an error that names `--header`. The time
//! a sign-in takes (a person at the browser) does not count against the
//! wait for the server's reply. `crate::auth::hook::SignInHook` is the
//! implementation `call` and `proxy` use.

use std::time::Duration;

/// The largest single message (a JSON body or one SSE event) elicit reads.
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;
/// How long the first request after `initialized` waits for the standalone
/// GET stream's answer.
const STANDALONE_OPEN_WAIT: Duration = Duration::from_secs(2);
/// How many times a stream that closed before its response is resumed.
const MAX_RESUMES: usize = 10;
/// The wait before resuming when the server gave no `retry:`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The longest wait before resuming a stream, whatever `retry:` says (a
/// request's wait also ends a second before its `--timeout`).
pub const MAX_RETRY: Duration = Duration::from_secs(30);
use elicit_core::elicitation::protocol::wire::VERSION_META;
/// The first revision with the standard request headers.
const HEADERS_SINCE: &str = elicit_core::elicitation::protocol::wire::V2026_07_28;
/// Requests sent again after the sign-in hook said so: a sign-in, then up
/// to the step-ups the hook allows (it enforces its own limits).
const MAX_AUTH_RETRIES: u32 = 4;
/// How long each exchange the session waits on (a connecting POST, a
/// notification, a reply, the closing DELETE, opening a stream) may take
/// when no `--timeout` says (`proxy`).
pub const DEFAULT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the body of an acknowledgement (the 202 to a notification or
/// a reply) may take: none is expected, and one that trickles must not
/// hold the session.
const ACK_BODY_WAIT: Duration = Duration::from_secs(1);

mod client;
mod mcp_headers;
mod replies;
mod response;
mod session;
pub mod sse;
pub mod sse_reader;
mod state;
mod streamable;

pub(crate) use client::Client;
pub(crate) use client::HttpOptions;
pub use client::{new_agent, Authenticator};
pub(crate) use streamable::HttpTransport;
