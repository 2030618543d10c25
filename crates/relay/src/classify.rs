//! Which relayed lines the proxy must look at. Most traffic is none of
//! elicit's business and must pass at pipe speed, so a line is first tested
//! for substrings; but JSON can spell any name with escapes
//! (`"elicitation\/create"`, `"\u0069nitialize"`), and a substring test
//! must never decide what a message means. The rule:
//!
//! - a line without a backslash holds every string exactly as written, so
//!   the substring test is exact as a filter: a message that matters always
//!   contains the names it is tested for;
//! - a line with a backslash is skimmed with serde (the few members that
//!   matter are decoded, everything else skipped without building a tree),
//!   and anything the skim cannot read (duplicate members, odd shapes) is
//!   passed on as "may matter", to the full parse that decides.
//!
//! The exact decisions on a parsed message are [`client_message_matters`]
//! and [`server_message_matters`]; the line tests may say yes more often,
//! never less (the `proxy_classifier` fuzz target checks that).

use std::borrow::Cow;

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use elicit_core::elicitation::protocol::wire::{
    CANCELLED, CAPS_META, ELICITATION_METHOD, INITIALIZE, META_PREFIX, RETRYABLE,
    SERVER_DISCOVER as DISCOVER, TOOLS_LIST, VERSION_META,
};

/// The id prefix of the proxy's own retries.
pub(crate) const RETRY_PREFIX: &str = "elicit-proxy-";

// Substring searchers built once: `memmem::find` would build one (its
// SIMD tables) on every call, once per run of lines and per needle.
static ELICITATION_NEEDLE: LazyLock<Finder> =
    LazyLock::new(|| Finder::new(ELICITATION_METHOD.as_bytes()));
static INPUT_REQUIRED_NEEDLE: LazyLock<Finder> = LazyLock::new(|| Finder::new("input_required"));
static RETRY_NEEDLE: LazyLock<Finder> = LazyLock::new(|| Finder::new(RETRY_PREFIX.as_bytes()));
static METHOD_KEY_NEEDLE: LazyLock<Finder> = LazyLock::new(|| Finder::new("\"method\""));
static META_PREFIX_NEEDLE: LazyLock<Finder> = LazyLock::new(|| Finder::new(META_PREFIX));

fn found(needle: &Finder, hay: &[u8]) -> bool {
    needle.find(hay).is_some()
}

fn has_backslash(bytes: &[u8]) -> bool {
    memchr::memchr(b'\\', bytes).is_some()
}

/// Client methods the proxy tracks besides [`RETRYABLE`]: the handshake's
/// (their replies name the server and its capabilities), tool lists (which
/// tools run only as tasks) and cancellations (of a call whose task elicit
/// runs).
const TRACKED: [&str; 4] = [INITIALIZE, DISCOVER, TOOLS_LIST, CANCELLED];

/// Whether a client method is one the proxy rewrites or tracks.
fn client_method_matters(method: &str, has_2026_meta: bool) -> bool {
    TRACKED.contains(&method) || RETRYABLE.contains(&method) || has_2026_meta
}

/// The exact decision: a client message is an `initialize` or a
/// `server/discover` (their replies name the server), a `tools/list` or a
/// cancellation (see `TRACKED`), carries
/// 2026-07-28 `_meta` (capabilities or version), or is a request that may
/// come back `input_required`.
pub fn client_message_matters(msg: &Value) -> bool {
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return false;
    };
    let meta = msg
        .get("params")
        .and_then(|p| p.get("_meta"))
        .is_some_and(|m| m.get(CAPS_META).is_some() || m.get(VERSION_META).is_some());
    client_method_matters(method, meta)
}

/// The exact decision: a server message is an `elicitation/create`
/// request, an `input_required` result (or a task of the tasks extension
/// waiting for input: `status` `input_required`), or a reply to one of the
/// proxy's retries. (Replies to tracked client requests are caught by the proxy's
/// state, not by the line.)
pub fn server_message_matters(msg: &Value) -> bool {
    msg.get("method").and_then(Value::as_str) == Some(ELICITATION_METHOD)
        || msg
            .get("result")
            .and_then(|r| r.get("resultType"))
            .and_then(Value::as_str)
            == Some("input_required")
        || msg
            .get("result")
            .and_then(|r| r.get("status"))
            .and_then(Value::as_str)
            == Some("input_required")
        || msg
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with(RETRY_PREFIX))
}

