//! `elicit lint` and `--strict` (`elicit_session::mcp::strict`): a server's elicitations checked against the
//! spec revision they follow, rule by rule ([`rules::RULES`]).
//!
//! Every check reads the elicitation as the resolvers do: the document's
//! shape from [`crate::elicitation::input`], the params from [`crate::elicitation::protocol`], the form
//! from the one schema model ([`crate::elicitation::schema::FormSchema`]). Where those
//! drop what a rule needs (an absent `message` read as `""`, `enumNames`
//! turned into labels, a nested object read as raw JSON), the check looks at
//! the raw JSON under the same pointer. Resolution stays lenient; lint only
//! reports.

pub mod check;
pub mod docs;
pub mod inputs;
pub(crate) mod locate;
pub mod render;
pub mod rules;

pub use check::{lint_text, DocumentLint, LogStream};
pub use rules::{rule, Rule, Scope, Severity, RULES};
// The one protocol revision type; the rules follow one of them.
pub use crate::elicitation::protocol::Revision;

/// One thing a rule found.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The rule broken.
    pub rule: &'static Rule,
    /// After `--allow` / `--deny`.
    pub severity: Severity,
    /// JSON pointer (RFC 6901) of the offending part, in the document
    /// (for a `--lines` line: in that line; for a live session: in the
    /// message the server sent).
    pub pointer: String,
    /// One line, specific to this occurrence.
    pub message: String,
    /// The revision the rule was checked under.
    pub revision: Revision,
    /// The elicitation it belongs to (its `inputRequests` key, its index…),
    /// `None` for the document itself.
    pub elicitation: Option<String>,
}

impl Finding {
    /// "MCP 2025-11-25, client/elicitation § Requested Schema".
    pub fn citation(&self) -> String {
        format!(
            "MCP {}, {} § {}",
            self.revision,
            self.rule.section.page(),
            self.rule.section.title(self.revision)
        )
    }

    pub(crate) fn spec_url(&self) -> String {
        self.rule.section.url(self.revision)
    }
}

/// `--allow` and `--deny`: severities adjusted by rule id, or all warnings
/// (and infos) at once.
#[derive(Debug, Clone, Default)]
pub struct Levels {
    allowed: Vec<String>,
    denied: Vec<String>,
}

/// The group names `--allow` and `--deny` take besides rule ids.
pub(crate) const GROUPS: [&str; 2] = ["warnings", "info"];

impl Levels {
    /// Checks every name: a rule id, `warnings` or `info`. An unknown name
    /// is an error that suggests the nearest rule id.
    pub fn new(allowed: &[String], denied: &[String]) -> Result<Levels, String> {
        for name in allowed.iter().chain(denied) {
            if !GROUPS.contains(&name.as_str()) && rule(name).is_none() {
                let nearest = RULES
                    .iter()
                    .map(|r| (strsim::levenshtein(r.id, name), r.id))
                    .min();
                let hint = match nearest {
                    Some((d, id)) if d <= 4 => format!(" (did you mean {id}?)"),
                    _ => " (`elicit lint --explain all` lists the rules)".into(),
                };
                return Err(format!("unknown lint rule {name:?}{hint}"));
            }
        }
        Ok(Levels {
            allowed: allowed.to_vec(),
            denied: denied.to_vec(),
        })
    }

    /// The severity a finding of `rule` gets, or `None` when it is allowed
    /// (not reported). A rule named on its own wins over a group; `--deny`
    /// wins over `--allow` for the same name.
    pub fn adjust(&self, rule: &Rule) -> Option<Severity> {
        let named = |list: &[String]| list.iter().any(|n| n == rule.id);
        if named(&self.denied) {
            return Some(Severity::Error);
        }
        if named(&self.allowed) {
            return None;
        }
        let group = match rule.severity {
            Severity::Warning => Some("warnings"),
            Severity::Info => Some("info"),
            Severity::Error => None,
        };
        if let Some(g) = group {
            if self.denied.iter().any(|n| n == g) {
                return Some(Severity::Error);
            }
            if self.allowed.iter().any(|n| n == g) {
                return None;
            }
        }
        Some(rule.severity)
    }

    /// Applies [`Levels::adjust`] to findings, dropping the allowed ones.
    pub fn apply(&self, findings: Vec<Finding>) -> Vec<Finding> {
        findings
            .into_iter()
            .filter_map(|mut f| {
                f.severity = self.adjust(f.rule)?;
                Some(f)
            })
            .collect()
    }
}

/// Escapes one JSON pointer token (RFC 6901).
pub(crate) fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `base` + `/token` for each token.
pub fn pointer(base: &str, tokens: &[&str]) -> String {
    let mut p = base.to_string();
    for t in tokens {
        p.push('/');
        p.push_str(&pointer_token(t));
    }
    p
}
