//! The `elicit` binary: parses flags and dispatches to one module per
//! subcommand ([`commands`]), which call the library and map errors to exit
//! statuses. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;

/// mimalloc instead of the system allocator: building and dropping a JSON
/// tree per request is allocation-bound, and glibc malloc spent half of a
/// `--lines` run in its own bookkeeping (measured with perf).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    elicit::color::set(cli.color);
    let code = match cli.command {
        Some(Command::Call(args)) => commands::call::run(&args),
        Some(Command::Proxy(args)) => commands::proxy::run(&args),
        Some(Command::Completions { shell }) => commands::shell::completions(shell),
        Some(Command::Man { command }) => commands::shell::man(command.as_deref()),
        Some(Command::Request { file, pretty }) => {
            commands::request::run_request(file.as_deref(), pretty)
        }
        Some(Command::Auth(action)) => commands::auth::run(action),
        Some(Command::Result {
            file,
            kind,
            input,
            pretty,
        }) => commands::request::run_result(file.as_deref(), kind, input.as_deref(), pretty),
        None => commands::resolve::run(&cli.resolve),
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}
