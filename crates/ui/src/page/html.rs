//! The page's HTML, through `maud`: every value is escaped by the template
//! unless marked otherwise, and only the page's own stylesheet and script
//! are. Server text is also sanitised first ([`elicit_core::text::sanitize`]), as on the
//! terminal: bidi overrides and invisible characters are made visible, not
//! only made harmless to the HTML.

use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde_json::Value;

use super::submit::{texts, Problem};
use super::{Ask, Entry, Page, State};
use elicit_core::elicitation::schema::{Choice, FieldKind, FormField, StringFormat};
use elicit_core::text::sanitize::{looks_like_secret, sanitize_block, sanitize_line};
use elicit_core::text::url_safety::{UrlAssessment, UrlWarning};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// What the page says above the list after a POST.
pub(super) enum Notice {
    Sent(String),
    Declined(String),
    Cancelled(String),
    /// The elicitation no longer waits: what became of it, when known.
    Gone(Option<String>),
    /// The answer did not pass the schema (the problems are on its form).
    Errors,
}

/// A form shown again after a refused submission: what was typed, and why
/// it was refused.
pub(super) struct Retry<'a> {
    pub id: u64,
    pub values: &'a [(String, String)],
    pub errors: &'a [Problem],
}

/// The whole page.
pub(super) fn page(
    page: &Page,
    state: &State,
    nonce: &str,
    notice: Option<(&Notice, Option<Retry<'_>>)>,
) -> String {
    let base = format!("/{}/", page.token);
    let (notice, retry) = match notice {
        Some((n, r)) => (Some(n), r),
        None => (None, None),
    };
    let waiting = state.pending.len();
    let finished = page.finished(state);
    let title = match waiting {
        0 => "elicit: nothing waiting".to_string(),
        1 => "elicit: 1 request waiting".to_string(),
        n => format!("elicit: {n} requests waiting"),
    };
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) }
                style nonce=(nonce) { (PreEscaped(STYLE)) }
            }
            body data-base=(base) data-version=(state.version) data-key=(page.proof_key) data-finished=[finished.then_some("1")] {
                header {
                    h1 { "elicit" }
                    p #status role="status" aria-live="polite" {}
                }
                main {
                    @if let Some(n) = notice { (notice_markup(n)) }
                    div #pending {
                        @for e in &state.pending {
                            (entry(page, e, retry.as_ref().filter(|r| r.id == e.id)))
                        }
                    }
                    p #empty hidden[waiting > 0] {
                        @if finished {
                            "The answer was sent and elicit has ended: nothing more comes to this page. You can close this tab."
                        } @else {
                            "Nothing is waiting for an answer. This page shows the next request by itself while elicit runs."
                        }
                    }
                    section #recent aria-labelledby="recent-h" hidden[state.recent.is_empty()] {
                        h2 #recent-h { "Answered here" }
                        ul {
                            @for f in &state.recent {
                                li data-id=(f.id) {
                                    span.server { (sanitize_line(&f.server)) }
                                    ": " (f.what) " — "
                                    span.message { (elicit_core::text::truncate(&sanitize_line(&f.message), 80)) }
                                }
                            }
                        }
                    }
                }
                script nonce=(nonce) { (PreEscaped(SCRIPT)) }
            }
        }
    };
    markup.into_string()
}

