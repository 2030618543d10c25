//! Answer rules (`--answers FILE`), the matching model: a rule says which
//! elicitations it answers ([`Criteria`], judged against what was
//! [`Asked`]) and how ([`AnswerSpec`], the same words and values as
//! `--answer`, see [`super::answers`]); [`Rule::answer`] turns a matching
//! rule into the answer to one elicitation. The first rule that matches
//! answers.
//!
//! Reading answer files (and cassettes, whose recorded elicitations work
//! as rules) is the cassette crate's (`elicit_cassette::answers`); nothing here
//! reads a file.

use serde_json::{Map, Value};

use crate::elicitation::answers::{FormPlan, ScriptedAnswers};
use crate::elicitation::contract::Answer;
use crate::elicitation::protocol::{Action, Mode};
use crate::elicitation::resolve::{Elicitation, Pending};
use crate::error::ElicitError;
use crate::text::sanitize::sanitize_line;

/// What becomes of an elicitation no answer rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unmatched {
    /// Whoever stands behind the rules answers it: the person, or nobody.
    #[default]
    FallThrough,
    /// It is declined, saying that no rule matched (`--no-input` with
    /// `--answers`: a CI run that only the rules may answer).
    Decline,
}

impl Unmatched {
    /// As `--no-input` says: declined under it, else falls through.
    pub fn under_no_input(no_input: bool) -> Self {
        match no_input {
            true => Unmatched::Decline,
            false => Unmatched::FallThrough,
        }
    }
}

/// Whether the rules say which of them answered what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuleReport {
    /// They answer silently.
    #[default]
    Quiet,
    /// Each answer names its rule on stderr (`-v`).
    SayWhichRule,
}

impl RuleReport {
    /// As `-v` says: named under it, else quiet.
    pub fn under_verbose(verbose: bool) -> Self {
        match verbose {
            true => RuleReport::SayWhichRule,
            false => RuleReport::Quiet,
        }
    }
}

/// An answer as an answer file or a cassette holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerSpec {
    /// The ElicitResult sent (what `--record` writes).
    Result(Value),
    /// Written by hand: `--answer` words (`accept`, `NAME=VALUE`, …).
    Words(Vec<String>),
    /// Written by hand: values by field name (strings coerced as
    /// `--answer NAME=VALUE` is).
    Values(Map<String, Value>),
}

impl AnswerSpec {
    /// Reads an answer as written in a file.
    pub fn from_value(v: &Value) -> Self {
        match v {
            Value::String(s) => AnswerSpec::Words(vec![s.clone()]),
            Value::Array(a) => AnswerSpec::Words(
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
            ),
            Value::Object(o) if o.contains_key("action") => AnswerSpec::Result(v.clone()),
            Value::Object(o) => AnswerSpec::Values(o.clone()),
            _ => AnswerSpec::Words(Vec::new()),
        }
    }

    /// The answer as written in a file.
    pub fn to_value(&self) -> Value {
        match self {
            AnswerSpec::Result(v) => v.clone(),
            AnswerSpec::Words(w) if w.len() == 1 => Value::String(w[0].clone()),
            AnswerSpec::Words(w) => w.clone().into(),
            AnswerSpec::Values(m) => Value::Object(m.clone()),
        }
    }

    /// The answer as scripted answers, applied by field name to whatever
    /// form is asked: a recorded ElicitResult gives its action and content;
    /// words and values are `--answer`s; an accept fills the other fields
    /// from their defaults.
    pub fn scripted(&self) -> Result<ScriptedAnswers, ElicitError> {
        let words = self.scripted_words()?;
        ScriptedAnswers::parse(&words, |path| {
            Err(std::io::Error::other(format!(
                "@{path}: a cassette's answers cannot name files"
            )))
        })
    }

