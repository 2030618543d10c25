//! The `elicit` binary: parses flags and dispatches to one module per
//! subcommand ([`commands`]), which call the library and map errors to exit
//! statuses. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;

/// The system allocator, on purpose. mimalloc (used before) reserves a 1 GiB
/// arena and commits it eagerly with transparent huge pages on its first
/// allocation: a short run paid about 1 ms of kernel time for it (system time
/// 1.2 ms against 0.3 ms for `elicit --version`, perf and hyperfine), more than
/// everything else elicit does for one request. `--lines` no longer builds a
/// JSON tree per line (a cached schema is found by its text), so the allocator
/// no longer decides its throughput.
#[global_allocator]
static ALLOC: std::alloc::System = std::alloc::System;

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
