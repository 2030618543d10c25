//! `elicit proxy`: relay between a client on stdin/stdout and the server,
//! answering the server's elicitations on the way.

use elicit::resolve::Resolver;
use elicit::transport::{MessageLog, ServerTarget};

use super::{load_answers, person, report_chain, Person};
use crate::cli::ProxyArgs;

/// `elicit proxy`: relay between the client on stdin/stdout and the server.
pub fn run(args: &ProxyArgs) -> i32 {
    let go = || -> anyhow::Result<i32> {
        use anyhow::Context;
        let target = ServerTarget::from_args(args.url.as_deref(), &args.command)?;
        let ServerTarget::Command(command) = target else {
            return Err(elicit::ElicitError::Usage(
                "elicit proxy does not reach remote servers yet".into(),
            )
            .into());
        };
        let scripted = load_answers(&args.answers)?;
        let person = person(&args.answers, args.prompt_timeout);
        let forward_sigint = matches!(person, Person::Nobody(_));
        let person: Box<dyn Resolver + Send> = match person {
            Person::Terminal(t) => Box::new(t),
            Person::Nobody(n) => Box::new(n),
        };
        let log = args.log.as_deref().map(MessageLog::create).transpose()?;
        elicit::session::proxy::run_proxy(
            elicit::session::proxy::ProxyOptions {
                command,
                server_log: args.server_log.clone(),
                log,
                passthrough_declared: args.passthrough_declared,
                verbose: args.verbose,
                shutdown_grace: args.shutdown_grace,
                forward_sigint,
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
