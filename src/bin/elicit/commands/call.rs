//! `elicit call`: connect to a server, pick a tool and its arguments, call
//! it with every elicitation on the way resolved, print the result.

use std::io::IsTerminal;
use std::time::Duration;

use elicit::error::{ElicitError, ServerError};
use elicit::lint::{Levels, Revision};
use elicit::mcp::call::{
    ask_arguments, call_tool_end, handshake_retry_reason, input_schema, missing_required,
    readable_tool_result, tool_arguments, tool_choices, unknown_tool, AskedArguments, CallEnd,
};
use elicit::mcp::client::{Generation, McpClient, ProtocolChoice, HANDSHAKE_VERSION};
use elicit::mcp::handler::ElicitHandler;
use elicit::mcp::strict::{Strict, EXIT_STRICT};
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
    let who = person(answers, prompt_timeout, "--prompt-timeout");
    let nobody = matches!(who, Person::Nobody(_));
    let wait = prompt_timeout.or(if nobody { wait } else { None });
    let mut opts = sign_in.clone().into_options(answers, wait);
    opts.no_input |= nobody;
    let mut auth = elicit::auth::Authenticator::new(opts, transport::http::new_agent());
    match who {
        Person::Terminal(t) => auth.set_person(Box::new(t)),
        // The consent is shown on the page like a URL elicitation.
        Person::Page(p) => auth.set_person(Box::new(p)),
        Person::Nobody(_) => {}
    }
    Box::new(elicit::auth::hook::SignInHook::new(auth, server_url))
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
        elicit::text::sanitize::sanitize_line(tool)
    );
    code
}

pub fn run(args: &CallArgs) -> i32 {
    let strict = match strict_checker(&args.checks, args.protocol) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let outcome = call(args, strict.as_ref());
    // A SIGTERM/SIGHUP being handled decides the exit, not what the
    // session saw of the server it ends.
    elicit::transport::process_group::defer_to_signal();
    let code = match outcome {
        Ok(code) => code,
        Err(e) => report_chain(&e),
    };
    strict_exit(strict.as_ref(), code)
}

/// The `--strict` checker, when asked for: findings on stderr as they come.
/// An unknown rule in `--allow`/`--deny` is reported: `Err` holds the exit
/// status.
pub(super) fn strict_checker(
    checks: &crate::cli::StrictArgs,
    protocol: ProtocolChoice,
) -> Result<Option<Strict>, i32> {
    if !checks.strict {
        return Ok(None);
    }
    let levels = Levels::new(&checks.allow, &checks.deny)
        .map_err(|message| super::report(&ElicitError::Usage(message)))?;
    let revision = match protocol {
        ProtocolChoice::V2025_06_18 => Revision::V2025_06_18,
        ProtocolChoice::V2025_11_25 => Revision::V2025_11_25,
        ProtocolChoice::V2026_07_28 | ProtocolChoice::Auto => Revision::V2026_07_28,
    };
    Ok(Some(Strict::new(levels, checks.modes, revision, true)))
}

/// The exit status once `--strict` has had its say: the summary is
/// printed, and an error finding makes it 5 (a usage error stays 2).
pub(super) fn strict_exit(strict: Option<&Strict>, code: i32) -> i32 {
    let Some(strict) = strict else {
        return code;
    };
    strict.finish();
    if strict.has_errors() && code != 2 {
        EXIT_STRICT
    } else {
        code
    }
}

/// The revision a connected session speaks.
fn session_revision(generation: &Generation) -> Revision {
    match generation {
        Generation::Stateless => Revision::V2026_07_28,
        Generation::Handshake(v) => Revision::from_version(v).unwrap_or(Revision::V2025_11_25),
    }
}

