//! Live sessions with MCP servers (`elicit call`): over any
//! [`crate::transport::Transport`], a small JSON-RPC client for both protocol generations
//! ([`client`]), the server-request handler that routes elicitations to the
//! same resolvers as a single request ([`handler`]), and the tool call with
//! its retries ([`call`]); and `elicit proxy` ([`proxy`]).

pub mod call;
pub mod client;
pub mod handler;
pub mod modes;
pub mod proxy;
pub mod remote_proxy;
pub mod strict;
