//! `elicit test`: replays one cassette against its server. The tool is
//! called with the recorded arguments; each elicitation is answered with
//! the recorded answer when it asks what was recorded, and the run fails
//! with a diff when it asks something else, asks more or fewer times, or
//! the result differs. With `update`, the answers are applied by field name
//! to whatever is asked now and the cassette is rebuilt from the run.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::diff::{request_diff, same_request};
use super::{protocol_choice, AnswerSpec, Cassette, Exchange, ServerSpec};
use crate::mismatch::{describe, mismatch_lines, Ended};
use crate::server_log::ServerLog;
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::protocol::ElicitResult;
use elicit_core::elicitation::resolve::{self, Elicitation, NoTerminal};
use elicit_core::error::{ElicitError, ServerError};
use elicit_core::text::sanitize::sanitize_line;
use elicit_session::mcp::call::CallEnd;
use elicit_session::mcp::handler::{ElicitHandler, ElicitObserver};
use elicit_session::mcp::session::{ConnectError, Session, SessionOptions};
use elicit_session::transport::{ConnectOptions, ServerTarget, TransportChoice};

/// How a replay runs.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// `--server`: this server instead of the cassette's.
    pub server: Option<ServerSpec>,
    /// `--header`s for a remote server (never written to a cassette).
    pub headers: Vec<(String, String)>,
    /// `--update`: rebuild the cassette from this run.
    pub update: bool,
    /// The wait for each reply from the server.
    pub timeout: Option<Duration>,
    /// `--verbose`: show the messages.
    pub verbose: bool,
    /// `--modes`: the elicitation modes declared to the server.
    pub modes: elicit_session::mcp::modes::ElicitModes,
    /// `--strict` (with its `--allow`/`--deny`): the lint and session rules
    /// on every elicitation of the replay; an error finding fails the test.
    pub strict: Option<elicit_core::lint::Levels>,
    /// `-a NAME=VALUE`: values for fields the cassette has no answer for
    /// (a field the server added since the recording).
    pub answers: Vec<String>,
    /// `--answers FILE`: answer rules for what the cassette and `-a` leave.
    pub rules: Option<std::sync::Arc<crate::answers::AnswerRules>>,
    /// `--start-server`: the port of the server elicit started on
    /// 127.0.0.1. A cassette's URL is replayed there (its scheme, path and
    /// query kept, its host and port replaced).
    pub local_port: Option<u16>,
}

/// `url` with its host and port replaced by 127.0.0.1:`port` (unchanged
/// when it cannot be parsed: the connection then says what is wrong).
pub fn on_local_port(url: &str, port: u16) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let host = u.set_host(Some("127.0.0.1")).is_ok();
            if host && u.set_port(Some(port)).is_ok() {
                u.to_string()
            } else {
                url.to_string()
            }
        }
        Err(_) => url.to_string(),
    }
}

/// How one replay ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The run matched the cassette.
    Pass,
    /// `--update` rebuilt the cassette, and it differs from the file.
    Updated,
    /// What went wrong: a headline, then the diff's lines.
    Fail(Vec<String>),
    /// The test could not run (the server could not be started or
    /// reached, broke the session, or did not answer in time): no
    /// comparison was made.
    Error(Vec<String>),
}

/// Whether a failure is the session's (the test could not run) rather
/// than a difference from the recording.
fn session_broke(e: &ElicitError) -> bool {
    use elicit_core::error::ServerError as S;
    matches!(
        e,
        ElicitError::Io { .. }
            | ElicitError::Server(
                S::Interrupted
                    | S::OutputEnded
                    | S::ClosedOutput
                    | S::StdinClosed
                    | S::CannotWrite(_)
                    | S::NotReadingStdin { .. }
                    | S::NoReply { .. }
                    | S::NotJsonRpc { .. }
                    | S::NotAMessage { .. }
                    | S::WhileWaiting { .. }
                    | S::Network { .. }
                    | S::HttpStatus { .. }
                    | S::Unauthorized { .. }
                    | S::SignIn { .. }
                    | S::SessionExpired { .. }
                    | S::NoTransport { .. }
                    | S::NotMcpReply { .. }
                    | S::ReadingReply { .. }
                    | S::StreamClosed { .. }
                    | S::StreamCutTooOften { .. }
            )
    )
}