#[derive(Deserialize)]
struct ClientSkim<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    params: Option<ParamsSkim>,
}

#[derive(Deserialize)]
struct ParamsSkim {
    #[serde(rename = "_meta")]
    meta: Option<MetaSkim>,
}

/// serde's names must be literals: they are [`CAPS_META`] and
/// [`VERSION_META`] (a test holds them to it).
#[derive(Deserialize)]
struct MetaSkim {
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    caps: Option<IgnoredAny>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ServerSkim<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    id: Option<Value>,
    #[serde(borrow)]
    result: Option<ResultSkim<'a>>,
}

#[derive(Deserialize)]
struct ResultSkim<'a> {
    #[serde(rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
}

fn skip_ws(mut b: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r' | b'\n', rest @ ..] = b {
        b = rest;
    }
    b
}

/// Text without escapes: whether any `"method": "NAME"` in it names a
/// method elicit acts on. A message's method is written exactly so (JSON
/// allows only whitespace around the colon), so this is exact as a filter,
/// and it costs one pass over the text (not one per name).
fn names_a_client_method(text: &[u8]) -> bool {
    METHOD_KEY_NEEDLE.find_iter(text).any(|at| {
        let rest = skip_ws(&text[at + 8..]);
        let Some(rest) = rest.strip_prefix(b":") else {
            return false;
        };
        let Some(value) = skip_ws(rest).strip_prefix(b"\"") else {
            return false;
        };
        let name = &value[..memchr::memchr(b'"', value).unwrap_or(value.len())];
        // Compared as bytes: no UTF-8 check on every message's method.
        TRACKED
            .iter()
            .chain(RETRYABLE.iter())
            .any(|r| name == r.as_bytes())
    })
}

/// Text without escapes: whether it holds one of the 2026 `_meta` keys (a
/// superset: any place, any role), in one pass for both.
fn has_2026_meta_key(text: &[u8]) -> bool {
    const N: usize = META_PREFIX.len();
    META_PREFIX_NEEDLE.find_iter(text).any(|at| {
        let rest = &text[at + N..];
        rest.starts_with(&CAPS_META.as_bytes()[N..])
            || rest.starts_with(&VERSION_META.as_bytes()[N..])
    })
}

/// Text without escapes: the exact substring test for client lines.
fn plain_client_text_matters(text: &[u8]) -> bool {
    names_a_client_method(text) || has_2026_meta_key(text)
}

/// True when one client line may need elicit (see the module doc).
pub fn client_line_matters(line: &[u8]) -> bool {
    if !has_backslash(line) {
        return plain_client_text_matters(line);
    }
    match serde_json::from_slice::<ClientSkim>(line) {
        Ok(skim) => {
            let meta = skim
                .params
                .and_then(|p| p.meta)
                .is_some_and(|m| m.caps.is_some() || m.version.is_some());
            skim.method.is_some_and(|m| client_method_matters(&m, meta))
        }
        // Not a message the skim can read: let the full parse decide.
        Err(_) => true,
    }
}

/// Text without escapes: the exact substring test for server lines.
fn plain_server_text_matters(text: &[u8]) -> bool {
    found(&ELICITATION_NEEDLE, text)
        || found(&INPUT_REQUIRED_NEEDLE, text)
        || found(&RETRY_NEEDLE, text)
}

/// True when one server line may need elicit (see the module doc).
pub fn server_line_matters(line: &[u8]) -> bool {
    if !has_backslash(line) {
        return plain_server_text_matters(line);
    }
    match serde_json::from_slice::<ServerSkim>(line) {
        Ok(skim) => {
            skim.method.as_deref() == Some(ELICITATION_METHOD)
                || skim.result.is_some_and(|r| {
                    r.result_type.is_some_and(|t| t == "input_required")
                        || r.status.is_some_and(|s| s == "input_required")
                })
                || skim
                    .id
                    .as_ref()
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.starts_with(RETRY_PREFIX))
        }
        Err(_) => true,
    }
}

