//! `elicit proxy --record FILE`: a cassette for each tool call of the
//! session that elicited. The proxy hands over every line it relays (the
//! client's requests, the replies going back) and every elicitation it
//! answered; this keeps the calls in flight and writes a cassette when a
//! call that elicited gets its final result.
//!
//! An elicitation belongs to the tool call in flight (the latest, when a
//! client has several going at once: the handshake's `elicitation/create`
//! does not say which call it is for).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::{Cassette, Exchange, ServerSpec};
use elicit_core::elicitation::protocol::ElicitResult;
use elicit_core::error::ElicitError;
use elicit_session::mcp::recording::{RelayRecorder, SharedRelayRecorder};

use elicit_core::elicitation::protocol::wire::VERSION_META;

/// The largest reply `--record` parses for a cassette's result (8 MiB):
/// a larger one is relayed but not recorded.
pub const MAX_RECORDED_RESULT: usize = 8 << 20;

/// The most calls kept in flight: a client that never gets replies cannot
/// grow the recorder (the oldest is forgotten past it).
const MAX_CALLS: usize = 1024;

#[derive(Debug)]
struct Call {
    /// The client's request id, as JSON text.
    id: String,
    tool: String,
    arguments: Map<String, Value>,
    protocol: Option<String>,
    exchanges: Vec<Exchange>,
}

/// The calls of a proxied session, and the cassettes written so far.
#[derive(Debug)]
pub struct ProxyRecorder {
    path: PathBuf,
    server: ServerSpec,
    /// The handshake's negotiated version, once the server said it.
    protocol: Option<String>,
    calls: Vec<Call>,
    /// The files written, in order.
    pub written: Vec<PathBuf>,
}

impl ProxyRecorder {
    /// A recorder that writes to `path`, for `server`.
    pub fn new(path: &Path, server: ServerSpec) -> Self {
        ProxyRecorder {
            path: path.to_path_buf(),
            server,
            protocol: None,
            calls: Vec::new(),
            written: Vec::new(),
        }
    }

    /// The file for the `n`th cassette (from 1): FILE, then FILE with
    /// `-2`, `-3`, … before `.cassette.json` (or the extension).
    pub(crate) fn nth_path(&self, n: usize) -> PathBuf {
        if n <= 1 {
            return self.path.clone();
        }
        let name = self
            .path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (stem, ext) = match name.strip_suffix(".cassette.json") {
            Some(stem) => (stem.to_string(), ".cassette.json".to_string()),
            None => match name.rsplit_once('.') {
                Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
                _ => (name.clone(), String::new()),
            },
        };
        self.path.with_file_name(format!("{stem}-{n}{ext}"))
    }

    /// One line the proxy relayed: `dir` is relative to the server (`send`
    /// to it, `recv` from it), `party` who wrote or gets it.
    ///
    /// Only lines a cassette may need are parsed, and within the message
    /// limits (`transport::message_limits`): a client's `tools/call`, the
    /// handshake's reply, and replies that may end a call in flight. A
    /// reply over [`MAX_RECORDED_RESULT`] is not parsed: the calls whose id
    /// it holds are dropped (said on stderr when one had elicited).
    pub fn line(&mut self, dir: &str, party: &str, line: &[u8]) {
        if party != "client" {
            return;
        }
        let has = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
        // A line with escapes may spell anything: it is parsed to decide.
        let escaped = has(b"\\");
        let wanted = match dir {
            "send" => {
                escaped || has(elicit_core::elicitation::protocol::wire::TOOLS_CALL.as_bytes())
            }
            "recv" => {
                let ours = |c: &Call| has(c.id.as_bytes());
                let handshake = self.protocol.is_none() && has(b"protocolVersion");
                if line.len() > MAX_RECORDED_RESULT {
                    self.drop_calls_in(line);
                    return;
                }
                handshake || (!self.calls.is_empty() && (escaped || self.calls.iter().any(ours)))
            }
            _ => false,
        };
        if !wanted || line.len() > MAX_RECORDED_RESULT {
            return;
        }
        // What a cassette may hold ([`super::MAX_FILE_VALUES`]): a cassette
        // is never written that `elicit test` would refuse to read.
        let limits = elicit_core::bounded::check_json_shape(
            line,
            super::MAX_FILE_VALUES,
            elicit_session::transport::message_limits::MAX_DEPTH,
            elicit_session::transport::message_limits::MAX_BATCH,
        );
        if let Ok(msg) =
            limits.and_then(|_| serde_json::from_slice::<Value>(line).map_err(|e| e.to_string()))
        {
            self.message(dir, &msg);
        }
    }

