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
            ServerTarget::Url(_) if args.record.is_some() => {
                return Err(elicit::error::ElicitError::Usage(
                    "--record on the proxy needs a server command (after `--`); for a URL, record with `elicit call --record`".into(),
                )
                .into());
            }
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
                    },
                    scripted,
                    person,
                    Box::new(std::io::stdin()),
                    Box::new(std::io::stdout()),
                )
                .context("running the proxy");
            }
        };
        if let Some(path) = &args.record {
            elicit::cassette::check_writable(path)?;
        }
        let record = args.record.as_deref().map(|path| {
            std::sync::Arc::new(std::sync::Mutex::new(
                elicit::cassette::proxy_record::ProxyRecorder::new(
                    path,
                    elicit::cassette::ServerSpec::Command(command.clone()),
                ),
            ))
        });
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
