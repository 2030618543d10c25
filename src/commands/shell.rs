//! `elicit completions SHELL` and `elicit man`: generated from the same clap
//! definitions as the parser, so they never drift from it.

use clap::CommandFactory;

use elicit::error::ElicitError;

use super::{print_line, report};
use crate::cli::Cli;

pub fn completions(shell: clap_complete::Shell) -> i32 {
    let mut cmd = Cli::command();
    // Into a buffer first: clap_complete panics on a closed pipe.
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "elicit", &mut out);
    print_line(String::from_utf8_lossy(&out).trim_end())
}

pub fn man() -> i32 {
    let mut out = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut out) {
        Ok(()) => print_line(String::from_utf8_lossy(&out).trim_end()),
        Err(e) => report(&ElicitError::io("rendering the man page", e)),
    }
}
