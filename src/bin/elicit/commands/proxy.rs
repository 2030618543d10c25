//! `elicit proxy`: relay between a client on stdin/stdout and the server,
//! answering the server's elicitations on the way.

use elicit::elicitation::resolve::Resolver;
use elicit::transport::{MessageLog, ServerTarget};

use super::{load_answers, parse_headers, person, report_chain, Person};
use crate::cli::ProxyArgs;

/// Who answers, and the client on stdin/stdout.
fn parties(
    scripted: elicit::elicitation::answers::ScriptedAnswers,
    person: Box<dyn Resolver + Send>,
) -> elicit::mcp::relay::Parties {
    elicit::mcp::relay::Parties {
        scripted,
        person,
        client_in: Box::new(std::io::stdin()),
        client_out: Box::new(std::io::stdout()),
    }
}

/// `elicit proxy`: relay between the client on stdin/stdout and the server.
pub fn run(args: &ProxyArgs) -> i32 {
    // The proxy's revision is learnt from the session; until then 2025-11-25.
    let strict = match super::connect::strict_checker(
        &args.checks,
        elicit::mcp::client::ProtocolChoice::Only(elicit::lint::Revision::V2025_11_25),
    ) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let go = || -> anyhow::Result<i32> {
        use anyhow::Context;
        let target = ServerTarget::from_args(args.target.url.as_deref(), &args.target.command)?;
        let scripted = load_answers(&args.answers)?;
        let person = person(&args.answers, args.prompt_timeout, "--prompt-timeout");
        let forward_sigint = !matches!(person, Person::Terminal(_));
        let person: Box<dyn Resolver + Send> = person.boxed();
        let person: Box<dyn Resolver + Send> =
            Box::new(elicit::cassette::rules::RulesResolver::new(
                super::load_rules(&args.answers)?,
                person,
                args.answers.no_input,
                args.verbose,
            ));
        let log = args.log.as_deref().map(MessageLog::create).transpose()?;
        let relay = |record| elicit::mcp::relay::RelayOptions {
            passthrough_declared: args.passthrough_declared,
            verbose: args.verbose,
            modes: args.checks.modes,
            strict: strict.clone(),
            record,
        };
        let command = match target {
            ServerTarget::Command(command) => command,
            ServerTarget::Url(ref address) => {
                let url = target.clone();
                args.target.sign_in.refuse_stdin("proxy")?;
                let headers = parse_headers(&args.target.headers)?;
                let auth = (!super::connect::own_authorization(&headers)).then(|| {
                    super::connect::sign_in_hook(
                        &args.target.sign_in,
                        &args.answers,
                        address,
                        args.prompt_timeout,
                        None,
                    )
                });
                elicit::signals::install_interrupt_handler();
                let server = elicit::transport::connect(
                    &url,
                    elicit::transport::ConnectOptions {
                        server_log: None,
                        // Written by the relay, which knows who sent and
                        // who got each message.
                        log: None,
                        headers,
                        transport: args.target.transport.into(),
                        auth,
                        timeout: None,
                    },
                )
                .context("reaching the server")?;
                return elicit::mcp::relay::remote::run_remote_proxy(
                    server,
                    elicit::mcp::relay::remote::RemoteProxyOptions {
                        max_in_flight: elicit::mcp::relay::remote::MAX_IN_FLIGHT,
                        request_timeout: args.request_timeout,
                        log,
                        relay: relay(recorder(
                            args,
                            super::connect::recorded_server(&url, args.target.transport.into()),
                        )?),
                    },
                    parties(scripted, person),
                )
                .context("running the proxy");
            }
        };
        let record = recorder(args, elicit::cassette::ServerSpec::Command(command.clone()))?;
        if let Some(path) = &args.server_log {
            elicit::transport::stdio::start_server_log(path)?;
        }
        elicit::mcp::relay::stdio::run_proxy(
            elicit::mcp::relay::stdio::ProxyOptions {
                command,
                server_log: args.server_log.clone(),
                log,
                shutdown_grace: args.shutdown_grace,
                forward_sigint,
                client_fds: Some((0, 1)),
                relay: relay(record),
            },
            parties(scripted, person),
        )
        .context("running the proxy")
    };
    match go() {
        Ok(code) => match &strict {
            // The server's own status stands unless it is a success.
            Some(strict) => {
                strict.finish();
                if code == 0 && strict.has_errors() {
                    elicit::mcp::strict::EXIT_STRICT
                } else {
                    code
                }
            }
            None => code,
        },
        Err(e) => report_chain(&e),
    }
}

/// `--record FILE`: the recorder the proxy feeds, once the file is known
/// to be writable.
fn recorder(
    args: &ProxyArgs,
    server: elicit::cassette::ServerSpec,
) -> Result<
    Option<std::sync::Arc<std::sync::Mutex<elicit::cassette::proxy_record::ProxyRecorder>>>,
    elicit::error::ElicitError,
> {
    let Some(path) = &args.record else {
        return Ok(None);
    };
    elicit::cassette::check_writable(path)?;
    Ok(Some(std::sync::Arc::new(std::sync::Mutex::new(
        elicit::cassette::proxy_record::ProxyRecorder::new(path, server),
    ))))
}
