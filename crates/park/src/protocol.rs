//! What a holder and the commands that reach it say to each other: one
//! JSON object per line, each direction a typed enum.

use std::io::{BufReader, ErrorKind, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use elicit_core::bounded::{read_line_limited, LineRead};
use elicit_platform::local::Channel;

use crate::ParkError;

/// The most one message to a holder may hold (answers, files inlined).
pub(crate) const TO_HOLDER_LIMIT: usize = 16 << 20;
/// The most one message from a holder may hold: a tool's result (up to a
/// server message's 64 MiB) and what was said on stderr.
pub(crate) const FROM_HOLDER_LIMIT: usize = 80 << 20;

/// What a command asks of a holder (the first line of a connection).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToHolder {
    /// `elicit call --park`: tell me when the call parks or ends.
    Watch,
    /// `elicit pending`: what is asked, if anything.
    Describe,
    /// `elicit respond`: these answers (as `-a` takes them) for the
    /// question now parked; then tell me when the call parks again or ends.
    Answer {
        /// Each as one `-a` argument (`NAME=VALUE`, a JSON object, or
        /// `accept`/`decline`/`cancel`).
        answers: Vec<String>,
    },
}

/// What a holder tells a command.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromHolder {
    /// The call waits for an answer: the parked object, and what the call
    /// said on stderr since the last message.
    Parked {
        /// The object `elicit call --park` prints.
        parked: Value,
        /// Warnings and messages of the call meanwhile.
        stderr: String,
    },
    /// What is asked now (`None` while the call runs), and for how long
    /// it has waited, in whole seconds.
    Described {
        /// The parked object.
        parked: Option<Value>,
        /// Seconds since it parked.
        age: u64,
    },
    /// The answers were not sent; the call stays parked.
    Refused {
        /// Why, a line per problem.
        message: String,
        /// The exit status (2 for answers that do not fit the form).
        exit: i32,
    },
    /// The call is not waiting for an answer (another `respond` answers
    /// it, or it runs).
    Busy {
        /// Why, in words.
        message: String,
    },
    /// The call still runs (sent now and then to a command that waits), so
    /// that a holder which was stopped or hangs is noticed within a bound.
    Working,
    /// The call ended: what `elicit call` would have printed, and its
    /// exit status.
    Finished {
        /// Standard output.
        stdout: String,
        /// Standard error.
        stderr: String,
        /// The exit status.
        exit: i32,
    },
}

/// Writes one message as a line.
pub(crate) fn send(channel: &mut Channel, message: &impl Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    channel.write_all(&line)?;
    channel.flush()
}

/// Reads one message of at most `limit` bytes; `Ok(None)` at the end.
pub(crate) fn receive<T: for<'de> Deserialize<'de>>(
    reader: &mut BufReader<Channel>,
    limit: usize,
) -> Result<Option<T>, ParkError> {
    match receive_unless_silent(reader, limit)? {
        Received::Message(message) => Ok(Some(message)),
        Received::End => Ok(None),
        Received::Silent => Err(ParkError::failed(
            "cannot read from the parked call: it said nothing in time",
        )),
    }
}

/// What [`receive_unless_silent`] got.
pub(crate) enum Received<T> {
    /// One message.
    Message(T),
    /// The end of the connection.
    End,
    /// Nothing within the connection's read timeout.
    Silent,
}

/// Reads one message of at most `limit` bytes, telling a read timeout
/// apart from the end and from errors.
pub(crate) fn receive_unless_silent<T: for<'de> Deserialize<'de>>(
    reader: &mut BufReader<Channel>,
    limit: usize,
) -> Result<Received<T>, ParkError> {
    let mut buf = Vec::new();
    let read = match read_line_limited(reader, &mut buf, limit, false) {
        Ok(read) => read,
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            return Ok(Received::Silent)
        }
        Err(e) => {
            return Err(ParkError::failed(format!(
                "cannot read from the parked call: {e}"
            )))
        }
    };
    match read {
        LineRead::Eof => Ok(Received::End),
        LineRead::Line => serde_json::from_slice(&buf)
            .map(Received::Message)
            .map_err(|e| {
                ParkError::failed(format!(
                    "a message of the parked call is not understood: {e}"
                ))
            }),
        _ => Err(ParkError::failed(format!(
            "a message of the parked call is over {limit} bytes"
        ))),
    }
}

/// A reader over a connection, for [`receive`].
pub(crate) fn reader(channel: Channel) -> BufReader<Channel> {
    BufReader::new(channel)
}
