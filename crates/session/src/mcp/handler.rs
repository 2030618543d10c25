//! Answers the requests a server sends the client during a session. Only
//! `elicitation/create` is resolved (by the same pipeline as a single
//! request: scripted answers, then the person); `ping` is answered; anything
//! else gets a JSON-RPC error, never silence.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::modes::ElicitModes;
use super::strict::Strict;
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::protocol::wire;
use elicit_core::elicitation::protocol::{ElicitResult, ElicitationParams, ELICITATION_METHOD};
use elicit_core::elicitation::resolve::{self, Elicitation, Resolver, SchemaCache};
use elicit_core::error::{rpc_code, ElicitError, ServerError};

/// Why a server request got no result.
#[derive(Debug)]
pub enum HandlerError {
    /// Answer the server with this JSON-RPC error and go on.
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The message, as shown.
        message: String,
    },
    /// Stop the session: nobody can answer (no terminal and no scripted
    /// answer, answers that fail validation, a broken terminal).
    Fatal(ElicitError),
}

/// Watches the elicitations of a session, and may answer them: recording a
/// cassette (`--record`), replaying one (`elicit test`). Everything it
/// does lives with it; the handler only calls it.
pub trait ElicitObserver {
    /// Called for each elicitation before scripted answers or the person:
    /// `Some` answers it (an `Err` stops the session). `request` is the
    /// params as the server sent them; `key` the `inputRequests` key
    /// (2026-07-28).
    fn answer(
        &mut self,
        _request: &Value,
        _key: Option<&str>,
        _elicitation: &Elicitation,
    ) -> Option<Result<ElicitResult, ElicitError>> {
        None
    }

    /// The result sent for `request`, however it was settled.
    fn answered(&mut self, request: &Value, key: Option<&str>, result: &ElicitResult);
}

/// Resolves the elicitations of a live session.
pub struct ElicitHandler<'a> {
    /// The scripted answers, tried first.
    pub scripted: &'a ScriptedAnswers,
    /// Who answers what they leave open.
    pub person: &'a mut dyn Resolver,
    /// Parsed schemas, by their text.
    pub cache: SchemaCache,
    /// The server's name from `serverInfo`, for the prompt header.
    pub server_name: Option<String>,
    /// The tool being called, when the session knows which call an
    /// elicitation belongs to (for answer rules).
    pub tool_name: Option<String>,
    /// Every result sent, in order (for tests and `--verbose`).
    pub answered: Vec<ElicitResult>,
    /// The fields of every form asked in this session: a scripted answer
    /// is for whichever form has its field (a tool may ask `a`, then `b`),
    /// and one that no form had is reported by [`Self::unused_answers`].
    pub seen_fields: HashSet<String>,
    /// How many times the server has asked for something during the
    /// session (a request of its own other than `ping`, an `input_required`
    /// round, an elicitation in a -32042 error): a call that failed with
    /// this unchanged failed before anything could be asked of elicit.
    pub asked: usize,
    /// The modes elicit declares (`--modes`): an elicitation of another
    /// mode is refused with -32602, as the spec requires of a client.
    pub modes: ElicitModes,
    /// `--strict`: every server message is checked as it comes.
    pub strict: Option<Strict>,
    /// Time spent resolving elicitations (a person answering; scripted
    /// answers take next to none): the only time credited back to a
    /// request's `--timeout`. Automatic replies (`ping`, errors) add none.
    pub answering: Duration,
    /// Told of (and offered) every elicitation, when set.
    pub observer: Option<&'a mut dyn ElicitObserver>,
}

impl<'a> ElicitHandler<'a> {
    /// A handler answering with `scripted`, then `person`.
    pub fn new(scripted: &'a ScriptedAnswers, person: &'a mut dyn Resolver) -> Self {
        ElicitHandler {
            scripted,
            person,
            cache: SchemaCache::default(),
            server_name: None,
            tool_name: None,
            answered: Vec::new(),
            seen_fields: HashSet::new(),
            asked: 0,
            answering: Duration::ZERO,
            modes: ElicitModes::default(),
            strict: None,
            observer: None,
        }
    }

    /// Shows a message from the server to `--strict` (when on); `request`
    /// names the client request a reply answers (the same across its
    /// input_required retries).
    pub(crate) fn observe(&self, msg: &Value, request: Option<&str>) {
        if let Some(strict) = &self.strict {
            strict.observe(msg, request);
        }
    }

    /// Shows `--strict` (when on) the reply to elicit's request `method`,
    /// sent in 2026-07-28 when `stateless`.
    pub(crate) fn observe_reply(&self, method: &str, stateless: bool, msg: &Value) {
        if let Some(strict) = &self.strict {
            strict.observe_reply(method, stateless, msg);
        }
    }

    /// Handles one server-to-client request.
    pub fn handle(&mut self, method: &str, params: Option<&Value>) -> Result<Value, HandlerError> {
        if method != wire::PING {
            self.asked += 1;
        }
        match method {
            ELICITATION_METHOD => {
                let params = params.cloned().unwrap_or(Value::Null);
                self.elicit(&params, None).map(|r| r.to_value())
            }
            wire::PING => Ok(json!({})),
            other => Err(HandlerError::Rpc {
                code: rpc_code::METHOD_NOT_FOUND,
                message: format!(
                    "elicit does not handle {other:?}: it only answers elicitation/create"
                ),
            }),
        }
    }

