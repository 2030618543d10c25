//! `elicit call`: connect to a server, pick a tool and its arguments, call
//! it with every elicitation on the way resolved, print the result. The
//! session (connecting, the protocol, calling) is the library's
//! [`elicit::mcp::session::Session`]; this is the flags around it.

use std::io::IsTerminal;

use anyhow::Context;
use serde_json::{Map, Value};

use elicit::error::{ElicitError, ServerError};
use elicit::mcp::call::{
    ask_arguments, input_schema, missing_required, readable_tool_result, tool_arguments,
    tool_choices, unknown_tool, AskedArguments, CallEnd,
};
use elicit::mcp::handler::ElicitHandler;
use elicit::mcp::session::{ConnectError, Session, SessionOptions};
use elicit::mcp::strict::Strict;
use elicit::text::sanitize::sanitize_line;
use elicit::transport::{ConnectOptions, MessageLog, ServerTarget};
use elicit::ScriptedAnswers;

use super::connect::{
    own_authorization, recorded_server, sign_in_hook, strict_checker, strict_exit,
};
use super::progress::Progress;
use super::{json_text, load_answers, parse_headers, person, print_line, report_chain, Person};
use crate::cli::CallArgs;

pub fn run(args: &CallArgs) -> i32 {
    let strict = match strict_checker(&args.checks, args.protocol.into()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // On a terminal, a status line says what runs and for how long.
    let progress = super::progress::Progress::steps();
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| progress.tick());
        let outcome = call(args, strict.as_ref(), &progress);
        progress.stop();
        outcome
    });
    // A SIGTERM/SIGHUP being handled decides the exit, not what the
    // session saw of the server it ends.
    elicit::transport::process_group::defer_to_signal();
    let code = match outcome {
        Ok(code) => code,
        Err(e) => report_chain(&e),
    };
    strict_exit(strict.as_ref(), code)
}

/// What every connection of one `elicit call` is made with.
fn connect_options<'a>(
    args: &'a CallArgs,
    target: &'a ServerTarget,
    log: Option<MessageLog>,
    headers: Vec<(String, String)>,
) -> impl FnMut() -> ConnectOptions + 'a {
    move || ConnectOptions {
        server_log: args.server_log.clone(),
        log: log.clone(),
        headers: headers.clone(),
        transport: args.target.transport.into(),
        auth: match target {
            ServerTarget::Url(url) if !own_authorization(&headers) => Some(sign_in_hook(
                &args.target.sign_in,
                &args.answers,
                url,
                args.prompt_timeout,
                Some(args.timeout),
            )),
            _ => None,
        },
        timeout: Some(args.timeout),
    }
}

/// A handler for the session's own requests, with the flags every one
/// shares.
fn handler<'a>(
    args: &CallArgs,
    scripted: &'a ScriptedAnswers,
    person: &'a mut dyn elicit::elicitation::resolve::Resolver,
    strict: Option<&Strict>,
) -> ElicitHandler<'a> {
    let mut handler = ElicitHandler::new(scripted, person);
    handler.modes = args.checks.modes;
    handler.strict = strict.cloned();
    handler
}

