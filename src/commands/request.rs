//! `elicit request` and `elicit result`: the two halves of the suspension
//! contract, for resolvers of your own in between.

use std::path::Path;

use elicit::error::ElicitError;
use elicit::input;

use super::{json_text, print_line, read_input, report};

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

pub fn run_result(file: Option<&Path>, kind: Option<&str>, pretty: bool) -> i32 {
    let go = || -> Result<String, ElicitError> {
        let bytes = read_input(file)?;
        let text = input::decode(&bytes)?;
        let value = input::parse_json(text)?;
        let answer: elicit::Answer =
            serde_json::from_value(value).map_err(|e| ElicitError::UnknownShape {
                message: format!(
                    "not a contract Answer ({{\"id\", \"ok\", \"data\", \"reason\"}}): {e}"
                ),
            })?;
        let mut result = elicit::answer_to_elicit_result(&answer);
        if kind == Some(elicit::contract::KIND_AUTHORIZATION) {
            result = result.for_mode(elicit::Mode::Url);
        }
        Ok(json_text(&result, pretty))
    };
    match go() {
        Ok(text) => print_line(&text),
        Err(e) => report(&e),
    }
}
