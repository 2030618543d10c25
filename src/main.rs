//! The `elicit` binary: parses flags, calls the library, maps errors to exit
//! statuses. Everything else lives in the library.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use elicit::error::ElicitError;
use elicit::input;
use elicit::output;
use elicit::resolve::{outcome_exit_code, NoTerminal, Resolver, SchemaCache};
use elicit::sanitize::sanitize_block;
use elicit::session::call::{ask_arguments, call_tool, input_schema, tool_arguments, tool_choices};
use elicit::session::client::McpClient;
use elicit::session::handler::ElicitHandler;
use elicit::session::transport::{MessageLog, ServerProcess};
use elicit::terminal::{TerminalOptions, TerminalResolver};
use elicit::ScriptedAnswers;

mod cli;

/// mimalloc instead of the system allocator: building and dropping a JSON
/// tree per request is allocation-bound, and glibc malloc spent half of a
/// `--lines` run in its own bookkeeping (measured with perf).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cli::{AnswerArgs, CallArgs, Cli, Command, ProxyArgs, ResolveArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Call(args)) => run_call(&args),
        Some(Command::Proxy(args)) => run_proxy(&args),
        Some(Command::Completions { shell }) => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            // Into a buffer first: clap_complete panics on a closed pipe.
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "elicit", &mut out);
            print_line(String::from_utf8_lossy(&out).trim_end())
        }
        Some(Command::Man) => {
            use clap::CommandFactory;
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => print_line(String::from_utf8_lossy(&out).trim_end()),
                Err(e) => report(&ElicitError::io("rendering the man page", e)),
            }
        }
        Some(Command::Auth(action)) => run_auth(action),
        Some(Command::Request { file, pretty }) => run_request(file.as_deref(), pretty),
        Some(Command::Result { file, kind, pretty }) => {
            run_result(file.as_deref(), kind.as_deref(), pretty)
        }
        None => run_resolve(&cli.resolve),
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// `elicit auth list|logout`: the library does the work, this prints it.
fn run_auth(action: cli::AuthCommand) -> i32 {
    let out = match action {
        cli::AuthCommand::List => elicit::auth::list(None),
        cli::AuthCommand::Logout { url } => elicit::auth::logout(url.as_deref(), None),
    };
    match out {
        // Issuers and scopes come from servers: sanitised like all server text.
        Ok(text) => print_line(&sanitize_block(text.trim_end())),
        Err(e) => {
            eprintln!("elicit: {}", sanitize_block(&e.to_string()));
            1
        }
    }
}

/// Prints an error on stderr. Error text can quote server-provided values,
/// so it is sanitised like everything else that reaches the terminal.
fn report(err: &ElicitError) -> i32 {
    eprintln!("elicit: {}", sanitize_block(&err.to_string()));
    err.exit_code()
}

fn warn(text: &str) {
    eprintln!("elicit: warning: {}", sanitize_block(text));
}

/// Reads FILE, or stdin for `-` / nothing.
fn read_input(file: Option<&Path>) -> Result<Vec<u8>, ElicitError> {
    let limit = input::MAX_INPUT_BYTES + 1;
    let mut bytes = Vec::new();
    match file {
        Some(p) if p != Path::new("-") => {
            let f = std::fs::File::open(p)
                .map_err(|e| ElicitError::io(format!("cannot open {}", p.display()), e))?;
            f.take(limit)
                .read_to_end(&mut bytes)
                .map_err(|e| ElicitError::io(format!("cannot read {}", p.display()), e))?;
        }
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("elicit: reading the elicitation JSON from the terminal; end it with Ctrl-D (or pass a FILE)");
            }
            stdin
                .lock()
                .take(limit)
                .read_to_end(&mut bytes)
                .map_err(|e| ElicitError::io("cannot read stdin", e))?;
        }
    }
    Ok(bytes)
}

fn print_line(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Ok(()) => 0,
        // A closed pipe (`| head`) is not worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 1,
        Err(e) => report(&ElicitError::io("writing output", e)),
    }
}

/// JSON text, compact or indented.
fn json_text<T: serde::Serialize>(value: &T, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .expect("elicit's output types always serialise")
}

fn load_answers(args: &AnswerArgs) -> Result<ScriptedAnswers, ElicitError> {
    ScriptedAnswers::parse(&args.answers, |p| std::fs::read_to_string(p))
}

