//! `--record FILE`: the observer that keeps each elicitation of a session
//! and the answer sent, however it was settled (terminal, page,
//! `--answer`, rules), for the cassette written at the end.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{recorded_error, Cassette, Exchange, ServerSpec};
use elicit_core::elicitation::protocol::ElicitResult;
use elicit_core::error::ElicitError;
use elicit_core::text::sanitize::sanitize_line;
use elicit_session::mcp::handler::ElicitObserver;
use elicit_session::mcp::recording::{CallRecordEnd, CallRecorder};

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

/// `elicit call --record FILE`: keeps the call's elicitations and writes
/// its cassette to the file when the call ends (the recorder of
/// elicit-session's tool call).
#[derive(Debug)]
pub struct CallCassette {
    path: PathBuf,
    server: ServerSpec,
    recorder: Recorder,
}

impl CallCassette {
    /// A recorder that writes the cassette of a call of `server` to `path`.
    pub fn new(path: &Path, server: ServerSpec) -> Self {
        CallCassette {
            path: path.to_path_buf(),
            server,
            recorder: Recorder::default(),
        }
    }
}

impl ElicitObserver for CallCassette {
    fn answered(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult) {
        self.recorder.answered(request, key, result);
    }
}

impl CallRecorder for CallCassette {
    fn ended(
        &mut self,
        protocol_version: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        end: CallRecordEnd<'_>,
    ) -> Result<Option<String>, ElicitError> {
        let end = match end {
            CallRecordEnd::Result(result) => RecordedEnd::Result(result.clone()),
            // Only a refusal with a code is kept: `elicit test` compares it.
            CallRecordEnd::Refused(error) => match recorded_error(error) {
                Some(error) => RecordedEnd::Refused(error),
                None => return Ok(None),
            },
        };
        let refused = matches!(end, RecordedEnd::Refused(_));
        let cassette = self.recorder.cassette(
            self.server.clone(),
            protocol_version.to_string(),
            tool,
            arguments,
            end,
        );
        cassette.write(&self.path)?;
        Ok(refused.then(|| {
            format!(
                "the server refused the call; the refusal is recorded in {} (elicit test expects it again)",
                sanitize_line(&self.path.display().to_string())
            )
        }))
    }
}
