//! Reading and writing cassette and answer-rules files: the size and
//! shape limits, the schema check with a JSON pointer for every error,
//! private atomic writes.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use elicit_core::error::ElicitError;
use elicit_core::text::sanitize::sanitize_line;

/// A file that could not be used: which file, where in it, what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    /// The file.
    pub path: PathBuf,
    /// The JSON pointer of the bad value (`""` is the whole document).
    pub pointer: Option<String>,
    /// What is wrong with it.
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
pub(crate) fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn compile(schema_text: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(schema_text).expect("the published schema is JSON");
    jsonschema::validator_for(&schema).expect("the published schema compiles")
}

/// The published schema every cassette is checked against.
const CASSETTE_SCHEMA: &str = include_str!("../schemas/cassette.schema.json");

pub(crate) fn cassette_validator() -> &'static jsonschema::Validator {
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
pub(crate) const MAX_FILE_VALUES: usize = 100_000;

pub(crate) fn read_checked(
    path: &Path,
    validator: &jsonschema::Validator,
) -> Result<Value, LoadError> {
    let fail = |pointer: Option<String>, message: String| LoadError {
        path: path.to_path_buf(),
        pointer,
        message,
    };
    let text = elicit_platform::fs::read_regular_file(&path.to_string_lossy(), MAX_FILE_BYTES)
        .map_err(|e| fail(None, format!("cannot read it: {e}")))?;
    if text.trim().is_empty() {
        return Err(fail(None, "the file is empty".into()));
    }
    let value = elicit_core::elicitation::input::parse_json_within(&text, MAX_FILE_VALUES)
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
/// schema's `oneOf` in general. The same for an answer object's
/// `action`, a key of an answer rule's `match` and a rule's own keys.
fn misspelt_answer(doc: &Value, pointer: &str) -> Option<String> {
    const ACTIONS: [&str; 3] = ["accept", "decline", "cancel"];
    const MATCH_KEYS: [&str; 6] = ["server", "tool", "mode", "message", "fields", "host"];
    let value = doc.pointer(pointer)?;
    if pointer.ends_with("/answer") {
        if let Some(word) = value.as_str() {
            if word.contains('=') {
                return None;
            }
            return Some(format!(
                "answer {:?} is not one of accept, decline, cancel (nearest: {}) nor a NAME=VALUE answer",
                sanitize_line(word),
                nearest(word, &ACTIONS)
            ));
        }
        let word = value.get("action")?.as_str()?;
        return (!ACTIONS.contains(&word)).then(|| {
            format!(
                "key \"action\": {:?} is not one of accept, decline, cancel (nearest: {})",
                sanitize_line(word),
                nearest(word, &ACTIONS)
            )
        });
    }
    if let Some(unknown) = misspelt_rule_key(value, pointer) {
        return Some(unknown);
    }
    if pointer.ends_with("/match") && pointer.starts_with("/rules/") {
        let unknown = value
            .as_object()?
            .keys()
            .find(|k| !MATCH_KEYS.contains(&k.as_str()))?;
        return Some(format!(
            "key {:?} is not one of {} (nearest: {})",
            sanitize_line(unknown),
            MATCH_KEYS.join(", "),
            nearest(unknown, &MATCH_KEYS)
        ));
    }
    None
}

/// A rule (`/rules/N`) without its `answer` but with a key that is none of
/// a rule's: that key and the nearest of them, rather than "missing the
/// required key answer" (`{"anwser": "accept"}`).
fn misspelt_rule_key(value: &Value, pointer: &str) -> Option<String> {
    const RULE_KEYS: [&str; 2] = ["match", "answer"];
    let index = pointer.strip_prefix("/rules/")?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rule = value.as_object()?;
    if rule.contains_key("answer") {
        return None;
    }
    let unknown = rule.keys().find(|k| !RULE_KEYS.contains(&k.as_str()))?;
    Some(format!(
        "key {:?} is not one of {} (nearest: {})",
        sanitize_line(unknown),
        RULE_KEYS.join(", "),
        nearest(unknown, &RULE_KEYS)
    ))
}

/// The word of `words` nearest to `word` (by edit distance, case aside).
fn nearest<'a>(word: &str, words: &[&'a str]) -> &'a str {
    let word = word.trim().to_ascii_lowercase();
    words
        .iter()
        .min_by_key(|w| strsim::levenshtein(w, &word))
        .copied()
        .unwrap_or(words[0])
}

fn describe_schema_error(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match e.kind() {
        K::Required { property } => format!("missing the required key {property}"),
        K::Constant { expected_value } => format!("must be {expected_value}"),
        _ => sanitize_line(&e.to_string()),
    }
}

/// Checks, before a session starts, that a cassette can be written at
/// `path` (its folder is a folder, or the nearest one that exists is, for
/// the writer to create the rest), so that a typo does not cost a whole
/// answered session.
pub fn check_writable(path: &Path) -> Result<(), ElicitError> {
    if path.is_dir() {
        return Err(ElicitError::Usage(format!(
            "--record {}: that is a folder; give a file name",
            path.display()
        )));
    }
    let mut dir = folder_of(path);
    loop {
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(ElicitError::Usage(format!(
                    "--record {}: {} is not a folder",
                    path.display(),
                    dir.display()
                )))
            }
            Err(_) => match dir.parent() {
                Some(up) if !up.as_os_str().is_empty() => dir = up.to_path_buf(),
                _ => return Ok(()),
            },
        }
    }
}

/// The folder `path` is written in (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder
/// (created 0600 under an unguessable name by `tempfile`, never through a
/// planted file) and a rename; missing folders are created 0700. A file replaced keeps its mode; a new one
/// stays 0600 (git does not keep modes but the executable bit).
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ElicitError> {
    use std::io::Write;
    let dir = folder_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cassette".into());
    let result = (|| {
        // Folders `--record` names that are not there yet are created the
        // user's alone, as the data folder is.
        elicit_platform::fs::create_private_dir(&dir)?;
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

/// The strings of a JSON array (`"ignore"`, `"fields"`, a command line);
/// anything else, or a missing key, is none.
pub(crate) fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
