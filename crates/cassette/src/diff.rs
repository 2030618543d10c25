//! What changed between a recorded elicitation or result and the one a
//! replay saw, in words a server author reads like a snapshot tool's diff:
//! fields added, removed, retyped or re-bounded, a message changed; for a
//! result, each JSON pointer whose value differs.

use serde_json::{Map, Value};

use super::escape_pointer_token;
use elicit_core::text::sanitize::sanitize_line;

/// At most this many characters of a value are shown in a diff line.
const SHOWN: usize = 120;

/// A JSON value for a diff line: compact, sanitised, cut short.
pub fn show(v: &Value) -> String {
    let text = sanitize_line(&v.to_string());
    if text.chars().count() > SHOWN {
        let cut: String = text.chars().take(SHOWN).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// One difference between two JSON documents.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
    Added {
        pointer: String,
        new: Value,
    },
    Removed {
        pointer: String,
        old: Value,
    },
    Changed {
        pointer: String,
        old: Value,
        new: Value,
    },
}

impl Change {
    /// The change in lines: one, or one per difference inside a string
    /// that holds JSON.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Change::Changed {
                pointer,
                old: Value::String(a),
                new: Value::String(b),
            } => changed_text(pointer, a, b),
            _ => vec![self.line()],
        }
    }

    /// `- /a: 1` / `+ /a: 2` / `~ /a: 1 → 2` (a string that differs far
    /// from its start: around its first difference).
    pub fn line(&self) -> String {
        match self {
            Change::Added { pointer, new } => format!("+ {}: {}", at(pointer), show(new)),
            Change::Removed { pointer, old } => format!("- {}: {}", at(pointer), show(old)),
            Change::Changed {
                pointer,
                old: Value::String(a),
                new: Value::String(b),
            } => changed_string(pointer, a, b),
            Change::Changed { pointer, old, new } => {
                format!("~ {}: {} → {}", at(pointer), show(old), show(new))
            }
        }
    }
}

/// Characters of context shown on each side of a string's first
/// difference.
const AROUND: usize = 40;

/// Two strings that differ: JSON inside them (a tool's text result often
/// is) is compared by its own pointers; other text is shown around its
/// first difference, where a diff cut at the start would show two equal
/// beginnings.
fn changed_text(pointer: &str, a: &str, b: &str) -> Vec<String> {
    let parse = |t: &str| {
        serde_json::from_str::<Value>(t)
            .ok()
            .filter(|v| v.is_object() || v.is_array())
    };
    if let (Some(va), Some(vb)) = (parse(a), parse(b)) {
        let inner: Vec<String> = json_diff(&va, &vb)
            .iter()
            .map(|c| {
                let line = c.line();
                // "~ /x: …" → "~ POINTER (JSON) /x: …"
                let (mark, rest) = line.split_at(2);
                format!("{mark}{} (JSON text) {rest}", at(pointer))
            })
            .collect();
        if !inner.is_empty() {
            return inner;
        }
    }
    vec![changed_string(pointer, a, b)]
}

/// Two plain strings that differ, on one line.
fn changed_string(pointer: &str, a: &str, b: &str) -> String {
    let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let first = ca.iter().zip(&cb).take_while(|(x, y)| x == y).count();
    if ca.len() <= SHOWN && cb.len() <= SHOWN || first < AROUND {
        return format!(
            "~ {}: {} → {}",
            at(pointer),
            show(&Value::String(a.into())),
            show(&Value::String(b.into()))
        );
    }
    let window = |c: &[char]| {
        let from = first.saturating_sub(AROUND);
        let to = (first + AROUND).min(c.len());
        let text: String = c[from..to].iter().collect();
        let tail = if to < c.len() { "…" } else { "" };
        format!("…{}{tail}", sanitize_line(&text))
    };
    format!(
        "~ {} (from character {}): {:?} → {:?}",
        at(pointer),
        first + 1,
        window(&ca),
        window(&cb)
    )
}

fn at(pointer: &str) -> String {
    if pointer.is_empty() {
        "(the whole value)".into()
    } else {
        sanitize_line(pointer)
    }
}

/// Every difference between `old` and `new`, by JSON pointer. Object keys
/// are compared by name (their order is ignored), arrays item by item.
pub(crate) fn json_diff(old: &Value, new: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk(String::new(), old, new, &mut out);
    out
}

