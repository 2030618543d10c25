//! What counts as a link in a message or a field's words, for the rules
//! that flag one.

/// Whether text holds an http(s) link.
pub(super) fn has_link(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("https://") || lower.contains("http://")
}
