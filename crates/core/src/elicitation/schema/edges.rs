//! A field's edges, read off the one form model: the values at the limits
//! of what it accepts (minimum and maximum, shortest and longest, each
//! choice, its default), and values that break it on purpose (out of
//! range, the wrong type, an unknown choice). `elicit test --explore`
//! derives its variants from these. Every edge is checked by
//! [`FormField::check`] before it is handed out: an edge that the model
//! itself would refuse is never offered as valid, and a breaking value the
//! model would accept is never offered as invalid.

use serde_json::{Number, Value};

use super::model::{FieldKind, FormField, StringFormat};

/// One value for a field, and what it tests, as a short slug for a file
/// name (`min`, `longest`, `option-red`, `above-max`).
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// What the value tests, as a short slug for a file name.
    pub slug: String,
    /// `None`: the field left out of the content.
    pub value: Option<Value>,
}

impl Edge {
    fn new(slug: impl Into<String>, value: Value) -> Self {
        Edge {
            slug: slug.into(),
            value: Some(value),
        }
    }
}

/// The longest string an edge is made of: a `maxLength` past it is tested
/// at this length only if the model accepts it, else not at all.
const LONGEST: u64 = 4096;

fn number(n: &Number, delta: i64, integer: bool) -> Option<Value> {
    if integer {
        let v = n.as_i64()?.checked_add(delta)?;
        return Some(Value::Number(v.into()));
    }
    let v = n.as_f64()? + delta as f64;
    if delta == 0 {
        return Some(Value::Number(n.clone()));
    }
    Number::from_f64(v).map(Value::Number)
}

/// A string of `len` characters that the field's format, when it has one,
/// still accepts (`a@…example.com`, `https://example.com/…`), or plain `x`s.
fn text_of(len: u64, field: &FormField) -> Option<Value> {
    let len = usize::try_from(len).ok()?;
    let plain = Value::String("x".repeat(len));
    if field.check(&plain).is_ok() {
        return Some(plain);
    }
    for (head, tail) in [("a@", ".example.com"), ("https://example.com/", "")] {
        let fill = len.checked_sub(head.len() + tail.len())?;
        let v = Value::String(format!("{head}{}{tail}", "x".repeat(fill)));
        if field.check(&v).is_ok() {
            return Some(v);
        }
    }
    None
}

impl FormField {
    /// The values at the edges of what this field accepts, each accepted by
    /// [`Self::check`]: bounds, lengths, each choice, the default, and
    /// (optional fields without a default) the field left out.
    pub fn edges(&self) -> Vec<Edge> {
        let mut out = Vec::new();
        match &self.kind {
            FieldKind::Integer { minimum, maximum } | FieldKind::Number { minimum, maximum } => {
                let integer = matches!(self.kind, FieldKind::Integer { .. });
                for (slug, bound) in [("min", minimum), ("max", maximum)] {
                    if let Some(v) = bound.as_ref().and_then(|b| number(b, 0, integer)) {
                        out.push(Edge::new(slug, v));
                    }
                }
            }
            FieldKind::Text {
                min_length,
                max_length,
                ..
            } => {
                if let Some(v) = text_of(min_length.unwrap_or(0), self) {
                    out.push(Edge::new("shortest", v));
                }
                if let Some(v) = max_length
                    .filter(|n| *n <= LONGEST)
                    .and_then(|n| text_of(n, self))
                {
                    out.push(Edge::new("longest", v));
                }
            }
            FieldKind::Boolean => {
                out.push(Edge::new("true", Value::Bool(true)));
                out.push(Edge::new("false", Value::Bool(false)));
            }
            FieldKind::Select { choices } => {
                for (i, c) in choices.iter().enumerate() {
                    out.push(Edge::new(
                        format!("option-{}", slug_of(&c.value, i)),
                        Value::String(c.value.clone()),
                    ));
                }
            }
            FieldKind::MultiSelect {
                choices,
                min_items,
                max_items,
            } => {
                let take = |n: usize| -> Value {
                    choices
                        .iter()
                        .take(n)
                        .map(|c| Value::String(c.value.clone()))
                        .collect()
                };
                let fewest = min_items.map_or(0, |n| n as usize);
                let most = max_items.map_or(choices.len(), |n| n as usize);
                out.push(Edge::new("fewest", take(fewest)));
                out.push(Edge::new("most", take(most.min(choices.len()))));
            }
            FieldKind::Raw { .. } => {}
        }
        if let Some(d) = self.usable_default() {
            out.push(Edge::new("default", d));
        }
        if !self.required && self.usable_default().is_none() {
            out.push(Edge {
                slug: "left-out".into(),
                value: None,
            });
        }
        out.retain(|e| e.value.as_ref().is_none_or(|v| self.check(v).is_ok()));
        dedup(out)
    }

