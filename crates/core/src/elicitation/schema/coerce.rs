//! From typed or scripted text to the JSON value a field takes: numbers
//! decided on their decimal text, yes/no words, choices by value or label,
//! and the hint that says what a field accepts.

use super::model::{Choice, FieldKind, FieldRules, FormField};
use super::words::plural;
use serde_json::Number;
use serde_json::Value;

impl FormField {
    /// Reads one scripted or typed answer (`VALUE` of `NAME=VALUE`) into the
    /// JSON value the field takes. Only the *type* is decided here; the
    /// constraints are left to [`FormField::check`], so a value out of range
    /// is reported as such, not as unparsable.
    pub fn coerce(&self, text: &str) -> Result<Value, String> {
        match &self.kind {
            FieldKind::Text { .. } => Ok(Value::String(text.to_string())),
            FieldKind::Integer { .. } | FieldKind::Number { .. } => {
                let trimmed = text.trim();
                let n: Number = serde_json::from_str(trimmed)
                    .map_err(|_| format!("{text:?} is not a number"))?;
                Ok(normalize_number(Value::Number(n), &self.kind))
            }
            FieldKind::Boolean => parse_bool(text).map(Value::Bool).ok_or_else(|| {
                format!("{text:?} is not a yes/no answer (use true, false, yes or no)")
            }),
            FieldKind::Select { choices } => Ok(Value::String(match_choice(choices, text))),
            FieldKind::MultiSelect { choices, .. } => {
                let trimmed = text.trim_start();
                if trimmed.starts_with('[') {
                    let items: Vec<Value> = serde_json::from_str(trimmed)
                        .map_err(|e| format!("{text:?} is not a JSON array: {e}"))?;
                    Ok(match_items(choices, items))
                } else {
                    Ok(Value::Array(vec![Value::String(match_choice(
                        choices, text,
                    ))]))
                }
            }
            // Raw JSON; text that does not parse is taken as a string only
            // where the schema accepts one, else it is reported as invalid
            // JSON (not as a string of the wrong type).
            FieldKind::Raw { .. } => match serde_json::from_str(text) {
                Ok(v) => Ok(v),
                Err(e) => {
                    let as_text = Value::String(text.to_string());
                    let accepted = match &self.rules {
                        FieldRules::Compiled(v) => v.is_valid(&as_text),
                        _ => true,
                    };
                    if accepted {
                        Ok(as_text)
                    } else {
                        Err(format!(
                            "invalid JSON for {:?} at line {}, column {}: {}",
                            self.label(),
                            e.line(),
                            e.column().max(1),
                            crate::elicitation::json::json_error_text(&e)
                        ))
                    }
                }
            },
        }
    }

    /// Normalises a JSON value given for this field (from a JSON answer
    /// object): whole numbers become JSON integers, select labels become
    /// values.
    pub fn normalize(&self, value: Value) -> Value {
        match (&self.kind, value) {
            (FieldKind::Select { choices }, Value::String(s)) => {
                Value::String(match_choice(choices, &s))
            }
            (FieldKind::MultiSelect { choices, .. }, Value::Array(items)) => {
                match_items(choices, items)
            }
            (kind, v) => normalize_number(v, kind),
        }
    }

