//! The seam itself: what a session sees of any transport ([`Transport`])
//! and what one delivers ([`Incoming`], [`Delivery`]). Below every
//! transport and the session alike.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use elicit_core::error::ElicitError;

/// The most time a person's answers (or a sign-in) add back to one
/// request's deadline: a person may take a while over a form, but a server
/// that keeps asking cannot keep a request open for ever.
pub const MAX_ANSWER_CREDIT: Duration = Duration::from_secs(3600);

/// One way of reaching an MCP server.
pub trait Transport: Send {
    /// Sends one JSON-RPC message (request, response or notification).
    fn send(&mut self, message: &Value) -> Result<(), ElicitError>;

    /// [`Self::send`], with whatever it waits for (an HTTP exchange) ended
    /// by `deadline` too: a reply sent while waiting for a request's reply
    /// must not outlast that request's `--timeout`.
    fn send_by(&mut self, message: &Value, deadline: Option<Instant>) -> Result<(), ElicitError> {
        let _ = deadline;
        self.send(message)
    }

    /// Waits for the next message from the server, up to `timeout` (None:
    /// forever). A Ctrl-C pressed meanwhile ends the wait with an error.
    fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError>;

    /// Ends the connection politely, then firmly: `grace` is how long the
    /// server gets to finish on its own.
    fn close(&mut self, grace: Duration);

    /// Why the server went away, when the transport knows ("the server
    /// exited (exit status: 1)"): added to errors about a lost server.
    fn gone_detail(&mut self) -> Option<String> {
        None
    }

    /// A way for another thread to end a [`Transport::receive`] wait at once
    /// (it returns [`Incoming::TimedOut`]), so that the thread that owns the
    /// transport can wait for the server and still send without delay what
    /// other threads queue for it. None: the owner waits in short slices.
    fn waker(&self) -> Option<Waker> {
        None
    }
}

/// See [`Transport::waker`].
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// What arrives from the server.
#[derive(Debug)]
pub enum Incoming {
    /// One parsed JSON-RPC message.
    Message(Value),
    /// A line that is not JSON (the server wrote something else to stdout).
    Malformed {
        /// The line, as shown.
        line: String,
        /// The error, as given.
        error: String,
    },
    /// The server closed its stdout (it exited or is exiting), or the
    /// connection to it ended.
    Closed,
    /// Nothing arrived within the time asked for.
    TimedOut,
}

/// What a network transport's reader threads hand over: a message, or the
/// failure that ended a stream.
pub type Delivery = Result<Incoming, ElicitError>;
