//! One function per fuzz target. Each takes the raw fuzz input, never
//! panics on its own, and asserts the target's invariants: a panic here is a
//! bug in elicit (or a broken invariant), never in the harness.
//!
//! Used by `fuzz/fuzz_targets/*.rs` and, through `#[path]`, by
//! `tests/fuzz_regressions.rs`; depends only on `elicit` and `serde_json`.

use elicit::elicitation::answers::FormPlan;
use elicit::elicitation::input;
use elicit::elicitation::resolve::{NoTerminal, SchemaCache};
use elicit::text::sanitize::{sanitize_block, sanitize_line};
use elicit::text::url_safety::assess_url;
use elicit::{Action, FormSchema, ScriptedAnswers};
use serde_json::Value;

/// Input detection and parsing: bytes -> `input::decode` ->
/// `input::read_document`, then the whole pipeline with `accept` (nobody to
/// ask: `NoTerminal`); whatever is printed must be JSON.
pub fn input(data: &[u8]) {
    let Ok(text) = input::decode(data) else {
        return;
    };
    let Ok(doc) = input::read_document(text) else {
        return;
    };
    let scripted = ScriptedAnswers::parse(["accept"], |_| Err(std::io::ErrorKind::NotFound.into()))
        .expect("`accept` parses");
    let mut person = NoTerminal {
        detail: "fuzz".into(),
    };
    let mut cache = SchemaCache::default();
    if let Ok(resolved) =
        elicit::elicitation::resolve_document(doc, &scripted, &mut person, &mut cache, false)
    {
        if let Err(e) = serde_json::from_str::<Value>(&resolved.output) {
            panic!("output is not JSON ({e}): {}", resolved.output);
        }
    }
}

/// The schema model: `SCHEMA\n---\nCONTENT` (or only a schema). Parse, then
/// hint/default/coerce every field, validate, order, normalise. A usable
/// default passes its own check; `order` keeps every key and does not change
/// validity.
pub fn schema(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (schema_text, content_text) = text.split_once("\n---\n").unwrap_or((text, "{}"));
    let Ok(schema) = serde_json::from_str::<Value>(schema_text) else {
        return;
    };
    let Ok(form) = FormSchema::parse(&schema) else {
        return;
    };
    for f in &form.fields {
        let _ = f.hint();
        let _ = f.label();
        if let Some(d) = f.usable_default() {
            assert!(
                f.check(&d).is_ok(),
                "usable_default of {} fails its own check",
                f.name
            );
        }
        if let Ok(v) = f.coerce(content_text) {
            let _ = f.check(&v);
        }
    }
    let content = match serde_json::from_str::<Value>(content_text) {
        Ok(Value::Object(m)) => m,
        _ => return,
    };
    let before = form.validate(&content).is_ok();
    let ordered = form.order(content.clone());
    assert_eq!(ordered.len(), content.len(), "order lost keys");
    assert_eq!(
        form.validate(&ordered).is_ok(),
        before,
        "order changed validity"
    );
    for (k, v) in &content {
        if let Some(f) = form.field(k) {
            let _ = f.check(&f.normalize(v.clone()));
        }
    }
}

/// Answer coercion: a `requestedSchema` line, then one `--answer` per line
/// (`@FILE` reads the last line). `ScriptedAnswers::parse`, then `plan_form`
/// strict and not. An accepted plan satisfies `validate` (strict) and keeps
/// content keys in schema order.
pub fn answers(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let schema_line = lines.next().unwrap_or_default();
    let args: Vec<&str> = lines.collect();
    let Ok(schema) = serde_json::from_str::<Value>(schema_line) else {
        return;
    };
    let Ok(form) = FormSchema::parse(&schema) else {
        return;
    };
    let file = args.last().copied().unwrap_or_default().to_string();
    let Ok(answers) = ScriptedAnswers::parse(&args, |_| Ok(file.clone())) else {
        return;
    };
    let _ = answers.plan_url();
    for strict in [true, false] {
        if let Ok(FormPlan::Decided(Action::Accept, content)) = answers.plan_form(&form, strict) {
            if strict {
                if let Err(e) = form.validate(&content) {
                    panic!("plan_form accepted content that validate rejects: {e:?}");
                }
            }
            let mut last = None;
            for k in content.keys() {
                if let Some(i) = form.fields.iter().position(|f| &f.name == k) {
                    assert!(last.is_none_or(|l| l < i), "content not in schema order");
                    last = Some(i);
                }
            }
        }
    }
}

