//! One tool call as `elicit call` makes it, on a [`Session`]: connect and
//! list the tools ([`ToolCall::connect`]); then, once the caller has the
//! tool's name (given, or picked by a person), its arguments (given, with
//! what is missing asked through the same handler), the call with its
//! elicitations answered (scripted answers, answer rules, the person), the
//! exit status it calls for, and the record (`--record`, through the seam
//! of [`super::recording`]) ([`ToolCall::call`]). Who the person is, the
//! answer rules in front of them ([`AnswersInFront`]), the status line and
//! what is printed stay with the caller.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::call::{
    ask_arguments, input_schema, missing_required, tool_arguments, unknown_tool, AskedArguments,
    CallEnd,
};
use super::client::ProtocolChoice;
use super::handler::{ElicitHandler, ElicitObserver};
use super::modes::ElicitModes;
use super::recording::{CallRecordEnd, CallRecorder};
use super::session::{ConnectError, Session, SessionOptions};
use super::strict::Strict;
use super::StepFailure;
use crate::transport::{ConnectOptions, ServerTarget};
use elicit_core::elicitation::answer_rules::{RuleReport, Unmatched};
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::protocol::Action;
use elicit_core::elicitation::resolve::{outcome_exit_code, Resolver};
use elicit_core::error::{ElicitError, ServerError};
use elicit_core::text::sanitize::sanitize_line;

/// How the call is made (`elicit call`'s flags, as plain values).
#[derive(Clone)]
pub struct CallOptions {
    /// The server: a command to start, or a URL.
    pub target: ServerTarget,
    /// `--protocol`.
    pub protocol: ProtocolChoice,
    /// The most a reply may take (`--timeout`).
    pub timeout: Duration,
    /// `-v`: the session says which protocol and why; the rules say what
    /// they answered.
    pub verbose: bool,
    /// `--strict`.
    pub strict: Option<Strict>,
    /// `--modes`.
    pub modes: ElicitModes,
    /// `--tool`, when given (else the caller chose it).
    pub tool: Option<String>,
    /// `--args JSON`.
    pub args_json: Option<String>,
    /// `--arg KEY=VALUE`.
    pub args: Vec<String>,
    /// `--no-input`: with answer rules, what no rule matches is declined.
    pub no_input: bool,
    /// `-e`: a declined or cancelled elicitation decides the exit status.
    pub exit_status: bool,
}

/// Answers put in front of the person for a call's elicitations
/// (`--answers`: elicit-cassette's answer rules, read from a file this
/// crate never reads).
pub trait AnswersInFront {
    /// `person` with these answers in front; what they leave open is
    /// `unmatched`'s, and `report` says whether they name what they
    /// answered.
    fn in_front_of<'p>(
        self: Arc<Self>,
        person: &'p mut dyn Resolver,
        unmatched: Unmatched,
        report: RuleReport,
    ) -> Box<dyn Resolver + 'p>;
}

/// Who watches the call (a status line): told when the session is
/// connected, when the call starts and when it is back, and given the
/// warnings for the person.
pub trait CallWatcher {
    /// The session is connected (the tools not listed yet).
    fn connected(&self, session: &Session<'_>);
    /// The call is being made (`calling TOOL`).
    fn step(&self, what: &str);
    /// The call is back: what follows goes on a clean screen.
    fn stop(&self);
    /// A warning for the person (an answer no form asked for).
    fn warn(&self, text: &str);
}

/// How a call ended, short of a failure.
#[derive(Debug)]
pub enum Called {
    /// The tool's result (already recorded with `--record`), and the exit
    /// status it calls for: 1 for an `isError` result, or under `-e` a
    /// declined (3) or cancelled (4) elicitation's.
    Result {
        /// The `tools/call` result.
        result: Value,
        /// The exit status.
        exit: i32,
    },
    /// The person declined or cancelled the tool's arguments: it was not
    /// called.
    ArgumentsRefused(Action),
    /// The call failed, after an elicitation of it was declined or
    /// cancelled under `-e`: the failure (to show) and that exit status.
    FailedWhenRefused {
        /// The failure.
        failure: StepFailure,
        /// The exit status of the decline or cancel.
        exit: i32,
    },
}

/// A session connected for a call, with the server's tools.
pub struct ToolCall<'c> {
    session: Session<'c>,
    tools: Vec<Value>,
    options: CallOptions,
    /// The form fields asked so far (a scripted answer is for any of them).
    seen: std::collections::HashSet<String>,
    /// `--record`: told of the call's elicitations and how it ended.
    recorder: Option<Box<dyn CallRecorder>>,
}

