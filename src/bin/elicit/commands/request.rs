//! `elicit request` and `elicit result`: the two halves of the suspension
//! contract, for resolvers of your own in between.

use std::path::Path;

use serde_json::Value;

use elicit::elicitation::resolve::{self, Elicitation, SchemaCache};
use elicit::error::ElicitError;
use elicit::{
    answer_to_elicit_result, elicitation::input, elicitation::output, Answer, ElicitResult, Mode,
};

use super::{json_text, print_line, read_input, report};
use crate::cli::RequestKind;

pub fn run_request(file: Option<&Path>, pretty: bool) -> i32 {
    let go = || -> Result<String, ElicitError> {
        let bytes = read_input(file)?;
        let text = input::decode(&bytes)?;
        let doc = input::read_document(text).map_err(|f| f.error)?;
        let requests: Vec<elicit::Request> = doc
            .entries
            .iter()
            .map(|e| elicit::elicitation_to_request(&e.params))
            .collect();
        Ok(if requests.len() == 1 {
            json_text(&requests[0], pretty)
        } else {
            json_text(&requests, pretty)
        })
    };
    match go() {
        Ok(text) => print_line(&text),
        Err(e) => report(&e),
    }
}

/// `elicit result`: one Answer gives one ElicitResult, an array gives an
/// array; with `--input`, the output takes the shape of the elicitation
/// document the Answers resolve.
pub fn run_result(
    file: Option<&Path>,
    kind: Option<RequestKind>,
    input_file: Option<&Path>,
    pretty: bool,
) -> i32 {
    let go = || -> Result<String, ElicitError> {
        let bytes = read_input(file)?;
        let text = input::decode(&bytes)?;
        let (answers, many) = read_answers(input::parse_json(text)?)?;
        match input_file {
            Some(path) => render_for_input(path, answers, pretty),
            None => {
                let results: Vec<ElicitResult> = answers
                    .iter()
                    .map(|a| {
                        let r = answer_to_elicit_result(a);
                        match kind {
                            Some(RequestKind::Authorization) => r.for_mode(Mode::Url),
                            _ => r,
                        }
                    })
                    .collect();
                Ok(if many {
                    json_text(&results, pretty)
                } else {
                    json_text(&results[0], pretty)
                })
            }
        }
    };
    match go() {
        Ok(text) => print_line(&text),
        Err(e) => report(&e),
    }
}

/// One Answer, or an array of them (`many`). Each bad entry is named by its
/// position.
fn read_answers(value: Value) -> Result<(Vec<Answer>, bool), ElicitError> {
    let not_answer = |at: String, e: serde_json::Error| ElicitError::UnknownShape {
        message: format!(
            "{at}not a contract Answer ({{\"id\", \"ok\", \"data\", \"reason\"}}): {e}"
        ),
    };
    match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(ElicitError::UnknownShape {
                    message: "an empty array: expected at least one contract Answer".into(),
                });
            }
            let answers = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    serde_json::from_value(v).map_err(|e| not_answer(format!("item {i}: "), e))
                })
                .collect::<Result<Vec<Answer>, _>>()?;
            Ok((answers, true))
        }
        other => Ok((
            vec![serde_json::from_value(other).map_err(|e| not_answer(String::new(), e))?],
            false,
        )),
    }
}

/// Renders the Answers in the shape of the elicitation document at `path`,
/// through the same validation and mapping as a resolution on the terminal.
fn render_for_input(
    path: &Path,
    answers: Vec<Answer>,
    pretty: bool,
) -> Result<String, ElicitError> {
    let bytes = read_input(Some(path))?;
    let text = input::decode(&bytes)?;
    let doc = input::read_document(text).map_err(|f| f.error)?;
    if doc.entries.len() != answers.len() {
        return Err(ElicitError::Usage(format!(
            "{} holds {} elicitation(s) but {} Answer(s) were given; give one Answer per elicitation, in order",
            path.display(),
            doc.entries.len(),
            answers.len()
        )));
    }
    let mut cache = SchemaCache::default();
    let mut results = Vec::with_capacity(answers.len());
    for (entry, answer) in doc.entries.into_iter().zip(answers) {
        let key = entry.key;
        let elicitation = Elicitation::prepare(entry.params, &mut cache)?;
        let result = resolve::finish(&elicitation, answer).map_err(|e| match (&key, e) {
            (Some(k), ElicitError::Validation(fields)) => ElicitError::Validation(
                fields
                    .into_iter()
                    .map(|mut f| {
                        f.field = format!("{k}: {}", f.field);
                        f
                    })
                    .collect(),
            ),
            (_, e) => e,
        })?;
        results.push((key, result));
    }
    Ok(output::render(&doc.shape, &results, pretty))
}
