//! elicit-cassette, the test workflow. Cassettes: one recorded tool call of
//! an MCP server (the elicitations it asked, the answers sent, the final
//! result), written by `elicit call --record` ([`record`]) and `elicit proxy
//! --record` ([`proxy_record`]), replayed by `elicit test` ([`replay`], many
//! at once: [`suite`]), compared ([`diff`]), explored ([`explore`]) and
//! played back as a server ([`mock`]). A cassette is an answer file too
//! (`--answers`, [`answers`]).
//!
//! Built on elicit-session's sessions: the recorders implement its seam
//! (`elicit_session::mcp::recording`), so nothing below this crate
//! imports a cassette; the relay (elicit-relay) and this crate do not
//! import each other.
//!
//! The file is meant to be read in review and written by hand: it is
//! checked against the published JSON Schema (`docs/cassette.schema.json`)
//! on load, and written pretty with a fixed key order.
#![warn(missing_docs)]

use std::path::Path;

use serde_json::{Map, Value};

use elicit_core::elicitation::protocol::Revision;
use elicit_core::elicitation::protocol::{Action, ElicitResult};
use elicit_core::error::ElicitError;
use elicit_session::mcp::client::ProtocolChoice;

pub(crate) use elicit_core::elicitation::answer_rules::values_as_words;
/// An answer as a cassette holds it (the same as an answer file's rule).
pub use elicit_core::elicitation::answer_rules::AnswerSpec;
pub(crate) use file::cassette_validator;
pub use file::{check_writable, LoadError, MAX_FILE_BYTES};
pub(crate) use file::{
    escape_pointer_token, read_checked, strings, write_atomically, MAX_FILE_VALUES,
};

pub mod answers;
pub mod diff;
pub mod explore;
mod file;
mod mismatch;
pub mod mock;
pub mod proxy_record;
pub mod record;
pub mod replay;
mod server_log;
pub mod suite;

/// An ElicitResult from its JSON, as it is (not validated: an invalid
/// variant is sent on purpose).
pub(crate) fn result_of(v: &Value) -> ElicitResult {
    let action = match v.get("action").and_then(Value::as_str) {
        Some("decline") => Action::Decline,
        Some("cancel") => Action::Cancel,
        _ => Action::Accept,
    };
    let mut r = ElicitResult::new(action);
    r.content = v.get("content").and_then(Value::as_object).cloned();
    r
}

/// The value of a cassette's `"elicit"` key.
pub(crate) const CASSETTE_VERSION: &str = "cassette/1";

/// How to reach the server a cassette was recorded against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// A stdio server: its argv.
    Command(Vec<String>),
    /// A remote server: its URL and the transport (`auto`, `http`, `sse`).
    Url {
        /// The URL.
        url: String,
        /// The transport: `auto`, `http` or `sse`.
        transport: String,
    },
}

impl ServerSpec {
    /// The server as written in a cassette.
    pub(crate) fn to_value(&self) -> Value {
        let mut m = Map::new();
        match self {
            ServerSpec::Command(argv) => {
                m.insert("command".into(), argv.clone().into());
            }
            ServerSpec::Url { url, transport } => {
                m.insert("url".into(), without_credentials(url).into());
                m.insert("transport".into(), transport.clone().into());
            }
        }
        Value::Object(m)
    }

    /// The server as a cassette names it: the command, or the URL and the
    /// transport (never the headers).
    pub fn recorded(
        target: &elicit_session::transport::ServerTarget,
        transport: elicit_session::transport::TransportChoice,
    ) -> ServerSpec {
        match target {
            elicit_session::transport::ServerTarget::Command(argv) => {
                ServerSpec::Command(argv.clone())
            }
            elicit_session::transport::ServerTarget::Url(url) => ServerSpec::Url {
                url: url.clone(),
                transport: transport.as_str().to_string(),
            },
        }
    }

    /// The server's name for messages: the command line or the URL.
    pub fn describe(&self) -> String {
        match self {
            ServerSpec::Command(argv) => shell_words::join(argv),
            ServerSpec::Url { url, .. } => without_credentials(url),
        }
    }