fn notice_markup(n: &Notice) -> Markup {
    let (class, text) = match n {
        Notice::Sent(s) => ("ok", format!("Sent to {}.", sanitize_line(s))),
        Notice::Declined(s) => (
            "ok",
            format!(
                "Declined: {} was told, and got none of the answers.",
                sanitize_line(s)
            ),
        ),
        Notice::Cancelled(s) => (
            "ok",
            format!(
                "Cancelled: {} was told, and got none of the answers.",
                sanitize_line(s)
            ),
        ),
        Notice::Gone(Some(what)) => (
            "bad",
            format!("This request no longer waits ({what}); nothing was sent."),
        ),
        Notice::Gone(None) => (
            "bad",
            "This request no longer waits; nothing was sent.".to_string(),
        ),
        Notice::Errors => (
            "bad",
            "Some answers need fixing; nothing was sent yet.".to_string(),
        ),
    };
    html! { p #notice class=(format!("notice {class}")) role="alert" { (text) } }
}

fn entry(page: &Page, e: &Entry, retry: Option<&Retry<'_>>) -> Markup {
    let id = e.id;
    let asks = match e.ask {
        Ask::Form { .. } => "asks for input",
        Ask::Url { .. } => "asks you to open a link",
    };
    let left_ms = e.deadline.map(|d| {
        d.saturating_duration_since(std::time::Instant::now())
            .as_millis()
    });
    html! {
        section.elicitation #(format!("e{id}")) data-id=(id) aria-labelledby=(format!("h{id}")) {
            h2 #(format!("h{id}")) {
                span.server { (sanitize_line(&e.server)) } " " (asks)
                @if let Some((n, of)) = e.position { " " span.position { "(" (n) " of " (of) ")" } }
            }
            p.message { (sanitize_block(&e.message)) }
            @if let Some(ms) = left_ms {
                p.deadline data-left-ms=(ms) {
                    "Answer within " (humantime::format_duration(std::time::Duration::from_secs(ms.div_ceil(1000) as u64)))
                    " of this page loading, or the request is cancelled."
                }
            }
            @if !e.warnings.is_empty() {
                details.warnings {
                    summary { "The request's schema has " (e.warnings.len()) " oddities" }
                    ul { @for w in &e.warnings { li { (sanitize_line(w)) } } }
                }
            }
            @match &e.ask {
                Ask::Form { form, given, missing } => {
                    form method="post" action=(format!("/{}/answer/{id}", page.token)) novalidate accept-charset="utf-8" {
                        input type="hidden" name="csrf" value=(page.csrf);
                        @if let Some(r) = retry {
                            div.problems role="alert" {
                                p { "Not sent: fix " (r.errors.len()) @if r.errors.len() == 1 { " answer" } @else { " answers" } " below." }
                            }
                        }
                        @if !given.is_empty() {
                            div.given {
                                p { "Already answered by --answer:" }
                                dl {
                                    @for (name, value) in given {
                                        dt { (sanitize_line(form.field(name).map_or(name.as_str(), |f| f.label()))) }
                                        dd { (sanitize_line(&text_of(value))) }
                                    }
                                }
                            }
                        }
                        @if form.fields.is_empty() {
                            p { "Nothing to fill in: approve or decline." }
                            div.buttons {
                                button name="action" value="accept" { "Approve" }
                                button name="action" value="decline" { "Decline" }
                            }
                        } @else {
                            @if form.fields.iter().any(|f| f.required && missing.contains(&f.name)) {
                                p.legend { span.req aria-hidden="true" { "*" } " required" }
                            }
                            @for (i, name) in missing.iter().enumerate() {
                                @if let Some(field) = form.field(name) {
                                    (control(id, i, field, retry))
                                }
                            }
                            div.buttons {
                                button.primary name="action" value="accept" { "Send" }
                                button name="action" value="decline" { "Decline" }
                                button name="action" value="cancel" { "Cancel" }
                            }
                        }
                    }
                }
                Ask::Url { assessment } => {
                    (url_block(assessment))
                    form method="post" action=(format!("/{}/answer/{id}", page.token)) novalidate {
                        input type="hidden" name="csrf" value=(page.csrf);
                        @if assessment.openable { p { "When you have finished there:" } }
                        div.buttons {
                            @if assessment.openable {
                                button.primary name="action" value="accept" { "Done" }
                            }
                            button name="action" value="decline" { "Decline" }
                            button name="action" value="cancel" { "Cancel" }
                        }
                    }
                }
            }
        }
    }
}