    /// Resolves one elicitation's params. Bad params are the server's fault
    /// (a -32602 reply); everything else stops the session.
    pub fn elicit(
        &mut self,
        params: &Value,
        position: Option<(usize, usize)>,
    ) -> Result<ElicitResult, HandlerError> {
        self.asked += 1;
        let parsed = ElicitationParams::from_value(params).map_err(rpc_or_fatal)?;
        self.elicit_params(parsed, position, params, None)
    }

    fn elicit_params(
        &mut self,
        params: ElicitationParams,
        position: Option<(usize, usize)>,
        raw: &Value,
        key: Option<&str>,
    ) -> Result<ElicitResult, HandlerError> {
        let mode = params.mode();
        if !self.modes.declares(Some(mode.as_str())) {
            return Err(HandlerError::Rpc {
                code: rpc_code::INVALID_PARAMS,
                message: if self.modes.any() {
                    format!(
                        "elicitation mode {:?} not supported by this client (it declared {})",
                        mode.as_str(),
                        self.modes.describe()
                    )
                } else {
                    "this client declared no elicitation capability".into()
                },
            });
        }
        let asked = params.clone();
        let mut e = Elicitation::prepare(params, &mut self.cache).map_err(rpc_or_fatal)?;
        // The Request whole, schema and all: a person who gets the question
        // handed on (a parked call's `respond`) reads it as the server sent it.
        if let (Some(schema), Some(_)) = (&asked.requested_schema, &e.form) {
            let data = e.request.data.get_or_insert_with(Default::default);
            data.insert("schema".into(), schema.clone());
        }
        e.server = self.server_name.clone();
        e.tool = self.tool_name.clone();
        e.position = position;
        // A status line (`elicit call`'s) goes before any warning or prompt.
        elicit_platform::handlers::hide_status();
        if let Some(form) = &e.form {
            for w in form.warnings_once() {
                eprintln!(
                    "elicit: warning: {}",
                    elicit_core::text::sanitize::sanitize_line(w)
                );
            }
            self.seen_fields
                .extend(form.fields.iter().map(|f| f.name.clone()));
        }
        // Not strict: a value for a field this form lacks may be for a later
        // form of the session; see `unused_answers`.
        let offered = self
            .observer
            .as_deref_mut()
            .and_then(|o| o.answer(raw, key, &e));
        let started = Instant::now();
        let result = match offered {
            Some(answer) => answer,
            None => resolve::resolve(&e, self.scripted, false, self.person),
        };
        self.answering += started.elapsed();
        let result = result.map_err(HandlerError::Fatal)?;
        if let Some(strict) = &self.strict {
            strict.answered(&asked, &result);
        }
        if let Some(o) = self.observer.as_deref_mut() {
            o.answered(raw, key, &result);
        }
        self.answered.push(result.clone());
        Ok(result)
    }

    /// Resolves every elicitation of an `input_required` result, keyed as
    /// the server keyed them, for the retry's `inputResponses`.
    pub fn input_responses(&mut self, result: &Value) -> Result<Map<String, Value>, ElicitError> {
        self.asked += 1;
        let doc = elicit_core::elicitation::input::read_input_required(result)?;
        if !doc.skipped.is_empty() {
            return Err(ElicitError::Server(ServerError::CannotGive {
                skipped: doc.skipped,
            }));
        }
        // No reply can refuse one entry in 2026-07-28: a mode elicit did
        // not declare is the server's failure, as a missing capability is.
        if let Some(entry) = doc
            .entries
            .iter()
            .find(|e| !self.modes.declares(Some(e.params.mode().as_str())))
        {
            return Err(ElicitError::Server(ServerError::UndeclaredMode {
                mode: entry.params.mode().as_str(),
                declared: self.modes.describe().to_string(),
            }));
        }
        let total = doc.entries.len();
        let mut out = Map::new();
        for (i, entry) in doc.entries.iter().enumerate() {
            let position = (total > 1).then_some((i + 1, total));
            let key = entry.key.as_deref();
            let raw = key
                .and_then(|k| result.get("inputRequests")?.get(k)?.get("params"))
                .unwrap_or(&Value::Null);
            let r = self
                .elicit_params(entry.params.clone(), position, raw, key)
                .map_err(|e| match e {
                    HandlerError::Fatal(e) => e,
                    HandlerError::Rpc { message, .. } => ElicitError::InvalidParams { message },
                })?;
            out.insert(entry.key.clone().unwrap_or_default(), r.to_value());
        }
        Ok(out)
    }
}

impl ElicitHandler<'_> {
    /// Scripted field answers that no form of the session had (so far):
    /// a typo, or a form that never came. Reported as a warning at the end.
    pub fn unused_answers(&self) -> Vec<String> {
        unused_answers(self.scripted, &self.seen_fields)
    }
}

/// The scripted field names not in `seen`, in the order given.
pub fn unused_answers(scripted: &ScriptedAnswers, seen: &HashSet<String>) -> Vec<String> {
    scripted
        .field_names()
        .filter(|n| !seen.contains(*n))
        .map(str::to_string)
        .collect()
}

/// The warning for one unused scripted answer.
pub fn unused_answer_warning(name: &str) -> String {
    format!(
        "unused answer {}: no form in this session had that field",
        elicit_core::text::sanitize::sanitize_line(name)
    )
}

fn rpc_or_fatal(e: ElicitError) -> HandlerError {
    match e.rpc_code() {
        Some(code) => HandlerError::Rpc {
            code,
            message: e.to_string(),
        },
        None => HandlerError::Fatal(e),
    }
}