#[derive(Debug, Clone)]
/// How one replay went.
pub struct Outcome {
    /// Whether it matched.
    pub verdict: Verdict,
    /// How long it took.
    pub elapsed: Duration,
    /// With `--update`: the cassette rebuilt from the run.
    pub updated: Option<Cassette>,
    /// `--strict` findings that do not fail the test (warnings, infos), and
    /// the summary, as `call --strict` prints them.
    pub notes: Vec<String>,
    /// The last lines the server wrote on stderr (sanitised), when the
    /// test failed: kept apart from the failure (a traceback is no diff).
    pub server_stderr: Vec<String>,
}

/// What a run leaves besides its verdict.
#[derive(Default)]
struct Extras {
    notes: Vec<String>,
    server_stderr: Vec<String>,
}

/// The error a replay stops the session with once it knows the test
/// failed (the server is told, the details are in the replayer).
fn stopped() -> ElicitError {
    ElicitError::Server(ServerError::ReplayStopped)
}

/// Answers a session's elicitations from a cassette, and notes where the
/// server strays from it.
struct Replayer<'c> {
    recorded: &'c [Exchange],
    update: bool,
    /// `-a` and `--answers` of `elicit test`.
    answers: &'c [String],
    rules: Option<std::sync::Arc<crate::answers::AnswerRules>>,
    next: usize,
    failure: Vec<String>,
    /// What `--update` did on its own (a rename applied), said on stderr.
    notes: Vec<String>,
    seen: Vec<Exchange>,
}

/// The recorded answer as `--answer` words, with `renames` applied to the
/// values and `extra` (`-a NAME=VALUE`) added for fields it has no value
/// for.
fn answer_words(
    answer: &AnswerSpec,
    renames: &[(String, String)],
    extra: &[String],
    replaced: &[String],
) -> Vec<String> {
    let rename = |mut m: serde_json::Map<String, Value>| {
        for (from, to) in renames {
            if let Some(v) = m.shift_remove(from) {
                m.insert(to.clone(), v);
            }
        }
        m.retain(|name, _| !replaced.contains(name));
        m
    };
    let (mut words, names): (Vec<String>, Vec<String>) = match answer {
        AnswerSpec::Result(v) if v.get("action").and_then(Value::as_str) == Some("accept") => {
            let content = v
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let content = rename(content);
            let names = content.keys().cloned().collect();
            (super::values_as_words(&content), names)
        }
        AnswerSpec::Values(m) => {
            let m = rename(m.clone());
            let names = m.keys().cloned().collect();
            (super::values_as_words(&m), names)
        }
        other => match other.scripted_words() {
            Ok(words) => {
                let words: Vec<String> = words
                    .into_iter()
                    .filter(|w| !matches!(w.split_once('='), Some((n, _)) if replaced.iter().any(|r| r == n)))
                    .collect();
                let names = words
                    .iter()
                    .filter_map(|w| w.split_once('=').map(|(n, _)| n.to_string()))
                    .collect();
                (words, names)
            }
            Err(_) => return Vec::new(),
        },
    };
    let declined = words
        .iter()
        .any(|w| matches!(w.trim(), "decline" | "cancel"));
    if !declined {
        words.extend(
            extra
                .iter()
                .filter(
                    |w| matches!(w.split_once('='), Some((n, _)) if !names.iter().any(|x| x == n)),
                )
                .cloned(),
        );
    }
    words
}