impl<'c> ToolCall<'c> {
    /// Starts or reaches the server, negotiates the protocol and lists the
    /// tools; what the server asks meanwhile is answered by `scripted`,
    /// then `person`. Each connection is made with what `connect` returns;
    /// `watcher` is told once the session is connected.
    pub fn connect(
        options: CallOptions,
        connect: impl FnMut() -> ConnectOptions + 'c,
        scripted: &ScriptedAnswers,
        person: &mut dyn Resolver,
        watcher: &dyn CallWatcher,
    ) -> Result<Self, StepFailure> {
        let mut early = handler(&options, scripted, person);
        let session_options = SessionOptions {
            target: options.target.clone(),
            protocol: options.protocol,
            timeout: Some(options.timeout),
            verbose: options.verbose,
            strict: options.strict.clone(),
        };
        let mut session = Session::connect(session_options, connect, &mut early).map_err(|e| {
            let step = match (&e, &options.target) {
                (ConnectError::Negotiate(_), _) => "connecting to the server",
                (ConnectError::Start(_), ServerTarget::Command(_)) => "starting the server",
                (ConnectError::Start(_), ServerTarget::Url(_)) => "reaching the server",
            };
            StepFailure::in_step(step)(e.into_inner())
        })?;
        watcher.connected(&session);
        let tools = session
            .list_tools(&mut early)
            .map_err(StepFailure::in_step("listing the server's tools"))?;
        let seen = std::mem::take(&mut early.seen_fields);
        drop(early);
        Ok(ToolCall {
            session,
            tools,
            options,
            seen,
            recorder: None,
        })
    }

    /// `--record`: `recorder` is told of the call's elicitations and how it
    /// ended.
    pub fn record_with(&mut self, recorder: Box<dyn CallRecorder>) {
        self.recorder = Some(recorder);
    }

    /// The session (its protocol and why, the server's name).
    pub fn session(&self) -> &Session<'c> {
        &self.session
    }

    /// The server's tools (`tools/list`).
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// Calls `tool`: its arguments from the options, with what is missing
    /// asked of `person` when `at_terminal` (everything, when the tool was
    /// picked there with no arguments given); its elicitations answered by
    /// `scripted`, then `rules`, then `person`. Tells the recorder
    /// ([`Self::record_with`]) how it ended. Warnings go to `watcher`.
    pub fn call(
        &mut self,
        tool: &str,
        scripted: &ScriptedAnswers,
        rules: Option<Arc<dyn AnswersInFront>>,
        person: &mut dyn Resolver,
        at_terminal: bool,
        watcher: &dyn CallWatcher,
    ) -> Result<Called, StepFailure> {
        let schema = input_schema(&self.tools, tool);
        if schema.is_none() && !self.tools.is_empty() {
            // Checked before calling: a typo should not reach the server.
            return Err(unknown_tool(tool, &self.tools).into());
        }
        let mut asking = handler(&self.options, scripted, person);
        asking.server_name = self.session.server_name();
        asking.seen_fields = std::mem::take(&mut self.seen);
        let arguments = match arguments(&self.options, tool, schema, at_terminal, &mut asking)? {
            Ok(arguments) => arguments,
            Err(action) => return Ok(Called::ArgumentsRefused(action)),
        };
        // The call's own handler: the answer rules (never used for the
        // tool's arguments above) and the recorder watch its elicitations.
        let seen = std::mem::take(&mut asking.seen_fields);
        drop(asking);
        let mut recorder = self.recorder.take();
        // `--no-input` declines what the rules leave open; `-v` has them
        // say what they answered.
        let unmatched = Unmatched::under_no_input(self.options.no_input);
        let report = RuleReport::under_verbose(self.options.verbose);
        let mut answering: Box<dyn Resolver + '_> = match rules {
            Some(rules) => rules.in_front_of(person, unmatched, report),
            None => Box::new(person),
        };
        let mut calling = handler(&self.options, scripted, answering.as_mut());
        calling.server_name = self.session.server_name();
        calling.tool_name = Some(tool.to_string());
        calling.seen_fields = seen;
        calling.observer = recorder
            .as_mut()
            .map(|r| r.as_mut() as &mut dyn ElicitObserver);
        watcher.step(&format!("calling {}", sanitize_line(tool)));
        let outcome = self.session.call_tool(&mut calling, tool, &arguments);
        watcher.stop();
        let refusal = match &outcome {
            Ok(CallEnd::Refused { error, .. }) => Some(error.clone()),
            _ => None,
        };
        let ended = ending(&self.options, tool, outcome, &calling, watcher);
        drop(calling);
        if let Some(recorder) = recorder.as_mut() {
            // A refusal is recorded too (the failure is still the news): a
            // server that must refuse what it was sent is a case to keep.
            let end = match (&ended, &refusal) {
                (Ok(Called::Result { result, .. }), _) => Some(CallRecordEnd::Result(result)),
                (_, Some(error)) => Some(CallRecordEnd::Refused(error)),
                _ => None,
            };
            if let Some(end) = end {
                let version = self.session.protocol_version();
                if let Some(warning) = recorder.ended(version, tool, &arguments, end)? {
                    watcher.warn(&warning);
                }
            }
        }
        ended
    }

    /// Ends the session (after the result is shown: a server slow to end
    /// it must not hold the result back).
    pub fn close(self) {
        self.session.close();
    }
}