    /// `--server CMD|URL` of `elicit test`: a URL, or a command line split
    /// like a shell.
    pub fn parse(text: &str) -> Result<Self, ElicitError> {
        if elicit_session::transport::is_remote(text.trim()) {
            return Ok(ServerSpec::Url {
                url: text.trim().to_string(),
                transport: "auto".into(),
            });
        }
        let argv = shell_words::split(text)
            .map_err(|e| ElicitError::Usage(format!("--server {text:?}: {e}")))?;
        if argv.is_empty() {
            return Err(ElicitError::Usage(
                "--server is empty: give a command or a URL".into(),
            ));
        }
        Ok(ServerSpec::Command(argv))
    }
}

/// A URL with any user name and password taken out, and the value of
/// every secret-looking query parameter ([`secret_query_name`]) replaced by
/// a reference to an environment variable (`${ELICIT_SECRET_API_KEY}`)
/// that `elicit test` fills in: a cassette is committed, and never carries
/// a secret.
pub fn without_credentials(url: &str) -> String {
    redact_url(url).0
}

/// [`without_credentials`], and the query parameters left out, each with
/// the variable that stands for it.
pub(crate) fn redact_url(url: &str) -> (String, Vec<(String, String)>) {
    let Ok(mut u) = url::Url::parse(url) else {
        return (url.to_string(), Vec::new());
    };
    let mut left_out = Vec::new();
    if !u.username().is_empty() || u.password().is_some() {
        let _ = u.set_username("");
        let _ = u.set_password(None);
    }
    if let Some(query) = u.query().map(str::to_string) {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| {
                let (raw_name, value) = pair.split_once('=').unwrap_or((pair, ""));
                let name: String = url::form_urlencoded::parse(raw_name.as_bytes())
                    .map(|(k, _)| k.into_owned())
                    .next()
                    .unwrap_or_default();
                let placeholder = is_secret_placeholder(value);
                if secret_query_name(&name) && !value.is_empty() && !placeholder {
                    let var = secret_variable(&name);
                    left_out.push((name, var.clone()));
                    format!("{raw_name}=${{{var}}}")
                } else {
                    pair.to_string()
                }
            })
            .collect();
        u.set_query(Some(&pairs.join("&")));
    }
    (u.to_string(), left_out)
}

/// Query parameter names whose value is taken for a secret, by word
/// (`api_key`, `X-Amz-Signature`, `sessionId`, `access_token`), case
/// ignored: the one list.
pub const SECRET_QUERY_WORDS: &[&str] = &[
    "key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "signature",
    "sig",
    "auth",
    "authorization",
    "code",
    "session",
    "sessionid",
    "sid",
    "credential",
    "credentials",
    "jwt",
    "bearer",
    "otp",
];

/// Whether a query parameter's name looks like it carries a secret: one of
/// its words (split at anything not a letter or digit, and at a lower to
/// upper case change) is in [`SECRET_QUERY_WORDS`], or the whole name is.
pub fn secret_query_name(name: &str) -> bool {
    let mut words = vec![name.to_ascii_lowercase()];
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        let boundary = !c.is_ascii_alphanumeric() || (c.is_ascii_uppercase() && prev_lower);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        }
        prev_lower = c.is_ascii_lowercase();
    }
    words.push(word);
    words
        .iter()
        .any(|w| SECRET_QUERY_WORDS.contains(&w.as_str()))
}

/// The environment variable that stands for a secret left out of a
/// cassette: `ELICIT_SECRET_` and the name, upper case, every character
/// but a letter or digit as `_` (`api-key` → `ELICIT_SECRET_API_KEY`).
pub(crate) fn secret_variable(name: &str) -> String {
    let tail: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("ELICIT_SECRET_{tail}")
}

/// Whether `value` is already a `${ELICIT_SECRET_…}` reference.
fn is_secret_placeholder(value: &str) -> bool {
    value.starts_with("${ELICIT_SECRET_") && value.ends_with('}')
}

/// The key of a recorded answer value left out as a secret:
/// `{"$env": "ELICIT_SECRET_PASSWORD"}`, filled from that environment
/// variable by `elicit test`.
pub(crate) const SECRET_VALUE_KEY: &str = "$env";

