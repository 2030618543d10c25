//! Answer files with rules (`--answers FILE`), for headless runs: an
//! ordered list of rules, each a `match` and an `answer`; the first rule
//! that matches an elicitation answers it. A cassette works as an answer
//! file too: each recorded elicitation answers the same request.
//!
//! What a rule is and how it matches and answers is elicit-core's
//! ([`elicit_core::elicitation::answer_rules`], beside the scripted
//! `--answer`s); here is the reading of the files, and [`Answering`],
//! which puts the rules in front of the person (the
//! terminal or the no-terminal stand-in): what scripted `--answer`s leave
//! open, a rule answers; with no rule matching, the person is asked as
//! usual, or under `--no-input` the elicitation is declined and the
//! message says which one no rule matched.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::{read_checked, strings, Cassette, LoadError, CASSETTE_VERSION};
use elicit_core::elicitation::answer_rules::{describe, first_match, RuleReport, Unmatched};
pub use elicit_core::elicitation::answer_rules::{AnswerSpec, Asked, Criteria, Rule};
use elicit_core::elicitation::contract::Answer;
use elicit_core::elicitation::protocol::{Action, Mode};
use elicit_core::elicitation::resolve::{Elicitation, Pending, Resolver};
use elicit_core::error::ElicitError;
use elicit_core::text::sanitize::sanitize_line;
use elicit_session::mcp::tool_call::AnswersInFront;

/// The value of an answer file's `"elicit"` key.
pub(crate) const ANSWERS_VERSION: &str = "answers/1";

/// The published schema of answer files.
pub(crate) const ANSWERS_SCHEMA: &str = include_str!("../schemas/answers.schema.json");

/// The rules of one answer file, in order.
#[derive(Debug, Clone, Default)]
pub struct AnswerRules {
    /// The rules, in order: the first that matches answers.
    pub rules: Vec<Rule>,
    /// The file, for messages.
    pub source: String,
}

fn answers_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let schema: Value =
            serde_json::from_str(ANSWERS_SCHEMA).expect("the published schema is JSON");
        jsonschema::validator_for(&schema).expect("the published schema compiles")
    })
}

impl AnswerRules {
    /// Reads an answer file (`"elicit": "answers/1"`) or a cassette
    /// (`"elicit": "cassette/1"`), checked against its schema.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let fail = |pointer: &str, message: String| LoadError {
            path: path.to_path_buf(),
            pointer: Some(pointer.to_string()),
            message,
        };
        let text_version = {
            // Which schema applies is decided by the version key; a file
            // that is not JSON at all is reported by the full read below.
            let peek = read_checked(path, accept_anything());
            match peek {
                Ok(v) => v.get("elicit").and_then(Value::as_str).map(str::to_string),
                Err(e) => return Err(e),
            }
        };
        let source = path.display().to_string();
        if text_version.as_deref() == Some(CASSETTE_VERSION) {
            let cassette = Cassette::load(path)?;
            return Ok(Self::from_cassette(&cassette, source));
        }
        if text_version.as_deref() != Some(ANSWERS_VERSION) {
            return Err(fail(
                "/elicit",
                format!(
                    "must be \"{ANSWERS_VERSION}\" (an answer file) or \"{CASSETTE_VERSION}\" (a cassette)"
                ),
            ));
        }
        let value = read_checked(path, answers_validator())?;
        let mut rules = Vec::new();
        for (i, rule) in value["rules"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let at = |key: &str| format!("/rules/{i}/match/{key}");
            let m = rule.get("match").and_then(Value::as_object);
            let text = |key: &str| {
                m.and_then(|m| m.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let message = match text("message") {
                Some(re) => Some(regex::Regex::new(&re).map_err(|e| {
                    fail(
                        &at("message"),
                        format!("not a valid regular expression: {e}"),
                    )
                })?),
                None => None,
            };
            let criteria = Criteria {
                server: text("server"),
                tool: text("tool"),
                mode: text("mode").map(|m| if m == "url" { Mode::Url } else { Mode::Form }),
                message,
                fields: strings(m.and_then(|m| m.get("fields"))),
                host: text("host"),
                message_is: None,
                fields_are: None,
            };
            rules.push(Rule {
                label: format!("rule {}", i + 1),
                criteria,
                answer: AnswerSpec::from_value(&rule["answer"]),
            });
        }
        Ok(AnswerRules { rules, source })
    }

    /// A cassette's elicitations as rules: each answers an elicitation of
    /// the cassette's tool with the same mode, message and field names (or,
    /// for a URL, host) as the one it was recorded for.
    pub(crate) fn from_cassette(cassette: &Cassette, source: String) -> Self {
        let rules = cassette
            .elicitations
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let r = &e.request;
                let mode = match r.get("mode").and_then(Value::as_str) {
                    Some("url") => Mode::Url,
                    _ => Mode::Form,
                };
                let fields = r
                    .pointer("/requestedSchema/properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect());
                let host = r
                    .get("url")
                    .and_then(Value::as_str)
                    .and_then(|u| url::Url::parse(u).ok())
                    .and_then(|u| u.host_str().map(str::to_string));
                Rule {
                    label: format!("elicitation {} of the cassette", i + 1),
                    criteria: Criteria {
                        tool: Some(cassette.tool.clone()),
                        mode: Some(mode),
                        message_is: Some(
                            r.get("message")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                        ),
                        fields_are: (mode == Mode::Form).then(|| fields.unwrap_or_default()),
                        host,
                        ..Criteria::default()
                    },
                    answer: e.answer.clone(),
                }
            })
            .collect();
        AnswerRules { rules, source }
    }

    /// The first rule that matches.
    pub fn find(&self, asked: &Asked<'_>) -> Option<&Rule> {
        first_match(&self.rules, asked)
    }
}

