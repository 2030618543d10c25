//! Resolution: from a contract [`Request`] to an [`Answer`], then back to
//! the MCP [`ElicitResult`].
//!
//! Scripted answers are applied first; whatever they leave open goes to a
//! [`Resolver`], the one small trait behind which the person sits: the
//! terminal form and URL flow (`elicit_ui::terminal::TerminalResolver`), or
//! [`NoTerminal`] when nobody can be asked. Every accepted answer is then
//! validated against the one schema model before anything is printed.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::elicitation::answers::{FormPlan, ScriptedAnswers};
use crate::elicitation::contract::{
    answer_to_elicit_result, request_without_schema, Answer, Request,
};
use crate::elicitation::input::{nesting, KnownSchema};
use crate::elicitation::protocol::{
    Action, ElicitResult, ElicitationParams, Mode, RELATED_TASK_META,
};
use crate::elicitation::schema::FormSchema;
use crate::error::ElicitError;

/// An elicitation ready to resolve: the params as sent, their contract
/// Request (the suspension contract's mapping), and the parsed form for an input request.
#[derive(Debug, Clone)]
pub struct Elicitation {
    /// The params without `requested_schema` (it is parsed into `form`).
    pub params: ElicitationParams,
    /// The contract Request without `data.schema`: the schema is parsed
    /// into `form`, and a `--lines` stream of one request never builds its
    /// tree (see [`crate::elicitation::input::read_document_with`]).
    /// [`crate::elicitation::contract::elicitation_to_request`] gives the whole Request.
    pub request: Request,
    /// The form's parsed schema (form mode).
    pub form: Option<Arc<FormSchema>>,
    /// The `inputRequests` key or `elicitationId` when the input held several.
    pub key: Option<String>,
    /// 1-based position and total, when the input held several.
    pub position: Option<(usize, usize)>,
    /// The server's name when the input carries one (2026 results put it in
    /// `_meta["io.modelcontextprotocol/serverInfo"]`).
    pub server: Option<String>,
    /// The tool whose call the elicitation belongs to, when the session
    /// knows it (answer rules match on it).
    pub tool: Option<String>,
    /// elicit's own form (a tool's arguments for `call`), not a server's:
    /// the header names elicit, whatever `--server` says.
    pub asked_by_elicit: bool,
}

impl Elicitation {
    /// Maps params onto a Request and parses its schema (through `cache`, so
    /// a stream of identical requests compiles the schema once).
    pub fn prepare(
        params: ElicitationParams,
        cache: &mut SchemaCache,
    ) -> Result<Self, ElicitError> {
        Self::prepare_with_text(params, None, cache)
    }

    /// [`Elicitation::prepare`], given the schema's text as the input wrote
    /// it ([`crate::elicitation::input::Entry::schema_text`]) when it is known: the cache
    /// then finds a schema it has seen by that text alone.
    pub(crate) fn prepare_with_text(
        params: ElicitationParams,
        schema_text: Option<&str>,
        cache: &mut SchemaCache,
    ) -> Result<Self, ElicitError> {
        let mut params = params;
        let schema = params.requested_schema.take();
        let form = match (params.mode(), schema) {
            (Mode::Form, Some(schema)) => Some(cache.get_with_text(&schema, schema_text)?),
            _ => None,
        };
        Ok(Self::with_form(params, form))
    }

    /// An elicitation whose schema is already parsed (`form`, read only in
    /// form mode), or has none.
    pub(crate) fn with_form(params: ElicitationParams, form: Option<Arc<FormSchema>>) -> Self {
        let request = request_without_schema(&params);
        let form = form.filter(|_| params.mode() == Mode::Form);
        Elicitation {
            params,
            request,
            form,
            key: None,
            position: None,
            server: None,
            tool: None,
            asked_by_elicit: false,
        }
    }

    /// The elicitation's mode.
    pub fn mode(&self) -> Mode {
        self.params.mode()
    }
}

