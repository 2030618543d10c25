//! The three output formats of `elicit lint`: human (grouped by
//! elicitation, with the offending JSON), JSON lines (one object per
//! finding) and SARIF 2.1.0.

use serde_json::{json, Map, Value};

use super::locate::{Locator, Position};
use super::{DocumentLint, Finding, Severity, RULES};
use crate::text::sanitize::sanitize_line;

/// A finding placed in its input.
#[derive(Debug, Clone)]
pub struct Located {
    /// The finding.
    pub finding: Finding,
    /// Line and column in the input file; `None` for stdin.
    pub position: Option<Position>,
    /// The offending JSON, compact.
    pub fragment: Option<String>,
}

/// One linted document and where it came from.
#[derive(Debug, Clone)]
pub struct Linted {
    /// The path as given, or `-` for stdin.
    pub source: String,
    /// Whether `source` is a file (not stdin).
    pub from_file: bool,
    /// For `--lines`, the 1-based line of the document.
    pub line: Option<usize>,
    /// The document's lint.
    pub lint: DocumentLint,
    /// Its findings, placed in the input.
    pub findings: Vec<Located>,
}

impl Linted {
    /// Places `findings` (already adjusted) in `text`, the document's text,
    /// which starts on `line` of its file.
    pub fn new(
        source: &str,
        from_file: bool,
        line: Option<usize>,
        text: &str,
        lint: DocumentLint,
        findings: Vec<Finding>,
    ) -> Linted {
        let locator = Locator::new(text);
        let findings = findings
            .into_iter()
            .map(|finding| {
                let at = locator.locate(&finding.pointer);
                let position = from_file.then(|| Position {
                    line: at.line + line.unwrap_or(1) - 1,
                    column: at.column,
                });
                let fragment = Some(compact(locator.fragment(&finding.pointer)));
                Located {
                    finding,
                    position,
                    fragment,
                }
            })
            .collect();
        Linted {
            source: source.to_string(),
            from_file,
            line,
            lint,
            findings,
        }
    }
}

/// JSON text on one line, at most 160 characters.
fn compact(text: &str) -> String {
    let one_line = match serde_json::from_str::<Value>(text) {
        Ok(v) => v.to_string(),
        Err(_) => text.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    crate::text::truncate(&one_line, 160)
}

/// How many findings of each severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Findings of severity error.
    pub errors: usize,
    /// Findings of severity warning.
    pub warnings: usize,
    /// Findings of severity info.
    pub infos: usize,
}

impl Counts {
    /// Counts `findings` by severity.
    pub fn of<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Counts {
        let mut c = Counts::default();
        for f in findings {
            match f.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Info => c.infos += 1,
            }
        }
        c
    }

    /// Adds `other` to these counts.
    pub fn add(&mut self, other: Counts) {
        self.errors += other.errors;
        self.warnings += other.warnings;
        self.infos += other.infos;
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n =
            |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        write!(
            f,
            "{}, {}, {}",
            n(self.errors, "error", "errors"),
            n(self.warnings, "warning", "warnings"),
            n(self.infos, "info", "infos")
        )
    }
}

/// What a piece of the human report stands out as: the caller that owns the
/// terminal decides how (colours, or nothing), so the report itself stays text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emphasis {
    /// A finding's severity word, marked as that severity.
    Severity(Severity),
    /// Supporting text (the offending JSON, the citation), set back.
    Dim,
}

/// The human report's text as it is, no emphasis: for a file, a pipe or
/// `--color never`.
pub fn plain(text: &str, _emphasis: Emphasis) -> String {
    text.to_string()
}

