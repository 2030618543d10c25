//! `elicit test --explore`: from one recorded flow, the other answers a
//! person or a client could have given, each run against the server and
//! its outcome classified. A variant answers every elicitation as recorded
//! except one: there it declines, cancels, or sends content at an edge of
//! the form (from the schema model: [`elicit_core::elicitation::schema::Edge`]),
//! or, with `--invalid`, content that breaks it on purpose.
//!
//! What counts as a failure: a crash (the server exited), a hang (no reply
//! within `--timeout`) and a protocol error always; under `--invalid`, a
//! result without `isError` (the server accepted content that breaks its
//! own schema). A result, a tool error, an error reply and a question that
//! changed (past that point the variant is no longer comparable with the
//! recording) are reported.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::diff::{request_diff, same_request};
use super::replay::ReplayOptions;
use super::{protocol_choice, Cassette, Exchange, ServerSpec};
use crate::server_log::ServerLog;
use elicit_core::elicitation::answers::FormPlan;
use elicit_core::elicitation::protocol::{Action, ElicitResult};
use elicit_core::elicitation::resolve::{self, Elicitation, NoTerminal};
use elicit_core::elicitation::schema::{slug_of, Edge, FormSchema};
use elicit_core::error::{ElicitError, ServerError};
use elicit_core::text::sanitize::sanitize_line;
use elicit_session::mcp::call::CallEnd;
use elicit_session::mcp::handler::{ElicitHandler, ElicitObserver};
use elicit_session::mcp::session::{ConnectError, Session, SessionOptions};
use elicit_session::transport::{ServerTarget, TransportChoice};

pub mod save;

/// One other answer to try.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// What it tests, as a file-name part: `decline-at-2`,
    /// `edge-1-seats-max`, `invalid-1-seats-above-max`.
    pub slug: String,
    /// What it tests, in words.
    pub what: String,
    /// The elicitation answered differently (0-based).
    pub at: usize,
    /// The ElicitResult sent there.
    pub answer: Value,
    /// Content that breaks the schema, sent on purpose.
    pub invalid: bool,
}

/// How a variant's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A tool result.
    Result,
    /// A tool result with `isError`.
    ToolError,
    /// A JSON-RPC error in reply to the call.
    ErrorReply,
    /// The server broke the protocol (a message that is not JSON-RPC, a
    /// reply of the wrong shape).
    ProtocolError,
    /// The server exited (or its connection ended) before it replied.
    Crash,
    /// No reply within `--timeout`.
    Hang,
    /// The server asked something other than recorded: the variant stops
    /// there (no longer comparable).
    QuestionChanged,
    /// The variant could not run (the server could not be started, the
    /// recorded answers do not fit the form).
    NotRun,
}

impl Class {
    /// The word in reports.
    pub fn word(self) -> &'static str {
        match self {
            Class::Result => "result",
            Class::ToolError => "tool-error",
            Class::ErrorReply => "error-reply",
            Class::ProtocolError => "protocol-error",
            Class::Crash => "crash",
            Class::Hang => "hang",
            Class::QuestionChanged => "question-changed",
            Class::NotRun => "not-run",
        }
    }
}

/// A variant's outcome.
#[derive(Debug, Clone)]
pub struct Explored {
    /// What kind of outcome it was.
    pub class: Class,
    /// Why it is a failure, when it is one.
    pub failure: Option<String>,
    /// What happened, in lines (the result in words, the changed question).
    pub detail: Vec<String>,
    /// How long the variant took.
    pub elapsed: Duration,
    /// The variant as a cassette whose recorded result is what the server
    /// returned: for a result or a tool error of valid content (a replay
    /// sends only content that fits the form).
    pub cassette: Option<Cassette>,
    /// The server's last lines of stderr, for a failure.
    pub server_stderr: Vec<String>,
}

/// The file a variant is saved as: `book.decline-at-2.cassette.json` for
/// `book.cassette.json`.
pub fn file_name(original: &std::path::Path, variant: &Variant) -> String {
    let name = original
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".cassette.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name);
    format!("{stem}.{}.cassette.json", variant.slug)
}

/// The content a recorded accept sent, by the schema model: `None` for a
/// URL elicitation, a decline or cancel, or an answer that cannot be read.
fn recorded_content(exchange: &Exchange) -> Option<(FormSchema, Map<String, Value>)> {
    let form = FormSchema::parse(exchange.request.get("requestedSchema")?).ok()?;
    let mut answer = exchange.answer.clone();
    if let super::AnswerSpec::Result(v) = &mut answer {
        if let Some(c) = v.get_mut("content").and_then(Value::as_object_mut) {
            super::fill_secret_values(c).ok()?;
        }
    }
    match answer.scripted().ok()?.plan_form(&form, false).ok()? {
        FormPlan::Decided(Action::Accept, values) => Some((form, values)),
        _ => None,
    }
}

