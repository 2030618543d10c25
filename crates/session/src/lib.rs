//! elicit's live MCP sessions: the transports (stdio, Streamable HTTP,
//! legacy SSE, [`transport`]), OAuth sign-in ([`auth`]), and the client
//! session that negotiates the protocol, answers elicitations through a
//! resolver and calls a tool ([`mcp`]), with the seams a recording hooks
//! into ([`mcp::recording`]). Talking to one server, nothing more: the
//! proxy (elicit-relay) and cassettes (elicit-cassette) are built on it.
#![warn(missing_docs)]

pub mod auth;
pub mod mcp;
pub mod transport;
