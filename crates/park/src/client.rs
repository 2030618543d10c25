//! The commands' side of a parked call: start a holder and wait for it to
//! park or finish (`call --park`), answer one (`respond`), list them
//! (`pending`).

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use elicit_platform::local::{self, Channel};

use crate::place::{self, Files};
use crate::protocol::{self, FromHolder, Received, ToHolder};
use crate::{ParkError, EXIT_GONE};

/// How long a holder has to start listening.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long what an early-ended holder said may take to be read.
const EARLY_STDERR_WAIT: Duration = Duration::from_secs(2);
/// How long a running call's holder may stay silent (it beats every
/// [`crate::holder::HEARTBEAT`]) before it is taken for stopped or hung.
const SILENCE_LIMIT: Duration = Duration::from_secs(20);
/// How long a holder has to describe its call to `pending`.
const DESCRIBE_LIMIT: Duration = Duration::from_secs(5);

/// How a call came back to the command that started or answered it.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// It waits for an answer: the object to print, and what the call said
    /// on stderr meanwhile.
    Parked {
        /// The parked object.
        parked: Value,
        /// The call's stderr since the last word.
        stderr: String,
    },
    /// It ended: what `elicit call` would have printed, and its status.
    Finished {
        /// Standard output.
        stdout: String,
        /// Standard error.
        stderr: String,
        /// The exit status.
        exit: i32,
    },
}

/// Starts a holder and waits until its call parks or ends. `holder` makes
/// the holder's command for a fresh id (the caller knows how it runs
/// itself); it is started detached, with no terminal, its output in the
/// call's private files.
pub fn launch(holder: impl FnOnce(&str) -> Command) -> Result<Outcome, ParkError> {
    let folder = place::folder()?;
    sweep(&folder);
    let id = place::fresh_id();
    let files = Files::of(&folder, &id);
    let private = |path: &Path| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        elicit_platform::fs::open_private(&options, path)
    };
    // The holder's stderr is a pipe it reads itself, from its stdin, with a
    // bound (`crate::stderr`); this end is read only if it ends early.
    let started = (|| -> io::Result<(std::process::Child, io::PipeReader)> {
        let out = private(&files.out)?;
        let (said, err) = io::pipe()?;
        let mut command = holder(&id);
        command
            .stdin(Stdio::from(said.try_clone()?))
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err));
        Ok((
            elicit_platform::process::spawn_background(&mut command)?,
            said,
        ))
    })();
    let (mut child, said) = started.map_err(|e| {
        files.remove();
        ParkError::failed(format!("cannot start the parked call: {e}"))
    })?;
    let channel = match reach(&files, &mut child) {
        Ok(channel) => channel,
        Err(Some(exit)) => return Ok(ended_early(&files, said, exit)),
        Err(None) => {
            let _ = child.kill();
            files.remove();
            return Err(ParkError::failed(
                "the parked call did not start listening in time",
            ));
        }
    };
    ask(channel, &ToHolder::Watch)
}

/// Connects to the new holder, as soon as it listens; `Err(Some(status))`
/// when it ended first, `Err(None)` when it took too long.
fn reach(files: &Files, child: &mut std::process::Child) -> Result<Channel, Option<i32>> {
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if let Ok(channel) = Channel::connect(&files.socket) {
            return Ok(channel);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Some(elicit_platform::process::exit_code(status)));
        }
        if Instant::now() > deadline {
            return Err(None);
        }
        // Listening takes the holder a few milliseconds from its start;
        // this polls for it, bounded above.
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A holder that ended before it listened: what it printed.
fn ended_early(files: &Files, said: io::PipeReader, exit: i32) -> Outcome {
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    // Read on a thread, bounded in time and size: a process the holder
    // started may still hold the pipe open.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = io::Read::take(said, crate::stderr::KEPT as u64).read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    let stderr = rx.recv_timeout(EARLY_STDERR_WAIT).unwrap_or_default();
    let outcome = Outcome::Finished {
        stdout: read(&files.out),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        exit,
    };
    files.remove();
    outcome
}

/// Clears away what holders that were ended from outside (killed) left:
/// an endpoint nobody listens on, and files with no endpoint beside them
/// once a holder would have been listening.
pub fn sweep(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| Some(name.split_once('.')?.0.to_string()))
        .filter(|id| place::check_id(id).is_ok())
        .collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        let files = Files::of(folder, &id);
        match Channel::connect(&files.socket) {
            Ok(_) => {}
            Err(e) if local::is_stale(&e) => files.remove(),
            Err(e) if e.kind() == io::ErrorKind::NotFound && started_long_ago(&files) => {
                files.remove()
            }
            Err(_) => {}
        }
    }
}

/// Whether the call's output file is older than a holder's start may take.
fn started_long_ago(files: &Files) -> bool {
    [&files.out, &files.err].iter().any(|path| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > START_LIMIT))
    })
}