    /// A short description of what the field accepts, e.g. `1–100`,
    /// `email`, `pick 1 to 3`.
    pub fn hint(&self) -> Option<String> {
        match &self.kind {
            FieldKind::Text {
                min_length,
                max_length,
                format,
                pattern,
            } => {
                let mut parts = Vec::new();
                if let Some(f) = format {
                    parts.push(f.hint());
                }
                match (min_length, max_length) {
                    (Some(a), Some(b)) if a == b => {
                        parts.push(format!("exactly {a} character{}", plural(*a)))
                    }
                    (Some(a), Some(b)) => parts.push(format!("{a}–{b} characters")),
                    (Some(1), None) => parts.push("not empty".into()),
                    (Some(a), None) => parts.push(format!("at least {a} characters")),
                    (None, Some(b)) => parts.push(format!("at most {b} character{}", plural(*b))),
                    _ => {}
                }
                if let Some(p) = pattern {
                    parts.push(format!("matching {p}"));
                }
                (!parts.is_empty()).then(|| parts.join(", "))
            }
            FieldKind::Integer { minimum, maximum } | FieldKind::Number { minimum, maximum } => {
                let whole = matches!(self.kind, FieldKind::Integer { .. });
                let range = match (minimum, maximum) {
                    (Some(a), Some(b)) => Some(format!("{a}–{b}")),
                    (Some(a), None) => Some(format!("≥ {a}")),
                    (None, Some(b)) => Some(format!("≤ {b}")),
                    _ => None,
                };
                match (whole, range) {
                    (true, Some(r)) => Some(format!("whole number, {r}")),
                    (true, None) => Some("whole number".into()),
                    (false, r) => r.or(Some("number".into())),
                }
            }
            FieldKind::Boolean => Some("yes/no".into()),
            FieldKind::Select { .. } => None,
            FieldKind::MultiSelect {
                min_items,
                max_items,
                ..
            } => match (min_items, max_items) {
                (Some(a), Some(b)) if a == b => Some(format!("pick {a}")),
                (Some(a), Some(b)) => Some(format!("pick {a} to {b}")),
                (Some(a), None) => Some(format!("pick at least {a}")),
                (None, Some(b)) => Some(format!("pick at most {b}")),
                _ => None,
            },
            FieldKind::Raw { .. } => Some("JSON".into()),
        }
    }
}

/// Numbers keep the decimal text they were written with (serde_json's
/// `arbitrary_precision`), so an integer field decides on that text, never on
/// a rounded f64: `2.00000000000000001`, `0.99999999999999999999` and
/// `1e-400` are not whole, `-9223372036854775809` does not fit, and
/// `9007199254740993.0` is exactly 9007199254740993.
///
/// Why not an f64 check: every f64 conversion rounds (to 17 significant
/// digits, and to 0 or infinity at the ends), so no test on the converted
/// value can tell `2.0` from `2.00000000000000001`. Why `arbitrary_precision`
/// rather than a check on raw text in each reader: schema defaults, JSON
/// answers, `@FILE` answers and typed text all reach this one place as a
/// `Number`, and with the feature each still holds its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotInteger {
    /// Not a whole number (a nonzero digit after the point).
    Fraction,
    /// Whole, but outside -2^63 ..= 2^64-1.
    OutOfRange,
}

/// The exact integer a JSON number's text denotes, when it is whole and fits
/// an i64 or a u64. `text` is JSON number syntax (`-`? digits (`.` digits)?
/// (`e` sign? digits)?); anything else is `Fraction`. Hand-written: no
/// decimal crate is in the tree, and this needs only digit counting, with no
/// allocation proportional to the exponent (`1e999999999` is answered at once).
pub(crate) fn exact_integer(text: &str) -> Result<Number, NotInteger> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mantissa, ""),
    };
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() || !digits_ok(int_part) || !digits_ok(frac_part) {
        return Err(NotInteger::Fraction);
    }
    // The exponent, saturated: anything past ±10^6 is as good as infinite
    // for a number of at most 20 integer digits.
    let exp: i64 = match exponent {
        None => 0,
        Some(exponent) => {
            let (sign, digits) = match exponent.as_bytes().first() {
                Some(b'-') => (-1, &exponent[1..]),
                Some(b'+') => (1, &exponent[1..]),
                _ => (1, exponent),
            };
            if digits.is_empty() || !digits_ok(digits) {
                return Err(NotInteger::Fraction);
            }
            let digits = digits.trim_start_matches('0');
            let magnitude: i64 = if digits.len() > 7 {
                10_000_000
            } else {
                digits.parse().unwrap_or(0)
            };
            sign * magnitude
        }
    };
    // All the digits, and where the point sits among them.
    let all: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).collect();
    let lead = all.iter().take_while(|&&b| b == b'0').count();
    let significant = &all[lead..];
    let significant = &significant[..significant
        .iter()
        .rposition(|&b| b != b'0')
        .map_or(0, |i| i + 1)];
    if significant.is_empty() {
        return Ok(Number::from(0u64));
    }
    // Digits before the point, counted from the first significant digit.
    let point = int_part.len() as i64 - lead as i64 + exp;
    if point < significant.len() as i64 {
        return Err(NotInteger::Fraction);
    }
    if point > 20 {
        return Err(NotInteger::OutOfRange);
    }
    // At most 20 digits: 10^20 fits a u128 with room to spare.
    let mut magnitude: u128 = 0;
    for i in 0..point as usize {
        let digit = significant.get(i).copied().unwrap_or(b'0');
        magnitude = magnitude * 10 + u128::from(digit - b'0');
    }
    if negative {
        if magnitude <= 1u128 << 63 {
            Ok(Number::from((-(magnitude as i128)) as i64))
        } else {
            Err(NotInteger::OutOfRange)
        }
    } else {
        u64::try_from(magnitude)
            .map(Number::from)
            .map_err(|_| NotInteger::OutOfRange)
    }
}