fn accept(form: &FormSchema, content: Map<String, Value>) -> Value {
    json!({"action": "accept", "content": Value::Object(form.order(content))})
}

/// What the next variant changes, before it is built: an action at an
/// elicitation, or one field's edge.
enum Step {
    Action(usize, &'static str),
    Edge(usize, Edge, bool),
}

/// Where the generator is within one elicitation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Actions,
    Edges { breaking: bool },
    Done,
}

/// The recorded form of the elicitation the generator is at, and the
/// edges of the field it is at that are still to come.
struct FormAt {
    form: FormSchema,
    content: Map<String, Value>,
    field: usize,
    edges: std::vec::IntoIter<Edge>,
}

/// Every variant of a cassette, in order, made one at a time: at each
/// elicitation a decline, a cancel (unless that is what was recorded),
/// each field's edges; with `invalid`, content that breaks the form too.
/// Only the variant handed out holds a copy of the recorded content, so
/// `take(n)` costs `n` variants whatever the form's size, and
/// [`Self::count_rest`] counts the others without making them. Slugs are
/// unique within the cassette: a slug made twice (two names that become
/// the same file-name part) gets `-2`, `-3`, …
pub struct Variants<'c> {
    cassette: &'c Cassette,
    invalid: bool,
    at: usize,
    phase: Phase,
    action: usize,
    form: Option<FormAt>,
    slugs: std::collections::HashSet<String>,
}

/// The variants of `cassette`, made as they are taken (see [`Variants`]).
pub fn variants(cassette: &Cassette, invalid: bool) -> Variants<'_> {
    Variants {
        cassette,
        invalid,
        at: 0,
        phase: Phase::Actions,
        action: 0,
        form: None,
        slugs: std::collections::HashSet::new(),
    }
}

impl Variants<'_> {
    /// How many variants are left, counted without making them.
    pub fn count_rest(mut self) -> usize {
        std::iter::from_fn(|| self.next_step()).count()
    }

    fn next_step(&mut self) -> Option<Step> {
        loop {
            let exchange = self.cassette.elicitations.get(self.at)?;
            match self.phase {
                Phase::Actions => {
                    let actions = ["decline", "cancel"];
                    if let Some(action) = actions.get(self.action).copied() {
                        self.action += 1;
                        if recorded_action(exchange) != action {
                            return Some(Step::Action(self.at, action));
                        }
                        continue;
                    }
                    self.form = recorded_content(exchange).map(|(form, content)| FormAt {
                        form,
                        content,
                        field: 0,
                        edges: Vec::new().into_iter(),
                    });
                    self.phase = Phase::Edges { breaking: false };
                }
                Phase::Edges { breaking } => {
                    if let Some(edge) = self.form.as_mut().and_then(next_edge(breaking)) {
                        return Some(Step::Edge(self.at, edge, breaking));
                    }
                    if let (false, true, Some(f)) = (breaking, self.invalid, self.form.as_mut()) {
                        f.field = 0;
                        self.phase = Phase::Edges { breaking: true };
                    } else {
                        self.phase = Phase::Done;
                    }
                }
                Phase::Done => {
                    self.at += 1;
                    self.action = 0;
                    self.form = None;
                    self.phase = Phase::Actions;
                }
            }
        }
    }

    /// The variant a step makes: the one place a copy of the content is
    /// taken.
    fn build(&mut self, step: Step) -> Variant {
        let mut variant = match step {
            Step::Action(at, action) => Variant {
                slug: format!("{action}-at-{}", at + 1),
                what: format!("{action} at elicitation {}", at + 1),
                at,
                answer: json!({ "action": action }),
                invalid: false,
            },
            Step::Edge(at, edge, breaks) => {
                let f = self
                    .form
                    .as_ref()
                    .expect("an edge comes from the form it is at");
                edge_variant(at, f, edge, breaks)
            }
        };
        variant.slug = unique(&mut self.slugs, variant.slug);
        #[cfg(test)]
        BUILT.with(|n| n.set(n.get() + 1));
        variant
    }
}

impl Iterator for Variants<'_> {
    type Item = Variant;

    fn next(&mut self) -> Option<Variant> {
        let step = self.next_step()?;
        Some(self.build(step))
    }
}

