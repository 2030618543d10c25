//! `elicit proxy`: relay between a client on stdin/stdout and the server,
//! answering the server's elicitations on the way.

use elicit::resolve::Resolver;
use elicit::transport::{MessageLog, ServerTarget};

use super::{load_answers, parse_headers, person, report_chain, Person};
use crate::cli::ProxyArgs;

/// `elicit proxy`: relay between the client on stdin/stdout and the server.
pub fn run(args: &ProxyArgs) -> i32 {
    let go = || -> anyhow::Result<i32> {
        use anyhow::Context;
        let target = ServerTarget::from_args(args.target.url.as_deref(), &args.target.command)?;
        let scripted = load_answers(&args.answers)?;
        let person = person(&args.answers, args.prompt_timeout);
        let forward_sigint = matches!(person, Person::Nobody(_));
        let person: Box<dyn Resolver + Send> = match person {
            Person::Terminal(t) => Box::new(t),
            Person::Nobody(n) => Box::new(n),
        };
        let person: Box<dyn Resolver + Send> =
            Box::new(elicit::cassette::rules::RulesResolver::new(
                super::load_rules(&args.answers)?,
                person,
                None,
                args.answers.no_input,
                args.verbose,
            ));
        let log = args.log.as_deref().map(MessageLog::create).transpose()?;
        let command = match target {
            ServerTarget::Command(command) => command,
            ServerTarget::Url(ref address) => {
                let url = target.clone();
                let headers = parse_headers(&args.target.headers)?;
                let auth = (!super::call::own_authorization(&headers)).then(|| {
                    super::call::sign_in_hook(
                        &args.target.sign_in,
                        &args.answers,
                        address,
                        args.prompt_timeout,
                        None,
                    )
                });
                elicit::terminal::tty::install_interrupt_handler();
                let server = elicit::transport::connect(
                    &url,
                    elicit::transport::ConnectOptions {
                        server_log: None,
                        log,
                        headers,
                        transport: args.target.transport,
                        auth,
                    },
                )
                .context("reaching the server")?;
                return elicit::session::remote_proxy::run_remote_proxy(
                    server,
                    elicit::session::remote_proxy::RemoteProxyOptions {
                        passthrough_declared: args.passthrough_declared,
                        verbose: args.verbose,
                        record: recorder(
                            args,
                            super::call::recorded_server(&url, args.target.transport),
                        )?,
                    },
                    scripted,
                    person,
                    Box::new(std::io::stdin()),
                    Box::new(std::io::stdout()),
                )
                .context("running the proxy");
            }
        };
        let record = recorder(args, elicit::cassette::ServerSpec::Command(command.clone()))?;
        elicit::session::proxy::run_proxy(
            elicit::session::proxy::ProxyOptions {
                command,
                server_log: args.server_log.clone(),
                log,
                passthrough_declared: args.passthrough_declared,
                verbose: args.verbose,
                shutdown_grace: args.shutdown_grace,
                forward_sigint,
                client_fds: Some((0, 1)),
                record,
            },
            scripted,
            person,
            Box::new(std::io::stdin()),
            Box::new(std::io::stdout()),
        )
        .context("running the proxy")
    };
    match go() {
        Ok(code) => code,
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
