//! elicit-relay: `elicit proxy`. elicit stands between an MCP client and a server and
//! answers the server's elicitations itself, so a client that declares no
//! elicitation support still gets the server's eliciting tools.
//!
//! One relay core (`Relay`) for the two ways of reaching the server:
//!
//! - [`stdio`] runs the server as a child process and relays lines byte for
//!   byte (splice(2) for bulk traffic), parsing only the lines that may
//!   concern elicit ([`classify`]);
//! - [`remote`] talks to a URL through the [`elicit_session::transport::Transport`]
//!   seam, message by message (like the npm `mcp-remote` bridge).
//!
//! What the core decides, the same for both: the capability rewrite
//! (`initialize` and 2026 per-request capabilities declare elicitation),
//! which `elicitation/create` requests and `input_required` results elicit
//! withholds and settles, the retries of `input_required` rounds, the
//! resolver thread (one elicitation at a time: there is one person), what a
//! client hang-up does to pending elicitations, and the `-v` notes. A side
//! only moves messages: it implements `Sides` (send to the server, send
//! to the client) and hands the core what it reads. The core reads each
//! message's envelope once, where it comes in ([`envelope`]): its kind and
//! its request id are typed (a reply is matched to its request by id, not
//! by text), its `params`, `result` and `error` stay loose.
//!
//! [`proxy`] runs either one as `elicit proxy` does. A recording (`--record`)
//! hooks in through elicit-session's seam ([`Recording`]): this crate never
//! imports a cassette.
#![warn(missing_docs)]

use serde_json::Value;

use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::resolve::Resolver;
use elicit_session::mcp::modes::ElicitModes;
use elicit_session::mcp::strict::Strict;

mod capabilities;
pub mod classify;
mod client_side;
mod engine;
pub mod envelope;
mod input_required;
mod keepalive;
pub(crate) mod notes;
mod questions;
pub mod remote;
mod resolver;
mod runs;
mod server_side;
mod start;
mod state;
pub mod stdio;

pub(crate) use classify::RETRY_PREFIX;
pub(crate) use engine::Relay;
pub use keepalive::KEEPALIVE_INTERVAL;
pub use server_side::MAX_PENDING_ELICITATION_BYTES;
pub(crate) use state::Taken;

/// The two ends a relay writes to. Each call delivers one whole message;
/// a side never blocks the core on the other side's behalf for long (the
/// remote side queues, the stdio side writes to a pipe).
pub(crate) trait Sides: Send + Sync + 'static {
    /// A message elicit wrote goes to the server: an answer to one of its
    /// elicitations, or the retry of a request. `for_client` is the id of
    /// the client request a retry stands for (answered with an error by a
    /// side that cannot send it).
    fn to_server(&self, message: &Value, for_client: Option<&envelope::RequestId>);

    /// A message elicit wrote goes to the client: a retried request's final
    /// reply under the client's id, an error, a question handed on.
    fn to_client(&self, message: &Value);

    /// A message elicit may write to the client, decided by `make` only
    /// once nothing else can be written to the client (under its writer's
    /// lock): what `make` checks still holds when the message goes out
    /// (`None`: nothing is sent). Keep-alives use it so that none follows
    /// the reply it keeps alive.
    fn to_client_if(&self, make: &dyn Fn() -> Option<Value>) {
        if let Some(message) = make() {
            self.to_client(&message);
        }
    }
}

/// Which elicitation modes the client declared itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Modes {
    pub form: bool,
    pub url: bool,
}

impl Modes {
    /// Whether elicit answers an elicitation of `mode` itself: always,
    /// unless `--passthrough-declared` leaves the client's own modes to it.
    pub(crate) fn left_to_elicit(self, passthrough_declared: bool, mode: Option<&str>) -> bool {
        if !passthrough_declared {
            return true;
        }
        match mode {
            Some("url") => !self.url,
            _ => !self.form,
        }
    }
}

/// Who answers elicitations, and the client's two pipes: what either
/// proxy is run with.
pub struct Parties {
    /// `--answer`s, tried first.
    pub scripted: ScriptedAnswers,
    /// Who is asked what the answers leave open (a terminal, or nobody).
    pub person: Box<dyn Resolver + Send>,
    /// What the client sends.
    pub client_in: Box<dyn std::io::Read + Send>,
    /// Where the client's messages go.
    pub client_out: Box<dyn std::io::Write + Send>,
}

/// What both proxies share: the settings of the relay core.
#[derive(Debug, Clone, Default)]
pub struct RelayOptions {
    /// Leave elicitations of a mode the client declared to the client.
    pub passthrough_declared: bool,
    /// `--verbose`: show the messages.
    pub verbose: bool,
    /// The modes elicit declares on the client's behalf (`--modes`).
    pub modes: ElicitModes,
    /// `--strict`: every elicitation the server sends is checked.
    pub strict: Option<Strict>,
    /// `--record`: told of every message relayed and every elicitation
    /// answered, it writes a cassette for each tool call that elicited.
    pub record: Option<Recording>,
    /// How long a task elicit runs for a client that runs none itself may
    /// take (the time a person spends answering not counted) before it is
    /// cancelled and the client gets an error; `None`: the lifetime elicit
    /// asks the server to keep a task, [`elicit_session::mcp::tasks::TASK_TTL_MS`].
    pub task_budget: Option<std::time::Duration>,
    /// How often a client request with a progress token is sent progress
    /// while a person answers; `None`: [`KEEPALIVE_INTERVAL`].
    pub keepalive_interval: Option<std::time::Duration>,
}

/// The recorder a proxy shares between its sides and its resolver (the
/// seam elicit-session defines; elicit-cassette's recorder fills it).
pub type Recording = elicit_session::mcp::recording::SharedRelayRecorder;

pub mod proxy;

#[cfg(test)]
mod tests;
