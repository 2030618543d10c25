//! The form flow: one prompt per unanswered field in the schema's order,
//! then a review where the person submits, edits, declines or cancels (the
//! spec's "review before sending" MUST).

use console::style;
use serde_json::{Map, Value};

use super::render::{field_question, footer, header, show_value};
use super::tty::Screen;
use super::widgets::{
    consent_pause, discard_typeahead, multi_select, read_line_or_back, select, select_keyed,
    Interrupt, Prompted,
};
use elicit_core::elicitation::schema::{Choice, FieldKind, FormField, FormSchema};
use elicit_core::text::sanitize::{looks_like_secret, sanitize_line};

/// How the form ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FormOutcome {
    Submit(Map<String, Value>),
    Decline,
}

const SKIP: &str = "— skip —";

/// Who asks, and what the person may answer.
pub(crate) struct Asking<'a> {
    pub server: &'a str,
    pub message: &'a str,
    pub position: Option<(usize, usize)>,
    /// Whether declining is a choice (not for elicit's own forms).
    pub decline: bool,
}

/// Runs the whole form. `values` were given by `--answer`; `missing` are
/// asked. Cancel comes back as `Err(Interrupt::Cancelled)`.
pub(crate) fn run(
    term: &Screen,
    asking: &Asking<'_>,
    form: &FormSchema,
    mut values: Map<String, Value>,
    missing: &[String],
) -> Prompted<FormOutcome> {
    let Asking {
        server,
        message,
        position,
        decline,
    } = *asking;
    // Keys typed before the form appeared (while a server worked) answer
    // no question the person has seen; keys typed once it is up are kept.
    discard_typeahead(term);
    header(term, server, "asks for input", message, position);
    if form.fields.is_empty() {
        footer(term, "nothing to fill in: accept, decline or cancel");
        consent_pause(term)?;
        let items = ["Accept", "Decline", "Cancel"].map(String::from);
        return match select(term, "Your answer", &items, Some(0))? {
            0 => Ok(FormOutcome::Submit(Map::new())),
            1 => Ok(FormOutcome::Decline),
            _ => Err(Interrupt::Cancelled),
        };
    }
    footer(term, &form_hint(form, missing));
    let asked: Vec<&FormField> = missing.iter().filter_map(|n| form.field(n)).collect();
    let mut i = 0;
    while let Some(field) = asked.get(i) {
        // Back at a field, its answer so far (else its default) is
        // pre-filled.
        let current = values
            .get(&field.name)
            .cloned()
            .or_else(|| field.usable_default());
        match ask_step(term, field, current.as_ref(), i > 0)? {
            Step::Answer(Some(v)) => {
                values.insert(field.name.clone(), v);
                i += 1;
            }
            Step::Answer(None) => {
                values.shift_remove(&field.name);
                i += 1;
            }
            Step::Back => i -= 1,
        }
    }
    // A lone yes/no, just answered, is its own review: the choice was the
    // person's consent to send it.
    if let ([field], [asked]) = (form.fields.as_slice(), asked.as_slice()) {
        if matches!(field.kind, FieldKind::Boolean) && field.name == asked.name {
            if let Some(v) = values.get(&field.name) {
                let mut content = Map::new();
                content.insert(field.name.clone(), v.clone());
                return Ok(FormOutcome::Submit(content));
            }
        }
    }
    review(term, form, values, decline)
}

/// The key line under the header: how many fields are asked (not those
/// already answered by `--answer`), and `* required` only when one of them
/// is.
fn form_hint(form: &FormSchema, missing: &[String]) -> String {
    let asked: Vec<&FormField> = missing.iter().filter_map(|n| form.field(n)).collect();
    let given = form.fields.len().saturating_sub(asked.len());
    let mut parts = vec![format!(
        "{} field{}",
        asked.len(),
        if asked.len() == 1 { "" } else { "s" }
    )];
    if given > 0 {
        parts[0].push_str(&format!(" ({given} more given by --answer)"));
    }
    if asked.iter().any(|f| f.required) {
        parts.push("* required".into());
    }
    parts.push("Enter keeps the pre-filled value (empty: skip)".into());
    if asked.len() > 1 {
        parts.push("↑ on an empty field goes back".into());
    }
    parts.push("Esc cancels".into());
    parts.join(" · ")
}

