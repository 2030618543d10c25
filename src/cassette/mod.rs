//! Cassettes: one recorded tool call of an MCP server (the elicitations it
//! asked, the answers sent, the final result), written by `elicit call
//! --record` and replayed by `elicit test` ([`replay`]); and answer files
//! with rules for headless runs ([`rules`]).
//!
//! The file is meant to be read in review and written by hand: it is
//! checked against the published JSON Schema (`docs/cassette.schema.json`)
//! on load, and written pretty with a fixed key order.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::elicitation::answers::ScriptedAnswers;
use crate::elicitation::protocol::wire;
use crate::elicitation::protocol::ElicitResult;
use crate::error::ElicitError;
use crate::mcp::client::{Generation, ProtocolChoice};

pub mod diff;
pub mod proxy_record;
pub mod record;
pub mod replay;
pub mod rules;

/// The value of a cassette's `"elicit"` key.
pub const CASSETTE_VERSION: &str = "cassette/1";

/// The published schema every cassette is checked against.
pub const CASSETTE_SCHEMA: &str = include_str!("../../docs/cassette.schema.json");

/// How to reach the server a cassette was recorded against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// A stdio server: its argv.
    Command(Vec<String>),
    /// A remote server: its URL and the transport (`auto`, `http`, `sse`).
    Url { url: String, transport: String },
}