/// What the scripted answers left for a person to settle.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// A form: the values already given, and the fields still to ask, in
    /// schema order.
    Form {
        /// The values already given, by name.
        values: Map<String, Value>,
        /// The fields still to ask, in schema order.
        missing: Vec<String>,
    },
    /// A URL elicitation: consent to open, then confirmation.
    Url,
}

/// Something that can settle what scripted answers left open: a person at a
/// terminal, or a stand-in that explains why nobody can be asked.
pub trait Resolver {
    /// Settles what is `pending` of `elicitation`, or says why it cannot.
    fn resolve(
        &mut self,
        elicitation: &Elicitation,
        pending: Pending,
    ) -> Result<Answer, ElicitError>;

    /// Shows the input's warnings (lenient-schema oddities) before anything
    /// is asked or refused: a person should read them before the form, and
    /// under `--no-input` before the error. `true` when shown; `false`
    /// leaves them to the caller (printed after the output).
    fn warn_early(&mut self, _warnings: &[String]) -> bool {
        false
    }

    /// Another handle that resolves at the same time as this one, when the
    /// person can see several elicitations at once (the browser page lists
    /// every pending one); `None` (the default) for one terminal, which asks
    /// one at a time.
    fn alongside(&self) -> Option<Box<dyn Resolver + Send>> {
        None
    }
}

/// A borrowed or boxed resolver resolves as the one it holds.
impl<R: Resolver + ?Sized> Resolver for &mut R {
    fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        (**self).resolve(e, pending)
    }

    fn warn_early(&mut self, warnings: &[String]) -> bool {
        (**self).warn_early(warnings)
    }

    fn alongside(&self) -> Option<Box<dyn Resolver + Send>> {
        (**self).alongside()
    }
}

impl<R: Resolver + ?Sized> Resolver for Box<R> {
    fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        (**self).resolve(e, pending)
    }

    fn warn_early(&mut self, warnings: &[String]) -> bool {
        (**self).warn_early(warnings)
    }

    fn alongside(&self) -> Option<Box<dyn Resolver + Send>> {
        (**self).alongside()
    }
}

/// Prints warnings on stderr, sanitised (they quote server text), in the
/// binary's `elicit: warning:` form.
pub fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!(
            "elicit: warning: {}",
            crate::text::sanitize::sanitize_block(w)
        );
    }
}

/// The resolver used when no terminal is available (or `--no-input`): it
/// never blocks, and its error lists what is left and suggests `--answer`.
#[derive(Debug, Clone)]
pub struct NoTerminal {
    /// Why nobody can be asked (no terminal, `--no-input`), in words.
    pub detail: String,
}

impl Resolver for NoTerminal {
    fn warn_early(&mut self, warnings: &[String]) -> bool {
        print_warnings(warnings);
        true
    }

    fn resolve(&mut self, _: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        match pending {
            Pending::Form { missing, .. } => Err(ElicitError::NeedsAnswers {
                fields: missing,
                detail: Some(self.detail.clone()),
            }),
            Pending::Url => Err(ElicitError::NeedsUrlAnswer {
                detail: self.detail.clone(),
            }),
        }
    }
}

/// Resolves one elicitation: scripted answers, then the person, then
/// validation, then the contract's Answer → ElicitResult mapping and the spec's
/// per-mode rule (no `content` on a URL accept).
///
/// `strict`: scripted values for fields this form lacks are an error (true
/// for a single elicitation; false when one input holds several).
pub fn resolve(
    elicitation: &Elicitation,
    scripted: &ScriptedAnswers,
    strict: bool,
    person: &mut dyn Resolver,
) -> Result<ElicitResult, ElicitError> {
    let id = elicitation.request.id.as_str();
    let answer = match (&elicitation.form, elicitation.mode()) {
        (Some(form), Mode::Form) => match scripted.plan_form(form, strict)? {
            FormPlan::Decided(action, content) => Answer::from_action(id, action, Some(content)),
            FormPlan::NeedsPerson { values, missing } => {
                person.resolve(elicitation, Pending::Form { values, missing })?
            }
        },
        _ => match scripted.plan_url()? {
            Some(action) => Answer::from_action(id, action, None),
            None => person.resolve(elicitation, Pending::Url)?,
        },
    };
    finish(elicitation, answer)
}

