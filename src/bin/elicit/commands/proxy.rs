//! `elicit proxy`: relay between a client on stdin/stdout and the server,
//! answering the server's elicitations on the way. The proxy (which relay
//! a server takes, its recorder, the exit status) is the library's
//! [`elicit::mcp::proxy`]; this is the flags, the person and the sign-in
//! around it.

use elicit::cassette::proxy_record::shared_recorder;
use elicit::cassette::ServerSpec;
use elicit::elicitation::resolve::Resolver;
use elicit::mcp::proxy::{self, MakeRecording, ProxyRunOptions};
use elicit::mcp::relay::{Parties, RelayOptions};
use elicit::mcp::strict::Strict;
use elicit::transport::{MessageLog, ServerTarget};

use super::connect::{own_authorization, sign_in_hook, strict_checker};
use super::{load_answers, parse_headers, person, report_chain};
use crate::cli::ProxyArgs;

/// `elicit proxy`: relay between the client on stdin/stdout and the server.
pub fn run(args: &ProxyArgs) -> i32 {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!("{HAND_STARTED}");
    }
    // The proxy's revision is learnt from the session; until then 2025-11-25.
    let strict = match strict_checker(
        &args.checks,
        elicit::mcp::client::ProtocolChoice::Only(elicit::lint::Revision::V2025_11_25),
    ) {
        Ok(s) => s,
        Err(code) => return code,
    };
    match run_proxy(args, strict.as_ref()) {
        Ok(code) => proxy::exit_status(strict.as_ref(), code),
        Err(e) => report_chain(&e),
    }
}

/// Said at once when stdin is a terminal: someone started the proxy by
/// hand, and it would otherwise sit waiting for a client's messages.
const HAND_STARTED: &str = "elicit proxy: stdin is a terminal, but elicit proxy speaks JSON-RPC (MCP) on stdin and stdout for an MCP client: put `elicit proxy [OPTIONS] -- COMMAND` in the client's server configuration in place of the server's command (Ctrl-D ends this run); to call a tool yourself, use `elicit call`";

/// Who answers, the server and how to reach it, then the proxy.
fn run_proxy(args: &ProxyArgs, strict: Option<&Strict>) -> anyhow::Result<i32> {
    let target = ServerTarget::from_args(args.target.url.as_deref(), &args.target.command)?;
    let scripted = load_answers(&args.answers)?;
    let person = person(&args.answers, args.prompt_timeout, "--prompt-timeout");
    let forward_sigint = !person.at_terminal();
    let rules = super::load_rules(&args.answers)?;
    let person: Box<dyn Resolver + Send> =
        Box::new(super::answering(rules, &args.answers, args.verbose).in_front_of(person.boxed()));
    let log = args.log.as_deref().map(MessageLog::create).transpose()?;
    let mut options = ProxyRunOptions {
        record: recording(args, &target),
        target,
        relay: RelayOptions {
            passthrough_declared: args.passthrough_declared,
            verbose: args.verbose,
            modes: args.checks.modes,
            strict: strict.cloned(),
            record: None,
            task_budget: None,
            keepalive_interval: None,
        },
        log,
        server_log: args.server_log.clone(),
        shutdown_grace: args.shutdown_grace,
        forward_sigint,
        client_fds: Some((0, 1)),
        request_timeout: args.request_timeout,
        transport: args.target.transport.into(),
        headers: Vec::new(),
        auth: None,
    };
    if let ServerTarget::Url(address) = &options.target {
        args.target.sign_in.refuse_stdin("proxy")?;
        options.headers = parse_headers(&args.target.headers)?;
        options.auth = (!own_authorization(&options.headers)).then(|| {
            sign_in_hook(
                &args.target.sign_in,
                &args.answers,
                address,
                args.prompt_timeout,
                None,
            )
        });
    }
    let parties = Parties {
        scripted,
        person,
        client_in: Box::new(std::io::stdin()),
        client_out: Box::new(std::io::stdout()),
    };
    proxy::run(options, parties).map_err(super::step_failure)
}

/// `--record FILE`: the cassette recorder the proxy feeds, made (the file
/// checked) once the server is reached.
fn recording(args: &ProxyArgs, target: &ServerTarget) -> Option<MakeRecording> {
    let path = args.record.clone()?;
    let server = ServerSpec::recorded(target, args.target.transport.into());
    Some(Box::new(move || shared_recorder(&path, server)))
}