    /// The answer as `--answer` words (what [`Self::scripted`] parses).
    pub fn scripted_words(&self) -> Result<Vec<String>, ElicitError> {
        Ok(match self {
            AnswerSpec::Result(v) => {
                let mut result = Map::new();
                for key in ["action", "content"] {
                    if let Some(x) = v.get(key) {
                        result.insert(key.into(), x.clone());
                    }
                }
                vec![Value::Object(result).to_string()]
            }
            AnswerSpec::Words(w) => {
                let mut words = w.clone();
                if !w
                    .iter()
                    .any(|x| matches!(x.trim(), "accept" | "decline" | "cancel"))
                {
                    words.insert(0, "accept".into());
                }
                words
            }
            AnswerSpec::Values(m) => values_as_words(m),
        })
    }
}

/// Values by field name as `--answer`s: `accept`, then `NAME=VALUE` for each
/// string (coerced by the field's kind, as on the command line), then one
/// JSON object of the rest (already typed).
pub fn values_as_words(values: &Map<String, Value>) -> Vec<String> {
    let mut words = vec!["accept".to_string()];
    let mut typed = Map::new();
    for (name, value) in values {
        match value {
            Value::String(s) if s.trim() == s && !name.contains('=') => {
                words.push(format!("{name}={s}"))
            }
            other => {
                typed.insert(name.clone(), other.clone());
            }
        }
    }
    if !typed.is_empty() {
        // As an ElicitResult, so that a field named like a key of one
        // (`action`, `ok`) is still a field.
        let mut result = Map::new();
        result.insert("action".into(), "accept".into());
        result.insert("content".into(), Value::Object(typed));
        words.push(Value::Object(result).to_string());
    }
    words
}

/// What a rule asks of an elicitation; every criterion given must hold.
#[derive(Debug, Clone, Default)]
pub struct Criteria {
    /// The server's name (its `serverInfo.name`).
    pub server: Option<String>,
    /// The tool being called.
    pub tool: Option<String>,
    /// The elicitation's mode.
    pub mode: Option<Mode>,
    /// Searched in the message.
    pub message: Option<regex::Regex>,
    /// Property names the form must all have.
    pub fields: Vec<String>,
    /// The URL's host (URL mode).
    pub host: Option<String>,
    /// From a cassette: the message must be exactly this one.
    pub message_is: Option<String>,
    /// From a cassette: the form must have exactly these fields.
    pub fields_are: Option<Vec<String>>,
}

/// One rule: where it came from (for `-v` and errors), what it matches,
/// how it answers.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `rule 2`, or `elicitation 1 of the cassette`.
    pub label: String,
    /// What it matches.
    pub criteria: Criteria,
    /// The answer to give when the rule matches.
    pub answer: AnswerSpec,
}

/// What a rule is matched against.
pub struct Asked<'a> {
    /// The server's name, if known.
    pub server: Option<&'a str>,
    /// The tool being called, if any.
    pub tool: Option<&'a str>,
    /// The elicitation's mode.
    pub mode: Mode,
    /// The server's message.
    pub message: &'a str,
    /// The form's field names.
    pub fields: Vec<&'a str>,
    /// The URL, in URL mode.
    pub url: Option<&'a str>,
}

impl<'a> Asked<'a> {
    /// What `e` asks.
    pub fn of(e: &'a Elicitation) -> Self {
        Asked {
            server: e.server.as_deref(),
            tool: e.tool.as_deref(),
            mode: e.mode(),
            message: &e.params.message,
            fields: e
                .form
                .as_ref()
                .map(|f| f.fields.iter().map(|x| x.name.as_str()).collect())
                .unwrap_or_default(),
            url: e.params.url.as_deref(),
        }
    }
}