impl ElicitObserver for Replayer<'_> {
    fn answer(
        &mut self,
        request: &Value,
        _key: Option<&str>,
        elicitation: &Elicitation,
    ) -> Option<Result<ElicitResult, ElicitError>> {
        let n = self.next + 1;
        let recorded = self.recorded.get(self.next);
        self.next += 1;
        if !self.update {
            match recorded {
                None => {
                    self.failure.push(format!(
                        "the server asked more than the {} elicitation(s) recorded: elicitation {n} ({}) is not in the cassette",
                        self.recorded.len(),
                        describe(request)
                    ));
                    return Some(Err(stopped()));
                }
                Some(r) if !same_request(&r.request, request, &r.ignore) => {
                    // The server skipped a step: say so rather than diff
                    // two different questions.
                    let later = self.recorded[self.next..]
                        .iter()
                        .position(|e| same_request(&e.request, request, &e.ignore));
                    if let Some(k) = later {
                        self.failure.push(match k {
                            0 => format!(
                                "elicitation {n} ({}) is no longer asked: the server asked elicitation {} next",
                                describe(&r.request),
                                n + 1
                            ),
                            _ => format!(
                                "elicitations {n} to {} are no longer asked: the server asked elicitation {} next",
                                n + k,
                                n + k + 1
                            ),
                        });
                        return Some(Err(stopped()));
                    }
                    let diff = request_diff(&r.request, request, &r.ignore);
                    self.failure.push(format!(
                        "elicitation {n} asks something else than recorded: {}",
                        diff.first()
                            .map(String::as_str)
                            .unwrap_or("(see the request)")
                    ));
                    self.failure
                        .extend(diff.iter().skip(1).map(|l| format!("  {l}")));
                    return Some(Err(stopped()));
                }
                Some(_) => {}
            }
        }
        let answer = recorded
            .map(|r| r.answer.clone())
            .unwrap_or_else(|| AnswerSpec::Words(vec!["accept".into()]));
        let renames = match (self.update, recorded) {
            (true, Some(r)) => super::diff::renamed_fields(&r.request, request),
            _ => Vec::new(),
        };
        for (from, to) in &renames {
            self.notes.push(format!(
                "elicitation {n}: field {} renamed to {}: its recorded answer moved",
                sanitize_line(from),
                sanitize_line(to)
            ));
        }
        // Secrets left out when recording come from the environment.
        let mut answer = answer;
        let filled = match &mut answer {
            AnswerSpec::Result(v) => v
                .get_mut("content")
                .and_then(Value::as_object_mut)
                .map_or(Ok(()), super::fill_secret_values),
            AnswerSpec::Values(m) => super::fill_secret_values(m),
            AnswerSpec::Words(_) => Ok(()),
        };
        if let Err((field, var)) = filled {
            self.failure.push(format!(
                "elicitation {n}: the answer to field {} is a secret left out of the cassette: set the environment variable {var}",
                sanitize_line(&field)
            ));
            return Some(Err(stopped()));
        }
        // Content that breaks the schema on purpose (a saved invalid
        // variant) is sent as written: the server's reaction is the test.
        if let (Some(true), AnswerSpec::Result(v)) = (recorded.map(|r| r.invalid), &answer) {
            return Some(Ok(super::result_of(v)));
        }
        self.resolve_recorded(n, request, elicitation, &answer, &renames)
    }

    fn answered(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult) {
        self.seen.push(Exchange::recorded(key, request, result));
    }
}

impl Replayer<'_> {
    /// Answers with the recorded answer (renames applied, `-a` adding what
    /// it lacks). Under `--update`, values the server now refuses are
    /// replaced by those `-a`/`--answers` give, and the replacement said.
    fn resolve_recorded(
        &mut self,
        n: usize,
        request: &Value,
        elicitation: &Elicitation,
        answer: &AnswerSpec,
        renames: &[(String, String)],
    ) -> Option<Result<ElicitResult, ElicitError>> {
        let words = answer_words(answer, renames, self.answers, &[]);
        let outcome = match self.resolve_words(&words, elicitation) {
            Err(ElicitError::Validation(errors)) if self.update => {
                let replaced = self.replaceable(&errors);
                if replaced.is_empty() {
                    Err(ElicitError::Validation(errors))
                } else {
                    let mut words = answer_words(answer, renames, self.answers, &replaced);
                    if replaced
                        .iter()
                        .any(|f| given_value(self.answers, f).is_none())
                    {
                        // Without `accept`, what `-a` leaves open goes to
                        // the `--answers` rules rather than to defaults.
                        words.retain(|w| w.trim() != "accept");
                    }
                    let again = self.resolve_words(&words, elicitation);
                    if again.is_ok() {
                        self.say_replaced(n, &errors, &replaced);
                    }
                    again
                }
            }
            other => other,
        };
        match outcome {
            Ok(r) => Some(Ok(r)),
            Err(e) => {
                self.failure.extend(unfit_answer(n, request, &e));
                Some(Err(stopped()))
            }
        }
    }

    /// The refused fields `-a` (or, for any of them, `--answers`) can
    /// answer instead.
    fn replaceable(&self, errors: &[elicit_core::error::FieldError]) -> Vec<String> {
        errors
            .iter()
            .filter(|e| !e.reason.starts_with(NO_ANSWER))
            .map(|e| e.field.clone())
            .filter(|f| self.rules.is_some() || given_value(self.answers, f).is_some())
            .collect()
    }

    fn say_replaced(
        &mut self,
        n: usize,
        errors: &[elicit_core::error::FieldError],
        replaced: &[String],
    ) {
        for e in errors.iter().filter(|e| replaced.contains(&e.field)) {
            let by = match given_value(self.answers, &e.field) {
                Some(word) => format!("-a {word}"),
                None => "--answers".into(),
            };
            self.notes.push(format!(
                "elicitation {n}: field {}: the server now refuses the recorded answer ({}); replaced by {}",
                sanitize_line(&e.field),
                sanitize_line(&e.reason),
                sanitize_line(&by)
            ));
        }
    }

    /// Resolves `words` (and, for what they leave open, `--answers`).
    fn resolve_words(
        &self,
        words: &[String],
        elicitation: &Elicitation,
    ) -> Result<ElicitResult, ElicitError> {
        let scripted = ScriptedAnswers::parse(words, |path| {
            Err(std::io::Error::other(format!(
                "@{path}: a cassette's answers cannot name files"
            )))
        })
        .map_err(|e| ElicitError::Usage(format!("the recorded answer cannot be used: {e}")))?;
        let nobody = NoTerminal {
            detail: "elicit test answers from the cassette, -a and --answers only".into(),
        };
        let mut person: Box<dyn resolve::Resolver> = match &self.rules {
            Some(rules) => Box::new(
                crate::answers::Answering::new()
                    .rules(Some(rules.clone()))
                    .in_front_of(nobody),
            ),
            None => Box::new(nobody),
        };
        resolve::resolve(elicitation, &scripted, false, person.as_mut())
    }
}