    /// Values that break this field on purpose, each refused by
    /// [`Self::check`]: out of range, too short or too long, the wrong
    /// type, an unknown choice; and, for a required field, left out.
    pub fn breaking(&self) -> Vec<Edge> {
        let mut out = Vec::new();
        let wrong_type = match &self.kind {
            FieldKind::Integer { minimum, maximum } | FieldKind::Number { minimum, maximum } => {
                let integer = matches!(self.kind, FieldKind::Integer { .. });
                if let Some(v) = minimum.as_ref().and_then(|b| number(b, -1, integer)) {
                    out.push(Edge::new("below-min", v));
                }
                if let Some(v) = maximum.as_ref().and_then(|b| number(b, 1, integer)) {
                    out.push(Edge::new("above-max", v));
                }
                if integer {
                    out.push(Edge::new("fraction", serde_json::json!(0.5)));
                }
                Value::String("not a number".into())
            }
            FieldKind::Text {
                min_length,
                max_length,
                format,
                pattern,
            } => {
                let fit = |text: &str| fit_length(text, *min_length, *max_length);
                if let Some((slug, bad)) = format.as_ref().and_then(bad_format) {
                    out.push(Edge::new(slug, Value::String(fit(bad))));
                }
                if pattern.is_some() {
                    let candidates = format.iter().filter_map(good_format).chain(PLAIN);
                    if let Some(v) = candidates
                        .map(|c| Value::String(fit(c)))
                        .find(|v| self.check(v).is_err())
                    {
                        out.push(Edge::new("breaks-pattern", v));
                    }
                }
                if let Some(n) = min_length.filter(|n| *n > 0) {
                    out.push(Edge::new(
                        "too-short",
                        Value::String("x".repeat(n as usize - 1)),
                    ));
                }
                if let Some(n) = max_length.filter(|n| *n < LONGEST) {
                    out.push(Edge::new(
                        "too-long",
                        Value::String("x".repeat(n as usize + 1)),
                    ));
                }
                Value::Number(12345.into())
            }
            FieldKind::Boolean => Value::String("maybe".into()),
            FieldKind::Select { .. } => {
                out.push(Edge::new(
                    "unknown-option",
                    Value::String("not-an-option".into()),
                ));
                Value::Number(1.into())
            }
            FieldKind::MultiSelect { .. } => {
                out.push(Edge::new(
                    "unknown-option",
                    serde_json::json!(["not-an-option"]),
                ));
                Value::String("not-a-list".into())
            }
            FieldKind::Raw { .. } => return out,
        };
        out.push(Edge::new("wrong-type", wrong_type));
        out.retain(|e| e.value.as_ref().is_some_and(|v| self.check(v).is_err()));
        if self.required {
            out.push(Edge {
                slug: "missing".into(),
                value: None,
            });
        }
        out
    }
}

/// Text to try against a `pattern`, after a value of the field's format:
/// the first the field refuses breaks the pattern.
const PLAIN: [&str; 7] = ["", "x", "0", " ", "-", "X0-", "not matching"];

/// A value of `format` that is not of it, by slug: an address without
/// `@`, a URI with spaces, a day that does not exist.
fn bad_format(format: &StringFormat) -> Option<(&'static str, &'static str)> {
    Some(match format {
        StringFormat::Email => ("bad-email", "not-an-email"),
        StringFormat::Uri => ("bad-uri", "not a uri"),
        StringFormat::Date => ("bad-date", "2026-02-30"),
        StringFormat::DateTime => ("bad-date-time", "2026-02-30T12:00:00Z"),
        StringFormat::Other(_) => return None,
    })
}

/// A value of `format`, so that a value refused for its pattern is not
/// refused for its format too.
fn good_format(format: &StringFormat) -> Option<&'static str> {
    Some(match format {
        StringFormat::Email => "a@example.com",
        StringFormat::Uri => "https://example.com/",
        StringFormat::Date => "2026-01-01",
        StringFormat::DateTime => "2026-01-01T00:00:00Z",
        StringFormat::Other(_) => return None,
    })
}

/// `text` padded with `x` to `min` characters or cut to `max`, so that it
/// breaks something other than the length.
fn fit_length(text: &str, min: Option<u64>, max: Option<u64>) -> String {
    let mut s: String = match max.and_then(|m| usize::try_from(m).ok()) {
        Some(m) => text.chars().take(m).collect(),
        None => text.to_string(),
    };
    let min = min.and_then(|m| usize::try_from(m).ok()).unwrap_or(0);
    let len = s.chars().count();
    if len < min && min <= LONGEST as usize {
        s.push_str(&"x".repeat(min - len));
    }
    s
}

