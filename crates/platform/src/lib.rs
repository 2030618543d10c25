//! Every operating-system specific in elicit, behind one small interface.
//!
//! The rest of the code asks for what it needs, in its own words; how a
//! system does it lives here, once per system: [`unix`] (Linux and macOS,
//! on `rustix`, `signal-hook` and std) and `windows` (on `windows-sys`,
//! `crossterm` and std). Nothing outside this module names `libc`,
//! `rustix`, `signal-hook`, `windows-sys` or `std::os::*`
//! (`scripts/check-architecture` fails otherwise).
//!
//! What the rest of the code asks for:
//!
//! - [`terminal`]: open the person's terminal apart from stdin/stdout
//!   (`/dev/tty`; `CONIN$`/`CONOUT$`), save and restore its mode (also from
//!   a signal handler or a console control handler: [`terminal::remember`],
//!   [`terminal::restore_remembered`]), read keys in raw mode with a wait
//!   that can time out ([`terminal::RawKeys`]), drop type-ahead;
//! - [`signals`]: Ctrl-C (and Ctrl-Break) as one [`Signal::Interrupt`];
//!   the ways a session is ended from outside ([`Signal::Terminate`],
//!   [`Signal::HangUp`]: SIGTERM/SIGHUP, console close/log-off/shutdown);
//!   a function run at exit;
//! - [`process`]: a server started in a process tree of its own
//!   ([`process::isolate`], [`process::Tree`]: a process group plus an
//!   inherited tag on Unix, a job object on Windows), signalled and ended
//!   whole, and who listens on a loopback port it was told to serve on
//!   ([`process::Tree::loopback_listener`], [`Listener`]); a browser
//!   started detached; an exit status as a number; the processor time
//!   elicit used; elicit ended when the process that started it is gone
//!   ([`process::end_with_parent`]); a process started in the background
//!   to outlive elicit ([`process::spawn_background`]);
//! - [`fs`]: private directories and files (the owner alone), files opened
//!   without following a final symbolic link, an exclusive lock, who owns a
//!   file or folder and whether someone else could have written or may
//!   read it ([`Access`]), a non-blocking open, a file opened to write
//!   what only its user may read ([`fs::open_private_for_writing`]), a
//!   file a person named read only if it is a regular file, up to a limit
//!   ([`fs::read_regular_file`]);
//! - [`local`]: a private local endpoint only this user can reach (a
//!   socket in a 0700 folder with the peer's uid checked; on Windows a
//!   named pipe with an owner-only access list, the peer process's user
//!   checked), for a parked call and the commands that answer it;
//! - [`pipe`] (Linux): `tee`/`splice` for the proxy's pass-through path.
//!
//! Built on them, the process-wide pieces every layer shares: [`handlers`]
//! (every signal handler elicit installs, and the state a prompt shares with
//! them) and [`opener`] (the browser and URL opener).
//!
//! `unsafe` is left only where no safe crate API exists; each block says
//! why it is sound and why it is there.
#![warn(missing_docs)]

mod access;
pub mod handlers;
pub mod opener;
mod regular_file;
mod temp_dir;
mod terminal_shared;

#[cfg(unix)]
pub mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(windows)]
pub mod windows;
#[cfg(windows)]
use windows as imp;

pub use access::Access;
pub use imp::{fs, local, process, signals, terminal};

#[cfg(target_os = "linux")]
pub use imp::pipe;

/// Who listens on a port of 127.0.0.1 (or `::1`): whether what a
/// connection there reaches is one of a server's processes
/// ([`process::Tree::loopback_listener`]). Every listening socket a
/// connection to that port could reach counts: one bound to the loopback
/// address itself or to the wildcard address, IPv4 or IPv6.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listener {
    /// Nothing listens there yet.
    Nobody,
    /// Only processes of the tree listen there.
    Tree,
    /// A process outside the tree listens there: who, for a message
    /// (`uid 65534`, `pid 4242`).
    Other(String),
}

/// What can be asked of a process, or arrive at elicit, from outside. The
/// numbers are POSIX's (the same on every Unix): an exit status of
/// 128 + [`Signal::number`] says which one ended a session, on every
/// system (on Windows: a console close is [`Signal::HangUp`], log-off and
/// shutdown are [`Signal::Terminate`], Ctrl-C and Ctrl-Break are
/// [`Signal::Interrupt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// SIGINT; Ctrl-C or Ctrl-Break on a Windows console.
    Interrupt,
    /// SIGTERM; log-off or shutdown on Windows.
    Terminate,
    /// SIGHUP; the console window closed on Windows.
    HangUp,
    /// SIGQUIT (Unix only: nothing sends it on Windows).
    Quit,
    /// SIGKILL; `TerminateJobObject` on Windows.
    Kill,
}

impl Signal {
    /// The signal's POSIX number.
    pub fn number(self) -> i32 {
        match self {
            Signal::HangUp => 1,
            Signal::Interrupt => 2,
            Signal::Quit => 3,
            Signal::Kill => 9,
            Signal::Terminate => 15,
        }
    }

    /// The signal with POSIX number `n`, if it is one of these.
    pub fn from_number(n: i32) -> Option<Signal> {
        [
            Signal::HangUp,
            Signal::Interrupt,
            Signal::Quit,
            Signal::Kill,
            Signal::Terminate,
        ]
        .into_iter()
        .find(|s| s.number() == n)
    }

    /// The exit status of a session this signal ended: 128 + its number.
    pub fn exit_code(self) -> i32 {
        128 + self.number()
    }

    /// The Unix name (`SIGTERM`), which the messages and the manual use on
    /// every system.
    pub fn name(self) -> &'static str {
        match self {
            Signal::HangUp => "SIGHUP",
            Signal::Interrupt => "SIGINT",
            Signal::Quit => "SIGQUIT",
            Signal::Kill => "SIGKILL",
            Signal::Terminate => "SIGTERM",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Signal;

    #[test]
    fn signal_numbers_round_trip_and_give_posix_exit_codes() {
        for s in [
            Signal::HangUp,
            Signal::Interrupt,
            Signal::Quit,
            Signal::Kill,
            Signal::Terminate,
        ] {
            assert_eq!(Signal::from_number(s.number()), Some(s));
        }
        assert_eq!(Signal::Terminate.exit_code(), 143);
        assert_eq!(Signal::HangUp.exit_code(), 129);
        assert_eq!(Signal::from_number(0), None);
    }
}
