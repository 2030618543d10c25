//! `elicit test --explore --save DIR`: each variant kept as a cassette
//! that `elicit test` reads. A result too large for a cassette is cut
//! with a marker (its cut values left out of the comparison), a file
//! still over what `elicit test` reads is not written, the whole run
//! writes at most [`MAX_SAVED_TOTAL`] bytes, and every file has a name of
//! its own: no two variants, and no cassette being explored, share one.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::super::{write_atomically, Cassette, MAX_FILE_BYTES, MAX_FILE_VALUES};
use super::Variant;

/// The largest result a saved cassette keeps whole, as `proxy --record`:
/// past it, long strings are cut.
pub const MAX_SAVED_RESULT: usize = super::super::proxy_record::MAX_RECORDED_RESULT;

/// Most bytes one `--save` run writes, all files together.
pub const MAX_SAVED_TOTAL: u64 = 64 << 20;

/// Most values a saved result keeps: half of what a cassette may hold,
/// the rest left to its elicitations.
const MAX_RESULT_VALUES: usize = MAX_FILE_VALUES / 2;

/// A string longer than this is cut when a result is too large.
const CUT_OVER: usize = 4096;

/// What is kept of a cut string.
const KEEP: usize = 1024;

/// Most values cut one by one before the result is cut whole instead.
const MAX_CUTS: usize = 1000;

/// The folder variants are saved in, the names given so far and the bytes
/// written.
pub struct Saver {
    dir: PathBuf,
    /// File names given, lower-cased (a folder may not tell case apart).
    names: Mutex<HashSet<String>>,
    written: Mutex<u64>,
    /// Most bytes this run writes ([`MAX_SAVED_TOTAL`]).
    total: u64,
}

impl Saver {
    /// Saves into `dir`; the `explored` cassettes' own names there are
    /// never given to a variant.
    pub fn new(dir: &Path, explored: &[PathBuf]) -> Self {
        let here = std::fs::canonicalize(dir).ok();
        let names = explored
            .iter()
            .filter(|p| {
                let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
                here.is_some()
                    && std::fs::canonicalize(parent.unwrap_or(Path::new("."))).ok() == here
            })
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().to_lowercase()))
            .collect();
        Saver {
            dir: dir.to_path_buf(),
            names: Mutex::new(names),
            written: Mutex::new(0),
            total: MAX_SAVED_TOTAL,
        }
    }

    /// The file `variant` of `original` is saved as: `book.decline-at-2.cassette.json`,
    /// with `-2`, `-3`, … before `.cassette.json` when the name is already
    /// given. Called in the variants' order, so names do not depend on
    /// which variant ends first.
    pub fn claim(&self, original: &Path, variant: &Variant) -> PathBuf {
        let name = super::file_name(original, variant);
        let stem = name.strip_suffix(".cassette.json").unwrap_or(&name);
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let mut candidate = name.clone();
        let mut n = 2;
        while !names.insert(candidate.to_lowercase()) {
            candidate = format!("{stem}-{n}.cassette.json");
            n += 1;
        }
        self.dir.join(candidate)
    }

    /// Writes `cassette` at `path` (from [`Self::claim`]): the words said
    /// under the variant (`saved as …`, and that it replaced a file there),
    /// or why it was not saved.
    pub fn save(&self, path: &Path, mut cassette: Cassette) -> String {
        let cut = fit_result(&mut cassette);
        let text = cassette.to_text();
        drop(cassette);
        if let Err(why) = readable(&text) {
            return format!("not saved: {why}");
        }
        {
            let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
            if *written + text.len() as u64 > self.total {
                return format!(
                    "not saved: --save writes at most {} in one run, and {} were written",
                    size(self.total),
                    size(*written)
                );
            }
            *written += text.len() as u64;
        }
        let replaced = std::fs::symlink_metadata(path).is_ok();
        if let Err(e) = write_atomically(path, text.as_bytes()) {
            return format!("not saved: {e}");
        }
        let mut words = format!("saved as {}", path.display());
        if replaced {
            words.push_str(" (it replaced the file that was there)");
        }
        if let Some(cut) = cut {
            words.push_str(&format!("; {cut}"));
        }
        words
    }
}

/// A cassette text `elicit test` reads: within its bytes and values.
fn readable(text: &str) -> Result<(), String> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "it would be {}, over the {} MiB elicit test reads",
            size(text.len() as u64),
            MAX_FILE_BYTES >> 20
        ));
    }
    elicit_core::bounded::check_json_shape(text.as_bytes(), MAX_FILE_VALUES, usize::MAX, usize::MAX)
        .map(drop)
        .map_err(|e| format!("it would hold {e} (what elicit test reads)"))
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{bytes} bytes")
    }
}

/// Bytes of `v` as compact JSON, counted without writing it out.
fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

fn values(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(values).sum(),
        Value::Object(o) => o.values().map(values).sum(),
        _ => 0,
    }
}

fn fits(v: &Value) -> bool {
    json_len(v) <= MAX_SAVED_RESULT && values(v) <= MAX_RESULT_VALUES
}

/// The marker a cut value ends with (or is).
fn marker(bytes: usize) -> String {
    format!("… [cut by elicit test --explore --save: {bytes} bytes in all; not compared]")
}

