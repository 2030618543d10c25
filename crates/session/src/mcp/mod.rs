//! Live sessions with MCP servers (`elicit call`): over any
//! [`crate::transport::Transport`], a small JSON-RPC client for both protocol generations
//! ([`client`]), the server-request handler that routes elicitations to the
//! same resolvers as a single request ([`handler`]), the tool call with
//! its retries ([`call`]), and `elicit call` from connecting to the result
//! ([`tool_call`]); and the seams a recording hooks into ([`recording`]).
//! `elicit proxy` (the relay) and cassettes are built on this, in
//! elicit-relay and elicit-cassette.

use elicit_core::error::ElicitError;

pub mod call;
pub mod client;
pub mod handler;
pub mod modes;
pub mod recording;
pub mod session;
pub mod strict;
pub mod tasks;
pub mod tool_call;

/// A failure, and the step it happened in when that says more
/// (`listing the server's tools: …`), as `elicit call` and `elicit proxy`
/// show it.
#[derive(Debug)]
pub struct StepFailure {
    /// The step (`calling the tool deploy`), shown before the error.
    pub step: Option<String>,
    /// What went wrong.
    pub error: ElicitError,
}

impl StepFailure {
    /// Puts an error in `step`.
    pub fn in_step(step: impl Into<String>) -> impl FnOnce(ElicitError) -> StepFailure {
        |error| StepFailure {
            step: Some(step.into()),
            error,
        }
    }
}

impl From<ElicitError> for StepFailure {
    fn from(error: ElicitError) -> Self {
        StepFailure { step: None, error }
    }
}

#[cfg(test)]
mod client_tests;