/// How the schema model says a required field has no value at all.
const NO_ANSWER: &str = "required, has no default";

/// `-a NAME=VALUE`'s word for `field`, when one is given.
fn given_value<'a>(answers: &'a [String], field: &str) -> Option<&'a str> {
    answers
        .iter()
        .find(|w| w.split_once('=').is_some_and(|(name, _)| name == field))
        .map(String::as_str)
}

/// Why elicitation `n`'s answer could not be sent, one problem a line.
fn unfit_answer(n: usize, request: &Value, e: &ElicitError) -> Vec<String> {
    let missing = |fields: Vec<String>| {
        format!(
            "elicitation {n} ({}) has {}field(s) with no recorded answer and no default: {}; give them with `elicit test --update -a NAME=VALUE` (or --answers FILE), or record the cassette again",
            describe(request),
            if matches!(e, ElicitError::Validation(_)) { "required " } else { "" },
            fields.iter().map(|f| sanitize_line(f)).collect::<Vec<_>>().join(", ")
        )
    };
    match e {
        ElicitError::Validation(errors) if errors.iter().any(|e| e.reason.starts_with(NO_ANSWER)) => {
            vec![missing(
                errors
                    .iter()
                    .filter(|e| e.reason.starts_with(NO_ANSWER))
                    .map(|e| e.field.clone())
                    .collect(),
            )]
        }
        ElicitError::NeedsAnswers { fields, .. } => vec![missing(fields.clone())],
        ElicitError::Validation(errors) => {
            let mut lines = vec![format!(
                "elicitation {n} ({}): the server refuses the recorded answer; give new values with `elicit test --update -a NAME=VALUE` (or --answers FILE), or record the cassette again:",
                describe(request)
            )];
            lines.extend(errors.iter().map(|e| {
                format!("  field {}: {}", sanitize_line(&e.field), sanitize_line(&e.reason))
            }));
            lines
        }
        ElicitError::Usage(m) => vec![format!("elicitation {n}: {}", sanitize_line(m))],
        other => vec![format!(
            "elicitation {n} ({}): the recorded answer does not fit the form: {}; record the cassette again (elicit call --record FILE …)",
            describe(request),
            sanitize_line(&other.to_string())
        )],
    }
}

/// Replays `cassette`; never panics and never waits without bound (each
/// reply is waited for at most `timeout`).
pub fn replay(cassette: &Cassette, options: &ReplayOptions) -> Outcome {
    let start = Instant::now();
    let strict = options.strict.clone().map(|levels| {
        elicit_session::mcp::strict::Strict::new(
            levels,
            options.modes,
            revision_of(&cassette.protocol),
            false,
        )
    });
    let mut extras = Extras::default();
    let (verdict, updated) = run(cassette, options, strict.as_ref(), &mut extras);
    let Extras {
        mut notes,
        server_stderr,
    } = extras;
    if let Some(strict) = &strict {
        notes.extend(
            strict
                .findings()
                .iter()
                .filter(|f| f.severity != elicit_core::lint::Severity::Error)
                .map(|f| format!("strict: {}", elicit_session::mcp::strict::finding_line(f))),
        );
        notes.push(strict.summary());
    }
    Outcome {
        verdict,
        elapsed: start.elapsed(),
        updated,
        notes,
        server_stderr,
    }
}