/// Cuts a result too large for a saved cassette: first each string over
/// [`CUT_OVER`] bytes to its first [`KEEP`] and a marker; when that is not
/// enough, every member but `isError` to a marker. Each cut value's
/// pointer joins the cassette's `ignore`, so `elicit test` compares the
/// rest. Returns what was cut, in words.
fn fit_result(cassette: &mut Cassette) -> Option<String> {
    let result = cassette.result.as_mut()?;
    if fits(result) {
        return None;
    }
    let before = json_len(result);
    let mut cut_strings = result.clone();
    let mut pointers = Vec::new();
    cut_long_strings(&mut cut_strings, String::new(), &mut pointers);
    if pointers.len() <= MAX_CUTS && fits(&cut_strings) {
        *result = cut_strings;
    } else {
        pointers = cut_members(result);
    }
    let n = pointers.len();
    cassette.ignore.extend(pointers);
    Some(format!(
        "the result ({}) was cut to fit a cassette: {n} value{} marked and left out of the comparison",
        size(before as u64),
        if n == 1 { "" } else { "s" }
    ))
}

fn cut_long_strings(v: &mut Value, pointer: String, cuts: &mut Vec<String>) {
    if cuts.len() > MAX_CUTS {
        return;
    }
    match v {
        Value::String(s) if s.len() > CUT_OVER => {
            let mut end = KEEP;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            let all = s.len();
            s.truncate(end);
            s.push_str(&marker(all));
            cuts.push(pointer);
        }
        Value::Array(a) => {
            for (i, item) in a.iter_mut().enumerate() {
                cut_long_strings(item, format!("{pointer}/{i}"), cuts);
            }
        }
        Value::Object(o) => {
            for (k, item) in o.iter_mut() {
                let token = super::super::escape_pointer_token(k);
                cut_long_strings(item, format!("{pointer}/{token}"), cuts);
            }
        }
        _ => {}
    }
}

/// Every member of the result but a boolean `isError` replaced by a
/// marker; a result that is not an object becomes one with `content` a
/// marker. Returns the pointers cut.
fn cut_members(result: &mut Value) -> Vec<String> {
    let Value::Object(members) = result else {
        let all = json_len(result);
        *result = Value::Object(Map::from_iter([("content".into(), marker(all).into())]));
        return vec!["/content".into()];
    };
    let mut pointers = Vec::new();
    for (k, v) in members.iter_mut() {
        if k == "isError" && v.is_boolean() {
            continue;
        }
        *v = Value::String(marker(json_len(v)));
        pointers.push(format!("/{}", super::super::escape_pointer_token(k)));
    }
    pointers
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cassette(result: Value) -> Cassette {
        Cassette::from_value(&json!({
            "elicit": "cassette/1",
            "server": {"command": ["true"]},
            "tool": "t",
            "result": result
        }))
        .unwrap()
    }

    #[test]
    fn a_large_result_is_cut_with_a_marker_and_left_out_of_the_comparison() {
        let big = "y".repeat(MAX_SAVED_RESULT + 10);
        let mut c = cassette(json!({"content": [{"type": "text", "text": big}], "isError": false}));
        let said = fit_result(&mut c).expect("cut");
        assert!(said.contains("1 value marked"), "{said}");
        let text = c.result.as_ref().unwrap()["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(text.starts_with(&"y".repeat(KEEP)) && text.contains("cut by elicit"));
        assert_eq!(c.ignore, ["/content/0/text"]);
        assert!(readable(&c.to_text()).is_ok());

        // Too many values to cut one by one: every member but isError goes.
        let many: Vec<Value> = (0..MAX_RESULT_VALUES + 1).map(|i| json!(i)).collect();
        let mut c =
            cassette(json!({"content": [], "structuredContent": {"n": many}, "isError": true}));
        fit_result(&mut c).expect("cut");
        assert_eq!(c.result.as_ref().unwrap()["isError"], true);
        assert!(
            c.ignore.contains(&"/structuredContent".to_string()),
            "{:?}",
            c.ignore
        );
        assert!(readable(&c.to_text()).is_ok());

        let mut small = cassette(json!({"content": []}));
        assert!(fit_result(&mut small).is_none());
    }

    #[test]
    fn names_are_unique_whatever_the_case_and_never_an_explored_cassette() {
        let dir = tempfile::tempdir().unwrap();
        let original = dir.path().join("book.cassette.json");
        let saver = Saver::new(dir.path(), std::slice::from_ref(&original));
        let variant = |slug: &str| Variant {
            slug: slug.into(),
            what: String::new(),
            at: 0,
            answer: Value::Null,
            invalid: false,
        };
        let name = |p: PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            name(saver.claim(&original, &variant("decline-at-1"))),
            "book.decline-at-1.cassette.json"
        );
        let other = Path::new("elsewhere/BOOK.cassette.json");
        assert_eq!(
            name(saver.claim(other, &variant("decline-at-1"))),
            "BOOK.decline-at-1-2.cassette.json"
        );
        // A variant whose name is an explored cassette's.
        let tricky = dir.path().join("book.x.cassette.json");
        let saver = Saver::new(dir.path(), std::slice::from_ref(&tricky));
        let got = saver.claim(&original, &variant("x"));
        assert_eq!(name(got), "book.x-2.cassette.json");
    }

    #[test]
    fn a_run_writes_at_most_its_total() {
        let dir = tempfile::tempdir().unwrap();
        let mut saver = Saver::new(dir.path(), &[]);
        assert_eq!(saver.total, MAX_SAVED_TOTAL);
        // The same bound, smaller: 8 cassettes of 1/8 of it fit, no more.
        saver.total = 1 << 20;
        let chunk = "z".repeat((1 << 17) - 1024);
        let mut saved = 0;
        let mut refused = 0;
        for i in 0..12 {
            let c = cassette(json!({"content": [{"type": "text", "text": chunk}]}));
            let words = saver.save(&dir.path().join(format!("{i}.cassette.json")), c);
            if words.starts_with("saved as") {
                saved += 1;
            } else {
                assert!(words.contains("at most 1 MiB"), "{words}");
                refused += 1;
            }
        }
        let total: u64 = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(total <= saver.total, "{total}");
        assert_eq!((saved, refused), (8, 4));
    }
}
