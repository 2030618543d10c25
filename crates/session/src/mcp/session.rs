//! One session with a live server: connect, choose the protocol, list the
//! tools, call one with every elicitation on the way resolved. `elicit
//! call` and `elicit test` both run on it, so a replay chooses the
//! protocol exactly as a call does.
//!
//! The one rule about calling a tool again: a `tools/call` that reached a
//! tool and got its result (an `isError` one included) is never sent
//! again. The only call sent twice is one the server refused on the
//! handshake (a JSON-RPC error, no result) because the tool asks with
//! `input_required`, which only 2026-07-28 carries: such a tool's first
//! pass only asks, and 2026-07-28 calls it again for every answer anyway.

use std::time::Duration;

use serde_json::{Map, Value};

use super::call::{call_tool_end, CallEnd};
use super::client::{McpClient, ProtocolChoice, STATELESS_VERSION};
use super::handler::ElicitHandler;
use super::strict::Strict;
use crate::transport::{self, ConnectOptions, ServerTarget};
use elicit_core::error::ElicitError;
use elicit_core::lint::Revision;
use elicit_core::text::sanitize::sanitize_line;

/// What a session is opened with, besides how each connection is made.
pub struct SessionOptions {
    /// The server: a command to start, or a URL.
    pub target: ServerTarget,
    /// `--protocol`.
    pub protocol: ProtocolChoice,
    /// The most a reply may take (`--timeout`).
    pub timeout: Option<Duration>,
    /// `-v`: say on stderr which protocol and why.
    pub verbose: bool,
    /// `--strict`: told the revision of every connection made.
    pub strict: Option<Strict>,
}

/// Where opening a session failed.
#[derive(Debug)]
pub enum ConnectError {
    /// The server could not be started or reached.
    Start(ElicitError),
    /// It was reached, but the handshake or discovery failed.
    Negotiate(ElicitError),
}

impl ConnectError {
    /// The failure itself.
    pub fn into_inner(self) -> ElicitError {
        match self {
            ConnectError::Start(e) | ConnectError::Negotiate(e) => e,
        }
    }
}

/// How long, under `--strict`, a session that has its result still reads
/// for a URL elicitation's completion: the server may send it just after,
/// or on another stream read by another thread.
const COMPLETION_GRACE: Duration = Duration::from_millis(500);

/// A connected session. Each connection is made with what `connect`
/// returns (a second one may be needed: see the module's rule).
pub struct Session<'c> {
    client: McpClient,
    options: SessionOptions,
    connect: Box<dyn FnMut() -> ConnectOptions + 'c>,
}

impl<'c> Session<'c> {
    /// Starts or reaches the server and negotiates the protocol.
    pub fn connect(
        options: SessionOptions,
        connect: impl FnMut() -> ConnectOptions + 'c,
        handler: &mut ElicitHandler<'_>,
    ) -> Result<Self, ConnectError> {
        let mut connect: Box<dyn FnMut() -> ConnectOptions + 'c> = Box::new(connect);
        let client = open(&options, options.protocol, &mut connect, handler)?;
        let session = Session {
            client,
            options,
            connect,
        };
        session.tell_strict();
        Ok(session)
    }

    /// The revision in use (what `--strict` checks against).
    pub fn revision(&self) -> Revision {
        self.client.revision
    }

    /// The protocol version in use, as on the wire (what a cassette
    /// records).
    pub fn protocol_version(&self) -> &str {
        self.client.protocol_version()
    }

    /// The protocol in use, in words (for `-v`).
    pub fn describe_protocol(&self) -> String {
        self.client.describe_protocol()
    }

    /// The server's name from its `serverInfo`.
    pub fn server_name(&self) -> Option<String> {
        self.client.server_name()
    }

    /// Why this protocol, in words (for `-v`).
    pub fn why(&self) -> &str {
        &self.client.why
    }

    /// `tools/list`.
    pub fn list_tools(
        &mut self,
        handler: &mut ElicitHandler<'_>,
    ) -> Result<Vec<Value>, ElicitError> {
        self.client.list_tools(handler)
    }

    /// Calls `tool` (see the module's rule on calling again).
    pub fn call_tool(
        &mut self,
        handler: &mut ElicitHandler<'_>,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<CallEnd, ElicitError> {
        let asked_before = handler.asked;
        let end = call_tool_end(&mut self.client, handler, tool, arguments)?;
        let asked = handler.asked > asked_before;
        if self.options.protocol == ProtocolChoice::Only(Revision::V2026_07_28)
            && !asked
            && failed(&end)
        {
            // The person chose 2026-07-28: say what auto would have done.
            self.note(&format!(
                "the tool failed on {STATELESS_VERSION} before the server asked anything; if it asks with requests of its own, --protocol auto would use the initialize handshake, where they work"
            ));
        }
        let Some(why) = stateless_retry_reason(
            self.options.protocol,
            self.client.is_stateless(),
            &end,
            asked,
        ) else {
            return Ok(end);
        };
        self.note(&format!("{why}; calling it again over {STATELESS_VERSION}"));
        match open(
            &self.options,
            ProtocolChoice::Only(Revision::V2026_07_28),
            &mut self.connect,
            handler,
        ) {
            Ok(client) => {
                let old = std::mem::replace(&mut self.client, client);
                close(old);
                self.tell_strict();
                self.note(&format!(
                    "connected again ({}): the tool asks with input_required",
                    self.client.describe_protocol()
                ));
                call_tool_end(&mut self.client, handler, tool, arguments)
            }
            // A server that does not speak 2026-07-28 after all: its
            // refusal stands.
            Err(e) => {
                self.note(&format!(
                    "{STATELESS_VERSION} failed too ({}); the refusal on the handshake stands",
                    sanitize_line(&e.into_inner().to_string())
                ));
                Ok(end)
            }
        }
    }

