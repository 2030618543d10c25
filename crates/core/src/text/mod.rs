//! What may reach a person: server text made safe to show ([`sanitize`]) and
//! URLs judged before anyone is offered to open them ([`url_safety`]). The
//! terminal and the browser page both show server text only through here.

pub mod sanitize;
pub mod url_safety;

/// Shortens text to `max` characters with an ellipsis.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!(
            "{}…",
            s.chars().take(max.saturating_sub(1)).collect::<String>()
        )
    }
}
