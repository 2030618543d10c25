//! What the relay core does with a server message: the elicitations and
//! `input_required` results it withholds and settles (within the bounds on
//! what may wait for a person), the replies to its retries, and what it
//! relays as it came.

use serde_json::{json, Value};

use super::envelope::{Message, RequestId};
use super::questions::{is_resolvable, weigh};
use super::state::{Job, State, Taken, Waiting};
use super::{notes, Relay, Sides};
use elicit_core::elicitation::protocol::wire;
use elicit_core::elicitation::protocol::ELICITATION_METHOD;
use elicit_core::lint::Revision;

/// The most elicitations a server may have waiting for an answer at once:
/// each is held until a person answers, so a server that floods them is
/// refused past this rather than growing elicit without bound.
pub(crate) const MAX_PENDING_ELICITATIONS: usize = 64;
/// The most memory the elicitations waiting for an answer may hold at once
/// (their parsed params, weighed by `weigh`): a server cannot hold 64
/// elicitations of 64 MiB each. One over it alone is refused too.
pub const MAX_PENDING_ELICITATION_BYTES: usize = 8 << 20;

impl<S: Sides> Relay<S> {
    /// Whether a server message may be the reply to a request the relay
    /// watches (by its id's JSON text in the line): the stdio side's cheap
    /// test before parsing a line.
    pub(crate) fn awaits_reply_in(&self, bytes: &[u8]) -> bool {
        let st = self.lock();
        if st.tracked.is_empty()
            && st.info_ids.is_empty()
            && st.list_ids.is_empty()
            && st.runs.is_empty()
            && st.progress.is_empty()
        {
            return false;
        }
        // The server's progress for a request kept alive: its value is
        // weighed against elicit's keep-alives.
        if !st.progress.is_empty()
            && memchr::memmem::find(bytes, wire::PROGRESS.as_bytes()).is_some()
        {
            return true;
        }
        // A run's task news before the task is named: told by its method.
        if st.runs.values().any(|r| r.task_id.is_none())
            && memchr::memmem::find(bytes, wire::TASK_STATUS.as_bytes()).is_some()
        {
            return true;
        }
        // A reply to a tracked request holds its id's JSON text, exactly as
        // written when the line has no escapes.
        let holds = |text: &str| memchr::memmem::find(bytes, text.as_bytes()).is_some();
        memchr::memchr(b'\\', bytes).is_some()
            || st
                .tracked
                .keys()
                .chain(st.info_ids.iter())
                .chain(st.list_ids.iter())
                // A request kept alive: its reply ends the keep-alives.
                .chain(st.progress.keys())
                // A run's call, until the server answers it with its task.
                .chain(
                    st.runs
                        .iter()
                        .filter(|(_, r)| r.task_id.is_none())
                        .map(|(id, _)| id),
                )
                .any(|id| id.exact_text().is_none_or(|text| holds(&text)))
            // Then the run's task, named in the server's status
            // notifications (withheld from a client that made no task).
            || st
                .runs
                .values()
                .filter_map(|r| r.task_id.as_deref())
                .any(holds)
    }