/// A handler for the session's own requests, with the options every one
/// shares.
fn handler<'a>(
    options: &CallOptions,
    scripted: &'a ScriptedAnswers,
    person: &'a mut dyn Resolver,
) -> ElicitHandler<'a> {
    let mut handler = ElicitHandler::new(scripted, person);
    handler.modes = options.modes;
    handler.strict = options.strict.clone();
    handler
}

/// The tool's arguments from `--arg`/`--args`, with what is missing asked
/// at the terminal. `Ok(Err(action))`: the person refused the form, and the
/// tool is not called.
fn arguments(
    options: &CallOptions,
    tool: &str,
    schema: Option<&Value>,
    at_terminal: bool,
    handler: &mut ElicitHandler<'_>,
) -> Result<Result<Map<String, Value>, Action>, ElicitError> {
    let arguments = tool_arguments(schema, options.args_json.as_deref(), &options.args)?;
    let Some(schema) = schema else {
        return Ok(Ok(arguments));
    };
    let nothing_given =
        options.tool.is_none() && options.args_json.is_none() && options.args.is_empty();
    let missing = missing_required(schema, &arguments);
    // A tool picked on the terminal gets its arguments asked with the form
    // engine; one named with --tool only what it lacks.
    let only = match (nothing_given && at_terminal, missing.is_empty()) {
        (true, _) => None,
        (false, true) => return Ok(Ok(arguments)),
        (false, false) if !at_terminal => {
            return Err(ElicitError::Usage(format!(
                "the tool {} needs the argument(s) {} (required by its inputSchema); pass --arg NAME=VALUE or --args JSON",
                sanitize_line(tool),
                missing.join(", ")
            )))
        }
        (false, false) => Some(missing),
    };
    Ok(
        match ask_arguments(tool, schema, arguments.clone(), only, handler)? {
            AskedArguments::Given(asked) => Ok(asked),
            AskedArguments::NothingToAsk => Ok(arguments),
            AskedArguments::Refused(action) => Err(action),
        },
    )
}

/// How the call ended: the result and the exit status, or under `-e` a
/// failure a declined elicitation decides. Warns of answers nobody asked
/// for.
fn ending(
    options: &CallOptions,
    tool: &str,
    outcome: Result<CallEnd, ElicitError>,
    handler: &ElicitHandler<'_>,
    watcher: &dyn CallWatcher,
) -> Result<Called, StepFailure> {
    let is_error = |r: &Value| r.get("isError").and_then(Value::as_bool) == Some(true);
    let failed = !matches!(&outcome, Ok(CallEnd::Result(r)) if !is_error(r));
    // Answers nobody asked for are worth a warning when some form came (a
    // misspelt field) or the call worked; when the call failed before any
    // form came, the failure is the news, not the answers.
    if !failed || !handler.seen_fields.is_empty() {
        for name in handler.unused_answers() {
            watcher.warn(&super::handler::unused_answer_warning(&name));
        }
    }
    // With -e, a declined or cancelled elicitation of the call decides the
    // exit (cancel outranks decline), over the tool's isError and over a
    // call that failed for it (a -32042 URL elicitation declined).
    let declined = if options.exit_status {
        outcome_exit_code(handler.answered.iter())
    } else {
        0
    };
    let outcome = outcome.and_then(|end| match end {
        CallEnd::Result(r) => Ok(r),
        CallEnd::Refused { error, message } => Err(ElicitError::Server(ServerError::CallRefused {
            error,
            message,
        })),
    });
    let step = format!("calling the tool {}", sanitize_line(tool));
    match outcome.map_err(StepFailure::in_step(step)) {
        Ok(result) => {
            let exit = match (declined, is_error(&result)) {
                (0, true) => 1,
                (0, false) => 0,
                (code, _) => code,
            };
            Ok(Called::Result { result, exit })
        }
        Err(failure) if declined != 0 => Ok(Called::FailedWhenRefused {
            failure,
            exit: declined,
        }),
        Err(failure) => Err(failure),
    }
}
