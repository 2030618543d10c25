//! The page's readings of what a browser sends, as functions of bytes and
//! text alone (no socket, no page): the server reads a posted form and the
//! `Cookie` headers through these, and the fuzz targets feed them.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{submit, Ask, Entry};
use elicit_core::elicitation::schema::FormSchema;

/// A form posted to the page, as the page reads it ([`read_posted_form`]).
#[derive(Debug)]
pub struct PostedForm {
    /// The `csrf` control (the page's token, checked by the server).
    pub csrf: Option<String>,
    /// The pressed button (`accept`, `decline`, `cancel`).
    pub action: Option<String>,
    /// The content an accept sends, or each field's problem (the field,
    /// and why).
    pub content: Result<Map<String, Value>, Vec<(String, String)>>,
}

/// What the page makes of an `application/x-www-form-urlencoded` `body`
/// posted for a form of `form`, every field asked: its controls split as
/// the server splits them, and the fields read through the schema model.
pub fn read_posted_form(form: FormSchema, body: &[u8]) -> PostedForm {
    let fields = submit::Submitted::parse(body);
    let missing = form.fields.iter().map(|f| f.name.clone()).collect();
    let entry = Entry {
        id: 0,
        server: String::new(),
        message: String::new(),
        position: None,
        ask: Ask::Form {
            form: Arc::new(form),
            given: Map::new(),
            missing,
        },
        deadline: None,
        warnings: Vec::new(),
    };
    let content = submit::read(&entry, &fields.values)
        .map_err(|problems| problems.into_iter().map(|p| (p.field, p.reason)).collect());
    PostedForm {
        csrf: fields.csrf,
        action: fields.action,
        content,
    }
}

/// The `name=value` pairs of `Cookie` header values (`; `-separated,
/// each trimmed; a part without `=` is no cookie).
pub fn cookie_pairs<'a>(
    headers: impl Iterator<Item = &'a str> + 'a,
) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
    headers
        .flat_map(|h| h.split(';'))
        .filter_map(|c| c.trim().split_once('='))
}