#[cfg(test)]
thread_local! {
    /// Variants built on this thread: what a test counts to show that
    /// taking a few builds only those.
    static BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `slug`, or with `-2`, `-3`, … when an earlier one has it.
pub fn unique(taken: &mut std::collections::HashSet<String>, slug: String) -> String {
    if taken.insert(slug.clone()) {
        return slug;
    }
    let mut n = 2;
    loop {
        let candidate = format!("{slug}-{n}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
        n += 1;
    }
}

/// What was recorded at an elicitation: `accept`, `decline` or `cancel`.
fn recorded_action(exchange: &Exchange) -> String {
    let recorded = exchange.answer.to_value();
    recorded
        .get("action")
        .and_then(Value::as_str)
        .or(recorded.as_str())
        .unwrap_or("accept")
        .to_string()
}

/// The next edge of the form, field by field, that changes the recorded
/// content (an edge equal to what was sent tests nothing new).
fn next_edge(breaking: bool) -> impl FnMut(&mut FormAt) -> Option<Edge> {
    move |f| loop {
        if let Some(edge) = f.edges.next() {
            let field = &f.form.fields[f.field - 1];
            if f.content.get(&field.name) != edge.value.as_ref() {
                return Some(edge);
            }
            continue;
        }
        let field = f.form.fields.get(f.field)?;
        f.field += 1;
        f.edges = if breaking {
            field.breaking()
        } else {
            field.edges()
        }
        .into_iter();
    }
}

/// The variant that sends one field's edge at elicitation `at`.
fn edge_variant(at: usize, f: &FormAt, edge: Edge, breaks: bool) -> Variant {
    let i = f.field - 1;
    let field = &f.form.fields[i];
    let n = at + 1;
    let mut changed = f.content.clone();
    match &edge.value {
        Some(v) => changed.insert(field.name.clone(), v.clone()),
        None => changed.shift_remove(&field.name),
    };
    let kind = if breaks { "invalid" } else { "edge" };
    Variant {
        slug: format!("{kind}-{n}-{}-{}", slug_of(&field.name, i), edge.slug),
        what: format!(
            "elicitation {n}: field {} {}{}",
            sanitize_line(&field.name),
            edge.slug.replace('-', " "),
            edge.value
                .as_ref()
                .map(|v| format!(" ({})", super::diff::show(v)))
                .unwrap_or_default()
        ),
        at,
        answer: accept(&f.form, changed),
        invalid: breaks,
    }
}

/// The error a variant stops the session with once the server asked
/// something else.
fn stopped() -> ElicitError {
    ElicitError::Server(ServerError::ReplayStopped)
}

/// Answers a session's elicitations as recorded, but the variant's one.
struct Explorer<'c> {
    recorded: &'c [Exchange],
    variant: &'c Variant,
    next: usize,
    changed: Vec<String>,
    unusable: Option<String>,
    seen: Vec<Exchange>,
}

impl Explorer<'_> {
    fn recorded_answer(
        &mut self,
        n: usize,
        elicitation: &Elicitation,
    ) -> Result<ElicitResult, ElicitError> {
        let mut answer = self.recorded[n].answer.clone();
        if let super::AnswerSpec::Result(v) = &mut answer {
            if let Some(c) = v.get_mut("content").and_then(Value::as_object_mut) {
                if let Err((field, var)) = super::fill_secret_values(c) {
                    self.unusable = Some(format!(
                        "elicitation {}: the answer to field {} is a secret: set {var}",
                        n + 1,
                        sanitize_line(&field)
                    ));
                    return Err(stopped());
                }
            }
        }
        let mut nobody = NoTerminal {
            detail: "elicit test --explore answers from the cassette only".into(),
        };
        let result = answer
            .scripted()
            .and_then(|s| resolve::resolve(elicitation, &s, false, &mut nobody));
        if let Err(e) = &result {
            self.unusable = Some(format!(
                "elicitation {}: the recorded answer cannot be used: {}",
                n + 1,
                sanitize_line(&e.to_string())
            ));
        }
        result
    }
}

