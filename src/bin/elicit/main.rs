//! The `elicit` binary: parses flags and dispatches to one module per
//! subcommand ([`commands`]), which call the library and map errors to exit
//! statuses. Everything else lives in the library.
//!
//! It starts the way every Rust program does (std's `main`, std's
//! allocator): std ignores SIGPIPE for us (a reader that goes away is a
//! write error elicit handles, not a silent death) and opens closed standard
//! descriptors on `/dev/null`, so a file elicit opens never becomes its
//! stdout.

use clap::Parser;

mod cli;
mod commands;

use cli::{Cli, Command};

fn main() {
    std::process::exit(run(std::env::args_os()));
}

/// `Cli::parse()`, with a tip for a server command written without `--`.
/// A hook run's bad flag or environment variable is no usage error (exit
/// 2, which Claude Code reads as "deny"): it is reported and the hook
/// leaves the elicitation to Claude Code (the exit status given back).
fn parse_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Result<Cli, i32> {
    let args = cli::server_command::dashes_before_command(args.collect());
    let parsed = Cli::try_parse_from(&args);
    parsed.map_err(|mut e| {
        if commands::hook::is_hook_run(&args) && e.exit_code() != 0 {
            return commands::hook::bad_flags(&e, &args);
        }
        if let Some(tip) = dashes_tip(&e, &args) {
            e.insert(
                clap::error::ContextKind::Suggested,
                clap::error::ContextValue::StyledStrs(vec![tip.into()]),
            );
        }
        e.exit()
    })
}

/// A server command written without `--` (`elicit call --tool t ./venv/bin/python
/// server.py`): clap sees a URL and a stray word. The tip shows the line
/// with `--` in its place, as the one-word case's error already does.
fn dashes_tip(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if words.iter().any(|w| w == "--") {
        return None;
    }
    let sub = words.iter().position(|w| w == "call" || w == "proxy")?;
    let Some(ContextValue::String(stray)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    if stray.starts_with('-') {
        return None;
    }
    let at = sub + 1 + words[sub + 1..].iter().position(|w| w == stray)?;
    // The word before the stray one is the command clap took for a URL.
    let start = if at > sub + 1 && !words[at - 1].starts_with('-') {
        at - 1
    } else {
        at
    };
    let command = words[start..].join(" ");
    Some(format!(
        "to run a stdio server, put its command after `--`: elicit {} [OPTIONS] -- {}",
        words[sub],
        elicit::text::sanitize::sanitize_line(&command)
    ))
}

fn run(args: impl Iterator<Item = std::ffi::OsString>) -> i32 {
    let args = commands::park::with_held_call(args.collect());
    let cli = match parse_flags(args.into_iter()) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    elicit::terminal::color::set(cli.color.into());
    let code = match cli.command {
        Some(Command::Call(args)) if args.park => commands::park::launch(),
        Some(Command::Call(args)) => commands::call::run(&args),
        Some(Command::Proxy(args)) => commands::proxy::run(&args),
        Some(Command::Respond(args)) => commands::park::respond(&args),
        Some(Command::Pending(args)) => commands::park::pending(&args),
        Some(Command::ParkHold(args)) => commands::park::hold(&args),
        Some(Command::Completions { shell }) => commands::shell::completions(shell),
        Some(Command::Man { command }) => commands::shell::man(command.as_deref()),
        Some(Command::Request { file, pretty }) => {
            commands::request::run_request(file.as_deref(), pretty)
        }
        Some(Command::Auth(action)) => commands::auth::run(action),
        Some(Command::Lint(args)) => commands::lint::run(&args),
        Some(Command::Test(args)) => commands::test::run(&args),
        Some(Command::Mock(args)) => commands::mock::run(&args),
        Some(Command::Hook(cli::HookCommand::ClaudeCode(args))) => {
            commands::hook::claude_code(&args)
        }
        Some(Command::Result {
            file,
            kind,
            input,
            pretty,
        }) => commands::request::run_result(file.as_deref(), kind, input.as_deref(), pretty),
        None => commands::resolve::run(&cli.resolve),
    };
    code.clamp(0, 255)
}
