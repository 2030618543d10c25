//! `elicit call`: connect to a server, pick a tool and its arguments, call
//! it with every elicitation on the way resolved, print the result.

use std::io::IsTerminal;
use std::time::Duration;

use elicit::error::ElicitError;
use elicit::session::call::{
    ask_arguments, call_tool, input_schema, missing_required, needs_back_channel,
    readable_tool_result, result_text, tool_arguments, tool_choices, unknown_tool,
};
use elicit::session::client::{
    Generation, McpClient, ProtocolChoice, HANDSHAKE_VERSION, STATELESS_VERSION,
};
use elicit::session::handler::ElicitHandler;
use elicit::transport::{self, ConnectOptions, MessageLog, ServerTarget};

use super::{json_text, load_answers, parse_headers, person, print_line, report_chain, Person};
use crate::cli::{AnswerArgs, CallArgs, SignInArgs};

/// The sign-in hook for a remote server: elicit's sign-in
/// ([`elicit::auth::Authenticator`]) with the person at the terminal as
/// the one who consents (the URL flow), or, without a terminal or with
/// `--no-input`, `--browser PROGRAM` launched directly.
///
/// The wait for the browser is `--prompt-timeout` when given; else, when
/// nobody is at the terminal, `wait` (`--timeout` of `call`); else the
/// sign-in default ([`elicit::auth::DEFAULT_WAIT`]): a person typing a
/// password needs longer than a server gets to answer.
/// Whether the person passed their own `Authorization` header: then it is
/// theirs to manage, and elicit does not sign in over it.
pub(super) fn own_authorization(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
}

pub(super) fn sign_in_hook(
    sign_in: &SignInArgs,
    answers: &AnswerArgs,
    server_url: &str,
    prompt_timeout: Option<Duration>,
    wait: Option<Duration>,
) -> Box<dyn elicit::transport::http::Authenticator> {
    let who = person(answers, prompt_timeout);
    let nobody = matches!(who, Person::Nobody(_));
    let wait = prompt_timeout.or(if nobody { wait } else { None });
    let mut opts = sign_in.clone().into_options(answers, wait);
    opts.no_input |= nobody;
    let mut auth = elicit::auth::Authenticator::new(opts, transport::http::new_agent());
    if let Person::Terminal(t) = who {
        auth.set_person(Box::new(t));
    }
    Box::new(elicit::auth::hook::SignInHook::new(auth, server_url))
}

pub fn run(args: &CallArgs) -> i32 {
    let outcome = call(args);
    // A SIGTERM/SIGHUP being handled decides the exit, not what the
    // session saw of the server it ends.
    elicit::transport::process_group::defer_to_signal();
    match outcome {
        Ok(code) => code,
        Err(e) => report_chain(&e),
    }
}