    /// A reply too large to record may end the calls whose id it holds:
    /// they are dropped, with a warning for one that elicited.
    fn drop_calls_in(&mut self, line: &[u8]) {
        self.calls.retain(|c| {
            if memchr::memmem::find(line, c.id.as_bytes()).is_none() {
                return true;
            }
            if !c.exchanges.is_empty() {
                eprintln!(
                    "elicit proxy: --record: no cassette for the call of {}: its result is over {} MiB",
                    elicit_core::text::sanitize::sanitize_line(&c.tool),
                    MAX_RECORDED_RESULT >> 20
                );
            }
            false
        });
    }

    /// One message between the client and the server: `send` from the
    /// client to the server, `recv` from the server to the client.
    pub fn message(&mut self, dir: &str, msg: &Value) {
        match dir {
            "send" => self.client_message(msg),
            "recv" => self.server_message(msg),
            _ => {}
        }
    }

    fn client_message(&mut self, msg: &Value) {
        if msg.get("method").and_then(Value::as_str)
            != Some(elicit_core::elicitation::protocol::wire::TOOLS_CALL)
        {
            return;
        }
        let Some(id) = msg.get("id").filter(|i| !i.is_null()) else {
            return;
        };
        let params = msg.get("params");
        let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return;
        };
        let protocol = params
            .and_then(|p| p.pointer(&format!("/_meta/{}", VERSION_META.replace('/', "~1"))))
            .and_then(Value::as_str)
            .map(str::to_string);
        if self.calls.len() >= MAX_CALLS {
            self.calls.remove(0);
        }
        self.calls.push(Call {
            id: id.to_string(),
            tool: tool.to_string(),
            arguments: params
                .and_then(|p| p.get("arguments"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            protocol,
            exchanges: Vec::new(),
        });
    }

    fn server_message(&mut self, msg: &Value) {
        if msg.get("method").is_some() {
            return;
        }
        let Some(result) = msg.get("result") else {
            // An error reply ends the call; there is no result to record.
            if let Some(id) = msg.get("id") {
                let id = id.to_string();
                self.calls.retain(|c| c.id != id);
            }
            return;
        };
        if let (Some(v), true) = (
            result.get("protocolVersion").and_then(Value::as_str),
            result.get("serverInfo").is_some(),
        ) {
            self.protocol = Some(v.to_string());
        }
        let Some(id) = msg.get("id").map(Value::to_string) else {
            return;
        };
        let Some(at) = self.calls.iter().position(|c| c.id == id) else {
            return;
        };
        let call = self.calls.remove(at);
        if call.exchanges.is_empty() {
            return;
        }
        let cassette = Cassette {
            server: self.server.clone(),
            protocol: call
                .protocol
                .or_else(|| self.protocol.clone())
                .unwrap_or_else(|| elicit_session::mcp::client::HANDSHAKE_VERSION.into()),
            tool: call.tool,
            arguments: call.arguments,
            elicitations: call.exchanges,
            result: Some(result.clone()),
            error: None,
            ignore: Vec::new(),
            matches: Vec::new(),
            extra: Map::new(),
            source: None,
        };
        let path = self.nth_path(self.written.len() + 1);
        match cassette.write(&path) {
            Ok(()) => self.written.push(path),
            Err(e) => eprintln!(
                "elicit proxy: --record: {}",
                elicit_core::text::sanitize::sanitize_line(&e.to_string())
            ),
        }
    }

    fn elicitation(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult) {
        if let Some(call) = self.calls.last_mut() {
            call.exchanges
                .push(Exchange::recorded(key, request, result));
        }
    }
}

impl RelayRecorder for ProxyRecorder {
    fn line(&mut self, dir: &str, party: &str, line: &[u8]) {
        ProxyRecorder::line(self, dir, party, line);
    }

    fn message(&mut self, dir: &str, message: &Value) {
        ProxyRecorder::message(self, dir, message);
    }

    fn elicitation(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult) {
        ProxyRecorder::elicitation(self, request, key, result);
    }
}

/// `elicit proxy --record FILE`: the recorder for `server`, once the file
/// is known to be writable.
pub fn shared_recorder(
    path: &Path,
    server: ServerSpec,
) -> Result<SharedRelayRecorder, ElicitError> {
    super::check_writable(path)?;
    Ok(Arc::new(Mutex::new(ProxyRecorder::new(path, server))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_cassettes_get_a_number() {
        let r = ProxyRecorder::new(Path::new("t/a.cassette.json"), ServerSpec::Command(vec![]));
        assert_eq!(r.nth_path(1), Path::new("t/a.cassette.json"));
        assert_eq!(r.nth_path(3), Path::new("t/a-3.cassette.json"));
        let r = ProxyRecorder::new(Path::new("b.json"), ServerSpec::Command(vec![]));
        assert_eq!(r.nth_path(2), Path::new("b-2.json"));
    }
}