/// Shows every answer, then: submit (Enter), edit a field, decline, cancel.
fn review(
    term: &Screen,
    form: &FormSchema,
    mut values: Map<String, Value>,
    decline: bool,
) -> Prompted<FormOutcome> {
    loop {
        let _ = term.write_line("");
        let _ = term.write_line(&format!("{}", style("Review your answers").bold()));
        let width = form
            .fields
            .iter()
            .map(|f| sanitize_line(f.label()).chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        for f in &form.fields {
            let label = super::render::truncate(&sanitize_line(f.label()), 40);
            let _ = term.write_line(&format!(
                "  {label:<width$}  {}",
                show_value(f, values.get(&f.name))
            ));
        }
        let problems = form.validate(&values).err().unwrap_or_default();
        for p in &problems {
            let _ = term.write_line(&format!(
                "  {} {}",
                style("✗").red(),
                sanitize_line(&p.to_string())
            ));
        }
        let items: Vec<String> = if decline {
            vec![
                "Submit (accept)",
                "Edit a field",
                "Decline (send nothing)",
                "Cancel",
            ]
        } else {
            vec!["Use these", "Edit a field", "Cancel"]
        }
        .into_iter()
        .map(String::from)
        .collect();
        let default = if problems.is_empty() { 0 } else { 1 };
        consent_pause(term)?;
        match select(term, "Send these answers?", &items, Some(default))? {
            0 if problems.is_empty() => return Ok(FormOutcome::Submit(form.order(values))),
            0 => {
                let _ = term.write_line(&format!(
                    "  {} fix the fields marked ✗ first",
                    style("✗").red()
                ));
            }
            1 => {
                let mut labels: Vec<String> = form
                    .fields
                    .iter()
                    .map(|f| {
                        format!(
                            "{}: {}",
                            super::render::truncate(&sanitize_line(f.label()), 28),
                            show_value(f, values.get(&f.name))
                        )
                    })
                    .collect();
                labels.push("← back to the review".into());
                let i = select(term, "Which field?", &labels, Some(0))?;
                if let Some(field) = form.fields.get(i) {
                    let current = values.get(&field.name).cloned();
                    match ask_field(term, field, current.as_ref())? {
                        Some(v) => {
                            values.insert(field.name.clone(), v);
                        }
                        None => {
                            values.shift_remove(&field.name);
                        }
                    }
                }
            }
            2 if decline => return Ok(FormOutcome::Decline),
            _ => return Err(Interrupt::Cancelled),
        }
    }
}

/// Asks one field until the answer is valid. `Ok(None)` = skipped (left
/// out of the content, never sent as `""` or `null`).
pub fn ask_field(
    term: &Screen,
    field: &FormField,
    current: Option<&Value>,
) -> Prompted<Option<Value>> {
    match ask_step(term, field, current, false)? {
        Step::Answer(v) => Ok(v),
        // Not offered here: nothing asks to go back.
        Step::Back => Ok(current.cloned()),
    }
}

/// One field's outcome in the walk through a form.
enum Step {
    /// The value, or `None` when skipped.
    Answer(Option<Value>),
    /// ↑ or Shift-Tab on an empty text field: ask the field before again.
    Back,
}

/// [`ask_field`], where `can_go_back` lets an empty text field ask for
/// the field before.
fn ask_step(
    term: &Screen,
    field: &FormField,
    current: Option<&Value>,
    can_go_back: bool,
) -> Prompted<Step> {
    let drawn = Drawn {
        term,
        rows: std::cell::Cell::new(0),
        can_go_back,
        went_back: std::cell::Cell::new(false),
    };
    let result = prompt_field(&drawn, field, current);
    // Esc, Ctrl-C or a timeout take the whole prompt away (its title,
    // description and hints too), for the one `✗ cancelled` line; so does
    // going back, for the field before.
    if drawn.went_back.get() || matches!(result, Err(Interrupt::Cancelled | Interrupt::Abandoned)) {
        drawn.wipe();
    }
    // A text answer collapses to one `✔ question · answer` line under its
    // description, as a list's does: the hints, errors and input line go.
    let is_list = matches!(
        field.kind,
        FieldKind::Boolean | FieldKind::Select { .. } | FieldKind::MultiSelect { .. }
    );
    if let (Ok(answer), false, false) = (&result, drawn.went_back.get(), is_list) {
        drawn.wipe();
        let shown = match answer {
            None => "skipped".to_string(),
            Some(_) if looks_like_secret(&field.name, field.title.as_deref()) => "••••••".into(),
            Some(Value::String(text)) => sanitize_line(text),
            Some(other) => sanitize_line(&other.to_string()),
        };
        let _ = term.write_line("");
        if let Some(d) = &field.description {
            for line in elicit_core::text::sanitize::sanitize_block(d).lines() {
                let _ = term.write_line(&format!("  {}", style(line).dim()));
            }
        }
        let line = super::widgets::answered_line(&field_question(field), &shown);
        let _ = term.write_line(&line);
    }
    match result {
        Ok(_) if drawn.went_back.get() => Ok(Step::Back),
        Ok(v) => Ok(Step::Answer(v)),
        Err(e) => Err(e),
    }
}

/// The lines a field's prompt wrote above its widget, counted in screen
/// rows (a long line wraps), so they can be wiped.
struct Drawn<'a> {
    term: &'a Screen,
    rows: std::cell::Cell<usize>,
    /// Whether ↑/Shift-Tab on an empty text field may go back a field.
    can_go_back: bool,
    /// Set when it did.
    went_back: std::cell::Cell<bool>,
}

