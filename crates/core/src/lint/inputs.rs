//! `elicit lint` over its inputs: each input's bytes read as one document,
//! or one per line (`--lines`), linted in order (a log's revision carried
//! from line to line), the findings adjusted by `--allow`/`--deny` and
//! placed in the input.

use super::render::Linted;
use super::{Levels, LogStream, Revision, Severity};
use crate::elicitation::input;
use crate::error::ElicitError;

/// Exit status when an error finding (after `--allow`/`--deny`) was found.
pub const EXIT_FINDINGS: i32 = 1;

/// How the inputs are read and judged.
#[derive(Debug, Clone)]
pub struct LintOptions {
    /// `--lines`: each non-blank line is a document of its own.
    pub lines: bool,
    /// `--protocol`: the revision whose rules apply (default: the one the
    /// input shows, else the newest).
    pub protocol: Option<Revision>,
    /// `--allow` / `--deny`.
    pub levels: Levels,
}

/// What the inputs linted so far gave.
#[derive(Debug, Default)]
pub struct Linting {
    /// Every document linted, in input order.
    pub documents: Vec<Linted>,
    /// Whether some input, or some document in one, was no elicitation at
    /// all (not readable, not JSON, another method).
    pub unreadable: bool,
}

impl Linting {
    /// Notes an input that could not be read.
    pub fn unreadable(&mut self) {
        self.unreadable = true;
    }

    /// Lints one input: `name` is its path as given (`-` for stdin, when
    /// `from_file` is false). Returns the errors of what could not be
    /// linted, in order, each prefixed with where it is (`NAME:LINE: …`).
    pub fn add(
        &mut self,
        name: &str,
        from_file: bool,
        bytes: &[u8],
        options: &LintOptions,
    ) -> Vec<ElicitError> {
        let text = match input::decode(bytes) {
            Ok(t) => t,
            Err(e) => {
                self.unreadable = true;
                return vec![in_input(name, None, e)];
            }
        };
        let documents: Vec<(Option<usize>, &str)> = if options.lines {
            text.split('\n')
                .enumerate()
                .map(|(i, l)| (Some(i + 1), l.strip_suffix('\r').unwrap_or(l)))
                .filter(|(_, l)| !l.trim().is_empty())
                .collect()
        } else {
            vec![(None, text)]
        };
        let mut errors = Vec::new();
        let mut stream = LogStream::default();
        for (line, doc) in documents {
            match stream.lint_line(doc, options.protocol) {
                Ok(lint) => {
                    let findings = options.levels.apply(lint.findings.clone());
                    let linted = Linted::new(name, from_file, line, doc, lint, findings);
                    self.documents.push(linted);
                }
                Err(e) => {
                    self.unreadable = true;
                    errors.push(in_input(name, line, e));
                }
            }
        }
        errors
    }

    /// The exit status: 2 when something was no elicitation at all,
    /// [`EXIT_FINDINGS`] on an error finding, else 0.
    pub fn exit_code(&self) -> i32 {
        let errors = self
            .documents
            .iter()
            .flat_map(|l| &l.findings)
            .any(|l| l.finding.severity == Severity::Error);
        if self.unreadable {
            2
        } else if errors {
            EXIT_FINDINGS
        } else {
            0
        }
    }
}

/// An unreadable document's error, prefixed with where it is.
fn in_input(name: &str, line: Option<usize>, e: ElicitError) -> ElicitError {
    let at = match line {
        Some(l) => format!("{name}:{l}"),
        None => name.to_string(),
    };
    ElicitError::UnknownShape {
        message: format!("{at}: {e}"),
    }
}