/// A schema that takes any JSON: used to read a file once before knowing
/// which of the two schemas applies.
fn accept_anything() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| jsonschema::validator_for(&Value::Bool(true)).expect("`true` compiles"))
}

/// Who answers an elicitation after the scripted answers (`-a`, which the
/// resolution itself tries first): the answer rules (`--answers`), then the
/// person behind them (or nobody). The one place every command, the hook,
/// the proxy, a replay and elicit-rmcp put these together, by named
/// options: `Answering::new().rules(r).unmatched(Unmatched::Decline).in_front_of(person)`.
#[derive(Debug, Clone, Default)]
pub struct Answering {
    rules: Option<Arc<AnswerRules>>,
    unmatched: Unmatched,
    report: RuleReport,
}

impl Answering {
    /// No rules: the person answers everything scripted answers leave.
    pub fn new() -> Self {
        Answering::default()
    }

    /// The answer rules in front of the person (none: the person alone).
    pub fn rules(mut self, rules: Option<Arc<AnswerRules>>) -> Self {
        self.rules = rules;
        self
    }

    /// What becomes of an elicitation no rule matches (with no rules,
    /// nothing is declined for want of one).
    pub fn unmatched(mut self, unmatched: Unmatched) -> Self {
        self.unmatched = unmatched;
        self
    }

    /// Whether the rules name what they answered.
    pub fn report(mut self, report: RuleReport) -> Self {
        self.report = report;
        self
    }

    /// `person` with the rules in front.
    pub fn in_front_of<R: Resolver>(self, person: R) -> RulesResolver<R> {
        let unmatched = match self.rules {
            Some(_) => self.unmatched,
            None => Unmatched::FallThrough,
        };
        RulesResolver {
            rules: self.rules.unwrap_or_default(),
            inner: person,
            unmatched,
            report: self.report,
        }
    }
}

/// The person, with answer rules in front ([`Answering::in_front_of`]).
pub struct RulesResolver<R> {
    rules: Arc<AnswerRules>,
    inner: R,
    unmatched: Unmatched,
    report: RuleReport,
}

impl AnswersInFront for AnswerRules {
    fn in_front_of<'p>(
        self: Arc<Self>,
        person: &'p mut dyn Resolver,
        unmatched: Unmatched,
        report: RuleReport,
    ) -> Box<dyn Resolver + 'p> {
        let answering = Answering::new()
            .rules(Some(self))
            .unmatched(unmatched)
            .report(report);
        Box::new(answering.in_front_of(person))
    }
}

impl<R: Resolver> Resolver for RulesResolver<R> {
    fn warn_early(&mut self, warnings: &[String]) -> bool {
        self.inner.warn_early(warnings)
    }

    /// The person's resolver may show several elicitations at once (the
    /// browser page): so may the rules in front of it, each handle with the
    /// same rules. Without this, a wrapped page answered one at a time.
    fn alongside(&self) -> Option<Box<dyn Resolver + Send>> {
        let inner = self.inner.alongside()?;
        Some(Box::new(RulesResolver {
            rules: self.rules.clone(),
            inner,
            unmatched: self.unmatched,
            report: self.report,
        }))
    }

    fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        let Some(rule) = self.rules.find(&Asked::of(e)) else {
            if self.unmatched == Unmatched::Decline {
                eprintln!(
                    "elicit: no answer rule in {} matched {}; declined",
                    sanitize_line(&self.rules.source),
                    describe(e)
                );
                return Ok(Answer::from_action(&e.request.id, Action::Decline, None));
            }
            return self.inner.resolve(e, pending);
        };
        let answer = rule.answer(e, pending, &self.rules.source)?;
        if self.report == RuleReport::SayWhichRule {
            let action =
                elicit_core::elicitation::contract::answer_to_elicit_result(&answer).action;
            let action = action.as_str();
            eprintln!(
                "elicit: {} of {} answered {} ({action})",
                rule.label,
                sanitize_line(&self.rules.source),
                describe(e)
            );
        }
        Ok(answer)
    }
}