fn forbidden(c: char, block: bool) -> bool {
    match c {
        '\n' => !block,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            true
        }
        _ => false,
    }
}

/// The text sanitiser: no ESC, other C0, DEL or C1 control (block mode keeps
/// `\n`), no bidi control in the output.
pub fn sanitize(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for block in [false, true] {
        let out = if block {
            sanitize_block(&text)
        } else {
            sanitize_line(&text)
        };
        if let Some(c) = out.chars().find(|&c| forbidden(c, block)) {
            panic!(
                "sanitize_{} let U+{:04X} through: {text:?} -> {out:?}",
                if block { "block" } else { "line" },
                c as u32
            );
        }
    }
}

/// The URL checks: `openable` is exactly "no blocking warning" (the
/// documented invariant) and implies an http/https scheme, a host, an ASCII
/// http(s) normalised URL and no control or space in the raw string; the
/// display string holds no control character.
pub fn url(data: &[u8]) {
    let raw = String::from_utf8_lossy(data);
    let a = assess_url(&raw);
    assert_eq!(
        a.openable,
        !a.warnings.iter().any(|w| w.is_blocking()),
        "openable invariant broken for {raw:?}: {a:?}"
    );
    if a.openable {
        let scheme = a.scheme.as_deref().unwrap_or_default();
        assert!(
            scheme == "http" || scheme == "https",
            "openable with scheme {scheme:?}: {raw:?}"
        );
        assert!(a.host_ascii.is_some(), "openable without a host: {raw:?}");
        let n = a
            .normalized
            .as_deref()
            .expect("openable implies normalized");
        assert!(
            n.starts_with("http://") || n.starts_with("https://"),
            "openable but normalized is {n:?}"
        );
        assert!(n.is_ascii(), "normalized URL is not ASCII: {n:?}");
        assert!(
            !raw.chars().any(|c| c.is_control() || c.is_whitespace()),
            "openable URL holds control/space: {raw:?}"
        );
    }
    assert!(
        !a.display.chars().any(char::is_control),
        "display holds a control char: {:?}",
        a.display
    );
}

/// The proxy's line classifier (`elicit::mcp::relay::classify`): it may
/// claim more lines than matter, never fewer. For every line that parses as
/// JSON and matters by the exact decision on the parsed message, the line
/// test must say so; and a run of lines the run test passes over must hold
/// no line that matters.
pub fn proxy_classifier(data: &[u8]) {
    use elicit::mcp::relay::classify::{
        chunk_matters, client_chunk_matters, client_line_matters, client_message_matters,
        server_chunk_matters, server_line_matters, server_message_matters,
    };
    let lines: Vec<&[u8]> = data.split_inclusive(|b| *b == b'\n').collect();
    for line in &lines {
        if let Ok(v) = serde_json::from_slice::<Value>(line) {
            if client_message_matters(&v) {
                assert!(client_line_matters(line), "client line missed: {v}");
            }
            if server_message_matters(&v) {
                assert!(server_line_matters(line), "server line missed: {v}");
            }
        }
    }
    let whole = match memchr_last_newline(data) {
        Some(end) => &data[..=end],
        None => return,
    };
    // The relay's own run tests are the generic one, one pass fewer.
    assert_eq!(
        client_chunk_matters(whole),
        chunk_matters(whole, client_line_matters)
    );
    assert_eq!(
        server_chunk_matters(whole),
        chunk_matters(whole, server_line_matters)
    );
    let check = |line_matters: fn(&[u8]) -> bool| {
        if !chunk_matters(whole, line_matters) {
            for line in whole.split_inclusive(|b| *b == b'\n') {
                assert!(
                    !line_matters(line),
                    "a run of lines was passed over with a line that matters: {:?}",
                    String::from_utf8_lossy(line)
                );
            }
        }
    };
    check(client_line_matters);
    check(server_line_matters);
}

fn memchr_last_newline(data: &[u8]) -> Option<usize> {
    data.iter().rposition(|b| *b == b'\n')
}

