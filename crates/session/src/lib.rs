//! elicit's live MCP sessions: the transports (stdio, Streamable HTTP,
//! legacy SSE, [`transport`]), OAuth sign-in ([`auth`]), the client session
//! that negotiates the protocol, answers elicitations through a resolver and
//! calls a tool, and the proxies' relay ([`mcp`]); recorded flows and their
//! replay ([`cassette`]); answer files with rules ([`answers`]).
#![warn(missing_docs)]

pub mod answers;
pub mod auth;
pub mod cassette;
pub mod mcp;
pub mod transport;