/// Sends `request` and waits for the call to park or end, as long as its
/// holder keeps saying it runs.
fn ask(mut channel: Channel, request: &ToHolder) -> Result<Outcome, ParkError> {
    protocol::send(&mut channel, request)
        .map_err(|e| ParkError::failed(format!("cannot reach the parked call: {e}")))?;
    let _ = channel.set_read_timeout(Some(SILENCE_LIMIT));
    let mut reader = protocol::reader(channel);
    loop {
        let said = match protocol::receive_unless_silent(&mut reader, protocol::FROM_HOLDER_LIMIT)?
        {
            Received::Message(said) => Some(said),
            Received::End => None,
            Received::Silent => {
                return Err(ParkError::failed(format!(
                    "the parked call stopped answering: its holder said nothing for {} s \
                     (stopped or hung); should it resume, it may still take what was sent: \
                     `elicit pending` shows where it stands",
                    SILENCE_LIMIT.as_secs()
                )))
            }
        };
        if let Some(outcome) = outcome(said)? {
            return Ok(outcome);
        }
    }
}

/// What a holder's message means for the command waiting on it; `None`
/// while the call still runs.
fn outcome(said: Option<FromHolder>) -> Result<Option<Outcome>, ParkError> {
    match said {
        Some(FromHolder::Working) => Ok(None),
        Some(FromHolder::Parked { parked, stderr }) => Ok(Some(Outcome::Parked { parked, stderr })),
        Some(FromHolder::Finished {
            stdout,
            stderr,
            exit,
        }) => Ok(Some(Outcome::Finished {
            stdout,
            stderr,
            exit,
        })),
        Some(FromHolder::Refused { message, exit }) => Err(ParkError { message, exit }),
        Some(FromHolder::Busy { message }) => Err(ParkError {
            message,
            exit: EXIT_GONE,
        }),
        Some(FromHolder::Described { .. }) | None => Err(ParkError::failed(
            "the parked call ended without a word (it was ended from outside)",
        )),
    }
}

/// Connects to parked call `id`; a call that is not there is
/// [`EXIT_GONE`] (and files it left behind are removed).
fn connect(id: &str) -> Result<Channel, ParkError> {
    place::check_id(id)?;
    let folder = place::folder()?;
    sweep(&folder);
    let files = Files::of(&folder, id);
    Channel::connect(&files.socket).map_err(|e| {
        if local::is_stale(&e) {
            files.remove();
        }
        match e.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => ParkError::gone(id),
            _ => ParkError::failed(format!("cannot reach the parked call {id}: {e}")),
        }
    })
}

/// Sends `answers` (each as `-a` takes it) to parked call `id`, and waits
/// for it to park again or end. Answers that do not fit the form are
/// refused (exit 2) and the call stays parked.
pub fn respond(id: &str, answers: Vec<String>) -> Result<Outcome, ParkError> {
    ask(connect(id)?, &ToHolder::Answer { answers })
}

/// A parked call as `pending` lists it.
#[derive(Debug, Clone)]
pub struct Parked {
    /// The call's id.
    pub id: String,
    /// What `call --park` printed for it (`None` while it runs).
    pub parked: Option<Value>,
    /// Seconds since it parked.
    pub age: u64,
}

/// What parked call `id` asks now.
pub fn describe(id: &str) -> Result<Parked, ParkError> {
    let mut channel = connect(id)?;
    let _ = channel.set_read_timeout(Some(DESCRIBE_LIMIT));
    protocol::send(&mut channel, &ToHolder::Describe)
        .map_err(|e| ParkError::failed(format!("cannot reach the parked call {id}: {e}")))?;
    let mut reader = protocol::reader(channel);
    match protocol::receive(&mut reader, protocol::FROM_HOLDER_LIMIT)? {
        Some(FromHolder::Described { parked, age }) => Ok(Parked {
            id: id.to_string(),
            parked,
            age,
        }),
        _ => Err(ParkError::gone(id)),
    }
}

/// The user's parked calls as [`pending`] finds them.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The calls that answered, oldest id first.
    pub calls: Vec<Parked>,
    /// Calls whose holder is there but did not describe its call in time
    /// (stopped or hung): each id and why.
    pub silent: Vec<(String, String)>,
}

/// The user's parked calls, oldest id first; calls that ended unseen are
/// cleared away, and one whose holder does not answer is set aside
/// instead of holding up the rest.
pub fn pending() -> Result<Listing, ParkError> {
    let folder = place::folder()?;
    let mut listing = Listing::default();
    for id in place::ids(&folder)? {
        match describe(&id) {
            Ok(call) => listing.calls.push(call),
            Err(e) if e.exit == EXIT_GONE => {}
            Err(e) => listing.silent.push((id, e.message)),
        }
    }
    Ok(listing)
}