/// The URL, its host, every warning the terminal shows, and an Open link
/// only for what may be opened (http(s), analysed, normalised).
fn url_block(a: &UrlAssessment) -> Markup {
    let port = a
        .normalized
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.port())
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    let href = a
        .normalized
        .as_deref()
        .filter(|_| a.openable)
        .filter(|_| matches!(a.scheme.as_deref(), Some("http" | "https")));
    html! {
        dl.url {
            dt { "URL" }
            dd { code.full-url { (a.display) } }
            @if let Some(host) = &a.host_ascii {
                dt { "Host" }
                dd {
                    mark.host { (host) (port) }
                    @if let Some(uni) = &a.host_unicode { " " span.warn { "displayed as " (uni) } }
                }
            }
        }
        @if !a.warnings.is_empty() {
            ul.url-warnings {
                @for w in &a.warnings {
                    @let class = if w.is_blocking() { "blocking" } else if matches!(w, UrlWarning::LoopbackHttp) { "info" } else { "warn" };
                    li class=(class) { (sanitize_line(&w.to_string())) }
                }
            }
        }
        @match href {
            Some(href) => p {
                a.open href=(href) target="_blank" rel="noopener noreferrer" { "Open the link in a new tab" }
                " (nothing opens until you choose it)"
            },
            None => p.blocking { "This URL will not be opened: you can only decline or cancel." },
        }
    }
}

/// A value as editable text: strings bare, everything else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One field's control, its label, description, hint and error.
fn control(entry: u64, index: usize, field: &FormField, retry: Option<&Retry<'_>>) -> Markup {
    let c = ControlParts::new(entry, index, field, retry);
    match &field.kind {
        FieldKind::Boolean => yes_no(&c),
        FieldKind::MultiSelect { choices, .. } => checkboxes(&c, choices),
        FieldKind::Select { choices } => dropdown(&c, choices),
        FieldKind::Raw { .. } => json_box(&c),
        kind => text_input(&c, kind),
    }
}

/// What every kind of control shows around its input: the ids, the label
/// and its required mark, the notes under it, the error, and the values.
struct ControlParts<'a> {
    cid: String,
    name: &'a str,
    label: String,
    required: bool,
    invalid: Option<&'static str>,
    /// The ids of the notes that describe the input (`aria-describedby`).
    described: Option<String>,
    notes: Markup,
    err: Markup,
    mark: Markup,
    /// The values shown: what was typed when the form comes back, else the
    /// field's default.
    shown: Vec<String>,
    /// The first of them, as the input's value ("" when it cannot be shown).
    first: String,
    secret: bool,
}

impl<'a> ControlParts<'a> {
    fn new(entry: u64, index: usize, field: &'a FormField, retry: Option<&Retry<'_>>) -> Self {
        let cid = format!("f{entry}-{index}");
        let ids = NoteIds {
            desc: format!("{cid}-d"),
            hint: format!("{cid}-h"),
            err: format!("{cid}-e"),
        };
        let error = retry.and_then(|r| r.errors.iter().find(|p| p.field == field.name));
        let hint = page_hint(field);
        let described = ids.described(field.description.is_some(), hint.is_some(), error.is_some());
        let shown = shown_values(field, retry);
        let mut first = shown.first().cloned().unwrap_or_default();
        // A default holding control or invisible characters is not put in the
        // field as it is (nor silently altered and sent): shown neutralised,
        // and the person types the value, as on the terminal.
        let unshown_default = (retry.is_none() && sanitize_line(&first) != first)
            .then(|| sanitize_line(&std::mem::take(&mut first)));
        let secret = looks_like_secret(&field.name, field.title.as_deref());
        let required = field.required;
        let notes = notes(
            field,
            &ids,
            hint.as_deref(),
            unshown_default.as_deref(),
            secret,
        );
        let err = html! {
            @if let Some(e) = error { p.error #(ids.err) { (sanitize_line(&e.reason)) } }
        };
        ControlParts {
            label: sanitize_line(field.label()),
            name: field.name.as_str(),
            required,
            invalid: error.map(|_| "true"),
            described,
            notes,
            err,
            mark: html! { @if required { " " span.req aria-hidden="true" { "*" } } },
            shown,
            first,
            secret,
            cid,
        }
    }

    fn aria_required(&self) -> Option<&'static str> {
        self.required.then_some("true")
    }
}

/// The ids of a control's notes.
struct NoteIds {
    desc: String,
    hint: String,
    err: String,
}