/// Validates an accepted answer and maps it onto the ElicitResult.
pub fn finish(elicitation: &Elicitation, mut answer: Answer) -> Result<ElicitResult, ElicitError> {
    if answer.ok {
        if let (Some(form), Mode::Form) = (&elicitation.form, elicitation.mode()) {
            let content = form.order(answer.data.take().unwrap_or_default());
            form.validate(&content).map_err(ElicitError::Validation)?;
            answer.data = Some(content);
        }
    }
    let mut result = answer_to_elicit_result(&answer).for_mode(elicitation.mode());
    if let Some(task) = elicitation.params.related_task() {
        let mut meta = Map::new();
        meta.insert(RELATED_TASK_META.into(), task.clone());
        result.meta = Some(meta);
    }
    Ok(result)
}

/// Parsed schemas, so `--lines` over a stream of the same request compiles
/// each schema once. Looked up by the schema's text as the input wrote it,
/// when the reader kept it (equal text is an equal schema; hashing and
/// comparing ~2 KB of text costs a tenth of walking the tree), else by a hash
/// of the schema's JSON tree, then compared for equality. Bounded: cleared
/// when full.
#[derive(Default)]
pub struct SchemaCache {
    map: HashMap<u64, Vec<(Value, Arc<FormSchema>)>>,
    /// Each text's parsed form, and how deeply its JSON nests.
    by_text: HashMap<Box<str>, (Arc<FormSchema>, usize)>,
    /// The text parsed last, compared before hashing: a stream of one
    /// request finds its schema with one `memcmp`.
    last: Option<(Box<str>, Arc<FormSchema>, usize)>,
    len: usize,
    /// Remember nothing ([`SchemaCache::single_use`]).
    forget: bool,
}

impl SchemaCache {
    const CAPACITY: usize = 256;

    /// A cache for one document resolved once (`elicit FILE`): it parses
    /// each schema and keeps nothing. Hashing the schema's tree and copying
    /// its tree and text into the maps was a sixth of a whole scripted run
    /// (callgrind), paid for a second lookup that never comes.
    pub fn single_use() -> Self {
        SchemaCache {
            forget: true,
            ..SchemaCache::default()
        }
    }

    /// Made by [`SchemaCache::single_use`]: nothing will be looked up, so
    /// the reader need not keep schema texts.
    pub(crate) fn is_single_use(&self) -> bool {
        self.forget
    }

    /// The schema whose JSON text is `text`, when it was parsed before
    /// through [`SchemaCache::get_with_text`]: the reader then never builds
    /// its tree ([`crate::elicitation::input::read_document_with`]).
    pub fn known(&self, text: &str) -> Option<KnownSchema> {
        let (form, nesting) = match &self.last {
            Some((last, form, nesting)) if **last == *text => (form, nesting),
            _ => self.by_text.get(text).map(|(f, n)| (f, n))?,
        };
        Some(KnownSchema {
            form: form.clone(),
            nesting: *nesting,
        })
    }

    /// The schema text parsed last: the likeliest next one.
    pub(crate) fn last_text(&self) -> Option<&str> {
        self.last.as_ref().map(|(text, _, _)| &**text)
    }

    /// [`SchemaCache::get`], looking `text` (the schema's JSON text, which
    /// must parse to `schema`) up first.
    pub fn get_with_text(
        &mut self,
        schema: &Value,
        text: Option<&str>,
    ) -> Result<Arc<FormSchema>, ElicitError> {
        let Some(text) = text.filter(|_| !self.forget) else {
            return self.get(schema);
        };
        if let Some((hit, _)) = self.by_text.get(text) {
            return Ok(hit.clone());
        }
        let parsed = self.get(schema)?;
        if self.by_text.len() >= Self::CAPACITY {
            self.by_text.clear();
        }
        let nesting = nesting(schema);
        self.by_text.insert(text.into(), (parsed.clone(), nesting));
        self.last = Some((text.into(), parsed.clone(), nesting));
        Ok(parsed)
    }