impl ElicitObserver for Explorer<'_> {
    fn answer(
        &mut self,
        request: &Value,
        _key: Option<&str>,
        elicitation: &Elicitation,
    ) -> Option<Result<ElicitResult, ElicitError>> {
        let n = self.next;
        self.next += 1;
        let Some(r) = self.recorded.get(n) else {
            self.changed.push(format!(
                "the server asked more than the {} elicitation(s) recorded: elicitation {} ({})",
                self.recorded.len(),
                n + 1,
                super::diff::show(request.get("message").unwrap_or(&Value::Null))
            ));
            return Some(Err(stopped()));
        };
        if !same_request(&r.request, request, &r.ignore) {
            let diff = request_diff(&r.request, request, &r.ignore);
            self.changed.push(format!(
                "elicitation {} asks something else than recorded: {}",
                n + 1,
                diff.first()
                    .map(String::as_str)
                    .unwrap_or("(see the request)")
            ));
            return Some(Err(stopped()));
        }
        if n == self.variant.at {
            return Some(Ok(super::result_of(&self.variant.answer)));
        }
        Some(self.recorded_answer(n, elicitation))
    }

    fn answered(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult) {
        let mut e = Exchange::recorded(key, request, result);
        if let Some(r) = self.recorded.get(self.seen.len()) {
            e.ignore = r.ignore.clone();
        }
        self.seen.push(e);
    }
}

/// The server error under any "while waiting for" wrapping.
fn root(e: &ServerError) -> &ServerError {
    match e {
        ServerError::WhileWaiting { cause, .. } => root(cause),
        other => other,
    }
}

/// How a failed call is classified.
fn class_of_error(e: &ElicitError) -> Class {
    use ServerError as S;
    match e {
        ElicitError::Io { .. } => Class::Crash,
        ElicitError::Server(s) => match root(s) {
            S::ReplayStopped => Class::QuestionChanged,
            S::NoReply { .. } => Class::Hang,
            S::OutputEnded
            | S::ClosedOutput
            | S::StdinClosed
            | S::CannotWrite(_)
            | S::StreamClosed { .. }
            | S::Network { .. } => Class::Crash,
            // The in-memory transport's end: a test seam, absent from a
            // release build.
            #[cfg(feature = "test-seams")]
            S::InMemoryGone => Class::Crash,
            S::Interrupted => Class::NotRun,
            _ => Class::ProtocolError,
        },
        _ => Class::NotRun,
    }
}

/// Why an outcome is a failure, or `None`.
fn failure(class: Class, invalid: bool) -> Option<String> {
    Some(match class {
        Class::Crash => "the server exited (or its connection ended) instead of replying".into(),
        Class::Hang => "the server did not reply within --timeout".into(),
        Class::ProtocolError => "the server broke the protocol".into(),
        Class::NotRun => "the variant could not run".into(),
        Class::Result if invalid => {
            "the server accepted content that breaks its schema without an error".into()
        }
        _ => return None,
    })
}

fn target_of(spec: &ServerSpec) -> Result<(ServerTarget, TransportChoice), String> {
    Ok(match spec {
        ServerSpec::Command(argv) => (ServerTarget::Command(argv.clone()), TransportChoice::Auto),
        ServerSpec::Url { url, transport } => (
            ServerTarget::Url(super::fill_secret_references(url).map_err(|var| {
                format!("the server URL's secret was left out of the cassette: set {var}")
            })?),
            match transport.as_str() {
                "http" => TransportChoice::Http,
                "sse" => TransportChoice::Sse,
                _ => TransportChoice::Auto,
            },
        ),
    })
}

/// Runs one variant of `cassette`; never panics, and each wait for the
/// server is bounded by `options.timeout`.
pub fn run_variant(cassette: &Cassette, variant: &Variant, options: &ReplayOptions) -> Explored {
    let start = Instant::now();
    let log = ServerLog::new();
    let mut explored = run(cassette, variant, options, &log);
    explored.elapsed = start.elapsed();
    if explored.failure.is_some() {
        explored.server_stderr = log.tail();
    }
    explored
}

fn not_run(line: String) -> Explored {
    Explored {
        class: Class::NotRun,
        failure: failure(Class::NotRun, false),
        detail: vec![line],
        elapsed: Duration::ZERO,
        cassette: None,
        server_stderr: Vec::new(),
    }
}