/// `elicit call`: start the server, connect, pick the tool and its
/// arguments, call it, print the result.
fn call(args: &CallArgs) -> anyhow::Result<i32> {
    use anyhow::Context;
    let scripted = load_answers(&args.answers)?;
    let rules = super::load_rules(&args.answers)?;
    if let Some(path) = &args.record {
        elicit::cassette::check_writable(path)?;
    }
    let mut person = person(&args.answers, args.prompt_timeout);
    elicit::terminal::tty::install_interrupt_handler();
    elicit::transport::process_group::exit_on_signals();
    let log = args.log.as_deref().map(MessageLog::create).transpose()?;
    let target = ServerTarget::from_args(args.target.url.as_deref(), &args.target.command)?;
    let headers = parse_headers(&args.target.headers)?;
    // Built afresh for each connection (a fallback to the handshake opens a
    // second one).
    let options = || ConnectOptions {
        server_log: args.server_log.clone(),
        log: log.clone(),
        headers: headers.clone(),
        transport: args.target.transport,
        auth: match &target {
            ServerTarget::Url(url) if !own_authorization(&headers) => Some(sign_in_hook(
                &args.target.sign_in,
                &args.answers,
                url,
                args.prompt_timeout,
                Some(args.timeout),
            )),
            _ => None,
        },
    };
    let server = transport::connect(&target, options()).context(match target {
        ServerTarget::Command(_) => "starting the server",
        ServerTarget::Url(_) => "reaching the server",
    })?;
    let picker = match &person {
        Person::Terminal(_) => true,
        Person::Nobody(_) => false,
    };
    let mut handler = ElicitHandler::new(&scripted, person.resolver());
    let mut client = McpClient::connect(
        server,
        args.protocol,
        Some(args.timeout),
        args.verbose,
        &mut handler,
    )
    .context("connecting to the server")?;
    if args.verbose {
        eprintln!(
            "elicit: connected to {} ({})",
            elicit::sanitize::sanitize_line(
                handler
                    .server_name
                    .as_deref()
                    .unwrap_or("a server with no name")
            ),
            client.generation.describe()
        );
    }
    let tools = client
        .list_tools(&mut handler)
        .context("listing the server's tools")?;
    let choices = tool_choices(&tools);
    let seen_early = handler.seen_fields.clone();
    let tool = match &args.tool {
        Some(t) => t.clone(),
        None if picker => {
            drop(handler);
            let Person::Terminal(term) = &person else {
                unreachable!("picker is true only with a terminal")
            };
            if choices.is_empty() {
                return Err(ElicitError::Server("the server lists no tools".into()).into());
            }
            let labels: Vec<String> = choices.iter().map(|(_, label)| label.clone()).collect();
            match term.pick("Which tool?", &labels)? {
                Some(i) => choices[i].0.clone(),
                None => return Err(ElicitError::Usage("no tool picked".into()).into()),
            }
        }
        None => {
            let names: Vec<&str> = choices.iter().map(|(n, _)| n.as_str()).collect();
            return Err(ElicitError::Usage(format!(
                "no --tool given and no terminal to pick one; the server's tools: {}",
                names.join(", ")
            ))
            .into());
        }
    };
    let schema = input_schema(&tools, &tool);
    if schema.is_none() && !tools.is_empty() {
        // Checked before calling: a typo should not reach the server.
        return Err(unknown_tool(&tool, &tools).into());
    }
    let mut recorder = args
        .record
        .as_ref()
        .map(|_| elicit::cassette::record::Recorder::default());
    let mut handler = ElicitHandler::new(&scripted, person.resolver());
    handler.server_name = client.server_name();
    handler.seen_fields = seen_early;
    let mut arguments = tool_arguments(schema, args.args_json.as_deref(), &args.arg)?;
    if let Some(schema) = schema {
        let nothing_given = args.tool.is_none() && args.args_json.is_none() && args.arg.is_empty();
        let missing = missing_required(schema, &arguments);
        if nothing_given && picker {
            // A tool picked on the terminal gets its arguments asked with
            // the form engine.
            if let Some(asked) =
                ask_arguments(&tool, schema, arguments.clone(), None, &mut handler)?
            {
                arguments = asked;
            }
        } else if !missing.is_empty() {
            if !picker {
                return Err(ElicitError::Usage(format!(
                    "the tool {} needs the argument(s) {} (required by its inputSchema); pass --arg NAME=VALUE or --args JSON",
                    elicit::sanitize::sanitize_line(&tool),
                    missing.join(", ")
                ))
                .into());
            }
            if let Some(asked) = ask_arguments(
                &tool,
                schema,
                arguments.clone(),
                Some(missing),
                &mut handler,
            )? {
                arguments = asked;
            }
        }
    }
    // The call's own handler: the answer rules (never used for the tool's
    // arguments above) and the recorder watch its elicitations.
    let seen = std::mem::take(&mut handler.seen_fields);
    drop(handler);
    let mut answering = elicit::cassette::rules::RulesResolver::new(
        rules,
        person.resolver(),
        Some(tool.clone()),
        args.answers.no_input,
        args.verbose,
    );
    let mut handler = ElicitHandler::new(&scripted, &mut answering);
    handler.server_name = client.server_name();
    handler.seen_fields = seen;
    handler.observer = recorder
        .as_mut()
        .map(|r| r as &mut dyn elicit::session::handler::ElicitObserver);
    let calling = || {
        format!(
            "calling the tool {}",
            elicit::sanitize::sanitize_line(&tool)
        )
    };
    let mut outcome = call_tool(&mut client, &mut handler, &tool, &arguments);
    let back_channel = match &outcome {
        Err(e) => needs_back_channel(&e.to_string()),
        Ok(r) => {
            r.get("isError").and_then(|e| e.as_bool()) == Some(true)
                && needs_back_channel(&result_text(r))
        }
    };
    if back_channel
        && args.protocol == ProtocolChoice::Auto
        && client.generation == Generation::Stateless
    {
        eprintln!(
            "elicit: the tool needs the server to send its own requests, which {STATELESS_VERSION} (used by --protocol auto) does not carry; retrying once over the initialize handshake ({HANDSHAKE_VERSION}; --protocol {HANDSHAKE_VERSION} does this at once)"
        );
        // A connection that serves 2026-07-28 may refuse a late
        // `initialize` (the Python SDK does): start afresh.
        client.server.close(Duration::from_secs(2));
        let server = transport::connect(&target, options()).context("connecting again")?;
        client = McpClient::connect(
            server,
            ProtocolChoice::V2025_11_25,
            Some(args.timeout),
            args.verbose,
            &mut handler,
        )
        .context("connecting again with the initialize handshake")?;
        outcome = call_tool(&mut client, &mut handler, &tool, &arguments);
    } else if back_channel && client.generation == Generation::Stateless {
        eprintln!(
            "elicit: the session used {STATELESS_VERSION}, where a tool cannot send requests of its own; --protocol {HANDSHAKE_VERSION} uses the initialize handshake, which can"
        );
    }
    for name in handler.unused_answers() {
        super::warn(&elicit::session::handler::unused_answer_warning(&name));
    }
    drop(handler);
    let result = outcome.with_context(calling)?;
    client.server.close(Duration::from_secs(2));
    if let (Some(path), Some(recorder)) = (&args.record, &recorder) {
        let cassette = recorder.cassette(
            recorded_server(&target, args.target.transport),
            elicit::cassette::protocol_name(&client.generation),
            &tool,
            &arguments,
            &result,
        );
        cassette.write(path)?;
    }
    // A person at a terminal reads the result; a pipe gets JSON.
    let readable = !args.json && !args.pretty && std::io::stdout().is_terminal();
    let code = if readable {
        print_line(&readable_tool_result(&result))
    } else {
        print_line(&json_text(&result, args.pretty))
    };
    if code != 0 {
        return Ok(code);
    }
    Ok(
        if result.get("isError").and_then(|e| e.as_bool()) == Some(true) {
            1
        } else {
            0
        },
    )
}

/// The server as a cassette names it: the command, or the URL and the
/// transport (never the headers).
pub(super) fn recorded_server(
    target: &ServerTarget,
    transport: elicit::transport::TransportChoice,
) -> elicit::cassette::ServerSpec {
    use clap::ValueEnum;
    match target {
        ServerTarget::Command(argv) => elicit::cassette::ServerSpec::Command(argv.clone()),
        ServerTarget::Url(url) => elicit::cassette::ServerSpec::Url {
            url: url.clone(),
            transport: transport
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_else(|| "auto".into()),
        },
    }
}