/// Claude Code's `Elicitation` hook input (what `elicit hook claude-code`
/// reads on stdin): any JSON object, marked as that event, through the
/// same pipeline as `input` (its shape detection reads the hook's own
/// snake_case names).
pub fn hook(data: &[u8]) {
    let Ok(text) = input::decode(data) else {
        return;
    };
    let Ok(Value::Object(mut event)) = input::parse_json(text) else {
        return;
    };
    event.insert("hook_event_name".into(), "Elicitation".into());
    input(Value::Object(event).to_string().as_bytes());
}

/// `data` in a file of this thread's own (the readers take a path: the
/// bounded read of the file is part of what is fuzzed).
fn scratch_file(name: &str, data: &[u8]) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "elicit-fuzz-{}-{:?}-{name}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, data).expect("write the fuzz input to a file");
    path
}

/// The cassette reader (`Cassette::load`: the bounded read, the schema,
/// the values the schema cannot check); a cassette it accepts, written
/// back, reads back the same.
pub fn cassette(data: &[u8]) {
    use elicit::cassette::Cassette;
    let path = scratch_file("cassette.json", data);
    let loaded = Cassette::load(&path);
    if let Ok(c) = loaded {
        c.write(&path)
            .expect("a loaded cassette can be written back");
        let mut again = Cassette::load(&path).expect("a cassette written back loads again");
        // The text as read is kept to be patched on write, and a write fills
        // in what the reader defaulted (`"elicitations": []`): compare what
        // was read, not the text.
        let mut c = c;
        c.source = None;
        again.source = None;
        assert_eq!(again, c, "a cassette written back reads back different");
    }
    let _ = std::fs::remove_file(&path);
}

/// The answers-file reader (`--answers FILE`: `AnswerRules::load`, an
/// answer file or a cassette read as one).
pub fn answers_file(data: &[u8]) {
    use elicit::answers::AnswerRules;
    let path = scratch_file("answers.json", data);
    let _ = AnswerRules::load(&path);
    let _ = std::fs::remove_file(&path);
}

/// The SSE reader: the events of a stream do not depend on how its bytes
/// arrive (all at once, or one byte a read), and none is larger than the
/// bound.
pub fn sse(data: &[u8]) {
    use elicit::transport::http::sse_reader::{SseReader, MAX_EVENT_BYTES};
    let events = |r: Box<dyn std::io::BufRead + '_>| -> Vec<Result<_, std::io::ErrorKind>> {
        SseReader::new(r).map(|e| e.map_err(|e| e.kind())).collect()
    };
    let whole = events(Box::new(data));
    let bytewise = events(Box::new(std::io::BufReader::with_capacity(1, data)));
    assert_eq!(
        whole, bytewise,
        "the events depend on how the stream was read"
    );
    for event in whole.iter().flatten() {
        assert!(
            event.data.len() <= MAX_EVENT_BYTES,
            "an event past the bound"
        );
    }
}

/// The browser page's readings: `SCHEMA\n---\nBODY`, the body a form
/// posted for that schema (`application/x-www-form-urlencoded`), read as
/// the page reads it; content the page would send passes the schema's own
/// validation and holds only its fields. The body is also read as a
/// `Cookie` header: no cookie's name or value holds a `;`, nor a name `=`.
pub fn page_form(data: &[u8]) {
    use elicit::page::{cookie_pairs, read_posted_form};
    let (schema_text, body) = match data.iter().position(|b| *b == b'\n') {
        Some(i) if data[i..].starts_with(b"\n---\n") => (&data[..i], &data[i + 5..]),
        _ => (data, &b""[..]),
    };
    if let Ok(cookies) = std::str::from_utf8(body) {
        for (name, value) in cookie_pairs(std::iter::once(cookies)) {
            assert!(!name.contains([';', '=']), "cookie name {name:?}");
            assert!(!value.contains(';'), "cookie value {value:?}");
        }
    }
    let Ok(schema) = serde_json::from_slice::<Value>(schema_text) else {
        return;
    };
    let Ok(form) = FormSchema::parse(&schema) else {
        return;
    };
    let posted = read_posted_form(form.clone(), body);
    if let Ok(content) = posted.content {
        if let Err(e) = form.validate(&content) {
            panic!("the page would send content its schema rejects: {e:?}");
        }
        for key in content.keys() {
            assert!(form.field(key).is_some(), "content holds {key:?}, no field");
        }
    }
}