/// `elicit call`: start the server, connect, pick the tool and its
/// arguments, call it, print the result.
fn call(args: &CallArgs, strict: Option<&Strict>, progress: &Progress) -> anyhow::Result<i32> {
    let scripted = load_answers(&args.answers)?;
    let rules = super::load_rules(&args.answers)?;
    if let Some(path) = &args.record {
        elicit::cassette::check_writable(path)?;
    }
    let mut person = person(&args.answers, args.prompt_timeout, "--prompt-timeout");
    elicit::signals::install_interrupt_handler();
    elicit::transport::process_group::exit_on_signals();
    let log = args.log.as_deref().map(MessageLog::create).transpose()?;
    let target = ServerTarget::from_args(args.target.url.as_deref(), &args.target.command)?;
    let headers = parse_headers(&args.target.headers)?;
    if let Some(path) = &args.server_log {
        // Every server run of this call (a second connection) adds to it.
        elicit::transport::stdio::start_server_log(path)?;
    }
    let picker = matches!(person, Person::Terminal(_));
    let mut early = handler(args, &scripted, person.resolver(), strict);
    let connect = connect_options(args, &target, log, headers);
    progress.step(&match &target {
        ServerTarget::Command(command) => format!("starting {}", shown_command(command)),
        ServerTarget::Url(url) => format!("connecting to {}", sanitize_line(url)),
    });
    let mut session = open_session(args, &target, strict, connect, &mut early, progress)?;
    let tools = session
        .list_tools(&mut early)
        .context("listing the server's tools")?;
    let seen = std::mem::take(&mut early.seen_fields);
    drop(early);
    // Connected: nothing runs while the tool and its arguments are chosen.
    progress.idle();
    let tool = choose_tool(args, &person, picker, &tools)?;
    let schema = input_schema(&tools, &tool);
    if schema.is_none() && !tools.is_empty() {
        // Checked before calling: a typo should not reach the server.
        return Err(unknown_tool(&tool, &tools).into());
    }
    let mut asking = handler(args, &scripted, person.resolver(), strict);
    asking.server_name = session.server_name();
    asking.seen_fields = seen;
    let arguments = match arguments_for(args, &tool, schema, picker, &mut asking)? {
        Ok(arguments) => arguments,
        Err(code) => return Ok(code),
    };
    // The call's own handler: the answer rules (never used for the tool's
    // arguments above) and the recorder watch its elicitations.
    let seen = std::mem::take(&mut asking.seen_fields);
    drop(asking);
    let mut recorder = args
        .record
        .as_ref()
        .map(|_| elicit::cassette::record::Recorder::default());
    let mut answering = elicit::cassette::rules::RulesResolver::new(
        rules,
        person.resolver(),
        args.answers.no_input,
        args.verbose,
    );
    let mut calling = handler(args, &scripted, &mut answering, strict);
    calling.server_name = session.server_name();
    calling.tool_name = Some(tool.clone());
    calling.seen_fields = seen;
    calling.observer = recorder
        .as_mut()
        .map(|r| r as &mut dyn elicit::mcp::handler::ElicitObserver);
    progress.step(&format!("calling {}", sanitize_line(&tool)));
    let outcome = session.call_tool(&mut calling, &tool, &arguments);
    // The result, or what went wrong, goes on a clean screen.
    progress.stop();
    let ended = ending(args, &tool, outcome, &calling);
    drop(calling);
    let (result, exit) = match ended? {
        Ok(ended) => ended,
        Err(declined) => return Ok(declined),
    };
    if let (Some(path), Some(recorder)) = (&args.record, &recorder) {
        let cassette = recorder.cassette(
            recorded_server(&target, args.target.transport.into()),
            elicit::cassette::protocol_name(session.generation()),
            &tool,
            &arguments,
            &result,
        );
        cassette.write(path)?;
    }
    let printed = print_result(args, &result);
    session.close();
    Ok(if printed != 0 { printed } else { exit })
}

/// Connects; with `-v`, says to what, over which protocol and why.
fn open_session<'c>(
    args: &CallArgs,
    target: &ServerTarget,
    strict: Option<&Strict>,
    connect: impl FnMut() -> ConnectOptions + 'c,
    handler: &mut ElicitHandler<'_>,
    progress: &Progress,
) -> anyhow::Result<Session<'c>> {
    let options = SessionOptions {
        target: target.clone(),
        protocol: args.protocol.into(),
        timeout: Some(args.timeout),
        verbose: args.verbose,
        strict: strict.cloned(),
    };
    let session = Session::connect(options, connect, handler).map_err(|e| {
        let what = match (&e, target) {
            (ConnectError::Negotiate(_), _) => "connecting to the server",
            (ConnectError::Start(_), ServerTarget::Command(_)) => "starting the server",
            (ConnectError::Start(_), ServerTarget::Url(_)) => "reaching the server",
        };
        anyhow::Error::from(e.into_inner()).context(what)
    })?;
    if args.verbose {
        progress.hide();
        let name = handler.server_name.as_deref();
        eprintln!(
            "elicit: connected to {} ({}): {}",
            sanitize_line(name.unwrap_or("a server with no name")),
            session.generation().describe(),
            session.why()
        );
    }
    Ok(session)
}

/// A server command as the status line shows it: its words, cut short.
fn shown_command(command: &[String]) -> String {
    let words = sanitize_line(&command.join(" "));
    match words.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &words[..at]),
        None => words,
    }
}

/// The tool to call: `--tool`, else picked at the terminal.
fn choose_tool(
    args: &CallArgs,
    person: &Person,
    picker: bool,
    tools: &[Value],
) -> anyhow::Result<String> {
    let choices = tool_choices(tools);
    match (&args.tool, person) {
        (Some(t), _) => Ok(t.clone()),
        (None, Person::Terminal(term)) if picker => {
            if choices.is_empty() {
                return Err(ElicitError::Server(ServerError::NoTools).into());
            }
            let labels: Vec<String> = choices.iter().map(|(_, label)| label.clone()).collect();
            match term.pick("Which tool?", &labels)? {
                Some(i) => Ok(choices[i].0.clone()),
                None => Err(ElicitError::Usage("no tool picked".into()).into()),
            }
        }
        (None, _) => {
            let names: Vec<&str> = choices.iter().map(|(n, _)| n.as_str()).collect();
            Err(ElicitError::Usage(format!(
                "no --tool given and no terminal to pick one; the server's tools: {}",
                names.join(", ")
            ))
            .into())
        }
    }
}