/// `elicit call`: start the server, connect, pick the tool and its
/// arguments, call it, print the result.
fn call(args: &CallArgs, strict: Option<&Strict>) -> anyhow::Result<i32> {
    use anyhow::Context;
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
        timeout: Some(args.timeout),
    };
    let server = transport::connect(&target, options()).context(match target {
        ServerTarget::Command(_) => "starting the server",
        ServerTarget::Url(_) => "reaching the server",
    })?;
    let picker = match &person {
        Person::Terminal(_) => true,
        Person::Page(_) | Person::Nobody(_) => false,
    };
    let mut handler = ElicitHandler::new(&scripted, person.resolver());
    handler.modes = args.checks.modes;
    handler.strict = strict.cloned();
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
            "elicit: connected to {} ({}): {}",
            elicit::text::sanitize::sanitize_line(
                handler
                    .server_name
                    .as_deref()
                    .unwrap_or("a server with no name")
            ),
            client.generation.describe(),
            client.why
        );
    }
    if let Some(strict) = strict {
        strict.set_revision(session_revision(&client.generation));
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
                return Err(ElicitError::Server(ServerError::NoTools).into());
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
    handler.modes = args.checks.modes;
    handler.strict = strict.cloned();
    let mut arguments = tool_arguments(schema, args.args_json.as_deref(), &args.arg)?;
    if let Some(schema) = schema {
        let nothing_given = args.tool.is_none() && args.args_json.is_none() && args.arg.is_empty();
        let missing = missing_required(schema, &arguments);
        if nothing_given && picker {
            // A tool picked on the terminal gets its arguments asked with
            // the form engine.
            match ask_arguments(&tool, schema, arguments.clone(), None, &mut handler)? {
                AskedArguments::Given(asked) => arguments = asked,
                AskedArguments::NothingToAsk => {}
                AskedArguments::Refused(action) => return Ok(arguments_refused(&tool, action)),
            }
        } else if !missing.is_empty() {
            if !picker {
                return Err(ElicitError::Usage(format!(
                    "the tool {} needs the argument(s) {} (required by its inputSchema); pass --arg NAME=VALUE or --args JSON",
                    elicit::text::sanitize::sanitize_line(&tool),
                    missing.join(", ")
                ))
                .into());
            }
            match ask_arguments(
                &tool,
                schema,
                arguments.clone(),
                Some(missing),
                &mut handler,
            )? {
                AskedArguments::Given(asked) => arguments = asked,
                AskedArguments::NothingToAsk => {}
                AskedArguments::Refused(action) => return Ok(arguments_refused(&tool, action)),
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
        args.answers.no_input,
        args.verbose,
    );
    let mut handler = ElicitHandler::new(&scripted, &mut answering);
    handler.server_name = client.server_name();
    handler.tool_name = Some(tool.clone());
    handler.seen_fields = seen;
    handler.modes = args.checks.modes;
    handler.strict = strict.cloned();
    handler.observer = recorder
        .as_mut()
        .map(|r| r as &mut dyn elicit::mcp::handler::ElicitObserver);
    let calling = || {
        format!(
            "calling the tool {}",
            elicit::text::sanitize::sanitize_line(&tool)
        )
    };
    let asked_before = handler.asked;
    let mut outcome = call_tool_end(&mut client, &mut handler, &tool, &arguments);
    let asked = handler.asked > asked_before;
    let retry = match &outcome {
        Ok(end) => handshake_retry_reason(args.protocol, &client.generation, end, asked),
        Err(_) => None,
    };
    if let (true, ProtocolChoice::V2026_07_28, Ok(end)) = (args.verbose, args.protocol, &outcome) {
        // The person chose 2026-07-28: say what auto would have done.
        if let Some(why) =
            handshake_retry_reason(ProtocolChoice::Auto, &client.generation, end, asked)
        {
            eprintln!(
                "elicit: {}; --protocol auto would call it again over the initialize handshake ({HANDSHAKE_VERSION})",
                elicit::text::sanitize::sanitize_line(&why)
            );
        }
    }
    if let Some(why) = retry {
        if args.verbose {
            eprintln!(
                "elicit: {}; calling it again over the initialize handshake ({HANDSHAKE_VERSION})",
                elicit::text::sanitize::sanitize_line(&why)
            );
        }
        // A connection that serves 2026-07-28 may refuse a late
        // `initialize` (the Python SDK does): a fresh one, and the old one
        // kept until the new one works, for its failure to stand otherwise.
        let again = transport::connect(&target, options())
            .map_err(anyhow::Error::from)
            .and_then(|server| {
                McpClient::connect(
                    server,
                    ProtocolChoice::V2025_11_25,
                    Some(args.timeout),
                    args.verbose,
                    &mut handler,
                )
                .map_err(anyhow::Error::from)
            });
        match again {
            Ok(c) => {
                client.server.close(Duration::from_secs(2));
                client = c;
                if let Some(strict) = strict {
                    strict.set_revision(session_revision(&client.generation));
                }
                if args.verbose {
                    eprintln!(
                        "elicit: connected again ({}): the retry after the failure on 2026-07-28",
                        client.generation.describe()
                    );
                }
                outcome = call_tool_end(&mut client, &mut handler, &tool, &arguments);
            }
            // A server that speaks only 2026-07-28: its own failure stands.
            Err(e) => {
                if args.verbose {
                    eprintln!(
                        "elicit: the initialize handshake failed too ({}); the result over 2026-07-28 stands",
                        elicit::text::sanitize::sanitize_line(&format!("{e:#}"))
                    );
                }
            }
        }
    }
    let failed = !matches!(&outcome, Ok(CallEnd::Result(r)) if r.get("isError").and_then(|e| e.as_bool()) != Some(true));
    // Answers nobody asked for are worth a warning when some form came (a
    // misspelt field) or the call worked; when the call failed before any
    // form came, the failure is the news, not the answers.
    if !failed || !handler.seen_fields.is_empty() {
        for name in handler.unused_answers() {
            super::warn(&elicit::mcp::handler::unused_answer_warning(&name));
        }
    }
    let outcome = outcome.and_then(|end| match end {
        CallEnd::Result(r) => Ok(r),
        CallEnd::Refused { error, message } => Err(ElicitError::Server(ServerError::CallRefused {
            error,
            message,
        })),
    });
    // With -e, a declined or cancelled elicitation of the call decides the
    // exit (cancel outranks decline), over the tool's isError and over a
    // call that failed for it (a -32042 URL elicitation declined).
    let declined = if args.exit_status {
        elicit::elicitation::resolve::outcome_exit_code(handler.answered.iter())
    } else {
        0
    };
    let result = match outcome.with_context(calling) {
        Ok(r) => r,
        Err(e) if declined != 0 => {
            report_chain(&e);
            return Ok(declined);
        }
        Err(e) => return Err(e),
    };
    drop(handler);
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
    // A person at a terminal reads the result; a pipe gets JSON. Printed
    // before the session is closed: a server slow to end it (DELETE)
    // must not hold the result back.
    let readable = !args.json && !args.pretty && std::io::stdout().is_terminal();
    let code = if readable {
        print_line(&readable_tool_result(&result))
    } else {
        print_line(&json_text(&result, args.pretty))
    };
    client.server.close(Duration::from_secs(2));
    if code != 0 {
        return Ok(code);
    }
    if declined != 0 {
        return Ok(declined);
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
