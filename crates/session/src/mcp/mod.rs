//! Live sessions with MCP servers (`elicit call`): over any
//! [`crate::transport::Transport`], a small JSON-RPC client for both protocol generations
//! ([`client`]), the server-request handler that routes elicitations to the
//! same resolvers as a single request ([`handler`]), and the tool call with
//! its retries ([`call`]); and `elicit proxy`, for a stdio server or a URL,
//! over one relay core ([`relay`]).

pub mod call;
pub mod client;
pub mod handler;
pub mod modes;
pub mod relay;
pub mod session;
pub mod strict;
pub mod tasks;

#[cfg(test)]
mod client_tests;