/// The tool's arguments from `--arg`/`--args`, with what is missing asked
/// at the terminal. `Ok(Err(code))`: the person refused the form, and the
/// tool is not called.
fn arguments_for(
    args: &CallArgs,
    tool: &str,
    schema: Option<&Value>,
    picker: bool,
    handler: &mut ElicitHandler<'_>,
) -> anyhow::Result<Result<Map<String, Value>, i32>> {
    let arguments = tool_arguments(schema, args.args_json.as_deref(), &args.arg)?;
    let Some(schema) = schema else {
        return Ok(Ok(arguments));
    };
    let nothing_given = args.tool.is_none() && args.args_json.is_none() && args.arg.is_empty();
    let missing = missing_required(schema, &arguments);
    // A tool picked on the terminal gets its arguments asked with the form
    // engine; one named with --tool only what it lacks.
    let only = match (nothing_given && picker, missing.is_empty()) {
        (true, _) => None,
        (false, true) => return Ok(Ok(arguments)),
        (false, false) if !picker => {
            return Err(ElicitError::Usage(format!(
                "the tool {} needs the argument(s) {} (required by its inputSchema); pass --arg NAME=VALUE or --args JSON",
                sanitize_line(tool),
                missing.join(", ")
            ))
            .into())
        }
        (false, false) => Some(missing),
    };
    Ok(
        match ask_arguments(tool, schema, arguments.clone(), only, handler)? {
            AskedArguments::Given(asked) => Ok(asked),
            AskedArguments::NothingToAsk => Ok(arguments),
            AskedArguments::Refused(action) => Err(arguments_refused(tool, action)),
        },
    )
}

/// Says that the tool was not called, and gives the exit status of the
/// decline or cancel (as `-e` does for a server's elicitation): nothing was
/// wrong with how elicit was used.
fn arguments_refused(tool: &str, action: elicit::Action) -> i32 {
    let (word, code) = match action {
        elicit::Action::Decline => ("declined", elicit::elicitation::resolve::EXIT_DECLINED),
        _ => ("cancelled", elicit::elicitation::resolve::EXIT_CANCELLED),
    };
    eprintln!(
        "elicit: the arguments of the tool {} were {word}; it was not called",
        sanitize_line(tool)
    );
    code
}

/// How the call ended: the result and the exit status, or `Err(code)`
/// for a call that failed for a declined elicitation under `-e` (already
/// reported). Warns of answers nobody asked for.
fn ending(
    args: &CallArgs,
    tool: &str,
    outcome: Result<CallEnd, ElicitError>,
    handler: &ElicitHandler<'_>,
) -> anyhow::Result<Result<(Value, i32), i32>> {
    let is_error = |r: &Value| r.get("isError").and_then(Value::as_bool) == Some(true);
    let failed = !matches!(&outcome, Ok(CallEnd::Result(r)) if !is_error(r));
    // Answers nobody asked for are worth a warning when some form came (a
    // misspelt field) or the call worked; when the call failed before any
    // form came, the failure is the news, not the answers.
    if !failed || !handler.seen_fields.is_empty() {
        for name in handler.unused_answers() {
            super::warn(&elicit::mcp::handler::unused_answer_warning(&name));
        }
    }
    // With -e, a declined or cancelled elicitation of the call decides the
    // exit (cancel outranks decline), over the tool's isError and over a
    // call that failed for it (a -32042 URL elicitation declined).
    let declined = if args.exit_status {
        elicit::elicitation::resolve::outcome_exit_code(handler.answered.iter())
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
    match outcome.with_context(|| format!("calling the tool {}", sanitize_line(tool))) {
        Ok(result) => {
            let exit = match (declined, is_error(&result)) {
                (0, true) => 1,
                (0, false) => 0,
                (code, _) => code,
            };
            Ok(Ok((result, exit)))
        }
        Err(e) if declined != 0 => {
            report_chain(&e);
            Ok(Err(declined))
        }
        Err(e) => Err(e),
    }
}

/// A person at a terminal reads the result; a pipe gets JSON. Printed
/// before the session is closed: a server slow to end it (DELETE) must not
/// hold the result back.
fn print_result(args: &CallArgs, result: &Value) -> i32 {
    let readable = !args.json && !args.pretty && std::io::stdout().is_terminal();
    if readable {
        print_line(&readable_tool_result(result))
    } else {
        print_line(&json_text(result, args.pretty))
    }
}
