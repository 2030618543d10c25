//! What the relay core keeps between the two sides: the requests it
//! watches, the elicitations waiting for an answer, and the work it hands
//! its resolver thread.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::envelope::RequestId;
use super::Modes;
#[cfg(doc)]
use super::{questions::weigh, Relay};
#[cfg(doc)]
use elicit_session::mcp::call::MAX_INPUT_ROUNDS;

/// What the relay tracks between the two sides.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) client_modes: Modes,
    /// 2026 requests that may come back `input_required`, by their id.
    pub(crate) tracked: HashMap<RequestId, Value>,
    /// Our retry ids → the client's id.
    pub(crate) retries: HashMap<RequestId, RequestId>,
    /// What waits for the person (the server's elicitations, `input_required`
    /// rounds, tasks' questions), with what each holds ([`weigh`]); a server
    /// request reusing a pending id is refused.
    pub(crate) pending: HashMap<Waiting, usize>,
    /// The sum of `pending`'s weights.
    pub(crate) pending_bytes: usize,
    /// `input_required` rounds so far, by the client's id: at most
    /// [`MAX_INPUT_ROUNDS`] per request, as in `call`.
    pub(crate) rounds: HashMap<RequestId, usize>,
    /// Ids of the client's `initialize` / `server/discover` requests whose
    /// reply names the server.
    pub(crate) info_ids: HashSet<RequestId>,
    /// The server's name from that reply, for the prompt header.
    pub(crate) server_name: Option<String>,
    /// The client's `tools/call` requests in flight: id → tool name.
    /// An elicitation of the handshake does not say which call it is for;
    /// with one call in flight it is that one's (answer rules match on
    /// the tool), with several it is not known.
    pub(crate) tool_calls: HashMap<RequestId, String>,
    /// The client hung up: pending elicitations were answered cancel and no
    /// more are asked.
    pub(crate) client_gone: bool,
    /// The client's `tasks/get` requests in flight (tasks extension): id →
    /// the task's id and the request's `_meta` (what elicit's own
    /// `tasks/update` for that task carries).
    pub(crate) task_gets: HashMap<RequestId, (String, Value)>,
    /// By task id, the keys of its questions elicit took on (answered, or
    /// being answered): each is asked once over the task's life.
    pub(crate) task_questions: HashMap<String, HashSet<String>>,
    /// Ids of elicit's own `tasks/update` requests: their replies are
    /// elicit's, not the client's.
    pub(crate) task_updates: HashSet<RequestId>,
    /// The server's capabilities, from its reply to `initialize` or
    /// `server/discover`: whether it runs tool calls as tasks (2025-11-25)
    /// or offers the tasks extension (2026-07-28).
    pub(crate) server_capabilities: Option<Value>,
    /// Ids of the client's `tools/list` requests in flight: their replies
    /// say which tools run only as tasks.
    pub(crate) list_ids: HashSet<RequestId>,
    /// The tools the server listed as running only as tasks
    /// (`execution.taskSupport: "required"`).
    pub(crate) task_only: HashSet<String>,
    /// Tasks elicit runs for a client that runs none itself, by the id of
    /// the client's `tools/call`.
    pub(crate) runs: HashMap<RequestId, Run>,
    /// elicit's own requests for those tasks: the id sent → the client's
    /// id, and what the request was.
    pub(crate) run_requests: HashMap<RequestId, (RequestId, RunRequest)>,
    /// The client asked for a task itself (a call with `task`, or with the
    /// tasks extension declared): the server's task news may be its own.
    pub(crate) client_makes_tasks: bool,
    /// The client's requests in flight that gave a progress token, by id:
    /// kept alive while a person answers ([`super::keepalive`]).
    pub(crate) progress: HashMap<RequestId, Watched>,
}

/// What waits for the person in [`State::pending`], each counted against
/// the same bounds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Waiting {
    /// A server's `elicitation/create` request, by its id.
    Elicitation(RequestId),
    /// An `input_required` result to the client's request of this id.
    InputRequired(RequestId),
    /// The questions of the task of this id (tasks extension).
    TaskInput(String),
}

/// A client request in flight that gave a progress token.
#[derive(Debug)]
pub(crate) struct Watched {
    pub(crate) token: Value,
    /// The last `progress` the client got for the token (the server's or
    /// elicit's).
    pub(crate) last: Option<f64>,
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
    ServerRequest { id: RequestId, params: Value },
    /// An `input_required` result to a client request.
    InputRequired { client_id: RequestId, result: Value },
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
