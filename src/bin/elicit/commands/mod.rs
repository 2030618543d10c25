//! One module per subcommand: each turns its flags into library calls and
//! an exit status. What they share (printing, errors, who answers) is here.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::time::Duration;

use elicit::elicitation::input;
use elicit::error::ElicitError;
use elicit::text::sanitize::sanitize_block;
use elicit::ScriptedAnswers;

use crate::cli::AnswerArgs;

pub mod auth;
pub mod call;
pub mod connect;
pub mod explore;
pub mod hook;
pub mod lint;
pub mod mock;
pub mod park;
pub mod progress;
pub mod proxy;
pub mod report;
pub mod request;
pub mod resolve;
pub mod shell;
pub mod test;

/// Prints an error on stderr. Error text can quote server-provided values,
/// so it is sanitised like everything else that reaches the terminal.
pub fn report(err: &ElicitError) -> i32 {
    eprintln!("elicit: {}", sanitize_block(&err.to_string()));
    err.exit_code()
}

pub fn warn(text: &str) {
    eprintln!("elicit: warning: {}", sanitize_block(text));
}

/// Reads FILE, or stdin for `-` / nothing, stopping just past the input
/// limit. An oversized input is reported with its real size when it is a
/// regular file (its size is known), else as "more than" the limit.
pub fn read_input(file: Option<&Path>) -> Result<Vec<u8>, ElicitError> {
    let limit = input::MAX_INPUT_BYTES;
    let mut bytes = Vec::new();
    let file_size = |f: &std::fs::File| f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    let size = match file {
        Some(p) if p != Path::new("-") => {
            let f = std::fs::File::open(p)
                .map_err(|e| ElicitError::io(format!("cannot open {}", p.display()), e))?;
            let size = file_size(&f);
            reserve_for(&mut bytes, size, limit);
            f.take(limit + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| ElicitError::io(format!("cannot read {}", p.display()), e))?;
            size
        }
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("elicit: reading the elicitation JSON from the terminal; end it with Ctrl-D (or pass a FILE)");
            }
            // stdin redirected from a file (`< big.json`) has a known size.
            let size = elicit::platform::fs::stdin_file().and_then(|f| file_size(&f));
            reserve_for(&mut bytes, size, limit);
            stdin
                .lock()
                .take(limit + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| ElicitError::io("cannot read stdin", e))?;
            size
        }
    };
    if bytes.len() as u64 > limit {
        return Err(match size {
            Some(size) if size > limit => ElicitError::TooLarge { size, limit },
            _ => ElicitError::TooLargeStream { limit },
        });
    }
    Ok(bytes)
}

/// Room for a file of known size and the read that finds its end: one
/// `read` instead of a doubling series of them starting at 32 bytes.
fn reserve_for(bytes: &mut Vec<u8>, size: Option<u64>, limit: u64) {
    if let Some(size) = size {
        bytes.reserve_exact(size.min(limit) as usize + 1);
    }
}

pub fn print_line(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Ok(()) => 0,
        // A closed pipe (`| head`) is not worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 1,
        Err(e) => report(&ElicitError::io("writing output", e)),
    }
}

/// JSON text, compact or indented.
pub fn json_text<T: serde::Serialize>(value: &T, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .expect("elicit's output types always serialise")
}

pub fn load_answers(args: &AnswerArgs) -> Result<ScriptedAnswers, ElicitError> {
    ScriptedAnswers::parse(&args.answers, read_answer_file)
}

/// Reads an `@FILE` answer: a regular file only, at most a message's size
/// (a FIFO, a device or a huge file is refused, never waited on).
pub fn read_answer_file(path: &str) -> std::io::Result<String> {
    elicit::platform::fs::read_regular_file(path, elicit::elicitation::protocol::MAX_MESSAGE_BYTES)
}

/// Reads `--answers FILE`, when given. An unreadable file is a usage
/// error (exit 2) naming the file and the JSON pointer.
pub fn load_rules(
    args: &AnswerArgs,
) -> Result<Option<std::sync::Arc<elicit::answers::AnswerRules>>, ElicitError> {
    args.answers_file
        .as_deref()
        .map(|p| {
            elicit::answers::AnswerRules::load(p)
                .map(std::sync::Arc::new)
                .map_err(|e| ElicitError::Usage(format!("--answers {e}")))
        })
        .transpose()
}

/// The answer rules in front of the person as the flags say: `--no-input`
/// declines what they leave open, `-v` has them name what they answered.
pub fn answering(
    rules: Option<std::sync::Arc<elicit::answers::AnswerRules>>,
    args: &AnswerArgs,
    verbose: bool,
) -> elicit::answers::Answering {
    use elicit::elicitation::answer_rules::{RuleReport, Unmatched};
    elicit::answers::Answering::new()
        .rules(rules)
        .unmatched(Unmatched::under_no_input(args.no_input))
        .report(RuleReport::under_verbose(verbose))
}

/// Reads the `--header` options.
pub fn parse_headers(list: &[String]) -> Result<Vec<(String, String)>, ElicitError> {
    list.iter()
        .map(|h| elicit::transport::parse_header(h))
        .collect()
}

pub use elicit::person::Person;

/// Who answers, by `--ui` ([`elicit::person::choose`]): the terminal when
/// there is one (`auto`, `terminal`), else the local browser page (`auto`,
/// `browser`); a stand-in that explains why nobody can be asked under
/// `--no-input`, or `--ui terminal` with no terminal.
/// `timeout` is how long the person has for each prompt, set by the flag
/// `flag` (named on the screen).
pub fn person(args: &AnswerArgs, timeout: Option<Duration>, flag: &'static str) -> Person {
    elicit::person::choose(&elicit::person::PersonOptions {
        ui: args.ui.into(),
        no_input: args.no_input,
        server: args.server.clone(),
        timeout,
        timeout_flag: flag,
        browser: args.browser.clone(),
        no_open: args.no_open,
        ci: elicit::person::in_ci(|name| std::env::var_os(name)),
        wording: elicit::person::FLAGS,
    })
}

/// Reports an error with its context chain ("starting the server: cannot
/// start server …"). The exit status comes from the typed error inside.
pub fn report_chain(err: &anyhow::Error) -> i32 {
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

/// A library failure in a step, as [`report_chain`] shows it: `STEP: ERROR`.
pub fn step_failure(f: elicit::mcp::StepFailure) -> anyhow::Error {
    match f.step {
        Some(step) => anyhow::Error::from(f.error).context(step),
        None => f.error.into(),
    }
}