/// The human report: per document, findings grouped by elicitation.
/// Everything that came from the input is sanitised; `paint` gives each
/// emphasised piece its look ([`plain`] for none).
pub fn human(docs: &[Linted], paint: &dyn Fn(&str, Emphasis) -> String) -> String {
    let mut out = String::new();
    let mut total = Counts::default();
    for doc in docs {
        let name = match doc.line {
            Some(l) => format!("{}:{l}", doc.source),
            None => doc.source.clone(),
        };
        let name = sanitize_line(&name);
        let counts = Counts::of(doc.findings.iter().map(|l| &l.finding));
        total.add(counts);
        out.push_str(&format!(
            "{name}: MCP {} ({})\n",
            doc.lint.revision,
            sanitize_line(&doc.lint.revision_from)
        ));
        if doc.findings.is_empty() {
            out.push_str("  no findings\n");
            continue;
        }
        // Groups in the order the elicitations came, the document first.
        let mut groups: Vec<Option<String>> = Vec::new();
        for l in &doc.findings {
            if !groups.contains(&l.finding.elicitation) {
                groups.push(l.finding.elicitation.clone());
            }
        }
        groups.sort_by_key(|g| {
            g.as_ref().map_or(0, |g| {
                1 + doc
                    .lint
                    .elicitations
                    .iter()
                    .position(|e| e == g)
                    .unwrap_or(usize::MAX - 1)
            })
        });
        for group in &groups {
            let title = group.as_deref().unwrap_or("the document");
            out.push_str(&format!("  {}\n", sanitize_line(title)));
            for l in doc
                .findings
                .iter()
                .filter(|l| &l.finding.elicitation == group)
            {
                let f = &l.finding;
                let at = match l.position {
                    Some(p) => format!(" (line {}, column {})", p.line, p.column),
                    None => String::new(),
                };
                out.push_str(&format!(
                    "    {}[{}] {}{at}\n",
                    paint(f.severity.as_str(), Emphasis::Severity(f.severity)),
                    f.rule.id,
                    sanitize_line(if f.pointer.is_empty() {
                        "/"
                    } else {
                        &f.pointer
                    }),
                ));
                out.push_str(&format!("      {}\n", sanitize_line(&f.message)));
                if let Some(fragment) = &l.fragment {
                    out.push_str(&format!(
                        "      {}\n",
                        paint(&format!("| {}", sanitize_line(fragment)), Emphasis::Dim)
                    ));
                }
                out.push_str(&format!(
                    "      {}\n",
                    paint(&format!("= {}", f.citation()), Emphasis::Dim)
                ));
            }
        }
        out.push_str(&format!("  {counts}\n"));
    }
    if docs.len() > 1 {
        out.push_str(&format!("{total} in {} documents\n", docs.len()));
    }
    out
}

/// One JSON object per finding, one per line.
pub fn json_lines(docs: &[Linted]) -> String {
    let mut out = String::new();
    for doc in docs {
        for l in &doc.findings {
            let f = &l.finding;
            let mut o = Map::new();
            o.insert("file".into(), json!(doc.source));
            if let Some(p) = l.position {
                o.insert("line".into(), json!(p.line));
                o.insert("column".into(), json!(p.column));
            } else if let Some(line) = doc.line {
                o.insert("line".into(), json!(line));
            }
            o.insert("elicitation".into(), json!(f.elicitation));
            o.insert("rule".into(), json!(f.rule.id));
            o.insert("severity".into(), json!(f.severity));
            o.insert("pointer".into(), json!(f.pointer));
            o.insert("message".into(), json!(f.message));
            o.insert("revision".into(), json!(f.revision.as_str()));
            o.insert(
                "section".into(),
                json!(format!(
                    "{} § {}",
                    f.rule.section.page(),
                    f.rule.section.title(f.revision)
                )),
            );
            o.insert("spec".into(), json!(f.spec_url()));
            out.push_str(&Value::Object(o).to_string());
            out.push('\n');
        }
    }
    out
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A file path as a relative URI reference.
fn path_uri(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A SARIF 2.1.0 log with one run: every rule in the driver, every finding
/// a result with its line and column (for input read from a file) and its
/// JSON pointer as a logical location.
pub fn sarif(docs: &[Linted]) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "shortDescription": {"text": r.checks},
                "fullDescription": {"text": r.why},
                "help": {
                    "text": format!("{}\n\nWhy: {}", r.checks, r.why),
                    "markdown": super::docs::rule_markdown(r, false),
                },
                "helpUri": r.section.url(r.newest_revision()),
                "defaultConfiguration": {"level": sarif_level(r.severity)},
                "properties": {"scope": match r.scope {
                    super::Scope::Document => "document",
                    super::Scope::Session => "session",
                }},
            })
        })
        .collect();
    let mut results = Vec::new();
    for doc in docs {
        for l in &doc.findings {
            let f = &l.finding;
            let index = RULES.iter().position(|r| r.id == f.rule.id).unwrap_or(0);
            let logical = json!({
                "fullyQualifiedName": if f.pointer.is_empty() { "/" } else { &f.pointer },
                "kind": "object",
            });
            let mut location = Map::new();
            if doc.from_file {
                let mut physical = json!({"artifactLocation": {"uri": path_uri(&doc.source)}});
                if let Some(p) = l.position {
                    physical["region"] = json!({"startLine": p.line, "startColumn": p.column});
                    if let Some(fragment) = &l.fragment {
                        physical["region"]["snippet"] = json!({"text": fragment});
                    }
                }
                location.insert("physicalLocation".into(), physical);
            }
            location.insert("logicalLocations".into(), json!([logical]));
            results.push(json!({
                "ruleId": f.rule.id,
                "ruleIndex": index,
                "level": sarif_level(f.severity),
                "message": {"text": format!("{} ({})", f.message, f.citation())},
                "locations": [Value::Object(location)],
                "properties": {
                    "pointer": f.pointer,
                    "revision": f.revision.as_str(),
                    "elicitation": f.elicitation,
                    "spec": f.spec_url(),
                },
            }));
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "elicit",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://modelcontextprotocol.io/specification",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}
