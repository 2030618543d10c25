//! `WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1).
//!
//! Hand-written: the header grammar is a few lines (scheme, then
//! comma-separated `name=token` or `name="quoted"` pairs), and the crates
//! that parse it are either unmaintained or pull a whole HTTP framework.
//! Only what sign-in reads is kept: `resource_metadata`, `scope`, `error`.

use std::collections::HashMap;

/// One challenge: its scheme (lower-cased) and its parameters (names
/// lower-cased, values unquoted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The scheme (`Bearer`, `DPoP`).
    pub scheme: String,
    /// Its parameters, by lower-case name.
    pub params: HashMap<String, String>,
}

impl Challenge {
    /// The parameter `name`, if given.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// `resource_metadata`: where the protected resource metadata lives.
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata").filter(|s| !s.is_empty())
    }

    /// `scope`, split on spaces.
    pub fn scopes(&self) -> Option<Vec<String>> {
        let s = self.param("scope")?;
        let v: Vec<String> = s.split_whitespace().map(str::to_string).collect();
        (!v.is_empty()).then_some(v)
    }

    /// The `error` parameter, if given.
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }
}

/// Parses a header value into its challenges, in order. Never fails: what
/// cannot be read is skipped.
pub fn parse(header: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let b = header.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t') {
            *i += 1;
        }
    };
    let is_tchar = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&c);
    while i < b.len() {
        skip_ws(&mut i);
        if i < b.len() && b[i] == b',' {
            i += 1;
            continue;
        }
        // A token: either a new scheme or a parameter name.
        let start = i;
        while i < b.len() && is_tchar(b[i]) {
            i += 1;
        }
        if start == i {
            i += 1; // a stray character
            continue;
        }
        let token = &header[start..i];
        let mut j = i;
        skip_ws(&mut j);
        if j < b.len() && b[j] == b'=' && !out.is_empty() {
            // name=value
            j += 1;
            skip_ws(&mut j);
            let value = if j < b.len() && b[j] == b'"' {
                j += 1;
                let mut v = String::new();
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' && j + 1 < b.len() {
                        j += 1;
                    }
                    // Copy whole UTF-8 characters.
                    let ch = header[j..].chars().next().unwrap_or('\u{fffd}');
                    v.push(ch);
                    j += ch.len_utf8();
                }
                j += 1; // closing quote
                v
            } else {
                let vs = j;
                while j < b.len() && b[j] != b',' && b[j] != b' ' && b[j] != b'\t' {
                    j += 1;
                }
                header[vs..j].to_string()
            };
            if let Some(last) = out.last_mut() {
                last.params.insert(token.to_ascii_lowercase(), value);
            }
            i = j.min(b.len());
        } else {
            // A scheme (possibly followed by token68, which we skip).
            out.push(Challenge {
                scheme: token.to_ascii_lowercase(),
                params: HashMap::new(),
            });
        }
    }
    out
}

/// The Bearer challenge of a header, else its first challenge.
pub fn bearer(header: &str) -> Option<Challenge> {
    let all = parse(header);
    let pick = all.iter().position(|c| c.scheme == "bearer").unwrap_or(0);
    all.into_iter().nth(pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quoted_and_bare_params() {
        let c = bearer(r#"Bearer realm="mcp", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error=insufficient_scope"#).unwrap();
        assert_eq!(c.scheme, "bearer");
        assert_eq!(c.scopes().unwrap(), vec!["a", "b"]);
        assert_eq!(
            c.resource_metadata(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.error(), Some("insufficient_scope"));
    }

    #[test]
    fn picks_bearer_among_several_and_unescapes() {
        let c = bearer(r#"DPoP algs="ES256", Bearer error_description="say \"hi\"", scope="x""#)
            .unwrap();
        assert_eq!(c.scheme, "bearer");
        assert_eq!(c.param("error_description"), Some("say \"hi\""));
        assert_eq!(c.scopes().unwrap(), vec!["x"]);
    }

    #[test]
    fn garbage_never_panics() {
        for h in [
            "",
            "=",
            "Bearer =",
            "Bearer a=\"unterminated",
            ",,,",
            "Bearer a=\"é\\",
            "é",
        ] {
            let _ = parse(h);
        }
        assert!(bearer("").is_none());
    }
}