impl Drawn<'_> {
    fn line(&self, text: &str) {
        let width = (self.term.size().1 as usize).max(1);
        let chars = console::measure_text_width(text).max(1);
        self.rows.set(self.rows.get() + chars.div_ceil(width));
        let _ = self.term.write_line(text);
    }

    fn wipe(&self) {
        let rows = self.rows.replace(0);
        if rows > 0 {
            let _ = self.term.clear_last_lines(rows);
        }
    }
}

fn prompt_field(
    drawn: &Drawn<'_>,
    field: &FormField,
    current: Option<&Value>,
) -> Prompted<Option<Value>> {
    let term = drawn.term;
    // No flush here: keys typed on from the last field are this field's
    // (a fast typist, a paste). Only consent screens drop type-ahead.
    drawn.line("");
    // A list draws its own "? question ›" line (and leaves "✔ question ·
    // answer" behind); a text field gets the question from us. For every
    // kind the description comes first, then warnings and key hints, then
    // the question: one place for each.
    let is_list = matches!(
        field.kind,
        FieldKind::Boolean | FieldKind::Select { .. } | FieldKind::MultiSelect { .. }
    );
    let question = field_question(field);
    draw_field_notes(drawn, field);
    if !is_list {
        drawn.line(&format!("{} {question}", style("?").yellow().bold()));
    }
    match &field.kind {
        FieldKind::Boolean => ask_boolean(term, field, current, &question),
        FieldKind::Select { choices } => ask_select(term, field, choices, current, &question),
        FieldKind::MultiSelect { choices, .. } => {
            ask_multi_select(term, field, choices, current, &question)
        }
        _ => ask_text(drawn, field, current, field.masked()),
    }
}

/// What is said above a field's question: its description, a secret's
/// warning, and the keys a hidden, multi-select or raw field takes.
fn draw_field_notes(drawn: &Drawn<'_>, field: &FormField) {
    if let Some(d) = &field.description {
        for line in elicit_core::text::sanitize::sanitize_block(d).lines() {
            drawn.line(&format!("  {}", style(line).dim()));
        }
    }
    if looks_like_secret(&field.name, field.title.as_deref()) {
        drawn.line(&format!(
            "  {} {}",
            style("⚠").yellow().bold(),
            style("this looks like a secret (password, token, key). MCP servers must not ask for secrets in a form; decline unless you trust this server.").yellow()
        ));
    }
    if field.masked() {
        drawn.line(&format!(
            "  {}",
            style("typing is hidden · Ctrl-R shows or hides it").dim()
        ));
    }
    if let FieldKind::MultiSelect { .. } = field.kind {
        drawn.line(&format!(
            "  {}",
            style("Space ticks · Enter confirms").dim()
        ));
    }
    if let FieldKind::Raw { why } = &field.kind {
        drawn.line(&format!(
            "  {}",
            style(format!(
                "not a form field MCP allows ({}); type raw JSON",
                sanitize_line(why)
            ))
            .dim()
        ));
    }
}

/// A single select: the current value (else the first choice, or "skip"
/// for an optional field) highlighted.
fn ask_select(
    term: &Screen,
    field: &FormField,
    choices: &[Choice],
    current: Option<&Value>,
    question: &str,
) -> Prompted<Option<Value>> {
    let mut items = choice_texts(choices);
    let at = current
        .and_then(Value::as_str)
        .and_then(|v| choices.iter().position(|c| c.value == v));
    if !field.required {
        items.push(SKIP.into());
    }
    let default = at.unwrap_or(if field.required { 0 } else { items.len() - 1 });
    let i = select(term, question, &items, Some(default))?;
    Ok(choices.get(i).map(|c| Value::String(c.value.clone())))
}