impl ServerSpec {
    pub fn to_value(&self) -> Value {
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
        if crate::transport::is_remote(text.trim()) {
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
pub fn redact_url(url: &str) -> (String, Vec<(String, String)>) {
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
pub fn secret_variable(name: &str) -> String {
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
pub const SECRET_VALUE_KEY: &str = "$env";

/// Fills every `${ELICIT_SECRET_…}` reference in `text` (a cassette's
/// server URL) from the environment. Err: the first variable not set.
pub fn fill_secret_references(text: &str) -> Result<String, String> {
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
pub fn fill_secret_values(content: &mut Map<String, Value>) -> Result<(), (String, String)> {
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

/// An answer as a cassette holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerSpec {
    /// The ElicitResult sent (what `--record` writes).
    Result(Value),
    /// Written by hand: `--answer` words (`accept`, `NAME=VALUE`, …).
    Words(Vec<String>),
    /// Written by hand: values by field name (strings coerced as
    /// `--answer NAME=VALUE` is).
    Values(Map<String, Value>),
}

impl AnswerSpec {
    pub fn from_value(v: &Value) -> Self {
        match v {
            Value::String(s) => AnswerSpec::Words(vec![s.clone()]),
            Value::Array(a) => AnswerSpec::Words(
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
            ),
            Value::Object(o) if o.contains_key("action") => AnswerSpec::Result(v.clone()),
            Value::Object(o) => AnswerSpec::Values(o.clone()),
            _ => AnswerSpec::Words(Vec::new()),
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            AnswerSpec::Result(v) => v.clone(),
            AnswerSpec::Words(w) if w.len() == 1 => Value::String(w[0].clone()),
            AnswerSpec::Words(w) => w.clone().into(),
            AnswerSpec::Values(m) => Value::Object(m.clone()),
        }
    }

    /// The answer as scripted answers, applied by field name to whatever
    /// form is asked: a recorded ElicitResult gives its action and content;
    /// words and values are `--answer`s; an accept fills the other fields
    /// from their defaults.
    pub fn scripted(&self) -> Result<ScriptedAnswers, ElicitError> {
        let words = self.scripted_words()?;
        ScriptedAnswers::parse(&words, |path| {
            Err(std::io::Error::other(format!(
                "@{path}: a cassette's answers cannot name files"
            )))
        })
    }

    /// The answer as `--answer` words (what [`Self::scripted`] parses).
    pub fn scripted_words(&self) -> Result<Vec<String>, ElicitError> {
        Ok(match self {
            AnswerSpec::Result(v) => {
                let mut result = Map::new();
                for key in ["action", "content"] {
                    if let Some(x) = v.get(key) {
                        result.insert(key.into(), x.clone());
                    }
                }
                vec![Value::Object(result).to_string()]
            }
            AnswerSpec::Words(w) => {
                let mut words = w.clone();
                if !w
                    .iter()
                    .any(|x| matches!(x.trim(), "accept" | "decline" | "cancel"))
                {
                    words.insert(0, "accept".into());
                }
                words
            }
            AnswerSpec::Values(m) => values_as_words(m),
        })
    }
}

/// Values by field name as `--answer`s: `accept`, then `NAME=VALUE` for each
/// string (coerced by the field's kind, as on the command line), then one
/// JSON object of the rest (already typed).
pub fn values_as_words(values: &Map<String, Value>) -> Vec<String> {
    let mut words = vec!["accept".to_string()];
    let mut typed = Map::new();
    for (name, value) in values {
        match value {
            Value::String(s) if s.trim() == s && !name.contains('=') => {
                words.push(format!("{name}={s}"))
            }
            other => {
                typed.insert(name.clone(), other.clone());
            }
        }
    }
    if !typed.is_empty() {
        // As an ElicitResult, so that a field named like a key of one
        // (`action`, `ok`) is still a field.
        let mut result = Map::new();
        result.insert("action".into(), "accept".into());
        result.insert("content".into(), Value::Object(typed));
        words.push(Value::Object(result).to_string());
    }
    words
}

/// One elicitation of a cassette and the answer it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The `inputRequests` key (2026-07-28).
    pub key: Option<String>,
    /// The params as the server sent them.
    pub request: Value,
    pub answer: AnswerSpec,
    /// JSON pointers into the request left out of the comparison.
    pub ignore: Vec<String>,
}

impl Exchange {
    /// What `--record` keeps of an elicitation and the result sent. The
    /// value of a masked field ([`crate::elicitation::schema::FormField::masked`])
    /// is left out: `{"$env": "ELICIT_SECRET_FIELD"}` stands for it (said
    /// on stderr), and `elicit test` reads it from that variable.
    pub fn recorded(key: Option<&str>, request: &Value, result: &ElicitResult) -> Self {
        let mut answer = result.to_value();
        let masked: Vec<String> = request
            .get("requestedSchema")
            .and_then(|s| crate::elicitation::schema::FormSchema::parse(s).ok())
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
                        crate::text::sanitize::sanitize_line(&name),
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
        Value::Object(m)
    }
}

/// A cassette, read or about to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct Cassette {
    pub server: ServerSpec,
    /// `2025-06-18`, `2025-11-25`, `2026-07-28` (or `auto`, by hand).
    pub protocol: String,
    pub tool: String,
    pub arguments: Map<String, Value>,
    pub elicitations: Vec<Exchange>,
    /// The final result; `None` (a hand-written cassette without one):
    /// only the elicitations are checked.
    pub result: Option<Value>,
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
const KEYS: [&str; 9] = [
    "elicit",
    "server",
    "protocol",
    "tool",
    "arguments",
    "elicitations",
    "result",
    "ignore",
    "match",
];

/// The protocol name recorded for a generation.
pub fn protocol_name(g: &Generation) -> String {
    match g {
        Generation::Handshake(v) => v.clone(),
        Generation::Stateless => crate::mcp::client::STATELESS_VERSION.into(),
    }
}

/// The lifecycle a recorded protocol name is replayed with.
pub fn protocol_choice(name: &str) -> ProtocolChoice {
    match name {
        wire::V2025_06_18 => ProtocolChoice::V2025_06_18,
        wire::V2026_07_28 => ProtocolChoice::V2026_07_28,
        "auto" => ProtocolChoice::Auto,
        // Any other handshake revision: the newest handshake, which
        // negotiates down.
        _ => ProtocolChoice::V2025_11_25,
    }
}

impl Cassette {
    /// The cassette as JSON: a cassette read from a file is that file with
    /// what changed written into it ([`Self::source`]); a new one has its
    /// keys in a fixed order.
    pub fn to_value(&self) -> Value {
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
        for key in ["protocol", "result"] {
            if let Some(v) = fresh.get(key) {
                if obj.contains_key(key) || key == "protocol" && self.protocol != "auto" {
                    out.insert(key.into(), v.clone());
                }
            }
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
    pub fn to_text(&self) -> String {
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
                    crate::text::sanitize::sanitize_line(&name),
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
            Some(Value::Object(s)) if s.contains_key("command") => ServerSpec::Command(
                s["command"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
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
        let strings = |key: &str| -> Vec<String> {
            obj.get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
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
                ignore: e
                    .get("ignore")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
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
            ignore: strings("ignore"),
            matches,
            extra,
            source: Some(v.clone()),
        })
    }
}

/// A file that could not be used: which file, where in it, what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    pub path: PathBuf,
    /// The JSON pointer of the bad value (`""` is the whole document).
    pub pointer: Option<String>,
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.pointer {
            Some(p) if p.is_empty() => write!(f, "{}: {}", self.path.display(), self.message),
            Some(p) => write!(f, "{}: at {p}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for LoadError {}

/// Escapes one reference token of a JSON pointer (RFC 6901).
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn compile(schema_text: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(schema_text).expect("the published schema is JSON");
    jsonschema::validator_for(&schema).expect("the published schema compiles")
}

fn cassette_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| compile(CASSETTE_SCHEMA))
}

/// Reads a JSON file, within the input limit, and checks it against
/// `validator`: a file that is not there, not UTF-8, not JSON (with line
/// and column: a truncated or hand-mangled file) or not of the schema
/// (with the JSON pointer of the first bad value) is a [`LoadError`].
/// Most bytes of a cassette or answer-rules file: refused by its size,
/// before it is read.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Most JSON values in a cassette or answer-rules file, counted over its
/// bytes before parsing: with [`MAX_FILE_BYTES`], reading one takes tens of
/// MiB at most, whatever its shape.
pub const MAX_FILE_VALUES: usize = 100_000;

pub fn read_checked(path: &Path, validator: &jsonschema::Validator) -> Result<Value, LoadError> {
    let fail = |pointer: Option<String>, message: String| LoadError {
        path: path.to_path_buf(),
        pointer,
        message,
    };
    let text =
        crate::elicitation::answers::read_regular_file(&path.to_string_lossy(), MAX_FILE_BYTES)
            .map_err(|e| fail(None, format!("cannot read it: {e}")))?;
    if text.trim().is_empty() {
        return Err(fail(None, "the file is empty".into()));
    }
    let value = crate::elicitation::input::parse_json_within(&text, MAX_FILE_VALUES)
        .map_err(|e| fail(None, e.to_string()))?;
    let errors: Vec<jsonschema::ValidationError<'_>> = validator.iter_errors(&value).collect();
    if let Some(first) = errors
        .iter()
        .max_by_key(|e| e.instance_path().as_str().len())
    {
        // The deepest error is the most precise one (a `oneOf` reports at
        // its own level and again under each branch).
        let pointer = first.instance_path().as_str().to_string();
        let mut message =
            misspelt_answer(&value, &pointer).unwrap_or_else(|| describe_schema_error(first));
        if errors.len() > 1 {
            message.push_str(&format!(
                " (and {} more problem{})",
                errors.len() - 1,
                if errors.len() == 2 { "" } else { "s" }
            ));
        }
        return Err(fail(Some(pointer), message));
    }
    Ok(value)
}

/// An answer (`…/answer`) that is none of the words a cassette takes,
/// said as such: the key, the value and the nearest word, rather than the
/// schema's `oneOf` in general.
fn misspelt_answer(doc: &Value, pointer: &str) -> Option<String> {
    if !pointer.ends_with("/answer") {
        return None;
    }
    let word = doc.pointer(pointer)?.as_str()?;
    if word.contains('=') {
        return None;
    }
    const WORDS: [&str; 3] = ["accept", "decline", "cancel"];
    let nearest = WORDS
        .iter()
        .min_by_key(|w| strsim::levenshtein(w, &word.trim().to_ascii_lowercase()))
        .copied()
        .unwrap_or("accept");
    Some(format!(
        "answer {:?} is not one of accept, decline, cancel (nearest: {nearest}) nor a NAME=VALUE answer",
        crate::text::sanitize::sanitize_line(word)
    ))
}

fn describe_schema_error(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match e.kind() {
        K::Required { property } => format!("missing the required key {property}"),
        K::Constant { expected_value } => format!("must be {expected_value}"),
        _ => crate::text::sanitize::sanitize_line(&e.to_string()),
    }
}

/// Checks, before a session starts, that a cassette can be written at
/// `path` (its folder exists and is a folder), so that a typo does not
/// cost a whole answered session.
pub fn check_writable(path: &Path) -> Result<(), ElicitError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(ElicitError::Usage(format!(
            "--record {}: that is a folder; give a file name",
            path.display()
        )));
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        _ => Err(ElicitError::Usage(format!(
            "--record {}: the folder {} does not exist",
            path.display(),
            dir.display()
        ))),
    }
}

/// A private temporary folder (see [`crate::platform::fs::private_temp_dir`]).
pub fn private_temp_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    crate::platform::fs::private_temp_dir(prefix)
}

/// Writes `bytes` to `path` through a temporary file in the same folder
/// (created 0600 under an unguessable name by `tempfile`, never through a
/// planted file) and a rename. A file replaced keeps its mode; a new one
/// stays 0600 (git does not keep modes but the executable bit).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ElicitError> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cassette".into());
    let result = (|| {
        let mut f = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&dir)?;
        f.write_all(bytes)?;
        f.as_file().sync_all()?;
        if let Ok(mode) = std::fs::metadata(path).map(|m| m.permissions()) {
            f.as_file().set_permissions(mode)?;
        }
        f.persist(path).map(drop).map_err(|e| e.error)
    })();
    result.map_err(|e| ElicitError::io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Cassette {
        Cassette {
            server: ServerSpec::Command(vec!["python".into(), "server.py".into()]),
            protocol: "2025-11-25".into(),
            tool: "ask".into(),
            arguments: Map::new(),
            elicitations: vec![Exchange {
                key: None,
                request: json!({"mode":"form","message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}),
                answer: AnswerSpec::Result(json!({"action":"accept","content":{"name":"Ada"}})),
                ignore: vec![],
            }],
            result: Some(json!({"content":[{"type":"text","text":"hi"}]})),
            ignore: vec!["/content/0/text".into()],
            matches: vec![],
            extra: Map::new(),
            source: None,
        }
    }

    #[test]
    fn a_cassette_round_trips_with_keys_in_order_and_passes_its_schema() {
        let c = sample();
        let v = c.to_value();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "elicit",
                "server",
                "protocol",
                "tool",
                "arguments",
                "elicitations",
                "result",
                "ignore"
            ]
        );
        assert!(cassette_validator().is_valid(&v));
        let mut back = Cassette::from_value(&v).unwrap();
        assert_eq!(back.source.take(), Some(v));
        assert_eq!(back, c);
    }

    /// `--update` writes into the file as it was: a person's keys, their
    /// order and a hand-written answer stay; the request, the recorded
    /// result and the protocol are the new ones.
    #[test]
    fn an_update_keeps_every_key_a_person_wrote() {
        let text = r#"{"x-owner": "payments team", "elicit": "cassette/1",
            "server": {"command": ["srv"]}, "protocol": "2025-11-25", "tool": "t",
            "arguments": {}, "ignore": ["/content/0/text"],
            "elicitations": [
              {"name": "login", "request": {"message": "old"}, "answer": "name=Ada",
               "ignore": ["/url"], "x-note": "keep me"},
              {"request": {"message": "two"}, "answer": {"action": "decline"}}
            ],
            "result": {"content": []}}"#;
        let source: Value = serde_json::from_str(text).unwrap();
        let mut c = Cassette::from_value(&source).unwrap();
        c.elicitations[0].request = json!({"message": "new"});
        c.elicitations[0].answer =
            AnswerSpec::Result(json!({"action": "accept", "content": {"name": "Ada"}}));
        c.elicitations[1].request = json!({"message": "two, changed"});
        c.elicitations[1].answer = AnswerSpec::Result(json!({"action": "cancel"}));
        c.result = Some(json!({"content": [{"type": "text", "text": "new"}]}));
        c.protocol = "2026-07-28".into();
        let v = c.to_value();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "x-owner",
                "elicit",
                "server",
                "protocol",
                "tool",
                "arguments",
                "ignore",
                "elicitations",
                "result"
            ]
        );
        assert_eq!(v["protocol"], "2026-07-28");
        assert_eq!(v["ignore"], json!(["/content/0/text"]));
        let first = &v["elicitations"][0];
        assert_eq!(first["name"], "login");
        assert_eq!(first["ignore"], json!(["/url"]));
        assert_eq!(first["x-note"], "keep me");
        assert_eq!(first["answer"], "name=Ada", "a hand-written answer stays");
        assert_eq!(first["request"], json!({"message": "new"}));
        let second = &v["elicitations"][1];
        assert_eq!(
            second["answer"],
            json!({"action": "cancel"}),
            "a recorded result is replaced"
        );
        assert_eq!(v["result"]["content"][0]["text"], "new");
    }

    #[test]
    fn schema_errors_name_the_pointer() {
        let dir = std::env::temp_dir().join(format!("elicit-cassette-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("bad.cassette.json");
        let mut v = sample().to_value();
        v["elicitations"][0]["answer"] = json!({"action": "maybe"});
        std::fs::write(&p, v.to_string()).unwrap();
        let e = Cassette::load(&p).unwrap_err();
        assert_eq!(e.pointer.as_deref(), Some("/elicitations/0/answer"), "{e}");
        v["elicitations"][0]["answer"] = json!("accept");
        v["elicit"] = json!("cassette/9");
        std::fs::write(&p, v.to_string()).unwrap();
        let e = Cassette::load(&p).unwrap_err();
        assert_eq!(e.pointer.as_deref(), Some("/elicit"), "{e}");
        assert!(e.to_string().contains("must be \"cassette/1\""), "{e}");
        std::fs::write(&p, &v.to_string()[..40]).unwrap();
        let e = Cassette::load(&p).unwrap_err().to_string();
        assert!(e.contains("invalid JSON at line 1, column"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hand_written_answers_become_scripted_answers() {
        let words = values_as_words(
            json!({"name": "Ada", "age": "7", "tags": ["a"]})
                .as_object()
                .unwrap(),
        );
        assert_eq!(words[..3], ["accept", "name=Ada", "age=7"]);
        assert_eq!(words[3], r#"{"action":"accept","content":{"tags":["a"]}}"#);
        let s = AnswerSpec::Words(vec!["name=Ada".into()])
            .scripted()
            .unwrap();
        assert_eq!(
            s.decision(),
            Some(crate::elicitation::protocol::Action::Accept)
        );
    }

    #[test]
    fn secret_query_parameters_are_left_out_and_filled_back() {
        let (url, left_out) = redact_url(
            "https://u:p@example.com/mcp?api_key=k1&region=eu&X-Amz-Signature=s2&sessionId=s3&q=1&token=",
        );
        assert_eq!(
            url,
            "https://example.com/mcp?api_key=${ELICIT_SECRET_API_KEY}&region=eu&X-Amz-Signature=${ELICIT_SECRET_X_AMZ_SIGNATURE}&sessionId=${ELICIT_SECRET_SESSIONID}&q=1&token="
        );
        assert_eq!(left_out.len(), 3);
        assert_eq!(
            without_credentials(&url),
            url,
            "a placeholder stays as it is"
        );
        for name in [
            "apiKey",
            "access_token",
            "client_secret",
            "code",
            "AUTH",
            "pwd",
        ] {
            assert!(secret_query_name(name), "{name}");
        }
        for name in ["region", "q", "keyboard", "monkey", "page"] {
            assert!(!secret_query_name(name), "{name}");
        }
        std::env::set_var("ELICIT_SECRET_UNIT_TEST_KEY", "k&1");
        assert_eq!(
            fill_secret_references("https://h/?a=${ELICIT_SECRET_UNIT_TEST_KEY}&b=2").unwrap(),
            "https://h/?a=k&1&b=2"
        );
        assert_eq!(
            fill_secret_references("https://h/?a=${ELICIT_SECRET_UNIT_TEST_UNSET}").unwrap_err(),
            "ELICIT_SECRET_UNIT_TEST_UNSET"
        );
    }

    #[test]
    fn a_masked_fields_value_is_not_recorded() {
        let request = json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}, "password": {"type": "string"},
                "api_token_kind": {"type": "string", "enum": ["a", "b"]}}}});
        let mut result = crate::elicitation::protocol::ElicitResult::new(
            crate::elicitation::protocol::Action::Accept,
        );
        result.content = json!({"name": "Ada", "password": "hunter2", "api_token_kind": "a"})
            .as_object()
            .cloned();
        let e = Exchange::recorded(None, &request, &result);
        let v = e.answer.to_value();
        assert_eq!(v["content"]["name"], "Ada");
        assert_eq!(
            v["content"]["password"],
            json!({"$env": "ELICIT_SECRET_PASSWORD"})
        );
        assert_eq!(
            v["content"]["api_token_kind"], "a",
            "a choice is not masked"
        );
        assert!(!v.to_string().contains("hunter2"));
    }

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            without_credentials("https://u:secret@example.com/mcp"),
            "https://example.com/mcp"
        );
        assert_eq!(
            without_credentials("http://127.0.0.1:8/mcp"),
            "http://127.0.0.1:8/mcp"
        );
    }
}