    /// The parsed form of `schema`, parsed once for equal schemas.
    pub fn get(&mut self, schema: &Value) -> Result<Arc<FormSchema>, ElicitError> {
        if self.forget {
            return FormSchema::parse(schema).map(Arc::new);
        }
        let key = {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            hash_value(schema, &mut h);
            std::hash::Hasher::finish(&h)
        };
        if let Some(hit) = self
            .map
            .get(&key)
            .and_then(|bucket| bucket.iter().find(|(v, _)| v == schema))
        {
            return Ok(hit.1.clone());
        }
        let parsed = Arc::new(FormSchema::parse(schema)?);
        if self.len >= Self::CAPACITY {
            self.map.clear();
            self.len = 0;
        }
        self.map
            .entry(key)
            .or_default()
            .push((schema.clone(), parsed.clone()));
        self.len += 1;
        Ok(parsed)
    }
}

/// Hashes a JSON tree in document order.
fn hash_value(v: &Value, h: &mut impl std::hash::Hasher) {
    use std::hash::Hash;
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        // Numbers keep their text (serde_json `arbitrary_precision`), and
        // two numbers are equal exactly when their texts are: hash the text,
        // borrowed, with no parsing and no allocation.
        Value::Number(n) => (2u8, n.as_str()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            a.iter().for_each(|x| hash_value(x, h));
        }
        Value::Object(o) => {
            (5u8, o.len()).hash(h);
            for (k, x) in o {
                k.hash(h);
                hash_value(x, h);
            }
        }
    }
}

/// Exit statuses for `-e/--exit-status`.
pub const EXIT_DECLINED: i32 = 3;
/// The exit status when an elicitation was cancelled.
pub const EXIT_CANCELLED: i32 = 4;

/// The `--exit-status` code for a set of results: cancel outranks decline.
pub fn outcome_exit_code<'a>(results: impl IntoIterator<Item = &'a ElicitResult>) -> i32 {
    let mut code = 0;
    for r in results {
        match r.action {
            Action::Cancel => return EXIT_CANCELLED,
            Action::Decline => code = EXIT_DECLINED,
            Action::Accept => {}
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_use_cache_parses_and_keeps_nothing() {
        let text = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        let mut cache = SchemaCache::single_use();
        let first = cache.get_with_text(&value, Some(text)).unwrap();
        let again = cache.get_with_text(&value, Some(text)).unwrap();
        assert_eq!(first.fields[0].name, "a");
        assert!(!Arc::ptr_eq(&first, &again));
        assert!(cache.known(text).is_none() && cache.last_text().is_none());
        assert!(cache.map.is_empty() && cache.by_text.is_empty());
    }

    #[test]
    fn the_cache_finds_a_schema_by_its_text_or_its_tree() {
        let text = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
        let spaced = r#"{ "type": "object", "properties": { "a": { "type": "string" } } }"#;
        let other = r#"{"type":"object","properties":{"b":{"type":"integer"}}}"#;
        let value = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        let mut cache = SchemaCache::default();
        let first = cache.get_with_text(&value(text), Some(text)).unwrap();
        let again = cache.get_with_text(&value(text), Some(text)).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // Other text, same tree: found through the tree.
        let spaced_hit = cache.get_with_text(&value(spaced), Some(spaced)).unwrap();
        assert!(Arc::ptr_eq(&first, &spaced_hit));
        let b = cache.get_with_text(&value(other), Some(other)).unwrap();
        assert_eq!(b.fields[0].name, "b");
        assert_eq!(cache.get(&value(text)).unwrap().fields[0].name, "a");
    }
}