/// Who settles what scripted answers leave open.
enum Person {
    Terminal(TerminalResolver),
    Nobody(NoTerminal),
}

impl Person {
    fn resolver(&mut self) -> &mut dyn Resolver {
        match self {
            Person::Terminal(t) => t,
            Person::Nobody(n) => n,
        }
    }
}

/// The terminal when there is one (and `--no-input` was not given), else a
/// stand-in that explains why nobody can be asked.
fn person(args: &AnswerArgs, timeout: Option<Duration>) -> Person {
    if args.no_input {
        return Person::Nobody(NoTerminal {
            detail: "--no-input was given".into(),
        });
    }
    match TerminalResolver::open(TerminalOptions {
        server: args.server.clone(),
        timeout,
        browser: args.browser.clone(),
        no_open: args.no_open,
    }) {
        Ok(t) => Person::Terminal(t),
        Err(detail) => Person::Nobody(NoTerminal { detail }),
    }
}

fn run_resolve(args: &ResolveArgs) -> i32 {
    let scripted = match load_answers(&args.answers) {
        Ok(a) => a,
        Err(e) => return report(&e),
    };
    let mut person = person(&args.answers, args.timeout);
    if args.lines {
        return run_lines(args, &scripted, person.resolver());
    }
    let bytes = match read_input(args.file.as_deref()) {
        Ok(b) => b,
        Err(e) => return report(&e),
    };
    let text = match input::decode(&bytes) {
        Ok(t) => t,
        Err(e) => return report(&e),
    };
    let doc = match input::read_document(text) {
        Ok(d) => d,
        Err(failure) => {
            // A JSON-RPC request the server got wrong gets a JSON-RPC error on
            // stdout, so a pipeline can hand it straight back.
            if let (Some(id), Some(code)) = (&failure.reply_id, failure.error.rpc_code()) {
                print_line(&output::render_rpc_error(
                    id,
                    code,
                    &failure.error,
                    None,
                    args.pretty,
                ));
            }
            return report(&failure.error);
        }
    };
    let mut cache = SchemaCache::default();
    match elicit::resolve_document(doc, &scripted, person.resolver(), &mut cache, args.pretty) {
        Ok(resolved) => {
            for w in &resolved.warnings {
                warn(w);
            }
            let code = print_line(&resolved.output);
            if code != 0 {
                return code;
            }
            if args.exit_status {
                outcome_exit_code(resolved.results.iter().map(|(_, r)| r))
            } else {
                0
            }
        }
        Err(e) => report(&e),
    }
}

fn run_lines(args: &ResolveArgs, scripted: &ScriptedAnswers, person: &mut dyn Resolver) -> i32 {
    let stdin;
    let reader: Box<dyn std::io::BufRead> = match args.file.as_deref() {
        Some(p) if p != Path::new("-") => match std::fs::File::open(p) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => return report(&ElicitError::io(format!("cannot open {}", p.display()), e)),
        },
        _ => {
            stdin = std::io::stdin();
            Box::new(stdin.lock())
        }
    };
    let out = std::io::stdout().lock();
    let result = elicit::lines::run_lines(reader, out, scripted, person, |line, err, warnings| {
        if warnings.is_empty() {
            eprintln!("elicit: line {line}: {}", sanitize_block(&err.to_string()));
        } else {
            for w in warnings {
                warn(&format!("line {line}: {w}"));
            }
        }
    });
    match result {
        Ok(summary) if summary.failed > 0 => {
            eprintln!(
                "elicit: {} of {} lines failed",
                summary.failed, summary.lines
            );
            2
        }
        Ok(summary) => {
            if args.exit_status {
                summary.outcome_code
            } else {
                0
            }
        }
        Err(ElicitError::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => 1,
        Err(e) => report(&e),
    }
}

fn run_request(file: Option<&Path>, pretty: bool) -> i32 {
    let go = || -> Result<String, ElicitError> {
        let bytes = read_input(file)?;
        let text = input::decode(&bytes)?;
        let doc = input::read_document(text).map_err(|f| f.error)?;
        let requests: Vec<elicit::Request> = doc
            .entries
            .iter()
            .map(|e| elicit::elicitation_to_request(&e.params))
            .collect();
        Ok(if requests.len() == 1 {
            json_text(&requests[0], pretty)
        } else {
            json_text(&requests, pretty)
        })
    };
    match go() {
        Ok(text) => print_line(&text),
        Err(e) => report(&e),
    }
}