impl Criteria {
    /// Whether every criterion given holds for `asked`.
    pub fn matches(&self, asked: &Asked<'_>) -> bool {
        let eq = |want: &Option<String>, got: Option<&str>| match want {
            Some(w) => got == Some(w.as_str()),
            None => true,
        };
        eq(&self.server, asked.server)
            && eq(&self.tool, asked.tool)
            && self.mode.is_none_or(|m| m == asked.mode)
            && self
                .message
                .as_ref()
                .is_none_or(|re| re.is_match(asked.message))
            && self
                .fields
                .iter()
                .all(|f| asked.fields.contains(&f.as_str()))
            && self.host.as_ref().is_none_or(|h| {
                asked
                    .url
                    .and_then(|u| url::Url::parse(u).ok())
                    .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                    .is_some_and(|got| got == h.to_ascii_lowercase())
            })
            && self.message_is.as_ref().is_none_or(|m| m == asked.message)
            && self.fields_are.as_ref().is_none_or(|want| {
                want.len() == asked.fields.len()
                    && want.iter().all(|f| asked.fields.contains(&f.as_str()))
            })
    }
}

/// The first of `rules` that matches `asked`.
pub fn first_match<'r>(rules: &'r [Rule], asked: &Asked<'_>) -> Option<&'r Rule> {
    rules.iter().find(|r| r.criteria.matches(asked))
}

/// `the form elicitation "Pick a region"`: an elicitation as messages
/// about rules name it.
pub fn describe(e: &Elicitation) -> String {
    format!(
        "the {} elicitation {:?}",
        e.mode().as_str(),
        crate::text::truncate(&sanitize_line(&e.params.message), 80)
    )
}

impl Rule {
    /// This rule's answer to `e` (which it matched), with what is
    /// `pending` from `--answer`: values given on the command line win
    /// over the rule's. `source` names the rule's file in errors.
    pub fn answer(
        &self,
        e: &Elicitation,
        pending: Pending,
        source: &str,
    ) -> Result<Answer, ElicitError> {
        let in_rule = |err: ElicitError| {
            ElicitError::Usage(format!(
                "{} of {} does not fit {}: {err}",
                self.label,
                sanitize_line(source),
                describe(e)
            ))
        };
        let scripted = self.answer.scripted().map_err(in_rule)?;
        Ok(match (pending, &e.form) {
            (Pending::Form { values, .. }, Some(form)) => {
                match scripted.plan_form(form, false).map_err(in_rule)? {
                    FormPlan::Decided(Action::Accept, mut content) => {
                        // `--answer` values given on the command line win.
                        content.extend(values);
                        Answer::from_action(
                            &e.request.id,
                            Action::Accept,
                            Some(form.order(content)),
                        )
                    }
                    FormPlan::Decided(action, _) => {
                        Answer::from_action(&e.request.id, action, None)
                    }
                    FormPlan::NeedsPerson { missing, .. } => {
                        return Err(in_rule(ElicitError::NeedsAnswers {
                            fields: missing,
                            detail: None,
                        }))
                    }
                }
            }
            _ => {
                let action = scripted
                    .plan_url()
                    .map_err(in_rule)?
                    .unwrap_or(Action::Accept);
                Answer::from_action(&e.request.id, action, None)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked<'a>(message: &'a str, fields: Vec<&'a str>, url: Option<&'a str>) -> Asked<'a> {
        Asked {
            server: Some("srv"),
            tool: Some("deploy"),
            mode: if url.is_some() { Mode::Url } else { Mode::Form },
            message,
            fields,
            url,
        }
    }

    #[test]
    fn every_criterion_given_must_hold() {
        let c = Criteria {
            tool: Some("deploy".into()),
            message: Some(regex::Regex::new("(?i)region").unwrap()),
            fields: vec!["region".into()],
            ..Criteria::default()
        };
        assert!(c.matches(&asked("Pick a Region", vec!["region", "n"], None)));
        assert!(!c.matches(&asked("Pick a Region", vec!["n"], None)));
        assert!(!c.matches(&asked("Pick one", vec!["region"], None)));
        let host = Criteria {
            host: Some("Example.com".into()),
            mode: Some(Mode::Url),
            ..Criteria::default()
        };
        assert!(host.matches(&asked("x", vec![], Some("https://example.com/a"))));
        assert!(!host.matches(&asked("x", vec![], Some("https://evil.test/example.com"))));
        assert!(!host.matches(&asked("x", vec![], None)));
        assert!(Criteria::default().matches(&asked("x", vec![], None)));
    }
}
