//! Why a prompt did not produce a value: what every widget and the key
//! reader return, below both.

use std::io;

/// Why a prompt did not produce a value.
#[derive(Debug)]
pub enum Interrupt {
    /// Esc, Ctrl-C, Ctrl-D or end of input: the elicitation is cancelled.
    Cancelled,
    /// The resolver gave up on this prompt (`--timeout`): it cleared what
    /// it drew and ended without an answer.
    Abandoned,
    /// The terminal failed.
    Io(io::Error),
}

impl From<io::Error> for Interrupt {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::Interrupted | io::ErrorKind::UnexpectedEof => Interrupt::Cancelled,
            _ => Interrupt::Io(e),
        }
    }
}

pub(crate) type Prompted<T> = Result<T, Interrupt>;