fn run_result(file: Option<&Path>, kind: Option<&str>, pretty: bool) -> i32 {
    let go = || -> Result<String, ElicitError> {
        let bytes = read_input(file)?;
        let text = input::decode(&bytes)?;
        let value = input::parse_json(text)?;
        let answer: elicit::Answer =
            serde_json::from_value(value).map_err(|e| ElicitError::UnknownShape {
                message: format!(
                    "not a contract Answer ({{\"id\", \"ok\", \"data\", \"reason\"}}): {e}"
                ),
            })?;
        let mut result = elicit::answer_to_elicit_result(&answer);
        if kind == Some(elicit::contract::KIND_AUTHORIZATION) {
            result = result.for_mode(elicit::Mode::Url);
        }
        Ok(json_text(&result, pretty))
    };
    match go() {
        Ok(text) => print_line(&text),
        Err(e) => report(&e),
    }
}

fn run_call(args: &CallArgs) -> i32 {
    match call(args) {
        Ok(code) => code,
        Err(e) => report_chain(&e),
    }
}

/// Reports an error with its context chain ("starting the server: cannot
/// start server …"). The exit status comes from the typed error inside.
fn report_chain(err: &anyhow::Error) -> i32 {
    // Our errors already name their cause, so the chain stops there.
    let mut parts = Vec::new();
    for cause in err.chain() {
        parts.push(cause.to_string());
        if cause.downcast_ref::<ElicitError>().is_some() {
            break;
        }
    }
    eprintln!("elicit: {}", sanitize_block(&parts.join(": ")));
    err.chain()
        .find_map(|e| e.downcast_ref::<ElicitError>())
        .map_or(1, ElicitError::exit_code)
}

/// `elicit call`: start the server, connect, pick the tool and its
/// arguments, call it, print the result.
fn call(args: &CallArgs) -> anyhow::Result<i32> {
    use anyhow::Context;
    let scripted = load_answers(&args.answers)?;
    let mut person = person(&args.answers, args.prompt_timeout);
    elicit::terminal::tty::install_interrupt_handler();
    let log = args.log.as_deref().map(MessageLog::create).transpose()?;
    let server = ServerProcess::spawn(&args.command, args.server_log.as_deref(), log)
        .context("starting the server")?;
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
    if let Some(name) = &handler.server_name {
        if args.verbose {
            eprintln!(
                "elicit: connected to {} ({:?})",
                elicit::sanitize::sanitize_line(name),
                client.generation
            );
        }
    }
    let tools = client
        .list_tools(&mut handler)
        .context("listing the server's tools")?;
    let choices = tool_choices(&tools);
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
    let mut handler = ElicitHandler::new(&scripted, person.resolver());
    handler.server_name = client.server_name();
    let schema = input_schema(&tools, &tool);
    if schema.is_none() && args.verbose {
        eprintln!(
            "elicit: the server does not list a tool named {}; calling it anyway",
            elicit::sanitize::sanitize_line(&tool)
        );
    }
    let mut arguments = tool_arguments(schema, args.args_json.as_deref(), &args.arg)?;
    // A tool picked on the terminal gets its arguments asked the same way.
    if args.tool.is_none() && args.args_json.is_none() && args.arg.is_empty() {
        if let Some(schema) = schema {
            if let Some(asked) = ask_arguments(&tool, schema, &mut handler)? {
                arguments = asked;
            }
        }
    }
    let result = call_tool(&mut client, &mut handler, &tool, &arguments).with_context(|| {
        format!(
            "calling the tool {}",
            elicit::sanitize::sanitize_line(&tool)
        )
    })?;
    client.server.shutdown(Duration::from_secs(2));
    let code = print_line(&json_text(&result, args.pretty));
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

/// `elicit proxy`: relay between the client on stdin/stdout and the server.
fn run_proxy(args: &ProxyArgs) -> i32 {
    let go = || -> anyhow::Result<i32> {
        use anyhow::Context;
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
                command: args.command.clone(),
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
