//! `--record FILE`: the observer that keeps each elicitation of a session
//! and the answer sent, however it was settled (terminal, page,
//! `--answer`, rules), for the cassette written at the end.

use serde_json::{Map, Value};

use super::{Cassette, Exchange, ServerSpec};
use crate::mcp::handler::ElicitObserver;
use elicit_core::elicitation::protocol::ElicitResult;

/// Keeps what a session asked and answered, in order.
#[derive(Debug, Default)]
pub struct Recorder {
    /// The elicitations answered so far.
    pub exchanges: Vec<Exchange>,
}

impl ElicitObserver for Recorder {
    fn answered(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult) {
        self.exchanges
            .push(Exchange::recorded(key, request, result));
    }
}

/// How a recorded call ended: its result, or the JSON-RPC error the server
/// refused it with (as a cassette keeps it: code and
/// message), which `elicit test` then expects again.
#[derive(Debug, Clone)]
pub enum RecordedEnd {
    /// The `tools/call` result.
    Result(Value),
    /// The refusal: `{code, message}`.
    Refused(Value),
}

impl Recorder {
    /// The cassette of one tool call: `protocol` is the revision the call
    /// was finally made with.
    pub fn cassette(
        &self,
        server: ServerSpec,
        protocol: String,
        tool: &str,
        arguments: &Map<String, Value>,
        end: RecordedEnd,
    ) -> Cassette {
        let (result, error) = match end {
            RecordedEnd::Result(result) => (Some(result), None),
            RecordedEnd::Refused(error) => (None, Some(error)),
        };
        Cassette {
            server,
            protocol,
            tool: tool.to_string(),
            arguments: arguments.clone(),
            elicitations: self.exchanges.clone(),
            result,
            error,
            ignore: Vec::new(),
            matches: Vec::new(),
            extra: Map::new(),
            source: None,
        }
    }
}