fn walk(pointer: String, old: &Value, new: &Value, out: &mut Vec<Change>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{pointer}/{}", escape_pointer_token(k));
                match b.get(k) {
                    Some(vb) => walk(p, va, vb, out),
                    None => out.push(Change::Removed {
                        pointer: p,
                        old: va.clone(),
                    }),
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    out.push(Change::Added {
                        pointer: format!("{pointer}/{}", escape_pointer_token(k)),
                        new: vb.clone(),
                    });
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, va) in a.iter().enumerate() {
                let p = format!("{pointer}/{i}");
                match b.get(i) {
                    Some(vb) => walk(p, va, vb, out),
                    None => out.push(Change::Removed {
                        pointer: p,
                        old: va.clone(),
                    }),
                }
            }
            for (i, vb) in b.iter().enumerate().skip(a.len()) {
                out.push(Change::Added {
                    pointer: format!("{pointer}/{i}"),
                    new: vb.clone(),
                });
            }
        }
        _ if old == new => {}
        _ => out.push(Change::Changed {
            pointer,
            old: old.clone(),
            new: new.clone(),
        }),
    }
}

/// Removes the value at `pointer` (an object member, or an array item,
/// which becomes `null` so later indexes keep their meaning). A pointer
/// that names nothing is left alone.
pub(crate) fn remove_at(doc: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.shift_remove(&last);
        }
        Some(Value::Array(a)) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *slot = Value::Null;
            }
        }
        _ => {}
    }
}

/// Where a task's result names its task: a fresh id on every run, the
/// protocol's bookkeeping rather than what the tool returned.
const RELATED_TASK_POINTER: &str = "/_meta/io.modelcontextprotocol~1related-task";

/// The result comparison of a replay: `ignore` pointers are left out,
/// `match` pointers must hold a value matching their regex (then are left
/// out too), everything else must be equal. Returns the lines of the diff
/// (empty when the results agree).
pub(crate) fn result_diff(
    recorded: &Value,
    actual: &Value,
    ignore: &[String],
    matches: &[(String, String)],
) -> Vec<String> {
    let mut lines = Vec::new();
    let mut old = recorded.clone();
    let mut new = actual.clone();
    for (pointer, re) in matches {
        let text = match actual.pointer(pointer) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
            None => None,
        };
        match (text, regex::Regex::new(re)) {
            (Some(t), Ok(re)) if re.is_match(&t) => {}
            (Some(t), _) => lines.push(format!(
                "~ {}: {} does not match /{}/",
                at(pointer),
                show(&Value::String(t)),
                sanitize_line(re)
            )),
            (None, _) => lines.push(format!(
                "- {}: missing (it must match /{}/)",
                at(pointer),
                sanitize_line(re)
            )),
        }
        remove_at(&mut old, pointer);
        remove_at(&mut new, pointer);
    }
    for pointer in ignore
        .iter()
        .map(String::as_str)
        .chain([RELATED_TASK_POINTER])
    {
        remove_at(&mut old, pointer);
        remove_at(&mut new, pointer);
    }
    for v in [&mut old, &mut new] {
        if let Some(o) = v.as_object_mut() {
            if o.get("_meta")
                .and_then(Value::as_object)
                .is_some_and(|m| m.is_empty())
            {
                o.shift_remove("_meta");
            }
        }
    }
    lines.extend(json_diff(&old, &new).iter().flat_map(Change::lines));
    lines
}

/// An elicitation's params as they are compared: `required` as a set (its
/// order means nothing), the volatile members (`elicitationId`, `_meta`)
/// and the cassette's own `ignore` pointers left out.
pub(crate) fn comparable_request(request: &Value, ignore: &[String]) -> Value {
    let mut v = request.clone();
    if let Some(o) = v.as_object_mut() {
        let id = o
            .get("elicitationId")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(Value::String(url)) = o.get_mut("url") {
            *url = comparable_url(url, id.as_deref());
        }
        o.shift_remove("elicitationId");
        o.shift_remove("_meta");
        if o.get("mode").and_then(Value::as_str) == Some("") {
            o.insert("mode".into(), "form".into());
        }
        if !o.contains_key("mode") {
            o.insert("mode".into(), "form".into());
        }
    }
    if let Some(Value::Array(req)) = v.pointer_mut("/requestedSchema/required") {
        req.sort_by_key(|x| x.to_string());
    }
    for p in ignore {
        remove_at(&mut v, p);
    }
    v
}