/// Drops an edge whose value an earlier one already has (a default that is
/// also the minimum is tested once, under the first slug).
fn dedup(edges: Vec<Edge>) -> Vec<Edge> {
    let mut out: Vec<Edge> = Vec::new();
    for e in edges {
        if !out.iter().any(|o| o.value == e.value) {
            out.push(e);
        }
    }
    out
}

/// A choice's value as a file-name slug (letters, digits, `-`), or its
/// position when nothing of it is left.
pub fn slug_of(text: &str, position: usize) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
        if s.len() >= 32 {
            break;
        }
    }
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() {
        format!("{}", position + 1)
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::FormSchema;
    use serde_json::json;

    fn field(schema: serde_json::Value, required: bool) -> super::FormField {
        let form = FormSchema::parse(&json!({
            "type": "object",
            "properties": {"f": schema},
            "required": if required { json!(["f"]) } else { json!([]) }
        }))
        .unwrap();
        form.fields[0].clone()
    }

    #[test]
    fn edges_are_accepted_and_breaking_values_refused_by_the_model() {
        let f = field(json!({"type": "integer", "minimum": 1, "maximum": 9}), true);
        let edges = f.edges();
        assert_eq!(edges[0].value, Some(json!(1)));
        assert_eq!(edges[1].value, Some(json!(9)));
        let bad: Vec<_> = f.breaking().into_iter().map(|e| e.slug).collect();
        assert_eq!(
            bad,
            [
                "below-min",
                "above-max",
                "fraction",
                "wrong-type",
                "missing"
            ]
        );
        let s = field(
            json!({"type": "string", "minLength": 2, "maxLength": 5, "default": "abc"}),
            false,
        );
        let slugs: Vec<_> = s.edges().into_iter().map(|e| e.slug).collect();
        assert_eq!(slugs, ["shortest", "longest", "default"]);
        let e = field(
            json!({"type": "string", "format": "email", "maxLength": 20}),
            false,
        );
        for edge in e.edges() {
            if let Some(v) = &edge.value {
                assert!(e.check(v).is_ok(), "{edge:?}");
            }
        }
        let sel = field(
            json!({"type": "string", "enum": ["Red", "green blue"]}),
            false,
        );
        let slugs: Vec<_> = sel.edges().into_iter().map(|e| e.slug).collect();
        assert_eq!(slugs, ["option-red", "option-green-blue", "left-out"]);
    }

    #[test]
    fn breaking_values_break_the_format_and_the_pattern_within_the_lengths() {
        let slugs_values = |f: &super::FormField| -> Vec<(String, serde_json::Value)> {
            f.breaking()
                .into_iter()
                .filter_map(|e| Some((e.slug, e.value?)))
                .collect()
        };
        for (format, slug) in [
            ("email", "bad-email"),
            ("uri", "bad-uri"),
            ("date", "bad-date"),
            ("date-time", "bad-date-time"),
        ] {
            let f = field(
                json!({"type": "string", "format": format, "minLength": 12, "maxLength": 30}),
                true,
            );
            let got = slugs_values(&f);
            let (_, v) = got
                .iter()
                .find(|(s, _)| s == slug)
                .unwrap_or_else(|| panic!("{format}: {got:?}"));
            let text = v.as_str().unwrap();
            assert!(
                (12..=30).contains(&text.chars().count()),
                "{format}: {text}"
            );
            assert!(f.check(v).is_err(), "{format}: {text}");
            let plain = field(
                json!({"type": "string", "minLength": 12, "maxLength": 30}),
                true,
            );
            assert!(
                plain.check(v).is_ok(),
                "{format}: only the format is broken: {text}"
            );
        }
        let f = field(json!({"type": "string", "pattern": "^[a-z]+$"}), true);
        let got = slugs_values(&f);
        let (_, v) = got
            .iter()
            .find(|(s, _)| s == "breaks-pattern")
            .unwrap_or_else(|| panic!("{got:?}"));
        assert!(f.check(v).is_err());
        // Of the field's format, so that the pattern is what it breaks.
        let f = field(
            json!({"type": "string", "format": "email", "pattern": "@corp\\.example$"}),
            true,
        );
        let got = slugs_values(&f);
        assert!(
            got.contains(&("breaks-pattern".into(), json!("a@example.com"))),
            "{got:?}"
        );
    }
}
