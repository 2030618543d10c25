//! The seams a recording hooks into (`--record`): a tool call and a relay
//! say what happened through these traits; what is kept and how it is
//! written (a cassette) belongs to elicit-cassette, which implements them.
//! So nothing in this crate, or in the relay above it, imports a cassette,
//! and the binary wires the two together.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::handler::ElicitObserver;
use elicit_core::elicitation::protocol::ElicitResult;
use elicit_core::error::ElicitError;

/// How a recorded tool call ended.
#[derive(Debug, Clone, Copy)]
pub enum CallRecordEnd<'a> {
    /// The `tools/call` result.
    Result(&'a Value),
    /// The JSON-RPC error the server refused the call with, as it came.
    Refused(&'a Value),
}

/// `elicit call --record`: watches the call's elicitations (as an
/// [`ElicitObserver`]) and is told how the call ended.
pub trait CallRecorder: ElicitObserver {
    /// The call of `tool` with `arguments`, made over `protocol_version`
    /// (as on the wire), ended with `end`: the record is written.
    /// `Ok(Some(text))`: a warning for the person.
    fn ended(
        &mut self,
        protocol_version: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        end: CallRecordEnd<'_>,
    ) -> Result<Option<String>, ElicitError>;
}

/// `elicit proxy --record`: told of every line and message a relay moves
/// and every elicitation it answered. `dir` is relative to the server
/// (`send` to it, `recv` from it), `party` who wrote or gets the line.
pub trait RelayRecorder: Send + std::fmt::Debug {
    /// One line the stdio relay moved, as it went.
    fn line(&mut self, dir: &str, party: &str, line: &[u8]);
    /// One message between the client and the server (the remote relay).
    fn message(&mut self, dir: &str, message: &Value);
    /// An elicitation elicit answered, with the key it was answered under.
    fn elicitation(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult);
}

/// A relay's recorder, shared between its sides and its resolver.
pub type SharedRelayRecorder = Arc<Mutex<dyn RelayRecorder>>;