/// A URL as it is compared: the elicitation's own id and any UUID in it
/// are placeholders (`{elicitationId}`, `{uuid}`), since a server makes
/// them afresh for every elicitation; everything else must be equal.
pub(crate) fn comparable_url(url: &str, elicitation_id: Option<&str>) -> String {
    static UUID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let uuid = UUID.get_or_init(|| {
        regex::Regex::new("(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
            .expect("a fixed pattern")
    });
    let url = match elicitation_id.filter(|id| id.len() >= 4) {
        Some(id) => url.replace(id, "{elicitationId}"),
        None => url.to_string(),
    };
    uuid.replace_all(&url, "{uuid}").into_owned()
}

/// Whether a replayed elicitation asks what the recorded one asked.
pub(crate) fn same_request(recorded: &Value, actual: &Value, ignore: &[String]) -> bool {
    comparable_request(recorded, ignore) == comparable_request(actual, ignore)
}

/// What changed between a recorded elicitation and the one the server
/// sent now, one line per change: the message, the mode or URL, each field
/// added, removed (with a hint when it looks renamed), retyped, a bound or
/// other constraint changed, required or not.
pub(crate) fn request_diff(recorded: &Value, actual: &Value, ignore: &[String]) -> Vec<String> {
    let old = comparable_request(recorded, ignore);
    let new = comparable_request(actual, ignore);
    let mut lines = Vec::new();
    let empty = Map::new();
    let o = old.as_object().unwrap_or(&empty);
    let n = new.as_object().unwrap_or(&empty);
    for key in ["mode", "message", "url"] {
        match (o.get(key), n.get(key)) {
            (Some(a), Some(b)) if a != b => {
                lines.push(format!("{key} changed: {} → {}", show(a), show(b)))
            }
            (Some(a), None) => lines.push(format!("{key} removed (was {})", show(a))),
            (None, Some(b)) => lines.push(format!("{key} added: {}", show(b))),
            _ => {}
        }
    }
    let os = o.get("requestedSchema").cloned().unwrap_or(Value::Null);
    let ns = n.get("requestedSchema").cloned().unwrap_or(Value::Null);
    lines.extend(schema_diff(&os, &ns));
    // Anything else in the params, by pointer.
    let mut rest_o = old.clone();
    let mut rest_n = new.clone();
    for key in ["mode", "message", "url", "requestedSchema"] {
        remove_at(&mut rest_o, &format!("/{key}"));
        remove_at(&mut rest_n, &format!("/{key}"));
    }
    lines.extend(json_diff(&rest_o, &rest_n).iter().map(Change::line));
    lines
}

/// The fields of `old`'s form that `new` renamed, when the guess is
/// unambiguous: a field gone from `new` whose schema (but for its title and
/// description) is that of exactly one field new to `new`, and no other
/// gone field claims it. The requests are elicitation params.
pub(crate) fn renamed_fields(old: &Value, new: &Value) -> Vec<(String, String)> {
    let schema = |r: &Value| r.get("requestedSchema").cloned().unwrap_or(Value::Null);
    let (op, np) = (properties(&schema(old)), properties(&schema(new)));
    let removed: Vec<&String> = op.keys().filter(|k| !np.contains_key(*k)).collect();
    let added: Vec<&String> = np.keys().filter(|k| !op.contains_key(*k)).collect();
    let matches = |from: &str| -> Vec<&String> {
        added
            .iter()
            .copied()
            .filter(|to| same_but_title(&op[from], &np[to.as_str()]))
            .collect()
    };
    removed
        .iter()
        .filter_map(|from| match matches(from).as_slice() {
            [to] if removed
                .iter()
                .filter(|other| matches(other).contains(to))
                .count()
                == 1 =>
            {
                Some(((*from).clone(), (*to).clone()))
            }
            _ => None,
        })
        .collect()
}

/// The names of a request's form fields.
pub(crate) fn field_names(request: &Value) -> Vec<String> {
    request
        .get("requestedSchema")
        .map(properties)
        .unwrap_or_default()
        .keys()
        .cloned()
        .collect()
}

fn properties(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn required(schema: &Value) -> Vec<String> {
    super::strings(schema.get("required"))
}

/// A field's kind in a few words: `string`, `integer 0..150`, `enum [a, b]`.
fn kind_of(p: &Value) -> String {
    let t = p.get("type").map(|t| match t {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    sanitize_line(&t.unwrap_or_else(|| "untyped".into()))
}

fn schema_diff(old: &Value, new: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let op = properties(old);
    let np = properties(new);
    let or = required(old);
    let nr = required(new);
    let name = |n: &str| sanitize_line(n);
    let removed: Vec<&String> = op.keys().filter(|k| !np.contains_key(*k)).collect();
    let added: Vec<&String> = np.keys().filter(|k| !op.contains_key(*k)).collect();
    for k in &removed {
        let hint = added
            .iter()
            .find(|a| same_but_title(&op[k.as_str()], &np[a.as_str()]))
            .map(|a| format!(" (renamed to {}?)", name(a)))
            .unwrap_or_default();
        lines.push(format!(
            "field {} removed (was {}{}){hint}",
            name(k),
            kind_of(&op[k.as_str()]),
            if or.contains(k) { ", required" } else { "" }
        ));
    }
    for k in &added {
        lines.push(format!(
            "field {} added ({}{})",
            name(k),
            kind_of(&np[k.as_str()]),
            if nr.contains(k) { ", required" } else { "" }
        ));
    }
    for (k, a) in &op {
        let Some(b) = np.get(k) else { continue };
        let (empty_a, empty_b) = (Map::new(), Map::new());
        let ao = a.as_object().unwrap_or(&empty_a);
        let bo = b.as_object().unwrap_or(&empty_b);
        for (kw, va) in ao {
            match bo.get(kw) {
                Some(vb) if vb != va => lines.push(format!(
                    "field {}: {} changed from {} to {}",
                    name(k),
                    name(kw),
                    show(va),
                    show(vb)
                )),
                None => lines.push(format!(
                    "field {}: {} removed (was {})",
                    name(k),
                    name(kw),
                    show(va)
                )),
                _ => {}
            }
        }
        for (kw, vb) in bo {
            if !ao.contains_key(kw) {
                lines.push(format!(
                    "field {}: {} added ({})",
                    name(k),
                    name(kw),
                    show(vb)
                ));
            }
        }
        match (or.contains(k), nr.contains(k)) {
            (false, true) => lines.push(format!("field {}: now required", name(k))),
            (true, false) => lines.push(format!("field {}: no longer required", name(k))),
            _ => {}
        }
    }
    // The schema's other keywords (title, description, …).
    let mut rest_o = old.clone();
    let mut rest_n = new.clone();
    for key in ["properties", "required"] {
        remove_at(&mut rest_o, &format!("/{key}"));
        remove_at(&mut rest_n, &format!("/{key}"));
    }
    lines.extend(json_diff(&rest_o, &rest_n).iter().map(|c| {
        let mut line = c.line();
        line.insert_str(2, "/requestedSchema");
        line
    }));
    lines
}

/// Two property schemas that differ at most in their title and
/// description: a field that was likely renamed.
fn same_but_title(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.shift_remove("title");
            o.shift_remove("description");
        }
        v
    };
    strip(a) == strip(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(props: Value, required: Value) -> Value {
        json!({"mode":"form","message":"Who?","requestedSchema":{"type":"object","properties":props,"required":required}})
    }

    #[test]
    fn field_order_and_required_order_are_ignored() {
        let a = form(
            json!({"a":{"type":"string"},"b":{"type":"integer"}}),
            json!(["a", "b"]),
        );
        let b = form(
            json!({"b":{"type":"integer"},"a":{"type":"string"}}),
            json!(["b", "a"]),
        );
        assert!(same_request(&a, &b, &[]));
        let mut c = b.clone();
        c["elicitationId"] = json!("x-2");
        assert!(same_request(&a, &c, &[]));
    }

    #[test]
    fn form_changes_are_named_field_by_field() {
        let a = form(
            json!({"name":{"type":"string","title":"Name"},"age":{"type":"integer","maximum":150}}),
            json!(["name"]),
        );
        let b = json!({"mode":"form","message":"Who are you?","requestedSchema":{"type":"object","properties":{
            "fullName":{"type":"string","title":"Full name"},
            "age":{"type":"integer","maximum":120},
            "email":{"type":"string","format":"email"}},"required":["fullName","email"]}});
        let lines = request_diff(&a, &b, &[]);
        assert_eq!(
            lines,
            [
                "message changed: \"Who?\" → \"Who are you?\"",
                "field name removed (was string, required) (renamed to fullName?)",
                "field fullName added (string, required)",
                "field email added (string, required)",
                "field age: maximum changed from 150 to 120",
            ]
        );
        assert!(!same_request(&a, &b, &[]));
    }

    #[test]
    fn a_long_text_is_shown_around_its_first_difference() {
        let pad = "x".repeat(300);
        let a = json!(format!("{pad} owner ada@example.com end"));
        let b = json!(format!("{pad} owner bob@example.com end"));
        let line = json_diff(&a, &b)[0].line();
        assert!(line.contains("(from character 308)"), "{line}");
        assert!(
            line.contains("ada@example.com") && line.contains("bob@example.com"),
            "{line}"
        );
        // JSON inside a string: its own path.
        let a = json!(format!(
            r#"{{"deployment": "{pad}", "owner_email": "ada@example.com"}}"#
        ));
        let b = json!(format!(
            r#"{{"deployment": "{pad}", "owner_email": "bob@example.com"}}"#
        ));
        let lines = json_diff(&json!({"t": a}), &json!({"t": b}))[0].lines();
        assert_eq!(
            lines[0],
            "~ /t (JSON text) /owner_email: \"ada@example.com\" → \"bob@example.com\""
        );
    }

    #[test]
    fn a_url_with_a_fresh_id_or_uuid_compares_equal() {
        let a = json!({"mode": "url", "message": "m", "elicitationId": "el-123",
            "url": "https://x.example/c?e=el-123&s=0b5e0c2c-3f1a-4c4e-9a2b-6d7f8e9a0b1c"});
        let b = json!({"mode": "url", "message": "m", "elicitationId": "el-456",
            "url": "https://x.example/c?e=el-456&s=7c2d1e0f-aaaa-4bbb-8ccc-123456789abc"});
        assert!(same_request(&a, &b, &[]));
        let c = json!({"mode": "url", "message": "m", "elicitationId": "el-456",
            "url": "https://evil.example/c?e=el-456&s=7c2d1e0f-aaaa-4bbb-8ccc-123456789abc"});
        assert!(!same_request(&a, &c, &[]));
    }

    #[test]
    fn a_rename_is_guessed_only_when_unambiguous() {
        let form = |props: Value| json!({"message": "m", "requestedSchema": {"type": "object", "properties": props}});
        let old =
            form(json!({"name": {"type": "string", "title": "Name"}, "age": {"type": "integer"}}));
        let new = form(
            json!({"fullName": {"type": "string", "title": "Full name"}, "age": {"type": "integer"}}),
        );
        assert_eq!(
            renamed_fields(&old, &new),
            [("name".to_string(), "fullName".to_string())]
        );
        // Two strings gone, one string new: which was renamed is a guess.
        let old = form(json!({"a": {"type": "string"}, "b": {"type": "string"}}));
        let new = form(json!({"c": {"type": "string"}}));
        assert!(renamed_fields(&old, &new).is_empty());
        // One string gone, two new: as ambiguous.
        let old = form(json!({"a": {"type": "string"}}));
        let new = form(json!({"b": {"type": "string"}, "c": {"type": "string"}}));
        assert!(renamed_fields(&old, &new).is_empty());
    }

    #[test]
    fn results_honour_ignore_and_match() {
        let old = json!({"content":[{"type":"text","text":"id 1"},{"type":"text","text":"at 10:00"}],"isError":false});
        let new = json!({"content":[{"type":"text","text":"id 2"},{"type":"text","text":"at 11:30"}],"isError":false});
        assert_eq!(
            result_diff(&old, &new, &[], &[]),
            [
                "~ /content/0/text: \"id 1\" → \"id 2\"",
                "~ /content/1/text: \"at 10:00\" → \"at 11:30\""
            ]
        );
        let m = vec![("/content/1/text".to_string(), r"^at \d\d:\d\d$".to_string())];
        assert!(result_diff(&old, &new, &["/content/0/text".into()], &m).is_empty());
        let bad = json!({"content":[{"type":"text","text":"id 2"},{"type":"text","text":"never"}],"isError":true});
        assert_eq!(
            result_diff(&old, &bad, &["/content/0/text".into()], &m),
            [
                "~ /content/1/text: \"never\" does not match /^at \\d\\d:\\d\\d$/",
                "~ /isError: false → true"
            ]
        );
    }

    #[test]
    fn a_task_result_compares_without_its_fresh_task_id() {
        let old = json!({"content": [{"type": "text", "text": "done"}],
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "a1"}}});
        let new = json!({"content": [{"type": "text", "text": "done"}],
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "b2"}}});
        assert!(result_diff(&old, &new, &[], &[]).is_empty());
        let other = json!({"content": [{"type": "text", "text": "done"}],
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "b2"}, "x": 1}});
        assert_eq!(result_diff(&old, &other, &[], &[]), ["+ /_meta: {\"x\":1}"]);
    }
}