impl NoteIds {
    /// The ids of the notes a control has, for `aria-describedby`.
    fn described(&self, desc: bool, hint: bool, error: bool) -> Option<String> {
        let described: Vec<&str> = [(desc, &self.desc), (hint, &self.hint), (error, &self.err)]
            .into_iter()
            .filter(|(has, _)| *has)
            .map(|(_, id)| id.as_str())
            .collect();
        (!described.is_empty()).then(|| described.join(" "))
    }
}

/// The field's hint as the page shows it. A date picker shows the date in
/// the browser's own format: the format the terminal names (YYYY-MM-DD)
/// would contradict it.
fn page_hint(field: &FormField) -> Option<String> {
    match &field.kind {
        FieldKind::Text {
            format: Some(StringFormat::Date),
            ..
        } => field.hint().and_then(|h| {
            let rest: Vec<&str> = h
                .split(", ")
                .filter(|p| *p != StringFormat::Date.hint())
                .collect();
            (!rest.is_empty()).then(|| sanitize_line(&rest.join(", ")))
        }),
        _ => field.hint().map(|h| sanitize_line(&h)),
    }
}

/// The values a control shows: what was typed when the form comes back,
/// else the field's default.
fn shown_values(field: &FormField, retry: Option<&Retry<'_>>) -> Vec<String> {
    match retry {
        Some(r) => texts(r.values, &field.name)
            .into_iter()
            .map(str::to_string)
            .collect(),
        None => match field.usable_default() {
            Some(Value::Array(items)) => items.iter().map(text_of).collect(),
            Some(v) => vec![text_of(&v)],
            None => Vec::new(),
        },
    }
}