    /// A server line longer than [`MAX_PENDING_ELICITATION_BYTES`] that is
    /// an elicitation elicit would answer: refused from its head alone,
    /// before it is parsed (its `params` are skipped, not built, but for
    /// `mode`), since it could never wait within the bound. Parsing it first
    /// would hold the line and its parsed tree at once (some 200 MiB for a
    /// 64 MiB line). Returns whether it was refused; any other line (a
    /// reply, a notification, one that is not JSON) is left to the usual
    /// path.
    pub(crate) fn refuse_oversized_elicitation(&self, bytes: &[u8]) -> bool {
        if bytes.len() <= MAX_PENDING_ELICITATION_BYTES {
            return false;
        }
        #[derive(serde::Deserialize)]
        struct Head {
            method: Option<String>,
            id: Option<Value>,
            params: Option<HeadParams>,
        }
        #[derive(serde::Deserialize)]
        struct HeadParams {
            mode: Option<String>,
        }
        let Ok(head) = serde_json::from_slice::<Head>(bytes) else {
            return false;
        };
        let (Some(ELICITATION_METHOD), Some(id)) = (
            head.method.as_deref(),
            head.id.as_ref().and_then(RequestId::from_value),
        ) else {
            return false;
        };
        let mode = head.params.and_then(|p| p.mode);
        if !self.handles(mode.as_deref()) {
            return false;
        }
        let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": wire::TOO_MANY_IN_FLIGHT,
            "message": format!("elicit refused this elicitation: it is {} bytes, more than the {} MiB the server's elicitations waiting for an answer may hold", bytes.len(), MAX_PENDING_ELICITATION_BYTES >> 20),
        }});
        self.note(&notes::answered(&id, mode.as_deref(), &refusal));
        self.side.to_server(&refusal, None);
        true
    }

    /// Whether a task status notification is about a task elicit runs for
    /// a client that runs none: one it named, or, while a run's task is
    /// not named yet (a server may send its news before the reply that
    /// names it), any task of a client that never asked for one.
    fn runs_task(&self, msg: &Value) -> bool {
        let Some(task) = msg.pointer("/params/taskId").and_then(Value::as_str) else {
            return false;
        };
        let st = self.lock();
        st.runs.values().any(|r| match &r.task_id {
            Some(id) => id == task,
            None => !st.client_makes_tasks,
        })
    }

    /// Decides what to do with a parsed server message: withhold it for the
    /// resolver (queued here), rewrite it, or relay it. Its envelope is read
    /// here, once ([`Message`]); what is not JSON-RPC goes on as it came.
    pub(crate) fn server_message(&self, msg: &Value) -> Taken {
        self.server_envelope(msg, &Message::parse(msg))
    }

    /// [`Relay::server_message`] for a message whose envelope (`message`)
    /// its side has read already.
    pub(crate) fn server_envelope(&self, msg: &Value, message: &Message<'_>) -> Taken {
        match message {
            Message::Request { id, method, params } => {
                self.server_request_or_notification(msg, method, Some(id), *params)
            }
            Message::Notification { method, params } => {
                self.server_request_or_notification(msg, method, None, *params)
            }
            Message::Result { id, .. } | Message::Error { id: Some(id), .. } => {
                if let Some(taken) = self.run_reply(msg, message, id) {
                    return taken;
                }
                self.server_reply(msg, message, id)
            }
            // An error to a request its sender could not read: nobody's.
            Message::Error { id: None, .. } => Taken::Relay,
            Message::Invalid(_) => {
                // `--strict` hears of what the server sent, garbage too.
                self.observe(msg, None);
                Taken::Relay
            }
        }
    }

    /// A request (`id`) or a notification of the server's: withheld when
    /// elicit answers it, relayed otherwise.
    fn server_request_or_notification(
        &self,
        msg: &Value,
        method: &str,
        id: Option<&RequestId>,
        params: Option<&Value>,
    ) -> Taken {
        self.observe(msg, None);
        if method == wire::ELICITATION_COMPLETE && self.handles(Some("url")) {
            // The client never saw a URL elicitation: elicit answered
            // them all (and a client that declared none must get none).
            self.note("withheld the server's notifications/elicitation/complete: elicit answered the URL elicitations");
            return Taken::Withheld;
        }
        if method == wire::PROGRESS {
            if let Some(taken) = self.server_progress(msg) {
                return taken;
            }
        }
        if method == wire::TASK_STATUS && self.runs_task(msg) {
            // The client made no task: news of the one elicit runs for
            // it would name a task it never heard of.
            return Taken::Withheld;
        }
        if let (ELICITATION_METHOD, Some(id)) = (method, id) {
            let params = params.cloned().unwrap_or(Value::Null);
            let mode = params.get("mode").and_then(Value::as_str);
            if self.handles(mode) {
                return self.take_server_elicitation(msg, id, params);
            }
            self.note(&notes::passed_through(id, mode));
        }
        Taken::Relay
    }

    /// An elicitation of the server's that elicit answers: queued for the
    /// resolver, or refused at once when too many (or too much) already
    /// wait, or its id is taken.
    fn take_server_elicitation(&self, msg: &Value, id: &RequestId, params: Value) -> Taken {
        let mode = params.get("mode").and_then(Value::as_str);
        let weight = weigh(&params);
        let earlier = {
            let mut st = self.lock();
            let earlier = st.pending.len();
            let waiting = Waiting::Elicitation(id.clone());
            let refused = if st.pending.contains_key(&waiting) {
                Some((wire::INVALID_REQUEST, format!("elicit refused this elicitation: the server's elicitation with id {} still waits for an answer", elicit_core::text::truncate(&id.to_string(), 64))))
            } else if earlier >= MAX_PENDING_ELICITATIONS {
                Some((wire::TOO_MANY_IN_FLIGHT, format!("elicit refused this elicitation: {MAX_PENDING_ELICITATIONS} of the server's elicitations already wait for an answer")))
            } else if st.pending_bytes.saturating_add(weight) > MAX_PENDING_ELICITATION_BYTES {
                Some((wire::TOO_MANY_IN_FLIGHT, format!("elicit refused this elicitation: the server's elicitations waiting for an answer would hold more than {} MiB", MAX_PENDING_ELICITATION_BYTES >> 20)))
            } else {
                None
            };
            if let Some((code, message)) = refused {
                drop(st);
                let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": code,
                    "message": message,
                }});
                self.note(&notes::answered(id, mode, &refusal));
                self.side.to_server(&refusal, None);
                return Taken::Withheld;
            }
            st.pending.insert(waiting, weight);
            st.pending_bytes += weight;
            earlier
        };
        if let (Some(strict), true) = (&self.options.strict, earlier > 0) {
            strict.concurrent(msg, earlier);
        }
        self.queue(Job::ServerRequest {
            id: id.clone(),
            params,
        });
        Taken::Withheld
    }

    /// A reply of the server's (`reply`, to `id`) that no run of elicit's
    /// took: to a list, an `initialize`, a task's update or poll, or one of
    /// the client's requests.
    fn server_reply(&self, msg: &Value, reply: &Message<'_>, id: &RequestId) -> Taken {
        let mut st = self.lock();
        if st.list_ids.remove(id) {
            if let Some(strict) = &self.options.strict {
                strict.observe_listed(msg);
            }
            if let Some(tools) = reply.result().and_then(|r| r.get("tools")) {
                super::runs::listed(&mut st.task_only, tools);
            }
        }
        if st.info_ids.remove(id) {
            self.learn_server_info(&mut st, reply.result());
        }
        if st.task_updates.remove(id) {
            drop(st);
            self.note(&notes::task_updated(id, reply.error()));
            return Taken::Withheld;
        }
        if let Some((task_id, meta)) = st.task_gets.remove(id) {
            drop(st);
            return self.task_polled(msg, reply, task_id, meta);
        }
        // A reply to one of our retries: it belongs to the client's request.
        let (client_id, ours) = match st.retries.remove(id) {
            Some(client_id) => (client_id, true),
            None if st.tracked.contains_key(id) => (id.clone(), false),
            None => {
                st.tool_calls.remove(id);
                // Forgotten before the reply is written: no keep-alive
                // can follow it.
                st.progress.remove(id);
                return Taken::Relay;
            }
        };
        drop(st);
        self.client_request_reply(msg, reply, client_id, ours)
    }

    /// What the reply to the `initialize` says of the server (its
    /// `result`): its name, its capabilities and the revision it speaks.
    fn learn_server_info(&self, st: &mut State, result: Option<&Value>) {
        if let Some(name) = result.and_then(notes::server_name) {
            st.server_name = Some(name);
        }
        if let Some(caps) = result.and_then(|r| r.get("capabilities")) {
            st.server_capabilities = Some(caps.clone());
        }
        let version = result
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
            .and_then(Revision::from_version);
        if let (Some(strict), Some(v)) = (&self.options.strict, version) {
            strict.set_revision(v);
        }
    }

    /// The reply to a client's request (`client_id`), or to elicit's retry of
    /// it (`ours`): an `input_required` round elicit answers is queued, any
    /// other reply goes to the client under the client's own id.
    fn client_request_reply(
        &self,
        msg: &Value,
        reply: &Message<'_>,
        client_id: RequestId,
        ours: bool,
    ) -> Taken {
        self.observe(msg, Some(&client_id));
        let result = reply.result();
        if let Some(result) = result.filter(|r| is_resolvable(r, |m| self.handles(m))) {
            // Counted with the server's elicitations, in number and bytes:
            // a round waits for the same person as they do.
            let waiting = Waiting::InputRequired(client_id.clone());
            if let Some(message) = self.admit(waiting, weigh(result)) {
                self.note(&message);
                self.untrack(&client_id);
                self.side
                    .to_client(&json!({"jsonrpc": "2.0", "id": client_id,
                    "error": {"code": wire::TOO_MANY_IN_FLIGHT, "message": message}}));
                return Taken::Withheld;
            }
            self.queue(Job::InputRequired {
                client_id,
                result: result.clone(),
            });
            return Taken::Withheld;
        }
        if result
            .and_then(|r| r.get("resultType"))
            .and_then(Value::as_str)
            == Some("input_required")
        {
            self.note(&notes::input_required_passed(
                &client_id,
                "it asks for more than elicitations elicit answers (a mode the client declared, or another kind of request)",
            ));
        }
        self.untrack(&client_id);
        if !ours {
            return Taken::Relay;
        }
        self.note(&notes::retry_done(&client_id));
        let mut reply = msg.clone();
        reply["id"] = client_id.to_value();
        Taken::Rewritten(reply)
    }

    /// A `tasks/get` reply (tasks extension) to the client: a task waiting
    /// for answers elicit gives is shown to the client as `working` (it
    /// polls on), and its new questions go to the resolver, answered with a
    /// `tasks/update` of elicit's own; questions taken on already are not
    /// asked again. A task that asks what elicit leaves to the client, or
    /// any other reply, goes to the client as it came.
    fn task_polled(&self, msg: &Value, reply: &Message<'_>, task_id: String, meta: Value) -> Taken {
        let Some(result) = reply.result() else {
            return Taken::Relay;
        };
        match elicit_session::mcp::tasks::status(result) {
            elicit_session::mcp::tasks::Status::InputRequired => {}
            elicit_session::mcp::tasks::Status::Completed
            | elicit_session::mcp::tasks::Status::Failed
            | elicit_session::mcp::tasks::Status::Cancelled => {
                self.lock().task_questions.remove(&task_id);
                return Taken::Relay;
            }
            _ => return Taken::Relay,
        }
        let taken = self
            .lock()
            .task_questions
            .get(&task_id)
            .cloned()
            .unwrap_or_default();
        let working = || {
            let mut reply = msg.clone();
            if let Some(r) = reply.get_mut("result").and_then(Value::as_object_mut) {
                r.insert("status".into(), json!("working"));
                r.remove("inputRequests");
            }
            Taken::Rewritten(reply)
        };
        let Some(questions) = elicit_session::mcp::tasks::new_questions(result, &taken) else {
            // All taken on: elicit is answering them, the client waits.
            return if taken.is_empty() {
                Taken::Relay
            } else {
                working()
            };
        };
        if !is_resolvable(&questions, |m| self.handles(m)) {
            self.note(&notes::task_passed(&task_id));
            return Taken::Relay;
        }
        let waiting = Waiting::TaskInput(task_id.clone());
        if let Some(message) = self.admit(waiting, weigh(&questions)) {
            self.note(&message);
            return Taken::Relay;
        }
        self.take_on(task_id, questions, meta, None);
        working()
    }

    /// A task's new questions, taken on: counted as asked (each is asked
    /// once over the task's life) and handed to the resolver, whose answers
    /// go back in a `tasks/update` carrying `meta`.
    pub(super) fn take_on(
        &self,
        task_id: String,
        questions: Value,
        meta: Value,
        tool: Option<String>,
    ) {
        if let Some(keys) = questions.get("inputRequests").and_then(Value::as_object) {
            self.lock()
                .task_questions
                .entry(task_id.clone())
                .or_default()
                .extend(keys.keys().cloned());
        }
        self.queue(Job::TaskInput {
            task_id,
            questions,
            meta,
            tool,
        });
    }

    /// Counts an `input_required` round or a task's questions as waiting
    /// (`waiting`, with `weight`), or says why it cannot wait: the bounds of
    /// [`MAX_PENDING_ELICITATIONS`] and [`MAX_PENDING_ELICITATION_BYTES`].
    pub(super) fn admit(&self, waiting: Waiting, weight: usize) -> Option<String> {
        let mut st = self.lock();
        if st.pending.len() >= MAX_PENDING_ELICITATIONS {
            return Some(format!("elicit refused this input_required result: {MAX_PENDING_ELICITATIONS} of the server's elicitations already wait for an answer"));
        }
        if st.pending_bytes.saturating_add(weight) > MAX_PENDING_ELICITATION_BYTES {
            return Some(format!("elicit refused this input_required result: the server's elicitations waiting for an answer would hold more than {} MiB", MAX_PENDING_ELICITATION_BYTES >> 20));
        }
        if let Some(old) = st.pending.insert(waiting, weight) {
            st.pending_bytes -= old;
        }
        st.pending_bytes += weight;
        None
    }
}
