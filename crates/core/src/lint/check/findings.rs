//! The findings of one document as they are found: only the rules that
//! apply to its revision, and at most [`MAX_PER_RULE`] of a rule per
//! elicitation (the rest counted in one more finding). Below every check.

use crate::lint::{rule, Finding, Revision, Rule};

/// At most this many findings of one rule are listed per elicitation (an
/// enum of 100 000 duplicate values is one problem, not 100 000); the rest
/// are counted in one more finding.
pub const MAX_PER_RULE: usize = 20;

/// Collects findings, keeping those whose rule applies to the revision.
pub(super) struct Findings {
    pub(super) revision: Revision,
    list: Vec<Finding>,
    elicitation: Option<String>,
    /// Findings per rule in the current elicitation.
    counts: std::collections::HashMap<&'static str, usize>,
    /// Findings left out, per rule, with where the first of them was.
    left_out: Vec<(&'static Rule, usize, String)>,
}

impl Findings {
    pub(super) fn new(revision: Revision, elicitation: Option<String>) -> Findings {
        Findings {
            revision,
            list: Vec::new(),
            elicitation,
            counts: Default::default(),
            left_out: Vec::new(),
        }
    }

    /// Starts the findings of another elicitation.
    pub(super) fn start(&mut self, label: String) {
        self.flush();
        self.elicitation = Some(label);
    }

    /// Adds one finding per rule that had more than [`MAX_PER_RULE`].
    fn flush(&mut self) {
        self.counts.clear();
        for (rule, n, at) in std::mem::take(&mut self.left_out) {
            self.list.push(Finding {
                rule,
                severity: rule.severity,
                pointer: at,
                message: format!(
                    "… and {n} more {} finding{} here, not listed",
                    rule.id,
                    if n == 1 { "" } else { "s" }
                ),
                revision: self.revision,
                elicitation: self.elicitation.clone(),
            });
        }
    }

    pub(super) fn finish(mut self) -> Vec<Finding> {
        self.flush();
        self.list
    }

    pub(super) fn add(&mut self, id: &str, at: String, message: impl Into<String>) {
        let rule = rule(id).unwrap_or_else(|| panic!("no lint rule {id}"));
        if !rule.applies_to(self.revision) {
            return;
        }
        let count = self.counts.entry(rule.id).or_insert(0);
        *count += 1;
        if *count > MAX_PER_RULE {
            match self.left_out.iter_mut().find(|(r, _, _)| r.id == rule.id) {
                Some((_, n, _)) => *n += 1,
                None => self.left_out.push((rule, 1, at)),
            }
            return;
        }
        self.list.push(Finding {
            rule,
            severity: rule.severity,
            pointer: at,
            message: message.into(),
            revision: self.revision,
            elicitation: self.elicitation.clone(),
        });
    }
}
