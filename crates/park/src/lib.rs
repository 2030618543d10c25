//! Parked calls: `elicit call --park` keeps a tool call whose elicitation
//! nobody can answer now open in a background process of the user's own
//! (the holder), and `elicit respond` answers it later, from another
//! command, another terminal or a coding agent's next step.
//!
//! - [`holder`]: the holder's side: its private endpoint, the
//!   [`holder::Holder`], the resolver a session asks when scripted answers and
//!   rules leave a question open (it parks, waits for a checked answer or
//!   the expiry), and the end of the call, delivered to whoever waits;
//! - [`client`]: the commands' side: starting a holder and waiting for it
//!   to park or finish (`call --park`), answering (`respond`), listing
//!   (`pending`);
//! - [`place`]: where parked calls live (a private per-user folder) and
//!   what names them;
//! - [`protocol`]: the JSON lines between the two;
//! - [`stderr`]: what the call says on stderr while parked, kept with a
//!   bound until handed over;
//! - [`answering`]: a person answers parked calls (`respond --ui`,
//!   `pending --ui browser`) through the resolver the binary picks.
//!
//! Only the same user reaches a holder: its endpoint lives in a folder
//! only that user may enter, and every peer's user is checked again
//! (`elicit_platform::local`).
#![warn(missing_docs)]

pub mod answering;
pub mod client;
pub mod holder;
pub mod place;
pub mod protocol;
pub mod stderr;

/// The exit status of a command that leaves the call parked (`call
/// --park`, `respond` when the call parks again).
pub const EXIT_PARKED: i32 = 5;
/// The exit status of `respond` for a call that is not parked (any more):
/// it expired, was answered or never existed.
pub const EXIT_GONE: i32 = 6;

/// A failure of the parking itself, with the exit status it calls for.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ParkError {
    /// What went wrong, in words.
    pub message: String,
    /// The exit status.
    pub exit: i32,
}

impl ParkError {
    /// A failure with exit status 1.
    pub fn failed(message: impl Into<String>) -> Self {
        ParkError {
            message: message.into(),
            exit: 1,
        }
    }

    /// A parked call that is not there ([`EXIT_GONE`]).
    pub fn gone(id: &str) -> Self {
        ParkError {
            message: format!(
                "no parked call {id}: it expired, was answered, or never existed (`elicit pending` lists the parked calls)"
            ),
            exit: EXIT_GONE,
        }
    }

    /// Bad usage (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        ParkError {
            message: message.into(),
            exit: 2,
        }
    }
}
