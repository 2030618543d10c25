//! What the relay core keeps between the two sides: the requests it
//! watches, the elicitations waiting for an answer, and the work it hands
//! its resolver thread.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Modes;
#[cfg(doc)]
use super::{questions::weigh, Relay};
#[cfg(doc)]
use elicit_session::mcp::call::MAX_INPUT_ROUNDS;

/// What the relay tracks between the two sides.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) client_modes: Modes,
    /// 2026 requests that may come back `input_required`, by the exact JSON
    /// text of their id.
    pub(crate) tracked: HashMap<String, Value>,
    /// Our retry ids → the client's id text.
    pub(crate) retries: HashMap<String, String>,
    /// Server request ids (text) of elicitations being resolved, with what
    /// each holds ([`weigh`]); a request reusing a pending id is refused.
    pub(crate) pending: HashMap<String, usize>,
    /// The sum of `pending`'s weights.
    pub(crate) pending_bytes: usize,
    /// `input_required` rounds so far, by the client's id text: at most
    /// [`MAX_INPUT_ROUNDS`] per request, as in `call`.
    pub(crate) rounds: HashMap<String, usize>,
    /// Ids (text) of the client's `initialize` / `server/discover` requests
    /// whose reply names the server.
    pub(crate) info_ids: HashSet<String>,
    /// The server's name from that reply, for the prompt header.
    pub(crate) server_name: Option<String>,
    /// The client's `tools/call` requests in flight: id text → tool name.
    /// An elicitation of the handshake does not say which call it is for;
    /// with one call in flight it is that one's (answer rules match on
    /// the tool), with several it is not known.
    pub(crate) tool_calls: HashMap<String, String>,
    /// The client hung up: pending elicitations were answered cancel and no
    /// more are asked.
    pub(crate) client_gone: bool,
    /// The client's `tasks/get` requests in flight (tasks extension): id
    /// text → the task's id and the request's `_meta` (what elicit's own
    /// `tasks/update` for that task carries).
    pub(crate) task_gets: HashMap<String, (String, Value)>,
    /// By task id, the keys of its questions elicit took on (answered, or
    /// being answered): each is asked once over the task's life.
    pub(crate) task_questions: HashMap<String, HashSet<String>>,
    /// Ids (text) of elicit's own `tasks/update` requests: their replies
    /// are elicit's, not the client's.
    pub(crate) task_updates: HashSet<String>,
    /// The server's capabilities, from its reply to `initialize` or
    /// `server/discover`: whether it runs tool calls as tasks (2025-11-25)
    /// or offers the tasks extension (2026-07-28).
    pub(crate) server_capabilities: Option<Value>,
    /// Ids (text) of the client's `tools/list` requests in flight: their
    /// replies say which tools run only as tasks.
    pub(crate) list_ids: HashSet<String>,
    /// The tools the server listed as running only as tasks
    /// (`execution.taskSupport: "required"`).
    pub(crate) task_only: HashSet<String>,
    /// Tasks elicit runs for a client that runs none itself, by the id
    /// text of the client's `tools/call`.
    pub(crate) runs: HashMap<String, Run>,
    /// elicit's own requests for those tasks: the id text sent → the
    /// client's id text, and what the request was.
    pub(crate) run_requests: HashMap<String, (String, RunRequest)>,
    /// The client asked for a task itself (a call with `task`, or with the
    /// tasks extension declared): the server's task news may be its own.
    pub(crate) client_makes_tasks: bool,
    /// The client's requests in flight that gave a progress token, by id
    /// text: kept alive while a person answers ([`super::keepalive`]).
    pub(crate) progress: HashMap<String, super::keepalive::Watched>,
}

/// A task elicit runs on behalf of a client that runs none itself: from
/// its `tools/call` (sent with `task`, or with the tasks extension
/// declared) to the tool's final result under the client's id.
pub(crate) struct Run {
    /// The tool, for answer rules and notes.
    pub(crate) tool: String,
    /// The revision's way of running it.
    pub(crate) era: Era,
    /// The task's id, once the server created it.
    pub(crate) task_id: Option<String>,
    /// When the call went out, and [`super::Relay::resolving_time`] then:
    /// the bound counts neither a person answering nor the server idle.
    pub(crate) started: Instant,
    pub(crate) resolving_at_start: Duration,
    /// The wait between two polls (the extension), as the server suggests.
    pub(crate) interval: Duration,
    /// One of elicit's `tasks/get` awaits its reply (the extension).
    pub(crate) polling: bool,
    /// The client cancelled before the server created the task: it is
    /// cancelled as soon as it has an id.
    pub(crate) cancelled: bool,
}

/// How a task is run, by revision.
#[derive(Clone)]
pub(crate) enum Era {
    /// 2025-11-25: `task` in the call, then `tasks/result`.
    Augmented,
    /// 2026-07-28's tasks extension: polled with `tasks/get`; `meta` is
    /// what each of elicit's requests for the task carries (the call's
    /// version, client info and capabilities, the extension declared).
    Extension { meta: Value },
}

/// What one of elicit's requests for a [`Run`] was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunRequest {
    /// The client's call again, the tasks extension declared (the server
    /// refused it without): its reply is the task, or the call's.
    Call,
    /// `tasks/result` (2025-11-25): its reply is the tool's.
    Result,
    /// `tasks/get` (the extension).
    Poll,
    /// `tasks/cancel`: its reply is nobody's.
    Cancel,
}
/// Work for the resolver thread.
pub(super) enum Job {
    /// An `elicitation/create` request of the server.
    ServerRequest { id: Value, params: Value },
    /// An `input_required` result to a client request.
    InputRequired { client_id: String, result: Value },
    /// The new questions of a task waiting for input (tasks extension),
    /// answered with a `tasks/update` carrying `meta`.
    TaskInput {
        task_id: String,
        questions: Value,
        meta: Value,
        /// The tool, when elicit runs the task (for answer rules).
        tool: Option<String>,
    },
}

/// What becomes of a server message ([`Relay::server_message`]).
#[derive(Debug, PartialEq)]
pub(crate) enum Taken {
    /// elicit settles it; nothing goes to the client now.
    Withheld,
    /// This goes to the client instead (a retry's reply under the client's id).
    Rewritten(Value),
    /// The message goes to the client as it came.
    Relay,
}
