//! `--strict`: the lint rules on every elicitation a live server sends,
//! and the session rules no file can show (a mode the client did not
//! declare, no capability at all, a URL elicitation whose completion never
//! came, an `input_required` loop that changes its question, elicitations
//! sent while another is unanswered). Findings go to stderr as they happen
//! and into a summary at the end; answering goes on as usual.
//!
//! One [`Strict`] is shared (it is a handle) by whoever sees the server's
//! messages: the session client, the handler, the proxy's threads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::mcp::modes::ElicitModes;
use elicit_core::elicitation::input;
use elicit_core::elicitation::protocol::results::missing_members;
use elicit_core::elicitation::protocol::wire;
use elicit_core::elicitation::protocol::{
    Action, ElicitResult, ElicitationParams, Mode, ELICITATION_METHOD,
};
use elicit_core::lint::render::Counts;
use elicit_core::lint::{lint_text, pointer, rule, Finding, Levels, Revision, Severity};
use elicit_core::text::sanitize::sanitize_line;

/// The exit status of `call --strict` (and `proxy --strict`) when an error
/// finding was seen.
pub const EXIT_STRICT: i32 = 5;

#[derive(Debug)]
struct State {
    levels: Levels,
    revision: Revision,
    modes: ElicitModes,
    /// Print findings on stderr as they happen.
    live: bool,
    findings: Vec<Finding>,
    elicitations: usize,
    /// Accepted URL elicitations awaiting their completion notification:
    /// elicitationId → where it was asked.
    awaiting: Vec<(String, String)>,
    /// The question last asked under each `inputRequests` key, by the
    /// request it belongs to.
    asked: HashMap<(String, String), Value>,
}

/// The strict checker of one session (a cheap handle: clones share it).
#[derive(Debug, Clone)]
pub struct Strict(Arc<Mutex<State>>);