/// The notes under a control's label: description, hint, what a raw field
/// takes, a default not shown as it is, a secret's warning.
fn notes(
    field: &FormField,
    ids: &NoteIds,
    hint: Option<&str>,
    unshown_default: Option<&str>,
    secret: bool,
) -> Markup {
    html! {
        @if let Some(d) = &field.description { p.desc #(ids.desc) { (sanitize_block(d)) } }
        @if let Some(h) = hint { p.hint #(ids.hint) { (h) } }
        @if let FieldKind::Raw { why } = &field.kind {
            p.hint { "Not a form field MCP allows (" (sanitize_line(why)) "): type JSON." }
        }
        @if let Some(d) = unshown_default {
            p.hint { "Pre-filled value not shown as it is (it holds control characters): " (d) }
        }
        @if secret {
            p.warn { "This looks like a secret (password, token, key). MCP servers must not ask for secrets in a form; decline unless you trust this server." }
        }
    }
}

/// A boolean: Yes, No, and No answer when it is optional.
fn yes_no(c: &ControlParts<'_>) -> Markup {
    let chosen = |v: &str| c.first == v;
    let cid = &c.cid;
    html! {
        fieldset.field role="radiogroup" aria-required=[c.aria_required()] aria-describedby=[c.described.as_deref()] aria-invalid=[c.invalid] {
            legend { (c.label) (c.mark) }
            (c.notes)
            label.choice { input type="radio" name=(c.name) value="true" id=(format!("{cid}-y")) checked[chosen("true")]; " Yes" }
            label.choice { input type="radio" name=(c.name) value="false" id=(format!("{cid}-n")) checked[chosen("false")]; " No" }
            @if !c.required {
                label.choice { input type="radio" name=(c.name) value="" checked[!chosen("true") && !chosen("false")]; " No answer" }
            }
            (c.err)
        }
    }
}

/// A multi-select: one checkbox per choice.
fn checkboxes(c: &ControlParts<'_>, choices: &[Choice]) -> Markup {
    let cid = &c.cid;
    html! {
        fieldset.field aria-describedby=[c.described.as_deref()] aria-invalid=[c.invalid] {
            legend { (c.label) (c.mark) }
            (c.notes)
            @for (j, choice) in choices.iter().enumerate() {
                label.choice {
                    input type="checkbox" name=(c.name) value=(choice.value) id=(format!("{cid}-{j}")) checked[c.shown.contains(&choice.value)];
                    " " (choice_text(choice))
                }
            }
            (c.err)
        }
    }
}

/// A single select: a drop-down with an empty first option.
fn dropdown(c: &ControlParts<'_>, choices: &[Choice]) -> Markup {
    html! {
        div.field {
            label for=(c.cid) { (c.label) (c.mark) }
            (c.notes)
            select id=(c.cid) name=(c.name) aria-required=[c.aria_required()] aria-describedby=[c.described.as_deref()] aria-invalid=[c.invalid] {
                option value="" selected[!choices.iter().any(|choice| choice.value == c.first)] {
                    @if c.required { "— choose —" } @else { "— no answer —" }
                }
                @for choice in choices {
                    option value=(choice.value) selected[choice.value == c.first] { (choice_text(choice)) }
                }
            }
            (c.err)
        }
    }
}

/// A field MCP does not allow: its JSON typed in a text area.
fn json_box(c: &ControlParts<'_>) -> Markup {
    html! {
        div.field {
            label for=(c.cid) { (c.label) (c.mark) }
            (c.notes)
            textarea id=(c.cid) name=(c.name) rows="3" spellcheck="false" aria-required=[c.aria_required()] aria-describedby=[c.described.as_deref()] aria-invalid=[c.invalid] { (c.first) }
            (c.err)
        }
    }
}

/// The attributes of an `input` for a field's kind.
struct InputKind {
    input_type: &'static str,
    step: Option<&'static str>,
    min: Option<String>,
    max: Option<String>,
    placeholder: Option<&'static str>,
    autocomplete: Option<&'static str>,
    min_length: Option<u64>,
    max_length: Option<u64>,
}

impl InputKind {
    fn of(kind: &FieldKind, secret: bool) -> InputKind {
        let plain = |input_type, placeholder, autocomplete| InputKind {
            input_type,
            step: None,
            min: None,
            max: None,
            placeholder,
            autocomplete,
            min_length: None,
            max_length: None,
        };
        let numeric = |step, minimum: &Option<_>, maximum: &Option<_>| InputKind {
            step: Some(step),
            min: minimum.as_ref().map(|n: &serde_json::Number| n.to_string()),
            max: maximum.as_ref().map(|n: &serde_json::Number| n.to_string()),
            ..plain("number", None, None)
        };
        let mut input = match kind {
            FieldKind::Integer { minimum, maximum } => numeric("1", minimum, maximum),
            FieldKind::Number { minimum, maximum } => numeric("any", minimum, maximum),
            FieldKind::Text {
                format,
                min_length,
                max_length,
                ..
            } => InputKind {
                min_length: *min_length,
                max_length: *max_length,
                ..match format {
                    Some(StringFormat::Email) => plain("email", None, Some("email")),
                    Some(StringFormat::Uri) => plain("url", Some("https://…"), Some("url")),
                    Some(StringFormat::Date) => plain("date", None, None),
                    // No input type takes a time zone; the format is shown.
                    Some(StringFormat::DateTime) => {
                        plain("text", Some("YYYY-MM-DDTHH:MM:SSZ"), None)
                    }
                    _ => plain("text", None, None),
                }
            },
            _ => plain("text", None, None),
        };
        if secret {
            input.input_type = "password";
            input.autocomplete = Some("off");
        }
        input
    }
}

/// Any other field: one `input` of the type its kind suits.
fn text_input(c: &ControlParts<'_>, kind: &FieldKind) -> Markup {
    let i = InputKind::of(kind, c.secret);
    html! {
        div.field {
            label for=(c.cid) { (c.label) (c.mark) }
            (c.notes)
            div.input-row {
                input id=(c.cid) type=(i.input_type) name=(c.name) value=(c.first)
                    step=[i.step] min=[i.min] max=[i.max] placeholder=[i.placeholder]
                    minlength=[i.min_length] maxlength=[i.max_length] autocomplete=[i.autocomplete]
                    aria-required=[c.aria_required()] aria-describedby=[c.described.as_deref()] aria-invalid=[c.invalid];
                @if c.secret {
                    button.reveal type="button" data-reveal=(c.cid) aria-controls=(c.cid) aria-pressed="false" { "Show" }
                }
            }
            (c.err)
        }
    }
}

fn choice_text(c: &Choice) -> String {
    match &c.label {
        Some(l) if l != &c.value => {
            format!("{} ({})", sanitize_line(l), sanitize_line(&c.value))
        }
        _ => sanitize_line(&c.value),
    }
}
