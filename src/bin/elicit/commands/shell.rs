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
                // `help` is clap's own: a page, but not one to offer.
                let names: Vec<&str> = root
                    .get_subcommands()
                    .map(|c| c.get_name())
                    .filter(|n| *n != "help")
                    .collect();
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
    // The `--help` epilogue under headings a man page reader looks for
    // (clap_mangen puts it all under "EXTRA").
    if let Some(after) = cmd.get_after_help() {
        out.extend_from_slice(after_help_sections(&after.to_string()).as_bytes());
    }
    if prompts(&cmd) {
        out.extend_from_slice(KEYS.as_bytes());
    }
    out.extend_from_slice(ENVIRONMENT.as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

const ENVIRONMENT: &str = ".SH ENVIRONMENT\n.TP\n\\fBELICIT_BROWSER\\fR\nThe command that opens URLs (as \\fB\\-\\-browser\\fR); \\fB\\-\\-browser\\fR wins over it.\n.TP\n\\fBBROWSER\\fR\nUsed after ELICIT_BROWSER: its first entry opens URLs.\n.TP\n\\fBNO_COLOR\\fR\nWhen set and not empty, no colours on the terminal.\n.TP\n\\fBELICIT_CLIENT_ID\\fR, \\fBELICIT_CLIENT_SECRET\\fR\nA client registered with a remote server's authorization server (as \\fB\\-\\-client\\-id\\fR and \\fB\\-\\-client\\-secret\\fR, which win over them).\n.TP\n\\fBELICIT_DATA_DIR\\fR, \\fBXDG_DATA_HOME\\fR\nWhere sign-in tokens are kept: $ELICIT_DATA_DIR/tokens, else $XDG_DATA_HOME/elicit/tokens, else ~/.local/share/elicit/tokens (on macOS ~/Library/Application Support/elicit/tokens; on Windows %LOCALAPPDATA%\\\\elicit\\\\tokens).\n.TP\n\\fBCI\\fR\nWhen set (to anything but empty, 0 or false), a run with no terminal never falls back to the browser page on its own.\n.TP\n\\fBELICIT_UI\\fR, \\fBELICIT_NO_OPEN\\fR, \\fBELICIT_NO_INPUT\\fR, \\fBELICIT_ANSWERS\\fR\nAs \\fB\\-\\-ui\\fR, \\fB\\-\\-no\\-open\\fR, \\fB\\-\\-no\\-input\\fR and \\fB\\-\\-answers\\fR, for clients whose server entries cannot pass flags (a flag wins over its variable).\n.TP\n\\fBELICIT_PROMPT_TIMEOUT\\fR, \\fBELICIT_SERVER_LOG\\fR, \\fBELICIT_LOG\\fR, \\fBELICIT_RECORD\\fR, \\fBELICIT_VERBOSE\\fR, \\fBELICIT_STRICT\\fR, \\fBELICIT_MODES\\fR, \\fBELICIT_SHUTDOWN_GRACE\\fR, \\fBELICIT_REQUEST_TIMEOUT\\fR, \\fBELICIT_PASSTHROUGH_DECLARED\\fR\nThe environment forms of \\fBelicit proxy\\fR's flags of the same names.\n.TP\n\\fBELICIT_HOOK_FALLBACK\\fR, \\fBELICIT_HOOK_RECORD\\fR\nAs \\fB\\-\\-fallback\\fR and \\fB\\-\\-record\\fR of \\fBelicit hook claude\\-code\\fR.\n";

/// The keys at every prompt, for the pages of commands that prompt.
const KEYS: &str = ".SH KEYS\n.TP\n\\fBEnter\\fR\nTakes the highlighted choice or the pre-filled value.\n.TP\n\\fBUp\\fR, \\fBDown\\fR (also \\fBk\\fR, \\fBj\\fR, \\fBTab\\fR, \\fBShift\\-Tab\\fR)\nMove in a list; a list of more than 10 choices filters as you type.\n.TP\n\\fBSpace\\fR, \\fBa\\fR\nTick one checklist item; tick or untick all.\n.TP\n\\fBy\\fR, \\fBn\\fR\nAnswer a yes/no.\n.TP\n\\fBLeft\\fR, \\fBRight\\fR, \\fBHome\\fR, \\fBEnd\\fR, \\fBCtrl\\-U\\fR\nEdit a text field; \\fBCtrl\\-R\\fR shows or hides a masked one; \\fBUp\\fR or \\fBShift\\-Tab\\fR on an empty one goes back one field.\n.TP\n\\fBEsc\\fR, \\fBCtrl\\-C\\fR, \\fBCtrl\\-D\\fR\nCancel the whole elicitation (\\fBq\\fR too in a list that does not filter).\n.TP\n\\fBd\\fR\nDecline, at the screen that waits while a URL is open.\n.PP\nDeclining a form is a choice at its review, which also edits any field.\n";

/// Whether `cmd` can prompt a person (so its page lists the keys).
fn prompts(cmd: &clap::Command) -> bool {
    cmd.get_arguments().any(|a| a.get_id() == "no_input")
}

/// The `--help` epilogue as man page sections: a paragraph starting
/// `Examples:` under EXAMPLES (kept as typed), `Exit status:` under EXIT
/// STATUS, anything else under NOTES.
fn after_help_sections(text: &str) -> String {
    let mut examples = Vec::new();
    let mut exit = Vec::new();
    let mut notes = Vec::new();
    for para in text
        .split("\n\n")
        .map(str::trim_end)
        .filter(|p| !p.trim().is_empty())
    {
        if let Some(rest) = para.strip_prefix("Examples:") {
            examples.extend(
                rest.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(roff_escape),
            );
        } else if let Some(rest) = para.strip_prefix("Exit status:") {
            exit.push(roff_escape(
                &rest.split_whitespace().collect::<Vec<_>>().join(" "),
            ));
        } else {
            notes.push(roff_escape(
                &para.split_whitespace().collect::<Vec<_>>().join(" "),
            ));
        }
    }
    let mut out = String::new();
    if !examples.is_empty() {
        out.push_str(&format!(
            ".SH EXAMPLES\n.nf\n{}\n.fi\n",
            examples.join("\n")
        ));
    }
    if !exit.is_empty() {
        out.push_str(&format!(".SH \"EXIT STATUS\"\n{}\n", exit.join("\n.PP\n")));
    }
    if !notes.is_empty() {
        out.push_str(&format!(".SH NOTES\n{}\n", notes.join("\n.PP\n")));
    }
    out
}

/// Escapes text for a roff line: backslashes and hyphens (so `--answer`
/// stays two ASCII hyphens), and a leading dot or quote.
fn roff_escape(text: &str) -> String {
    let mut s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        s.insert_str(0, "\\&");
    }
    s
}
