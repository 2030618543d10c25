//! From a JSON pointer to a line and column in the text it points into: a
//! small pass over the text that follows the pointer's path, skipping every
//! value off the path without building it. The text has been parsed already
//! (it is valid JSON, at most [`crate::elicitation::input::MAX_DEPTH`] deep), so the pass
//! only tracks positions; on anything unexpected it stops and gives the
//! position of the deepest part of the path it found.

/// A 1-based line and column (counted in Unicode code points).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Positions in one text.
pub(crate) struct Locator<'a> {
    text: &'a str,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
}

impl<'a> Locator<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Locator { text, line_starts }
    }

    /// The position of byte `offset`.
    pub fn position(&self, offset: usize) -> Position {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let end = offset.min(self.text.len());
        let column = self
            .text
            .get(start..end)
            .map_or(1, |s| s.chars().count() + 1);
        Position { line, column }
    }

    /// Where the value `pointer` names starts; when part of the pointer
    /// names nothing, where its deepest existing ancestor starts.
    pub(crate) fn locate(&self, pointer: &str) -> Position {
        self.position(find(self.text.as_bytes(), pointer))
    }

    /// The text of the value `pointer` names (or of its deepest ancestor).
    pub fn fragment(&self, pointer: &str) -> &'a str {
        let b = self.text.as_bytes();
        let start = find(b, pointer);
        let end = value_end(b, start).max(start);
        self.text.get(start..end).unwrap_or("")
    }
}

/// Unescapes one pointer token (RFC 6901).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string starting at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the value starting at `i`.
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

/// The byte offset of the value at `pointer` (or its deepest ancestor).
fn find(b: &[u8], pointer: &str) -> usize {
    let mut at = skip_ws(b, 0);
    if pointer.is_empty() {
        return at;
    }
    for token in pointer.split('/').skip(1) {
        let token = unescape(token);
        match b.get(at) {
            Some(b'{') => match member(b, at, &token) {
                Some(v) => at = v,
                None => return at,
            },
            Some(b'[') => match token.parse::<usize>().ok().and_then(|n| element(b, at, n)) {
                Some(v) => at = v,
                None => return at,
            },
            _ => return at,
        }
    }
    at
}

/// The start of member `key`'s value in the object at `at` (the last one,
/// as serde_json keeps the last of duplicate keys).
fn member(b: &[u8], at: usize, key: &str) -> Option<usize> {
    let mut i = skip_ws(b, at + 1);
    let mut found = None;
    while i < b.len() && b[i] == b'"' {
        let end = string_end(b, i);
        let name: Option<String> = std::str::from_utf8(&b[i..end])
            .ok()
            .and_then(|s| serde_json::from_str(s).ok());
        i = skip_ws(b, end);
        if b.get(i) != Some(&b':') {
            return found;
        }
        i = skip_ws(b, i + 1);
        if name.as_deref() == Some(key) {
            found = Some(i);
        }
        i = skip_ws(b, value_end(b, i));
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            _ => break,
        }
    }
    found
}

/// The start of element `n` of the array at `at`.
fn element(b: &[u8], at: usize, n: usize) -> Option<usize> {
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b']') {
        return None;
    }
    for _ in 0..n {
        i = skip_ws(b, value_end(b, i));
        if b.get(i) != Some(&b',') {
            return None;
        }
        i = skip_ws(b, i + 1);
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_lands_on_its_value() {
        let text = "{\n  \"a\": {\"b~/c\": [1, {\"d\": \"x\\\"y\"}, 3]},\n  \"é\": true,\n  \"a\": {\"z\": 0}\n}";
        let l = Locator::new(text);
        // The last of two equal keys wins, as when parsed.
        assert_eq!(
            l.locate("/a/z"),
            Position {
                line: 4,
                column: 14
            }
        );
        assert_eq!(l.locate("/é"), Position { line: 3, column: 8 });
        assert_eq!(l.locate(""), Position { line: 1, column: 1 });
        // A missing member gives its deepest existing ancestor.
        assert_eq!(l.locate("/a/nope"), Position { line: 4, column: 8 });
        assert_eq!(l.locate("/x/y"), Position { line: 1, column: 1 });
        let t = "{\"a\": {\"b~/c\": [1, {\"d\": \"x\\\"y\"}, 3]}}";
        let l = Locator::new(t);
        assert_eq!(
            l.locate("/a/b~0~1c/1/d"),
            Position {
                line: 1,
                column: 26
            }
        );
        assert_eq!(
            l.locate("/a/b~0~1c/2"),
            Position {
                line: 1,
                column: 35
            }
        );
        assert_eq!(
            l.locate("/a/b~0~1c/9"),
            Position {
                line: 1,
                column: 16
            }
        );
    }
}