fn run(
    cassette: &Cassette,
    variant: &Variant,
    options: &ReplayOptions,
    log: &ServerLog,
) -> Explored {
    let mut explorer = Explorer {
        recorded: &cassette.elicitations,
        variant,
        next: 0,
        changed: Vec::new(),
        unusable: None,
        seen: Vec::new(),
    };
    let (outcome, protocol_version) = match call(cassette, options, log, &mut explorer) {
        Ok(called) => called,
        Err(line) => return not_run(line),
    };
    let (class, detail, ending) = classify(outcome, &mut explorer);
    // An invalid variant is saved marked so (`"invalid": true` on the
    // elicitation it breaks): `elicit test` sends it as written and expects
    // the server's reaction recorded here.
    let mut seen = explorer.seen.clone();
    if let (true, Some(e)) = (variant.invalid, seen.get_mut(variant.at)) {
        e.invalid = true;
    }
    let saved = ending.map(|end| {
        let (result, error) = match end {
            Ending::Result(r) => (Some(r), None),
            Ending::Refused(e) => (None, Some(e)),
        };
        Cassette {
            protocol: match cassette.protocol.as_str() {
                "auto" => "auto".into(),
                _ => protocol_version,
            },
            elicitations: seen,
            result,
            error,
            source: None,
            ..cassette.clone()
        }
    });
    Explored {
        class,
        failure: failure(class, variant.invalid),
        detail,
        elapsed: Duration::ZERO,
        cassette: saved,
        server_stderr: Vec::new(),
    }
}

/// Connects to the server (the cassette's, or `--server`) and calls the
/// tool with `explorer` answering; Err: why the variant could not run.
fn call(
    cassette: &Cassette,
    options: &ReplayOptions,
    log: &ServerLog,
    explorer: &mut Explorer<'_>,
) -> Result<(Result<CallEnd, ElicitError>, String), String> {
    let spec = options
        .server
        .clone()
        .unwrap_or_else(|| cassette.server.clone());
    let (target, choice) = target_of(&spec)?;
    let scripted = elicit_core::elicitation::answers::ScriptedAnswers::default();
    let mut nobody = NoTerminal {
        detail: "elicit test --explore answers from the cassette only".into(),
    };
    let mut handler = ElicitHandler::new(&scripted, &mut nobody);
    handler.observer = Some(explorer);
    handler.modes = options.modes;
    let connect = super::replay::connect_options(&spec, options, log, choice);
    let session_options = SessionOptions {
        target,
        protocol: protocol_choice(&cassette.protocol),
        timeout: options.timeout,
        verbose: options.verbose,
        strict: None,
    };
    let mut session = Session::connect(session_options, connect, &mut handler).map_err(|e| {
        let (ConnectError::Start(e) | ConnectError::Negotiate(e)) = e;
        format!(
            "cannot start or reach the server {}: {}",
            sanitize_line(&spec.describe()),
            sanitize_line(&e.to_string())
        )
    })?;
    let outcome = session.call_tool(&mut handler, &cassette.tool, &cassette.arguments);
    let protocol_version = session.protocol_version().to_string();
    session.close();
    Ok((outcome, protocol_version))
}

/// Most characters of a result shown under its variant.
const MAX_DETAIL: usize = 2000;

/// How a variant's call ended, as its saved cassette records it.
enum Ending {
    /// The tool's result.
    Result(Value),
    /// The JSON-RPC error the server refused the call with.
    Refused(Value),
}

/// The class of a call's outcome, what happened in lines, and the ending
/// to record when there is one.
fn classify(
    outcome: Result<CallEnd, ElicitError>,
    explorer: &mut Explorer<'_>,
) -> (Class, Vec<String>, Option<Ending>) {
    let at = explorer.variant.at;
    match outcome {
        // The flow ended before the answer that makes this variant: it
        // tested nothing, and the server no longer asks as recorded.
        Ok(_) if explorer.next <= at => (
            Class::QuestionChanged,
            vec![format!(
                "the server asked {} time(s): elicitation {}, where this variant answers, was not asked",
                explorer.next,
                at + 1
            )],
            None,
        ),
        Ok(CallEnd::Result(r)) => {
            let is_error = r.get("isError").and_then(Value::as_bool) == Some(true);
            let class = if is_error {
                Class::ToolError
            } else {
                Class::Result
            };
            // A line, not the result: a large one is the saved cassette's.
            let words = elicit_session::mcp::call::readable_tool_result(&r);
            let line = elicit_core::text::truncate(&sanitize_line(&words), MAX_DETAIL);
            (class, vec![line], Some(Ending::Result(r)))
        }
        Ok(CallEnd::Refused { error, message }) => (
            Class::ErrorReply,
            vec![sanitize_line(&message)],
            super::recorded_error(&error).map(Ending::Refused),
        ),
        Err(e) => {
            let mut class = class_of_error(&e);
            let mut detail = std::mem::take(&mut explorer.changed);
            if let Some(why) = explorer.unusable.take() {
                class = Class::NotRun;
                detail.push(why);
            }
            if detail.is_empty() {
                detail.push(sanitize_line(&e.to_string()));
            }
            (class, detail, None)
        }
    }
}

#[cfg(test)]
mod tests;
