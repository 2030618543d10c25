//! `elicit lint`: check elicitations against the spec, rule by rule.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use elicit::error::ElicitError;
use elicit::lint::inputs::{LintOptions, Linting};
use elicit::lint::render::{self, Linted};
use elicit::lint::{self, docs, Levels};
use elicit::text::sanitize::sanitize_line;

use super::{print_line, read_input, report};
use crate::cli::{LintArgs, LintFormat};

pub fn run(args: &LintArgs) -> i32 {
    if let Some(name) = &args.explain {
        return explain(name);
    }
    if args.rules_markdown {
        return print_line(docs::markdown().trim_end());
    }
    let options = match lint_options(args) {
        Ok(o) => o,
        Err(e) => return report(&e),
    };
    let files = match inputs(&args.files) {
        Ok(files) => files,
        Err(e) => return report(&e),
    };
    let mut linting = Linting::default();
    let mut read_failed = false;
    for path in &files {
        let from_file = path != Path::new("-");
        let name = if from_file {
            path.display().to_string()
        } else {
            "-".to_string()
        };
        match read_input(Some(path)) {
            Ok(bytes) => {
                for e in linting.add(&name, from_file, &bytes, &options) {
                    report(&e);
                }
            }
            Err(e) => {
                report(&e);
                linting.unreadable();
                read_failed = true;
            }
        }
    }
    // An input not read leaves no report that would read as a clean run
    // of the rest (a SARIF with no results).
    if read_failed {
        return linting.exit_code();
    }
    let text = rendered(args.format, &linting.documents);
    let code = if text.is_empty() {
        0
    } else {
        print_line(text.trim_end_matches('\n'))
    };
    if code != 0 {
        return code;
    }
    linting.exit_code()
}

/// The inputs: stdin (`-`, or nothing given), files as given, and a
/// folder's cassettes found as `elicit test DIR` finds them. A folder with
/// no cassette is a usage error before anything is linted.
fn inputs(given: &[PathBuf]) -> Result<Vec<PathBuf>, ElicitError> {
    if given.is_empty() {
        return Ok(vec![PathBuf::from("-")]);
    }
    let mut files = Vec::new();
    for path in given {
        if !std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            // `-` and files as given: one not there is said when read.
            files.push(path.clone());
            continue;
        }
        let found = elicit::cassette::suite::cassette_files(std::slice::from_ref(path))
            .map_err(|e| ElicitError::Usage(sanitize_line(&e)))?;
        if found.is_empty() {
            return Err(ElicitError::Usage(format!(
                "no cassettes (*.cassette.json) found in {}",
                sanitize_line(&path.display().to_string())
            )));
        }
        files.extend(found);
    }
    Ok(files)
}

/// The flags as the library's options.
fn lint_options(args: &LintArgs) -> Result<LintOptions, ElicitError> {
    Ok(LintOptions {
        lines: args.lines,
        protocol: args.protocol.map(Into::into),
        levels: Levels::new(&args.allow, &args.deny).map_err(ElicitError::Usage)?,
    })
}

/// The findings in `--format`'s shape (human: coloured as `--color` says).
fn rendered(format: LintFormat, linted: &[Linted]) -> String {
    match format {
        LintFormat::Human => {
            use elicit::terminal::color::{choice, enabled, paint_lint, ColorChoice};
            let colored = match choice() {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => std::io::stdout().is_terminal() && enabled(),
            };
            if colored {
                render::human(linted, &paint_lint)
            } else {
                render::human(linted, &render::plain)
            }
        }
        LintFormat::Json => render::json_lines(linted),
        LintFormat::Sarif => super::json_text(&render::sarif(linted), true),
    }
}

fn explain(name: &str) -> i32 {
    if name == "all" {
        return print_line(docs::list().trim_end());
    }
    match lint::rule(name) {
        Some(rule) => print_line(docs::explain(rule).trim_end()),
        None => match Levels::new(&[name.to_string()], &[]) {
            Err(message) => report(&ElicitError::Usage(message)),
            // A group name (`warnings`) is no rule to explain.
            Ok(_) => report(&ElicitError::Usage(format!(
                "{name:?} is a group, not a rule; `elicit lint --explain all` lists the rules"
            ))),
        },
    }
}