impl Strict {
    /// Checks at `levels`, for a client declaring `modes` on `revision`; `live` prints each finding on stderr as it happens.
    pub fn new(levels: Levels, modes: ElicitModes, revision: Revision, live: bool) -> Strict {
        Strict(Arc::new(Mutex::new(State {
            levels,
            revision,
            modes,
            live,
            findings: Vec::new(),
            elicitations: 0,
            awaiting: Vec::new(),
            asked: HashMap::new(),
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The modes the server was told, when they change (a proxy adds
    /// elicit's to the client's own).
    pub fn set_modes(&self, modes: ElicitModes) {
        self.state().modes = modes;
    }

    /// The revision the session speaks, once it is known.
    pub fn set_revision(&self, revision: Revision) {
        self.state().revision = revision;
    }

    /// Looks at one message from the server: an `elicitation/create`
    /// request, an `input_required` result, a -32042 error (linted, and
    /// checked against the declared modes), or a completion notification.
    /// `request` names the client request a reply answers (its id), so
    /// rounds of one request are compared.
    pub fn observe(&self, msg: &Value, request: Option<&str>) {
        let method = msg.get("method").and_then(Value::as_str);
        if method == Some(wire::ELICITATION_COMPLETE) {
            if let Some(id) = msg
                .get("params")
                .and_then(|p| p.get("elicitationId"))
                .and_then(Value::as_str)
            {
                self.state().awaiting.retain(|(e, _)| e != id);
            }
            return;
        }
        if !asks_the_client(msg, method) {
            return;
        }
        let text = msg.to_string();
        let mut st = self.state();
        let revision = st.revision;
        let Ok(lint) = lint_text(&text, Some(revision)) else {
            return;
        };
        let place = message_place(msg, method);
        st.elicitations += lint.elicitations.len();
        let mut found: Vec<Finding> = lint
            .findings
            .into_iter()
            .map(|mut f| {
                f.elicitation = Some(match &f.elicitation {
                    Some(e) if e != "the elicitation" => format!("{place}, {e}"),
                    _ => place.clone(),
                });
                f
            })
            .collect();
        // The session rules over what the message asks.
        if let Ok(doc) = input::read_document(&text) {
            let modes = st.modes;
            for (i, entry) in doc.entries.iter().enumerate() {
                let at = entry_pointer(msg, &doc.shape, entry.key.as_deref(), i);
                let mode = entry.params.mode();
                let session = |id: &str, pointer: String, message: String| {
                    session_finding(id, pointer, message, revision, &place)
                };
                if !modes.any() {
                    found.extend(session(
                        "session-no-capability",
                        at.clone(),
                        format!(
                            "a {} elicitation, but the client declared no elicitation capability",
                            mode.as_str()
                        ),
                    ));
                } else if !modes.declares(Some(mode.as_str())) {
                    let pointer = match mode {
                        Mode::Url => format!("{at}/mode"),
                        Mode::Form => at.clone(),
                    };
                    found.extend(session(
                        "session-mode-undeclared",
                        pointer,
                        format!(
                            "a {} elicitation, but the client declared only {}",
                            mode.as_str(),
                            modes.describe()
                        ),
                    ));
                }
                if let (Some(key), input::Shape::InputRequired { .. }) = (&entry.key, &doc.shape) {
                    let params = at_pointer(msg, &at).cloned().unwrap_or(Value::Null);
                    let slot = (request.unwrap_or("").to_string(), key.clone());
                    if let Some(before) = st.asked.get(&slot) {
                        if before != &params {
                            found.extend(session(
                                "session-question-changed",
                                at.clone(),
                                format!("inputRequests[{key:?}] asks a different question than in the previous round"),
                            ));
                        }
                    }
                    st.asked.insert(slot, params);
                }
            }
        }
        st.add(found);
    }

    /// Looks at the reply to one of elicit's requests (`method`), sent in
    /// 2026-07-28 when `stateless`: a result lacking what the revision
    /// requires of every result (`resultType`, a list's caching hints).
    pub(crate) fn observe_reply(&self, method: &str, stateless: bool, msg: &Value) {
        let Some(result) = msg.get("result") else {
            return;
        };
        // Only 2026-07-28 (the only revision with `server/discover`) asks
        // anything of every result; the session's revision may not be
        // known yet when a handshake is answered.
        if !stateless && method != wire::SERVER_DISCOVER {
            return;
        }
        let revision = Revision::V2026_07_28;
        let missing = missing_members(method, revision, result);
        if missing.is_empty() {
            return;
        }
        let id = msg.get("id").unwrap_or(&Value::Null);
        let place = format!("the reply to {} (id {id})", sanitize_line(method));
        let found = session_finding(
            "session-result-incomplete",
            "/result".into(),
            format!(
                "the {method} result lacks {} (or holds a value of the wrong kind)",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            revision,
            &place,
        );
        self.state().add(found.into_iter().collect());
    }

    /// Looks at a server's reply to a client's `tools/list` that a proxy
    /// relays, in the revision the session speaks.
    pub fn observe_listed(&self, msg: &Value) {
        let stateless = self.state().revision == Revision::V2026_07_28;
        self.observe_reply(wire::TOOLS_LIST, stateless, msg);
    }

    /// An elicitation was answered: an accepted URL elicitation with an
    /// `elicitationId` now awaits its completion notification (2025-11-25).
    pub fn answered(&self, params: &ElicitationParams, result: &ElicitResult) {
        if params.mode() != Mode::Url || result.action != Action::Accept {
            return;
        }
        if let Some(id) = params.elicitation_id.as_deref().filter(|i| !i.is_empty()) {
            let place = format!("the URL elicitation {:?}", sanitize_line(id));
            self.state().awaiting.push((id.to_string(), place));
        }
    }

    /// The server sent an elicitation while `earlier` were unanswered.
    pub fn concurrent(&self, msg: &Value, earlier: usize) {
        let mut st = self.state();
        let place = match msg.get("id") {
            Some(id) => format!("elicitation/create (id {id})"),
            None => wire::ELICITATION_METHOD.into(),
        };
        let found = session_finding(
            "session-concurrent-elicitations",
            String::new(),
            format!(
                "sent while {earlier} earlier elicitation{} still unanswered",
                if earlier == 1 { " was" } else { "s were" }
            ),
            st.revision,
            &place,
        );
        st.add(found.into_iter().collect());
    }

    /// Ends the session: a URL elicitation still awaiting its completion is
    /// reported, the summary goes to stderr, and the counts come back.
    pub fn finish(&self) -> Counts {
        self.end_session();
        let st = self.state();
        let counts = Counts::of(&st.findings);
        eprintln!(
            "elicit: strict: {counts} in {} elicitation{} (MCP {})",
            st.elicitations,
            if st.elicitations == 1 { "" } else { "s" },
            st.revision
        );
        counts
    }

    /// Whether an accepted URL elicitation still awaits its completion.
    pub(crate) fn awaits_completion(&self) -> bool {
        !self.state().awaiting.is_empty()
    }

    /// The session ended: the rules that look at a whole session (a URL
    /// elicitation still awaiting its completion) have their say. Every
    /// caller (`call`, `proxy`, `test`) ends a session through here, so
    /// each reports the same findings.
    pub fn end_session(&self) {
        let mut st = self.state();
        let awaiting = std::mem::take(&mut st.awaiting);
        let revision = st.revision;
        let mut found = Vec::new();
        for (id, place) in awaiting {
            found.extend(session_finding(
                "session-url-completion-missing",
                String::new(),
                format!(
                    "no notifications/elicitation/complete for elicitationId {:?} came before the session ended",
                    id
                ),
                revision,
                &place,
            ));
        }
        st.add(found);
    }

    /// The summary line `finish` prints, without printing it.
    pub fn summary(&self) -> String {
        let st = self.state();
        format!(
            "strict: {} in {} elicitation{} (MCP {})",
            Counts::of(&st.findings),
            st.elicitations,
            if st.elicitations == 1 { "" } else { "s" },
            st.revision
        )
    }

    /// Every finding so far (after `--allow`/`--deny`).
    pub fn findings(&self) -> Vec<Finding> {
        self.state().findings.clone()
    }

    /// Whether an error finding was seen.
    pub fn has_errors(&self) -> bool {
        self.state()
            .findings
            .iter()
            .any(|f| f.severity == Severity::Error)
    }
}

impl State {
    fn add(&mut self, found: Vec<Finding>) {
        for f in self.levels.apply(found) {
            if self.live {
                eprintln!("elicit: strict: {}", finding_line(&f));
            }
            self.findings.push(f);
        }
    }
}

/// One finding on one line, sanitised: `error[rule] where /pointer: message (citation)`.
pub fn finding_line(f: &Finding) -> String {
    let place = f.elicitation.as_deref().unwrap_or("the session");
    let pointer = if f.pointer.is_empty() {
        String::new()
    } else {
        format!(" {}", f.pointer)
    };
    sanitize_line(&format!(
        "{}[{}] {place}{pointer}: {} ({})",
        f.severity.as_str(),
        f.rule.id,
        f.message,
        f.citation()
    ))
}

fn session_finding(
    id: &str,
    pointer: String,
    message: String,
    revision: Revision,
    place: &str,
) -> Option<Finding> {
    let rule = rule(id).unwrap_or_else(|| panic!("no lint rule {id}"));
    rule.applies_to(revision).then(|| Finding {
        rule,
        severity: rule.severity,
        pointer,
        message,
        revision,
        elicitation: Some(place.to_string()),
    })
}

/// Where entry `i` of a message's document sits in the message.
fn entry_pointer(msg: &Value, shape: &input::Shape, key: Option<&str>, i: usize) -> String {
    match shape {
        input::Shape::InputRequired { .. } => {
            let base = if msg.get("result").is_some() {
                "/result"
            } else {
                ""
            };
            pointer(base, &["inputRequests", key.unwrap_or(""), "params"])
        }
        input::Shape::UrlElicitationRequired => {
            let base = if msg.get("error").is_some() {
                "/error"
            } else {
                ""
            };
            format!("{base}/data/elicitations/{i}")
        }
        input::Shape::BareParams => String::new(),
        _ => "/params".into(),
    }
}

fn at_pointer<'a>(msg: &'a Value, pointer: &str) -> Option<&'a Value> {
    msg.pointer(pointer)
}

/// Whether a server message asks the client something: an
/// `elicitation/create` request (not a notification), an `input_required`
/// result, or a -32042 error.
fn asks_the_client(msg: &Value, method: Option<&str>) -> bool {
    match method {
        Some(m) => m == ELICITATION_METHOD && msg.get("id").is_some_and(|i| !i.is_null()),
        None => {
            let result = msg.get("result");
            result
                .and_then(|r| r.get("resultType"))
                .and_then(Value::as_str)
                == Some("input_required")
                || result.and_then(|r| r.get("inputRequests")).is_some()
                || msg
                    .get("error")
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_i64)
                    == Some(elicit_core::elicitation::protocol::URL_ELICITATION_REQUIRED)
        }
    }
}

/// Where in the session a message stands, for a finding's reader: the
/// request and its id, or the reply to a request.
fn message_place(msg: &Value, method: Option<&str>) -> String {
    match (method, msg.get("id")) {
        (Some(m), Some(id)) => format!("{m} (id {id})"),
        (_, Some(id)) => format!("the reply to request {id}"),
        _ => "a server message".to_string(),
    }
}