/// True when any line of a run of whole lines may matter: one substring
/// pass over the run when it has no backslash, else line by line.
pub fn chunk_matters(chunk: &[u8], line_matters: fn(&[u8]) -> bool) -> bool {
    if !has_backslash(chunk) {
        return line_matters(chunk);
    }
    chunk.split_inclusive(|b| *b == b'\n').any(line_matters)
}

/// [`chunk_matters`] for client lines, with one pass fewer over the run
/// (the escape-free test is called directly, not through the line test
/// that would look for a backslash again). The relay's per-run test.
pub fn client_chunk_matters(chunk: &[u8]) -> bool {
    if !has_backslash(chunk) {
        return plain_client_text_matters(chunk);
    }
    chunk
        .split_inclusive(|b| *b == b'\n')
        .any(client_line_matters)
}

/// [`chunk_matters`] for server lines, with one pass fewer (as
/// [`client_chunk_matters`]).
pub fn server_chunk_matters(chunk: &[u8]) -> bool {
    if !has_backslash(chunk) {
        return plain_server_text_matters(chunk);
    }
    chunk
        .split_inclusive(|b| *b == b'\n')
        .any(server_line_matters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skim_reads_the_wire_meta_keys() {
        let meta = serde_json::json!({CAPS_META: {}, VERSION_META: "v"});
        let skim: MetaSkim = serde_json::from_value(meta).unwrap();
        assert!(skim.caps.is_some() && skim.version.is_some());
    }

    #[test]
    fn escaped_names_are_caught() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"elicitation\/create","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"\u0065licitation/create","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input\u005frequired"}}"#,
            r#"{"jsonrpc":"2.0","id":"elicit\u002dproxy-3","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","method":"elicitation/create","s":"\n"}"#,
        ] {
            assert!(server_line_matters(line.as_bytes()), "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"\u0069nitialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}"#,
        ] {
            assert!(client_line_matters(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn method_names_are_read_where_the_method_is() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method" :	"tools/call","params":{}}"#,
            r#"{"id":1,"params":{"x":"method"},"method": "server/discover"}"#,
            r#"{"method":"x","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ] {
            assert!(client_line_matters(line.as_bytes()), "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"tools/call initialize"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"echo","params":{"method":"nope","m":"io.modelcontextprotocol/other"}}"#,
        ] {
            assert!(!client_line_matters(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn the_relay_run_tests_agree_with_the_generic_one() {
        let lines: [&[u8]; 8] = [
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"elicitation\/create","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{"text":"a
b"}}"#,
            br#"{"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1"}}}"#,
        ];
        // Every run of up to three of the lines, in order.
        for a in 0..lines.len() {
            for b in a..lines.len().min(a + 3) {
                let run: Vec<u8> = lines[a..=b]
                    .iter()
                    .flat_map(|l| l.iter().copied().chain([b'\n']))
                    .collect();
                assert_eq!(
                    client_chunk_matters(&run),
                    chunk_matters(&run, client_line_matters),
                    "{}",
                    String::from_utf8_lossy(&run)
                );
                assert_eq!(
                    server_chunk_matters(&run),
                    chunk_matters(&run, server_line_matters),
                    "{}",
                    String::from_utf8_lossy(&run)
                );
            }
        }
    }

    #[test]
    fn ordinary_escaped_traffic_is_not_claimed() {
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\nb \"q\" \u00e9"}]}}"#;
        assert!(!server_line_matters(line));
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"echo","params":{"s":"x\u00e9\/"}}"#;
        assert!(!client_line_matters(line));
        let chunk = [line.as_slice(), b"\n", line.as_slice(), b"\n"].concat();
        assert!(!chunk_matters(&chunk, client_line_matters));
    }
}
