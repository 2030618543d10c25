//! `elicit lint`: check elicitations against the spec, rule by rule.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use elicit::elicitation::input;
use elicit::error::ElicitError;
use elicit::lint::render::{self, Linted};
use elicit::lint::{self, docs, Levels, Severity};

use super::{print_line, read_input, report};
use crate::cli::{LintArgs, LintFormat};

/// Exit status when an error finding (after `--allow`/`--deny`) was found.
pub const EXIT_FINDINGS: i32 = 1;

pub fn run(args: &LintArgs) -> i32 {
    if let Some(name) = &args.explain {
        return explain(name);
    }
    if args.rules_markdown {
        return print_line(docs::markdown().trim_end());
    }
    let levels = match Levels::new(&args.allow, &args.deny) {
        Ok(l) => l,
        Err(message) => return report(&ElicitError::Usage(message)),
    };
    let stdin = [PathBuf::from("-")];
    let files: &[PathBuf] = if args.files.is_empty() {
        &stdin
    } else {
        &args.files
    };
    let mut unreadable = false;
    let mut linted = Vec::new();
    for path in files {
        let from_file = path != Path::new("-");
        let name = if from_file {
            path.display().to_string()
        } else {
            "-".to_string()
        };
        let bytes = match read_input(Some(path)) {
            Ok(b) => b,
            Err(e) => {
                report(&e);
                unreadable = true;
                continue;
            }
        };
        let text = match input::decode(&bytes) {
            Ok(t) => t,
            Err(e) => {
                report(&in_file(&name, None, e));
                unreadable = true;
                continue;
            }
        };
        let documents: Vec<(Option<usize>, &str)> = if args.lines {
            text.split('\n')
                .enumerate()
                .map(|(i, l)| (Some(i + 1), l.strip_suffix('\r').unwrap_or(l)))
                .filter(|(_, l)| !l.trim().is_empty())
                .collect()
        } else {
            vec![(None, text)]
        };
        let mut stream = lint::LogStream::default();
        for (line, doc) in documents {
            match stream.lint_line(doc, args.protocol.map(Into::into)) {
                Ok(lint) => {
                    let findings = levels.apply(lint.findings.clone());
                    linted.push(Linted::new(&name, from_file, line, doc, lint, findings));
                }
                Err(e) => {
                    report(&in_file(&name, line, e));
                    unreadable = true;
                }
            }
        }
    }
    let text = match args.format {
        LintFormat::Human => {
            use elicit::terminal::color::{choice, enabled, ColorChoice};
            let colored = match choice() {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => std::io::stdout().is_terminal() && enabled(),
            };
            render::human(&linted, colored)
        }
        LintFormat::Json => render::json_lines(&linted),
        LintFormat::Sarif => super::json_text(&render::sarif(&linted), true),
    };
    let code = if text.is_empty() {
        0
    } else {
        print_line(text.trim_end_matches('\n'))
    };
    if code != 0 {
        return code;
    }
    let errors = linted
        .iter()
        .flat_map(|l| &l.findings)
        .any(|l| l.finding.severity == Severity::Error);
    if unreadable {
        2
    } else if errors {
        EXIT_FINDINGS
    } else {
        0
    }
}

/// An unreadable document's error, prefixed with where it is.
fn in_file(name: &str, line: Option<usize>, e: ElicitError) -> ElicitError {
    let at = match line {
        Some(l) => format!("{name}:{l}"),
        None => name.to_string(),
    };
    ElicitError::UnknownShape {
        message: format!("{at}: {e}"),
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