/// What a replay (or an explored variant) connects with, each time it
/// connects: a command's stderr to the run's private log; no sign-in, no
/// message log; the run's headers and timeout.
pub(super) fn connect_options<'a>(
    spec: &ServerSpec,
    options: &'a ReplayOptions,
    log: &ServerLog,
    transport: TransportChoice,
) -> impl Fn() -> ConnectOptions + 'a {
    let server_log = matches!(spec, ServerSpec::Command(_))
        .then(|| log.path())
        .flatten();
    move || ConnectOptions {
        server_log: server_log.clone(),
        log: None,
        headers: options.headers.clone(),
        transport,
        auth: None,
        timeout: options.timeout,
    }
}

fn run(
    cassette: &Cassette,
    options: &ReplayOptions,
    strict: Option<&elicit_session::mcp::strict::Strict>,
    extras: &mut Extras,
) -> (Verdict, Option<Cassette>) {
    let spec = options
        .server
        .clone()
        .unwrap_or_else(|| cassette.server.clone());
    let (target, choice) = match server_target(&spec, options) {
        Ok(found) => found,
        Err(verdict) => return (verdict, None),
    };
    let log = ServerLog::new();
    // A failed test keeps the server's last words apart from its own.
    let mut with_log = |verdict: Verdict| {
        extras.server_stderr = log.tail();
        (verdict, None)
    };
    let scripted = ScriptedAnswers::default();
    let mut nobody = NoTerminal {
        detail: "elicit test answers from the cassette only".into(),
    };
    let mut replayer = Replayer {
        recorded: &cassette.elicitations,
        update: options.update,
        answers: &options.answers,
        rules: options.rules.clone(),
        next: 0,
        failure: Vec::new(),
        notes: Vec::new(),
        seen: Vec::new(),
    };
    let mut handler = ElicitHandler::new(&scripted, &mut nobody);
    handler.observer = Some(&mut replayer);
    handler.modes = options.modes;
    handler.strict = strict.cloned();
    let connect = connect_options(&spec, options, &log, choice);
    let session = Session::connect(
        SessionOptions {
            target,
            protocol: protocol_choice(&cassette.protocol),
            timeout: options.timeout,
            verbose: options.verbose,
            strict: strict.cloned(),
        },
        connect,
        &mut handler,
    );
    let mut session = match session {
        Ok(s) => s,
        Err(e) => {
            drop(handler);
            return with_log(connect_failure(e, &spec, replayer.failure));
        }
    };
    let outcome = call_recorded_tool(&mut session, &mut handler, cassette);
    let protocol_version = session.protocol_version().to_string();
    session.close();
    drop(handler);
    extras.notes.append(&mut replayer.notes);
    if let Some(strict) = strict {
        strict.end_session();
    }
    let ended = match outcome {
        Ok(ended) => ended,
        Err(_) if !replayer.failure.is_empty() => return with_log(Verdict::Fail(replayer.failure)),
        Err(e) => return with_log(call_failure(&e, cassette)),
    };
    if !replayer.failure.is_empty() {
        return (Verdict::Fail(replayer.failure), None);
    }
    if let Some(lines) = strict.and_then(strict_failure) {
        return (Verdict::Fail(lines), None);
    }
    if options.update {
        return updated_cassette(cassette, options, replayer.seen, ended, &protocol_version);
    }
    let lines = mismatch_lines(cassette, replayer.next, &ended);
    if lines.is_empty() {
        (Verdict::Pass, None)
    } else {
        // A server that caught its own exception still logged it.
        extras.server_stderr = log.exception().into_iter().collect();
        (Verdict::Fail(lines), None)
    }
}

/// The server to replay against and how to reach it, or why it cannot be
/// reached (a secret of its URL left out of the cassette and not set).
fn server_target(
    spec: &ServerSpec,
    options: &ReplayOptions,
) -> Result<(ServerTarget, TransportChoice), Verdict> {
    Ok(match spec {
        ServerSpec::Command(argv) => (ServerTarget::Command(argv.clone()), TransportChoice::Auto),
        ServerSpec::Url { url, transport } => (
            match super::fill_secret_references(url) {
                Ok(url) => ServerTarget::Url(match options.local_port {
                    Some(port) if options.server.is_none() => on_local_port(&url, port),
                    _ => url,
                }),
                Err(var) => {
                    return Err(Verdict::Error(vec![format!(
                        "the server URL's secret was left out of the cassette: set the environment variable {var}"
                    )]))
                }
            },
            match transport.as_str() {
                "http" => TransportChoice::Http,
                "sse" => TransportChoice::Sse,
                _ => TransportChoice::Auto,
            },
        ),
    })
}

