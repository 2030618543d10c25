//! `elicit call`: connect to a server, pick a tool and its arguments, call
//! it with every elicitation on the way resolved, print the result. The
//! call (connecting, the protocol, the arguments, calling, recording) is
//! the library's [`elicit::mcp::tool_call::ToolCall`], on the same
//! [`Session`] as `elicit test`; this is the flags, the person and the
//! printing around it.

use std::io::IsTerminal;
use std::sync::Arc;

use serde_json::Value;

use elicit::cassette::record::CallCassette;
use elicit::cassette::ServerSpec;
use elicit::elicitation::resolve::Resolver;
use elicit::error::{ElicitError, ServerError};
use elicit::mcp::call::{readable_tool_result, tool_choices};
use elicit::mcp::session::Session;
use elicit::mcp::strict::Strict;
use elicit::mcp::tool_call::{AnswersInFront, CallOptions, CallWatcher, Called, ToolCall};
use elicit::text::sanitize::sanitize_line;
use elicit::transport::{ConnectOptions, MessageLog, ServerTarget};

use super::connect::{own_authorization, sign_in_hook, strict_checker, strict_exit};
use super::progress::Progress;
use super::{
    json_text, load_answers, parse_headers, person, print_line, report_chain, step_failure, Person,
};
use crate::cli::CallArgs;

pub fn run(args: &CallArgs) -> i32 {
    run_with(args, None)
}

/// The call, its elicitations left open answered by `parked` (a parked
/// call's holder) when given, else by the person.
pub fn run_with(args: &CallArgs, parked: Option<&mut dyn Resolver>) -> i32 {
    let strict = match strict_checker(&args.checks, args.protocol.into()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // On a terminal, a status line says what runs and for how long.
    let progress = super::progress::Progress::steps();
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| progress.tick());
        let outcome = call(args, strict.as_ref(), &progress, parked);
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

/// The flags as the library's options.
fn call_options(args: &CallArgs, target: &ServerTarget, strict: Option<&Strict>) -> CallOptions {
    CallOptions {
        target: target.clone(),
        protocol: args.protocol.into(),
        timeout: args.timeout,
        verbose: args.verbose,
        strict: strict.cloned(),
        modes: args.checks.modes,
        tool: args.tool.clone(),
        args_json: args.args_json.clone(),
        args: args.arg.clone(),
        no_input: args.answers.no_input,
        exit_status: args.exit_status,
    }
}

/// The status line, `-v`'s line on connecting, and the warnings.
struct Watch<'a> {
    progress: &'a Progress,
    verbose: bool,
}

impl CallWatcher for Watch<'_> {
    fn connected(&self, session: &Session<'_>) {
        if self.verbose {
            self.progress.hide();
            let name = session.server_name();
            eprintln!(
                "elicit: connected to {} ({}): {}",
                sanitize_line(name.as_deref().unwrap_or("a server with no name")),
                session.describe_protocol(),
                session.why()
            );
        }
    }

    fn step(&self, what: &str) {
        self.progress.step(what);
    }

    fn stop(&self) {
        self.progress.stop();
    }

    fn warn(&self, text: &str) {
        super::warn(text);
    }
}

/// `elicit call`: start the server, connect, pick the tool and its
/// arguments, call it, print the result.
fn call(
    args: &CallArgs,
    strict: Option<&Strict>,
    progress: &Progress,
    mut parked: Option<&mut dyn Resolver>,
) -> anyhow::Result<i32> {
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
    let at_terminal = parked.is_none() && person.at_terminal();
    let connect = connect_options(args, &target, log, headers);
    progress.step(&match &target {
        ServerTarget::Command(command) => format!("starting {}", shown_command(command)),
        ServerTarget::Url(url) => format!("connecting to {}", sanitize_line(url)),
    });
    let watch = Watch {
        progress,
        verbose: args.verbose,
    };
    let options = call_options(args, &target, strict);
    let early = answerer(&mut parked, &mut person);
    let mut call =
        ToolCall::connect(options, connect, &scripted, early, &watch).map_err(step_failure)?;
    if let Some(path) = &args.record {
        let server = ServerSpec::recorded(&target, args.target.transport.into());
        call.record_with(Box::new(CallCassette::new(path, server)));
    }
    // Connected: nothing runs while the tool and its arguments are chosen.
    progress.idle();
    let tool = choose_tool(args, &person, at_terminal, call.tools())?;
    let resolver = answerer(&mut parked, &mut person);
    let rules = rules.map(|rules| -> Arc<dyn AnswersInFront> { rules });
    let (result, exit) = match call
        .call(&tool, &scripted, rules, resolver, at_terminal, &watch)
        .map_err(step_failure)?
    {
        Called::Result { result, exit } => (result, exit),
        Called::ArgumentsRefused(action) => return Ok(arguments_refused(&tool, action)),
        Called::FailedWhenRefused { failure: f, exit } => {
            report_chain(&step_failure(f));
            return Ok(exit);
        }
    };
    let printed = print_result(args, &result);
    call.close();
    Ok(if printed != 0 { printed } else { exit })
}

/// Who answers what scripted answers and rules leave open: a parked
/// call's holder (which parks the question), else the person.
fn answerer<'a>(
    parked: &'a mut Option<&mut dyn Resolver>,
    person: &'a mut Person,
) -> &'a mut dyn Resolver {
    match parked {
        Some(holder) => &mut **holder,
        None => person.resolver(),
    }
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