    /// Ends the session (a server slow to end it gets a moment, no more;
    /// under `--strict`, a completion still awaited a moment too).
    pub fn close(mut self) {
        if let Some(strict) = &self.options.strict {
            self.client.await_completions(strict, COMPLETION_GRACE);
        }
        close(self.client);
    }

    fn tell_strict(&self) {
        if let Some(strict) = &self.options.strict {
            strict.set_revision(self.client.revision);
        }
    }

    fn note(&self, what: &str) {
        if self.options.verbose {
            elicit_platform::handlers::hide_status();
            eprintln!("elicit: {}", sanitize_line(what));
        }
    }
}

/// Whether a call ended in a failure (a refusal or an `isError` result).
fn failed(end: &CallEnd) -> bool {
    match end {
        CallEnd::Refused { .. } => true,
        CallEnd::Result(r) => r.get("isError").and_then(Value::as_bool) == Some(true),
    }
}

fn open(
    options: &SessionOptions,
    protocol: ProtocolChoice,
    connect: &mut Box<dyn FnMut() -> ConnectOptions + '_>,
    handler: &mut ElicitHandler<'_>,
) -> Result<McpClient, ConnectError> {
    let server = transport::connect(&options.target, connect()).map_err(ConnectError::Start)?;
    McpClient::connect(server, protocol, options.timeout, options.verbose, handler)
        .map_err(ConnectError::Negotiate)
}

fn close(mut client: McpClient) {
    client.server.close(Duration::from_secs(2));
}

/// Why a call ended on the handshake (not `stateless`) is to be made again
/// over 2026-07-28, or `None`: only under `--protocol auto`, only when nothing was asked,
/// only for a refusal (a JSON-RPC error: no tool result came back), and
/// only when the server says that the tool needs the revision that
/// carries `input_required` by naming it. The error code cannot tell:
/// servers use -32602, the code of bad arguments, for it.
pub(crate) fn stateless_retry_reason(
    choice: ProtocolChoice,
    stateless: bool,
    end: &CallEnd,
    asked: bool,
) -> Option<String> {
    if choice != ProtocolChoice::Auto || asked || stateless {
        return None;
    }
    let CallEnd::Refused { error, .. } = end else {
        return None;
    };
    let said = error.to_string().to_ascii_lowercase();
    let names_it = [STATELESS_VERSION, "input_required", "inputrequired"]
        .iter()
        .any(|word| said.contains(word));
    names_it.then(|| {
        format!(
            "the server refused the call on the handshake, before asking anything, because the tool asks with input_required ({})",
            super::client::short(error)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(code: i64, message: &str) -> CallEnd {
        CallEnd::Refused {
            error: json!({"code": code, "message": message}),
            message: message.into(),
        }
    }

    #[test]
    fn only_a_refusal_that_names_input_required_is_called_again() {
        let auto = ProtocolChoice::Auto;
        let stateless = false;
        let fastmcp = refused(
            -32602,
            "Tool 'guard_form' returned an InputRequiredResult to request client input, but the multi-round-trip result type (SEP-2322) only exists at MCP 2026-07-28",
        );
        assert!(stateless_retry_reason(auto, stateless, &fastmcp, false).is_some());
        assert!(stateless_retry_reason(
            auto,
            stateless,
            &refused(-32600, "this tool needs input_required"),
            false
        )
        .is_some());
        // A tool's own result, an error one included, is never sent again.
        let tool_error = CallEnd::Result(
            json!({"isError": true, "content": [{"type": "text", "text": "needs 2026-07-28"}]}),
        );
        assert!(stateless_retry_reason(auto, stateless, &tool_error, false).is_none());
        // Any other refusal stands: the tool may have done its work.
        assert!(
            stateless_retry_reason(auto, stateless, &refused(-32603, "disk full"), false).is_none()
        );
        // Something was asked first; not a choice `auto` made; already 2026.
        assert!(stateless_retry_reason(auto, stateless, &fastmcp, true).is_none());
        let forced = ProtocolChoice::Only(Revision::V2025_11_25);
        assert!(stateless_retry_reason(forced, stateless, &fastmcp, false).is_none());
        assert!(stateless_retry_reason(auto, true, &fastmcp, false).is_none());
    }
}
