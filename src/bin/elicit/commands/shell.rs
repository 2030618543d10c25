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

/// `elicit man [COMMAND]`: elicit(1), or elicit-COMMAND(1), the pages
/// elicit(1)'s SEE ALSO names.
pub fn man(command: Option<&str>) -> i32 {
    let mut root = Cli::command();
    // Built, so that the generated `help` subcommand has a page too.
    root.build();
    let cmd = match command {
        None => root,
        Some(name) => match root.find_subcommand(name) {
            Some(sub) => sub
                .clone()
                .name(format!("elicit-{name}"))
                .bin_name(format!("elicit {name}"))
                .version(env!("CARGO_PKG_VERSION")),
            None => {
                let names: Vec<&str> = root.get_subcommands().map(|c| c.get_name()).collect();
                return report(&ElicitError::Usage(format!(
                    "no subcommand {name:?}; man pages exist for: {}",
                    names.join(", ")
                )));
            }
        },
    };
    match render_man(cmd) {
        Ok(text) => print_line(text.trim_end()),
        Err(e) => report(&ElicitError::io("rendering the man page", e)),
    }
}

/// clap_mangen's page, with what it lacks for a readable man page: no
/// hyphenation (`.nh`: option names and JSON break badly), a synopsis with
/// value placeholders (clap's own usage line), and the environment.
fn render_man(mut cmd: clap::Command) -> std::io::Result<String> {
    cmd.build();
    let usage = cmd.render_usage().to_string();
    let synopsis: Vec<String> = usage
        .trim_start_matches("Usage:")
        .lines()
        .map(|l| roff_escape(l.trim()))
        .filter(|l| !l.is_empty())
        .collect();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    out.extend_from_slice(b".nh\n");
    man.render_name_section(&mut out)?;
    out.extend_from_slice(format!(".SH SYNOPSIS\n{}\n", synopsis.join("\n.br\n")).as_bytes());
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    if cmd.get_subcommands().next().is_some() {
        man.render_subcommands_section(&mut out)?;
    }
    man.render_extra_section(&mut out)?;
    out.extend_from_slice(ENVIRONMENT.as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

const ENVIRONMENT: &str = ".SH ENVIRONMENT\n.TP\n\\fBELICIT_BROWSER\\fR\nThe command that opens URLs (as \\fB\\-\\-browser\\fR); \\fB\\-\\-browser\\fR wins over it.\n.TP\n\\fBBROWSER\\fR\nUsed after ELICIT_BROWSER: its first entry opens URLs.\n.TP\n\\fBNO_COLOR\\fR\nWhen set and not empty, no colours on the terminal.\n";

/// Escapes text for a roff line: backslashes and hyphens (so `--answer`
/// stays two ASCII hyphens), and a leading dot or quote.
fn roff_escape(text: &str) -> String {
    let mut s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        s.insert_str(0, "\\&");
    }
    s
}