/// A number as quoted in a message: its text, shortened when huge.
pub(super) fn shown_number(n: &Number) -> String {
    let s = n.as_str();
    if s.len() > 40 {
        format!("{}…", &s[..39])
    } else {
        s.to_string()
    }
}

/// Gives a number the field's canonical form: an integer field's exact
/// whole value as a JSON integer (`2`, not `2.0`: some SDKs follow the
/// generated schema.json, which types content numbers as integers); a number
/// field's value as the nearest f64 (whole ones as integers, as before).
/// Values that are not the field's kind are left for `check` to reject.
pub(super) fn normalize_number(value: Value, kind: &FieldKind) -> Value {
    let Value::Number(n) = &value else {
        return value;
    };
    match kind {
        FieldKind::Integer { .. } => match exact_integer(n.as_str()) {
            Ok(exact) => Value::Number(exact),
            Err(_) => value,
        },
        FieldKind::Number { .. } => {
            if let Ok(exact) = exact_integer(n.as_str()) {
                return Value::Number(exact);
            }
            // Not an exact 64-bit integer: a number field takes the nearest
            // double, and a whole one below 2^63 (2^64 when positive) still
            // goes out as an integer.
            const TWO_63: f64 = 9_223_372_036_854_775_808.0;
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && (-TWO_63..TWO_63).contains(&f) => {
                    Value::from(f as i64)
                }
                Some(f) if f.fract() == 0.0 && (0.0..2.0 * TWO_63).contains(&f) => {
                    Value::from(f as u64)
                }
                Some(f) => Number::from_f64(f).map_or(value, Value::Number),
                None => value,
            }
        }
        _ => value,
    }
}

/// `true/false/yes/no` and their usual short forms, in any case.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "y" | "on" | "1" => Some(true),
        "false" | "no" | "n" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Finds the choice a person meant: the value itself, else a label (exact,
/// then case-insensitive when that is unambiguous). Anything else is kept as
/// typed, so validation can say it is not one of the choices.
pub(super) fn match_choice(choices: &[Choice], text: &str) -> String {
    if choices.iter().any(|c| c.value == text) {
        return text.to_string();
    }
    if let Some(c) = choices.iter().find(|c| c.label.as_deref() == Some(text)) {
        return c.value.clone();
    }
    let lower = text.to_lowercase();
    let matches: Vec<&Choice> = choices
        .iter()
        .filter(|c| {
            c.value.to_lowercase() == lower
                || c.label.as_deref().map(str::to_lowercase).as_deref() == Some(lower.as_str())
        })
        .collect();
    if matches.len() == 1 {
        return matches[0].value.clone();
    }
    text.to_string()
}

/// [`match_choice`] over a multi-select's items; non-strings are kept for
/// validation to reject.
pub(super) fn match_items(choices: &[Choice], items: Vec<Value>) -> Value {
    Value::Array(
        items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Value::String(match_choice(choices, &s)),
                other => other,
            })
            .collect(),
    )
}