/// Fills every `${ELICIT_SECRET_…}` reference in `text` (a cassette's
/// server URL) from the environment. Err: the first variable not set.
pub(crate) fn fill_secret_references(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${ELICIT_SECRET_") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let var = &after[..end];
        let value = std::env::var(var).map_err(|_| var.to_string())?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// An answer's content with every `{"$env": VAR}` value filled from the
/// environment. Err: the field and the variable not set.
pub(crate) fn fill_secret_values(content: &mut Map<String, Value>) -> Result<(), (String, String)> {
    for (name, value) in content.iter_mut() {
        let var = match value {
            Value::Object(o) if o.len() == 1 => match o.get(SECRET_VALUE_KEY) {
                Some(Value::String(v)) => v.clone(),
                _ => continue,
            },
            _ => continue,
        };
        match std::env::var(&var) {
            Ok(v) => *value = Value::String(v),
            Err(_) => return Err((name.clone(), var)),
        }
    }
    Ok(())
}

/// One elicitation of a cassette and the answer it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The `inputRequests` key (2026-07-28).
    pub key: Option<String>,
    /// The params as the server sent them.
    pub request: Value,
    /// The answer given.
    pub answer: AnswerSpec,
    /// JSON pointers into the request left out of the comparison.
    pub ignore: Vec<String>,
    /// The answer breaks the form's schema on purpose (a saved `--explore
    /// --invalid` variant, `"invalid": true`): sent as written, not
    /// checked against the schema, to see what the server does with it.
    pub invalid: bool,
}

impl Exchange {
    /// What `--record` keeps of an elicitation and the result sent. The
    /// value of a masked field ([`elicit_core::elicitation::schema::FormField::masked`])
    /// is left out: `{"$env": "ELICIT_SECRET_FIELD"}` stands for it (said
    /// on stderr), and `elicit test` reads it from that variable.
    pub fn recorded(key: Option<&str>, request: &Value, result: &ElicitResult) -> Self {
        let mut answer = result.to_value();
        let masked: Vec<String> = request
            .get("requestedSchema")
            .and_then(|s| elicit_core::elicitation::schema::FormSchema::parse(s).ok())
            .map(|form| {
                form.fields
                    .iter()
                    .filter(|f| f.masked())
                    .map(|f| f.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(content) = answer.get_mut("content").and_then(Value::as_object_mut) {
            for name in masked {
                if let Some(v) = content.get_mut(&name) {
                    if v.is_null() {
                        continue;
                    }
                    let var = secret_variable(&name);
                    eprintln!(
                        "elicit: --record: the value of field {} is left out of the cassette (it is masked as a secret); `elicit test` reads it from ${}",
                        elicit_core::text::sanitize::sanitize_line(&name),
                        var
                    );
                    let mut m = Map::new();
                    m.insert(SECRET_VALUE_KEY.into(), var.into());
                    *v = Value::Object(m);
                }
            }
        }
        Exchange {
            key: key.map(str::to_string),
            request: request.clone(),
            answer: AnswerSpec::Result(answer),
            ignore: Vec::new(),
            invalid: false,
        }
    }

    /// `before` (the entry as it was written) with this exchange's request
    /// and key, and its answer when `before` held a recorded result.
    fn patch(&self, before: &Map<String, Value>) -> Value {
        let mut out = before.clone();
        out.insert("request".into(), self.request.clone());
        match &self.key {
            Some(k) => {
                out.insert("key".into(), k.clone().into());
            }
            None => {
                out.remove("key");
            }
        }
        // A hand-written answer stays while the form's fields are the
        // same; once fields were added or renamed (answered by `-a` or a
        // rename), the answer sent now is the one to keep.
        let recorded =
            matches!(before.get("answer"), Some(Value::Object(a)) if a.contains_key("action"));
        let old_fields = before
            .get("request")
            .map(diff::field_names)
            .unwrap_or_default();
        let same_fields = old_fields == diff::field_names(&self.request);
        if recorded || !same_fields || !before.contains_key("answer") {
            out.insert("answer".into(), self.answer.to_value());
        }
        Value::Object(out)
    }

    fn to_value(&self) -> Value {
        let mut m = Map::new();
        if let Some(k) = &self.key {
            m.insert("key".into(), k.clone().into());
        }
        m.insert("request".into(), self.request.clone());
        m.insert("answer".into(), self.answer.to_value());
        if !self.ignore.is_empty() {
            m.insert("ignore".into(), self.ignore.clone().into());
        }
        if self.invalid {
            m.insert("invalid".into(), true.into());
        }
        Value::Object(m)
    }
}

/// A cassette, read or about to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct Cassette {
    /// The server called.
    pub server: ServerSpec,
    /// `2025-06-18`, `2025-11-25`, `2026-07-28` (or `auto`, by hand).
    pub protocol: String,
    /// The tool called.
    pub tool: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
    /// The elicitations, in the order they came.
    pub elicitations: Vec<Exchange>,
    /// The final result; `None` (a hand-written cassette without one):
    /// only the elicitations are checked.
    pub result: Option<Value>,
    /// The JSON-RPC error the server refused the call with (`code` and
    /// `message`), instead of a result: `elicit test` passes when the
    /// server refuses with the same code. Never beside a result.
    pub error: Option<Value>,
    /// JSON pointers into the result whose values are not compared.
    pub ignore: Vec<String>,
    /// JSON pointers into the result and the regex each value must match.
    pub matches: Vec<(String, String)>,
    /// Keys this version does not know, kept as they were.
    pub extra: Map<String, Value>,
    /// The file as it was read: what `--update` rewrites in place, so
    /// every key a person wrote (per-elicitation `ignore`, names, notes,
    /// hand-written answers) and their order survive. `None` for a
    /// cassette just recorded.
    pub source: Option<Value>,
}

/// The keys a cassette's top level is written in, in order.
const KEYS: [&str; 10] = [
    "elicit",
    "server",
    "protocol",
    "tool",
    "arguments",
    "elicitations",
    "result",
    "error",
    "ignore",
    "match",
];

/// The lifecycle a recorded protocol name is replayed with.
pub(crate) fn protocol_choice(name: &str) -> ProtocolChoice {
    match (name, Revision::from_version(name)) {
        ("auto", _) => ProtocolChoice::Auto,
        (_, Some(revision)) => ProtocolChoice::Only(revision),
        // Any other handshake revision: the newest handshake, which
        // negotiates down.
        (_, None) => ProtocolChoice::Only(Revision::V2025_11_25),
    }
}

/// What a cassette keeps of a JSON-RPC error the server refused a call
/// with: its code and message (`data` is the server's own detail, free to
/// change between runs and of any size). `None` for an error without an
/// integer code, which no cassette can hold.
pub(crate) fn recorded_error(error: &Value) -> Option<Value> {
    let code = error.get("code").filter(|c| c.is_i64())?;
    let mut kept = Map::new();
    kept.insert("code".into(), code.clone());
    if let Some(message) = error.get("message").filter(|m| m.is_string()) {
        kept.insert("message".into(), message.clone());
    }
    Some(Value::Object(kept))
}

impl Cassette {
    /// The cassette as JSON: a cassette read from a file is that file with
    /// what changed written into it ([`Self::source`]); a new one has its
    /// keys in a fixed order.
    pub(crate) fn to_value(&self) -> Value {
        match &self.source {
            Some(source) => self.patch(source),
            None => self.fresh_value(),
        }
    }

    /// `source` with this cassette's protocol, result and elicitations
    /// written into it, everything else as it was. An elicitation keeps its
    /// keys and a hand-written answer (applied by field name, it answers
    /// the new form too); a recorded ElicitResult is replaced by the one
    /// sent now.
    fn patch(&self, source: &Value) -> Value {
        let Some(obj) = source.as_object() else {
            return self.fresh_value();
        };
        let mut out = obj.clone();
        let fresh = self.fresh_value();
        for key in ["protocol", "result", "error"] {
            if let Some(v) = fresh.get(key) {
                if obj.contains_key(key) || key == "protocol" && self.protocol != "auto" {
                    out.insert(key.into(), v.clone());
                }
            }
        }
        // `--update` may turn a recorded refusal into a result or back:
        // the one that no longer holds goes.
        match (&self.result, &self.error) {
            (Some(result), None) if obj.contains_key("error") => {
                out.remove("error");
                out.insert("result".into(), result.clone());
            }
            (None, Some(error)) if obj.contains_key("result") => {
                out.remove("result");
                out.insert("error".into(), error.clone());
            }
            _ => {}
        }
        let old = obj
            .get("elicitations")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let list: Vec<Value> = self
            .elicitations
            .iter()
            .enumerate()
            .map(|(i, exchange)| match old.get(i) {
                Some(Value::Object(before)) => exchange.patch(before),
                _ => exchange.to_value(),
            })
            .collect();
        out.insert("elicitations".into(), Value::Array(list));
        Value::Object(out)
    }

    /// The cassette as JSON, keys in a fixed order.
    fn fresh_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("elicit".into(), CASSETTE_VERSION.into());
        m.insert("server".into(), self.server.to_value());
        m.insert("protocol".into(), self.protocol.clone().into());
        m.insert("tool".into(), self.tool.clone().into());
        m.insert("arguments".into(), Value::Object(self.arguments.clone()));
        m.insert(
            "elicitations".into(),
            self.elicitations.iter().map(Exchange::to_value).collect(),
        );
        if let Some(result) = &self.result {
            m.insert("result".into(), result.clone());
        }
        if let Some(error) = &self.error {
            m.insert("error".into(), error.clone());
        }
        if !self.ignore.is_empty() {
            m.insert("ignore".into(), self.ignore.clone().into());
        }
        if !self.matches.is_empty() {
            let matches: Map<String, Value> = self
                .matches
                .iter()
                .map(|(p, r)| (p.clone(), Value::String(r.clone())))
                .collect();
            m.insert("match".into(), Value::Object(matches));
        }
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The file's text: pretty JSON and a final newline.
    pub(crate) fn to_text(&self) -> String {
        let mut text =
            serde_json::to_string_pretty(&self.to_value()).expect("a cassette always serialises");
        text.push('\n');
        text
    }

    /// Writes the cassette to `path` atomically: a temporary file beside it,
    /// then a rename, so a reader never sees half a cassette.
    pub fn write(&self, path: &Path) -> Result<(), ElicitError> {
        if let ServerSpec::Url { url, .. } = &self.server {
            for (name, var) in redact_url(url).1 {
                eprintln!(
                    "elicit: --record: the value of the query parameter {} is left out of {} (it looks like a secret); `elicit test` reads it from ${}",
                    elicit_core::text::sanitize::sanitize_line(&name),
                    path.display(),
                    var
                );
            }
        }
        write_atomically(path, self.to_text().as_bytes())
    }

    /// Reads and checks a cassette file. Every error names the file and,
    /// for a bad value, its JSON pointer.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let value = read_checked(path, cassette_validator())?;
        Self::from_value(&value).map_err(|(pointer, message)| LoadError {
            path: path.to_path_buf(),
            pointer: Some(pointer),
            message,
        })
    }

    /// Builds a cassette from JSON the schema accepted. What the schema
    /// cannot say (a regex that does not compile) is checked here.
    pub fn from_value(v: &Value) -> Result<Self, (String, String)> {
        let obj = v
            .as_object()
            .ok_or_else(|| (String::new(), "a cassette is a JSON object".to_string()))?;
        let server = match obj.get("server") {
            Some(Value::Object(s)) if s.contains_key("command") => {
                ServerSpec::Command(strings(s.get("command")))
            }
            Some(Value::Object(s)) => ServerSpec::Url {
                url: s
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                transport: s
                    .get("transport")
                    .and_then(Value::as_str)
                    .unwrap_or("auto")
                    .to_string(),
            },
            _ => return Err(("/server".into(), "missing or not an object".into())),
        };
        let mut elicitations = Vec::new();
        for e in obj
            .get("elicitations")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            elicitations.push(Exchange {
                key: e.get("key").and_then(Value::as_str).map(str::to_string),
                request: e.get("request").cloned().unwrap_or(Value::Null),
                answer: AnswerSpec::from_value(e.get("answer").unwrap_or(&Value::Null)),
                ignore: strings(e.get("ignore")),
                invalid: e.get("invalid").and_then(Value::as_bool) == Some(true),
            });
        }
        let mut matches = Vec::new();
        if let Some(Value::Object(m)) = obj.get("match") {
            for (pointer, re) in m {
                let re = re.as_str().unwrap_or_default();
                if let Err(e) = regex::Regex::new(re) {
                    return Err((
                        format!("/match/{}", escape_pointer_token(pointer)),
                        format!("not a valid regular expression: {e}"),
                    ));
                }
                matches.push((pointer.clone(), re.to_string()));
            }
        }
        if obj.contains_key("result") && obj.contains_key("error") {
            return Err((
                "/error".into(),
                "a cassette records a result or an error (the server refused the call), not both: remove one".into(),
            ));
        }
        let extra = obj
            .iter()
            .filter(|(k, _)| !KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Cassette {
            server,
            protocol: obj
                .get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("auto")
                .to_string(),
            tool: obj
                .get("tool")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            arguments: obj
                .get("arguments")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            elicitations,
            result: obj.get("result").cloned(),
            error: obj.get("error").cloned(),
            ignore: strings(obj.get("ignore")),
            matches,
            extra,
            source: Some(v.clone()),
        })
    }
}

#[cfg(test)]
mod tests;
