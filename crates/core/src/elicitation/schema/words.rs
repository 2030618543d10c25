//! How a message about a field's value quotes values and counts them: the
//! wording the checks and the hints share, below both.

use serde_json::Value;

/// A value as quoted in a message: its JSON, cut at 60 characters.
pub(super) fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// How many values an error message lists before "… and N more": a schema
/// may carry 100 000 enum values, and the message is for a person.
pub const LISTED_VALUES: usize = 20;

/// The first [`LISTED_VALUES`] of `total` values, comma-separated, then how
/// many were left out.
pub(super) fn capped_list(values: impl Iterator<Item = String>, total: usize) -> String {
    let mut s = values
        .take(LISTED_VALUES)
        .map(|v| {
            if v.chars().count() > 60 {
                format!("{}…", v.chars().take(59).collect::<String>())
            } else {
                v
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    if total > LISTED_VALUES {
        s.push_str(&format!(" … and {} more", total - LISTED_VALUES));
    }
    s
}

pub(super) fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