/// A multi-select: the current values ticked. Nothing ticked on an
/// optional field leaves it out; otherwise the set must pass the field's
/// rules before it is recorded.
fn ask_multi_select(
    term: &Screen,
    field: &FormField,
    choices: &[Choice],
    current: Option<&Value>,
    question: &str,
) -> Prompted<Option<Value>> {
    let items = choice_texts(choices);
    let ticked: Vec<bool> = choices
        .iter()
        .map(|c| {
            current
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(&c.value)))
        })
        .collect();
    let value_of = |picked: &[usize]| {
        Value::Array(
            picked
                .iter()
                .map(|&i| Value::String(choices[i].value.clone()))
                .collect(),
        )
    };
    let picked = multi_select(term, question, &items, &ticked, |picked| {
        if picked.is_empty() && !field.required {
            return Ok(());
        }
        field.check(&value_of(picked))
    })?;
    if picked.is_empty() && !field.required {
        return Ok(None);
    }
    Ok(Some(value_of(&picked)))
}

/// A text-like field (string, number, raw JSON): re-asked until valid, with
/// the rejected text kept for correction.
fn ask_text(
    drawn: &Drawn<'_>,
    field: &FormField,
    current: Option<&Value>,
    masked: bool,
) -> Prompted<Option<Value>> {
    let term = drawn.term;
    let mut initial = current.map(text_of).unwrap_or_default();
    loop {
        {
            if sanitize_line(&initial) != initial {
                // Never draw server text raw, and never silently send an
                // altered value: show it neutralised, and let the person type.
                drawn.line(&format!(
                    "  {}",
                    style(format!(
                        "pre-filled value not shown as-is (it holds control characters): {}",
                        sanitize_line(&initial)
                    ))
                    .dim()
                ));
                initial.clear();
            }
        }
        let Some(text) = read_line_or_back(
            term,
            &format!("  {} ", style("›").cyan()),
            &initial,
            masked,
            drawn.can_go_back,
        )?
        else {
            drawn.went_back.set(true);
            return Ok(None);
        };
        // The entered line stays on screen (one row: it scrolls, never wraps).
        drawn.rows.set(drawn.rows.get() + 1);
        if text.is_empty() {
            if field.required {
                show_error(
                    drawn,
                    "required: type a value (Esc cancels the whole request)",
                );
                continue;
            }
            return Ok(None);
        }
        let checked = field
            .coerce(&text)
            .and_then(|value| field.check(&value).map(|()| value));
        match checked {
            Ok(value) => return Ok(Some(value)),
            Err(reason) => {
                show_error(drawn, &reason);
                initial = text;
            }
        }
    }
}

fn ask_boolean(
    term: &Screen,
    field: &FormField,
    current: Option<&Value>,
    question: &str,
) -> Prompted<Option<Value>> {
    let mut items = vec!["Yes".to_string(), "No".to_string()];
    if !field.required {
        items.push(SKIP.into());
    }
    // A required yes/no without a default starts with nothing chosen: the
    // person must pick (Enter alone would otherwise agree to terms).
    let default = match current {
        Some(Value::Bool(true)) => Some(0),
        Some(Value::Bool(false)) => Some(1),
        _ if field.required => None,
        _ => Some(2),
    };
    Ok(
        match select_keyed(term, question, &items, default, &[('y', 0), ('n', 1)])? {
            0 => Some(Value::Bool(true)),
            1 => Some(Value::Bool(false)),
            _ => None,
        },
    )
}

/// Each choice by its title; the value sent is shown beside a title only
/// when another choice has the same one (else the person could not tell
/// them apart).
fn choice_texts(choices: &[elicit_core::elicitation::schema::Choice]) -> Vec<String> {
    fn shown(c: &elicit_core::elicitation::schema::Choice) -> &str {
        c.label.as_deref().unwrap_or(&c.value)
    }
    choices
        .iter()
        .map(|c| {
            let title = shown(c);
            let twins = choices.iter().filter(|o| shown(o) == title).count() > 1;
            match &c.label {
                Some(l) if twins && l != &c.value => format!(
                    "{} {}",
                    sanitize_line(l),
                    style(format!("({})", sanitize_line(&c.value))).dim()
                ),
                _ => sanitize_line(title),
            }
        })
        .collect()
}

/// A value as editable text: strings bare, everything else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn show_error(drawn: &Drawn<'_>, reason: &str) {
    drawn.line(&format!(
        "  {} {}",
        style("✗").red().bold(),
        style(sanitize_line(reason)).red()
    ));
}
