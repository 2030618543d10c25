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
    let cid = format!("f{entry}-{index}");
    let desc_id = format!("{cid}-d");
    let hint_id = format!("{cid}-h");
    let err_id = format!("{cid}-e");
    let error = retry.and_then(|r| r.errors.iter().find(|p| p.field == field.name));
    // A date picker shows the date in the browser's own format: the
    // format the terminal names (YYYY-MM-DD) would contradict it.
    let hint = match &field.kind {
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
    };
    let mut described: Vec<&str> = Vec::new();
    if field.description.is_some() {
        described.push(&desc_id);
    }
    if hint.is_some() {
        described.push(&hint_id);
    }
    if error.is_some() {
        described.push(&err_id);
    }
    let described = described.join(" ");
    let described = (!described.is_empty()).then_some(described);
    // The values shown: what was typed when the form comes back, else the
    // field's default.
    let shown: Vec<String> = match retry {
        Some(r) => texts(r.values, &field.name)
            .into_iter()
            .map(str::to_string)
            .collect(),
        None => match field.usable_default() {
            Some(Value::Array(items)) => items.iter().map(text_of).collect(),
            Some(v) => vec![text_of(&v)],
            None => Vec::new(),
        },
    };
    let mut first = shown.first().map(String::as_str).unwrap_or("");
    // A default holding control or invisible characters is not put in the
    // field as it is (nor silently altered and sent): shown neutralised,
    // and the person types the value, as on the terminal.
    let unshown_default = (retry.is_none() && sanitize_line(first) != first).then(|| {
        let shown = sanitize_line(first);
        first = "";
        shown
    });
    let label = sanitize_line(field.label());
    let name = field.name.as_str();
    let secret = looks_like_secret(&field.name, field.title.as_deref());
    let required = field.required;
    let invalid = error.map(|_| "true");
    let notes = html! {
        @if let Some(d) = &field.description { p.desc #(desc_id) { (sanitize_block(d)) } }
        @if let Some(h) = &hint { p.hint #(hint_id) { (h) } }
        @if let FieldKind::Raw { why } = &field.kind {
            p.hint { "Not a form field MCP allows (" (sanitize_line(why)) "): type JSON." }
        }
        @if let Some(d) = &unshown_default {
            p.hint { "Pre-filled value not shown as it is (it holds control characters): " (d) }
        }
        @if secret {
            p.warn { "This looks like a secret (password, token, key). MCP servers must not ask for secrets in a form; decline unless you trust this server." }
        }
    };
    let err = html! {
        @if let Some(e) = error { p.error #(err_id) { (sanitize_line(&e.reason)) } }
    };
    let mark = html! { @if required { " " span.req aria-hidden="true" { "*" } } };
    match &field.kind {
        FieldKind::Boolean => {
            let chosen = |v: &str| first == v;
            html! {
                fieldset.field role="radiogroup" aria-required=[required.then_some("true")] aria-describedby=[described.as_deref()] aria-invalid=[invalid] {
                    legend { (label) (mark) }
                    (notes)
                    label.choice { input type="radio" name=(name) value="true" id=(format!("{cid}-y")) checked[chosen("true")]; " Yes" }
                    label.choice { input type="radio" name=(name) value="false" id=(format!("{cid}-n")) checked[chosen("false")]; " No" }
                    @if !required {
                        label.choice { input type="radio" name=(name) value="" checked[!chosen("true") && !chosen("false")]; " No answer" }
                    }
                    (err)
                }
            }
        }
        FieldKind::MultiSelect { choices, .. } => html! {
            fieldset.field aria-describedby=[described.as_deref()] aria-invalid=[invalid] {
                legend { (label) (mark) }
                (notes)
                @for (j, c) in choices.iter().enumerate() {
                    label.choice {
                        input type="checkbox" name=(name) value=(c.value) id=(format!("{cid}-{j}")) checked[shown.contains(&c.value)];
                        " " (choice_text(c))
                    }
                }
                (err)
            }
        },
        FieldKind::Select { choices } => html! {
            div.field {
                label for=(cid) { (label) (mark) }
                (notes)
                select id=(cid) name=(name) aria-required=[required.then_some("true")] aria-describedby=[described.as_deref()] aria-invalid=[invalid] {
                    option value="" selected[!choices.iter().any(|c| c.value == first)] {
                        @if required { "— choose —" } @else { "— no answer —" }
                    }
                    @for c in choices {
                        option value=(c.value) selected[c.value == first] { (choice_text(c)) }
                    }
                }
                (err)
            }
        },
        FieldKind::Raw { .. } => html! {
            div.field {
                label for=(cid) { (label) (mark) }
                (notes)
                textarea id=(cid) name=(name) rows="3" spellcheck="false" aria-required=[required.then_some("true")] aria-describedby=[described.as_deref()] aria-invalid=[invalid] { (first) }
                (err)
            }
        },
        kind => {
            let (input_type, step, min, max, placeholder, autocomplete) = match kind {
                FieldKind::Integer { minimum, maximum } => (
                    "number",
                    Some("1"),
                    minimum.as_ref().map(|n| n.to_string()),
                    maximum.as_ref().map(|n| n.to_string()),
                    None,
                    None,
                ),
                FieldKind::Number { minimum, maximum } => (
                    "number",
                    Some("any"),
                    minimum.as_ref().map(|n| n.to_string()),
                    maximum.as_ref().map(|n| n.to_string()),
                    None,
                    None,
                ),
                FieldKind::Text { format, .. } => match format {
                    Some(StringFormat::Email) => ("email", None, None, None, None, Some("email")),
                    Some(StringFormat::Uri) => {
                        ("url", None, None, None, Some("https://…"), Some("url"))
                    }
                    Some(StringFormat::Date) => ("date", None, None, None, None, None),
                    // No input type takes a time zone; the format is shown.
                    Some(StringFormat::DateTime) => {
                        ("text", None, None, None, Some("YYYY-MM-DDTHH:MM:SSZ"), None)
                    }
                    _ => ("text", None, None, None, None, None),
                },
                _ => ("text", None, None, None, None, None),
            };
            let (input_type, autocomplete) = if secret {
                ("password", Some("off"))
            } else {
                (input_type, autocomplete)
            };
            let (min_length, max_length) = match kind {
                FieldKind::Text {
                    min_length,
                    max_length,
                    ..
                } => (*min_length, *max_length),
                _ => (None, None),
            };
            html! {
                div.field {
                    label for=(cid) { (label) (mark) }
                    (notes)
                    div.input-row {
                        input id=(cid) type=(input_type) name=(name) value=(first)
                            step=[step] min=[min] max=[max] placeholder=[placeholder]
                            minlength=[min_length] maxlength=[max_length] autocomplete=[autocomplete]
                            aria-required=[required.then_some("true")] aria-describedby=[described.as_deref()] aria-invalid=[invalid];
                        @if secret {
                            button.reveal type="button" data-reveal=(cid) aria-controls=(cid) aria-pressed="false" { "Show" }
                        }
                    }
                    (err)
                }
            }
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