/// A server that could not be started or reached, or that failed the
/// handshake (after what the replayer found wrong on the way).
fn connect_failure(e: ConnectError, spec: &ServerSpec, failure: Vec<String>) -> Verdict {
    match e {
        ConnectError::Start(e) => Verdict::Error(vec![format!(
            "cannot start or reach the server {}: {}",
            sanitize_line(&spec.describe()),
            sanitize_line(&e.to_string())
        )]),
        ConnectError::Negotiate(e) => {
            let mut lines = failure;
            lines.push(format!(
                "connecting to the server: {}",
                sanitize_line(&e.to_string())
            ));
            Verdict::Error(lines)
        }
    }
}

/// Calls the cassette's tool. A refusal is the outcome under test only when
/// the cassette recorded one; otherwise it fails the call as any error does.
fn call_recorded_tool(
    session: &mut Session,
    handler: &mut ElicitHandler<'_>,
    cassette: &Cassette,
) -> Result<Ended, ElicitError> {
    session
        .call_tool(handler, &cassette.tool, &cassette.arguments)
        .and_then(|end| match end {
            CallEnd::Result(result) => Ok(Ended::Result(result)),
            CallEnd::Refused { error, .. } if cassette.error.is_some() => Ok(Ended::Refused(error)),
            CallEnd::Refused { error, message } => Err(ElicitError::Server(
                elicit_core::error::ServerError::CallRefused { error, message },
            )),
        })
}

/// A call that failed: an error when the session broke (the server, not
/// the tool, is at fault), else a failed test.
fn call_failure(e: &ElicitError, cassette: &Cassette) -> Verdict {
    let line = format!(
        "calling the tool {}: {}",
        sanitize_line(&cassette.tool),
        sanitize_line(&e.to_string())
    );
    if session_broke(e) {
        Verdict::Error(vec![line])
    } else {
        Verdict::Fail(vec![line])
    }
}

/// The lines of a `--strict` failure, when the server's elicitations broke
/// a rule of error severity.
fn strict_failure(strict: &elicit_session::mcp::strict::Strict) -> Option<Vec<String>> {
    if !strict.has_errors() {
        return None;
    }
    let errors: Vec<String> = strict
        .findings()
        .iter()
        .filter(|f| f.severity == elicit_core::lint::Severity::Error)
        .map(elicit_session::mcp::strict::finding_line)
        .collect();
    let mut lines = vec![format!(
        "--strict: the server's elicitations broke {} rule{} of error severity",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    )];
    lines.extend(errors);
    Some(lines)
}

/// `--update`: the cassette with what the server did this time (`seen`,
/// how the call `ended`), and whether that changed it.
fn updated_cassette(
    cassette: &Cassette,
    options: &ReplayOptions,
    seen: Vec<Exchange>,
    ended: Ended,
    protocol_version: &str,
) -> (Verdict, Option<Cassette>) {
    let mut updated = cassette.clone();
    updated.elicitations = seen;
    // A cassette written without a result (only its elicitations
    // checked) stays without one.
    match ended {
        Ended::Refused(error) => {
            updated.result = None;
            updated.error = super::recorded_error(&error).or(updated.error);
        }
        Ended::Result(result) => {
            if cassette.result.is_some() || cassette.error.is_some() {
                updated.result = Some(result);
            }
            updated.error = None;
        }
    }
    if options.server.is_none() {
        updated.protocol = match cassette.protocol.as_str() {
            "auto" => "auto".into(),
            _ => protocol_version.to_string(),
        };
    }
    let verdict = if updated.to_value() == cassette.to_value() {
        Verdict::Pass
    } else {
        Verdict::Updated
    };
    (verdict, Some(updated))
}

/// The revision `--strict` follows for a cassette: the one it was recorded
/// with (`auto` and unknown names: the newest).
fn revision_of(protocol: &str) -> elicit_core::lint::Revision {
    use elicit_core::lint::Revision;
    Revision::from_version(protocol).unwrap_or(Revision::V2026_07_28)
}
