//! One module per subcommand: each turns its flags into library calls and
//! an exit status. What they share (printing, errors, who answers) is here.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::time::Duration;

use elicit::elicitation::input;
use elicit::elicitation::resolve::{NoTerminal, Resolver};
use elicit::error::ElicitError;
use elicit::page::{BrowserResolver, PageOptions};
use elicit::terminal::{TerminalOptions, TerminalResolver};
use elicit::text::sanitize::sanitize_block;
use elicit::ScriptedAnswers;

use crate::cli::{AnswerArgs, Ui};

pub mod auth;
pub mod call;
pub mod connect;
pub mod explore;
pub mod hook;
pub mod lint;
pub mod mock;
pub mod progress;
pub mod proxy;
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
    ScriptedAnswers::parse(
        &args.answers,
        elicit::elicitation::answers::read_answer_file,
    )
}

/// Reads `--answers FILE`, when given. An unreadable file is a usage
/// error (exit 2) naming the file and the JSON pointer.
pub fn load_rules(
    args: &AnswerArgs,
) -> Result<Option<std::sync::Arc<elicit::cassette::rules::AnswerRules>>, ElicitError> {
    args.answers_file
        .as_deref()
        .map(|p| {
            elicit::cassette::rules::AnswerRules::load(p)
                .map(std::sync::Arc::new)
                .map_err(|e| ElicitError::Usage(format!("--answers {e}")))
        })
        .transpose()
}

/// Reads the `--header` options.
pub fn parse_headers(list: &[String]) -> Result<Vec<(String, String)>, ElicitError> {
    list.iter()
        .map(|h| elicit::transport::parse_header(h))
        .collect()
}

/// Who settles what scripted answers leave open.
pub enum Person {
    Terminal(TerminalResolver),
    Page(BrowserResolver),
    Nobody(NoTerminal),
}

impl Person {
    pub fn resolver(&mut self) -> &mut dyn Resolver {
        match self {
            Person::Terminal(t) => t,
            Person::Page(p) => p,
            Person::Nobody(n) => n,
        }
    }

    /// The resolver, owned (the proxies run it on their own thread).
    pub fn boxed(self) -> Box<dyn Resolver + Send> {
        match self {
            Person::Terminal(t) => Box::new(t),
            Person::Page(p) => Box::new(p),
            Person::Nobody(n) => Box::new(n),
        }
    }
}

/// Who answers, by `--ui`: the terminal when there is one (`auto`,
/// `terminal`), else the local browser page (`auto`, `browser`); a
/// stand-in that explains why nobody can be asked under `--no-input`, or
/// `--ui terminal` with no terminal.
/// `timeout` is how long the person has for each prompt, set by the flag
/// `flag` (named on the screen).
pub fn person(args: &AnswerArgs, timeout: Option<Duration>, flag: &'static str) -> Person {
    if args.no_input {
        return Person::Nobody(NoTerminal {
            detail: "--no-input was given".into(),
        });
    }
    let page = |unattended: bool| {
        BrowserResolver::new(PageOptions {
            server: args.server.clone(),
            timeout,
            browser: args.browser.clone(),
            no_open: args.no_open,
            fail_unless_opened: unattended,
        })
        .map(Person::Page)
        .unwrap_or_else(|e| {
            Person::Nobody(NoTerminal {
                detail: e.to_string(),
            })
        })
    };
    if args.ui == Ui::Browser {
        return page(false);
    }
    match TerminalResolver::open(TerminalOptions {
        server: args.server.clone(),
        timeout,
        browser: args.browser.clone(),
        no_open: args.no_open,
    }) {
        Ok(t) => Person::Terminal(t.with_timeout_flag(flag)),
        Err(detail) if args.ui == Ui::Auto => match page_fallback(args) {
            PageFallback::Asked => page(false),
            PageFallback::IfABrowserOpens => page(true),
            PageFallback::Never(why) => Person::Nobody(NoTerminal {
                detail: format!("{detail}; {why}"),
            }),
        },
        Err(detail) => Person::Nobody(NoTerminal { detail }),
    }
}

/// Whether `--ui auto` with no terminal may fall back to the browser page.
#[derive(Debug, PartialEq, Eq)]
enum PageFallback {
    /// The person asked for the page (`--no-open`: they will open its
    /// address themselves).
    Asked,
    /// Only when a browser really opens: a page nobody sees would wait
    /// until a limit instead of failing at once.
    IfABrowserOpens,
    /// Never, for the reason given.
    Never(String),
}

fn page_fallback(args: &AnswerArgs) -> PageFallback {
    if args.no_open {
        PageFallback::Asked
    } else if in_ci(|name| std::env::var_os(name)) {
        PageFallback::Never(
            "CI is set, so elicit does not fall back to a browser page nobody would see (--ui browser or --no-open asks for the page)".into(),
        )
    } else {
        PageFallback::IfABrowserOpens
    }
}

/// Whether the environment says this is a CI job: `CI` set to anything
/// but an empty string, `0` or `false` (the convention GitHub Actions,
/// GitLab, CircleCI, Travis and Buildkite share).
fn in_ci(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    var("CI").is_some_and(|v| {
        let v = v.to_string_lossy();
        let v = v.trim();
        !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
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
