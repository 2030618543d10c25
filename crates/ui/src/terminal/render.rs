//! What the person sees around the prompts: the header naming the server
//! and its message, and how answers are shown in the review. Every piece of
//! server text passes through [`elicit_core::text::sanitize`] first.

use console::style;
use serde_json::Value;

use super::tty::Screen;

use elicit_core::elicitation::schema::{FieldKind, FormField};
use elicit_core::text::sanitize::{sanitize_block, sanitize_line};

/// The header drawn before a form or a URL request.
pub fn header(
    term: &Screen,
    server: &str,
    what: &str,
    message: &str,
    position: Option<(usize, usize)>,
) {
    let server = sanitize_line(server);
    let pos = position
        .map(|(i, n)| format!("  ({i} of {n})"))
        .unwrap_or_default();
    let _ = term.write_line("");
    let _ = term.write_line(&format!(
        "{} {} {}{}",
        style("╭─").dim(),
        style(server).bold().cyan(),
        what,
        style(pos).dim()
    ));
    let message = sanitize_block(message);
    if !message.trim().is_empty() {
        for line in message.lines() {
            let _ = term.write_line(&format!("{} {line}", style("│").dim()));
        }
    }
}

/// Closes the header box with a line of key hints.
pub(crate) fn footer(term: &Screen, hint: &str) {
    let _ = term.write_line(&format!("{} {}", style("╰─").dim(), style(hint).dim()));
}

/// A field's question line: label, required marker, hint.
pub(crate) fn field_question(field: &FormField) -> String {
    let mut s = format!("{}", style(sanitize_line(field.label())).bold());
    if field.required {
        s.push_str(&format!("{}", style(" *").red()));
    }
    if let Some(h) = field.hint() {
        s.push_str(&format!(
            " {}",
            style(format!("({})", sanitize_line(&h))).dim()
        ));
    }
    s
}

/// A value as shown in the review: labels for choices, yes/no, `—` when
/// left out.
pub(crate) fn show_value(field: &FormField, value: Option<&Value>) -> String {
    let Some(value) = value else {
        return format!("{}", style("—").dim());
    };
    let label_of = |v: &str| -> String {
        match &field.kind {
            FieldKind::Select { choices } | FieldKind::MultiSelect { choices, .. } => choices
                .iter()
                .find(|c| c.value == v)
                .map(|c| c.display().to_string())
                .unwrap_or_else(|| v.to_string()),
            _ => v.to_string(),
        }
    };
    let text = match value {
        Value::String(s) => label_of(s),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(label_of).unwrap_or_else(|| i.to_string()))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    };
    truncate(&sanitize_line(&text), 60)
}

pub use elicit_core::text::truncate;
