//! `docs/lint-rules.md` and `elicit lint --explain`, generated from the
//! rule table so they cannot drift from the code.

use super::{lint_text, Finding, Revision, Rule, Scope, RULES};

/// The revision a rule's example is linted under: the one the example
/// shows, unless the rule does not apply there; then the rule's first.
/// `Some` when that takes `--protocol`.
pub fn example_protocol(rule: &Rule) -> Option<Revision> {
    if rule.protocol.is_some() {
        return rule.protocol;
    }
    match lint_text(rule.example, None) {
        Ok(lint) if rule.applies_to(lint.revision) => None,
        _ => Some(rule.since),
    }
}

/// What lint reports on a rule's example (a document rule's); `None` for
/// a session rule, or an example that does not read.
pub(crate) fn example_findings(rule: &Rule) -> Option<Vec<Finding>> {
    if rule.scope != Scope::Document {
        return None;
    }
    lint_text(rule.example, example_protocol(rule))
        .ok()
        .map(|l| l.findings)
}

/// Examples longer than this are shown cut (the fixture holds the whole).
const SHOWN_EXAMPLE: usize = 600;

fn code_block(text: &str) -> String {
    let text = text.trim_end();
    if text.chars().count() > SHOWN_EXAMPLE {
        let cut: String = text.chars().take(SHOWN_EXAMPLE).collect();
        return format!(
            "```json\n{cut}…\n```\n\n({} characters in all; the whole example is a fixture in fixtures/lint/rules/)\n",
            text.chars().count()
        );
    }
    format!("```json\n{text}\n```\n")
}

/// One rule in Markdown: a heading (when asked), what, why, the spec
/// section, the example with what it reports, and the fix.
pub(crate) fn rule_markdown(rule: &Rule, heading: bool) -> String {
    let mut s = String::new();
    if heading {
        s.push_str(&format!("### `{}`\n\n", rule.id));
    }
    let newest = rule.newest_revision();
    s.push_str(&format!(
        "**{}** · revisions: {} · {} · spec: [{} § {}]({})\n\n",
        rule.severity.as_str(),
        rule.revisions(),
        match rule.scope {
            Scope::Document => "`elicit lint` and `--strict`",
            Scope::Session => "`--strict` only",
        },
        rule.section.page(),
        rule.section.title(newest),
        rule.section.url(newest),
    ));
    s.push_str(&format!("**Checks:** {}\n\n", rule.checks));
    s.push_str(&format!("**Why:** {}\n\n", rule.why));
    match rule.scope {
        Scope::Document => {
            let under = match example_protocol(rule) {
                Some(r) => format!(" (with `--protocol {r}`)"),
                None => String::new(),
            };
            s.push_str(&format!(
                "**Example**{under}:\n\n{}\n",
                code_block(rule.example)
            ));
            if let Some(findings) = example_findings(rule) {
                s.push_str("reports:\n\n");
                for f in findings {
                    s.push_str(&format!(
                        "- {} `{}` at `{}`: {}\n",
                        f.severity.as_str(),
                        f.rule.id,
                        if f.pointer.is_empty() {
                            "/"
                        } else {
                            &f.pointer
                        },
                        f.message.replace('|', "\\|")
                    ));
                }
                s.push('\n');
            }
            s.push_str(&format!("**Fix:**\n\n{}\n", code_block(rule.fix)));
        }
        Scope::Session => {
            s.push_str(&format!("**Example:** {}\n\n", rule.example));
            s.push_str(&format!("**Fix:** {}\n\n", rule.fix));
        }
    }
    s
}

/// The whole of `docs/lint-rules.md`.
pub fn markdown() -> String {
    let mut s = String::from(
        "# elicit lint rules\n\n\
         <!-- Generated from crates/core/src/lint/rules.rs by `elicit lint --rules-markdown`; do not edit. \
         tests/it/lint.rs fails when this file is stale; `UPDATE_LINT_DOCS=1 cargo test --test it lint::` rewrites it. -->\n\n\
         `elicit lint` checks elicitations against the MCP revision they follow; `elicit call --strict` and \
         `elicit proxy --strict` run the same rules on every elicitation a live server sends, plus the session rules. \
         Severities: **error** breaks a MUST of the revision, **warning** is a SHOULD, a deprecation or something \
         clients are known to mishandle, **info** is worth knowing. `--allow RULE`, `--deny RULE` and \
         `--deny warnings` adjust them; `elicit lint --explain RULE` prints one rule.\n\n",
    );
    s.push_str("| Rule | Severity | Revisions | Checks |\n|---|---|---|---|\n");
    for r in RULES {
        s.push_str(&format!(
            "| [`{}`](#{}) | {} | {} | {} |\n",
            r.id,
            r.id,
            r.severity.as_str(),
            r.revisions(),
            r.checks.replace('|', "\\|")
        ));
    }
    s.push('\n');
    for (title, scope) in [
        ("Document rules", Scope::Document),
        ("Session rules (`--strict`)", Scope::Session),
    ] {
        s.push_str(&format!("## {title}\n\n"));
        for r in RULES.iter().filter(|r| r.scope == scope) {
            s.push_str(&rule_markdown(r, true));
        }
    }
    s
}

/// `--explain RULE`: the rule in plain text.
pub fn explain(rule: &Rule) -> String {
    let newest = rule.newest_revision();
    let mut s = format!(
        "{} ({}; revisions: {})\n\n{}\n\nWhy: {}\n\nSpec: MCP {}, {} § {}\n  {}\n",
        rule.id,
        rule.severity.as_str(),
        rule.revisions(),
        rule.checks,
        rule.why,
        newest,
        rule.section.page(),
        rule.section.title(newest),
        rule.section.url(newest),
    );
    match rule.scope {
        Scope::Document => {
            let under = match example_protocol(rule) {
                Some(r) => format!(" (with --protocol {r})"),
                None => String::new(),
            };
            s.push_str(&format!(
                "\nExample{under}:\n  {}\n",
                rule.example.trim_end()
            ));
            if let Some(findings) = example_findings(rule) {
                for f in findings {
                    s.push_str(&format!(
                        "  -> {}[{}] {}: {}\n",
                        f.severity.as_str(),
                        f.rule.id,
                        if f.pointer.is_empty() {
                            "/"
                        } else {
                            &f.pointer
                        },
                        f.message
                    ));
                }
            }
            s.push_str(&format!("\nFix:\n  {}\n", rule.fix.trim_end()));
        }
        Scope::Session => {
            s.push_str(&format!("\nExample: {}\nFix: {}\n", rule.example, rule.fix));
        }
    }
    s
}

/// `--explain all`: one line per rule.
pub fn list() -> String {
    RULES
        .iter()
        .map(|r| format!("{:<34} {:<8} {}\n", r.id, r.severity.as_str(), r.checks))
        .collect()
}
