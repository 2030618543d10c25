//! The URL flow: show the full URL and its host before anything else, warn
//! about what looks wrong, open the browser only on an explicit choice, then
//! wait for the person to say they finished.
//!
//! The URL is never fetched, not even a HEAD: the spec forbids pre-fetching,
//! and the page is for the person, not for elicit.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use console::{style, Key, Term};

use super::render::{footer, header};
use super::widgets::{
    check_interrupt, consent_pause, discard_typeahead, select, Interrupt, Prompted,
};
use crate::url_safety::{assess_url, UrlAssessment};

/// How the URL flow ended (cancel is `Err(Interrupt::Cancelled)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlOutcome {
    /// The person says they finished on the page.
    Completed,
    Declined,
}

/// How to launch the browser.
#[derive(Debug, Clone, Default)]
pub struct Opener {
    /// `--browser` / `ELICIT_BROWSER`: a program to run with the URL.
    pub program: Option<String>,
    /// `--no-open`: never launch anything.
    pub never: bool,
}

impl Opener {
    /// Launches the browser detached: elicit never waits on it, and the
    /// launcher's stdio is null so it cannot write into our stdout.
    fn launch(&self, url: &str) -> io::Result<()> {
        match &self.program {
            Some(p) => launch_program(url, p),
            None => open::that_detached(url),
        }
    }
}

/// Set when the task behind the link finished elsewhere: elicit's own
/// sign-in listener saw the browser come back. The waiting screen then ends
/// as if the person had pressed Enter. Cleared when a URL flow starts, so a
/// late signal never ends a later flow.
static DONE_ELSEWHERE: AtomicBool = AtomicBool::new(false);

/// Ends the waiting screen of the URL flow now showing (or about to show):
/// "done" without a key press. Harmless when no flow is waiting.
pub fn done_elsewhere() {
    DONE_ELSEWHERE.store(true, Ordering::SeqCst);
}

/// How long a launched program is watched for an early failure (the same
/// window `open` gives the system launchers).
const LAUNCH_CHECK: Duration = Duration::from_millis(250);

/// Runs `--browser PROGRAM URL` in its own session with null stdio, like
/// `open::with_detached`, but watches it for [`LAUNCH_CHECK`]: a program
/// that fails at once is reported instead of announced as opened.
/// (`open::with_detached` only confirms the spawn.)
fn launch_program(url: &str, program: &str) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut cmd = open::with_command(url, program);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe; it detaches the browser from our
    // terminal so Ctrl-C or closing the terminal does not reach it.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let started = Instant::now();
    loop {
        match child.try_wait()? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => {
                return Err(io::Error::other(format!("{program} failed with {status}")))
            }
            None if started.elapsed() >= LAUNCH_CHECK => {
                // Still running: a browser that stays in the foreground.
                // Reap it whenever it ends, without waiting here.
                std::thread::spawn(move || {
                    let _ = child.wait();
                });
                return Ok(());
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Runs the flow for `raw_url`.
pub fn run(
    term: &Term,
    server: &str,
    message: &str,
    position: Option<(usize, usize)>,
    raw_url: &str,
    opener: &Opener,
) -> Prompted<UrlOutcome> {
    DONE_ELSEWHERE.store(false, Ordering::SeqCst);
    let a = assess_url(raw_url);
    discard_typeahead(term);
    header(term, server, "asks you to open a link", message, position);
    show_url(term, &a);
    let open_allowed = a.openable && !opener.never;
    let mut items: Vec<String> = Vec::new();
    if open_allowed {
        items.push("Open in the browser".into());
    }
    if a.openable {
        items.push("Show only (I will copy the URL myself)".into());
    }
    items.push("Decline".into());
    items.push("Cancel".into());
    if !a.openable {
        footer(
            term,
            "this URL will not be opened: you can only decline or cancel",
        );
    } else if opener.never {
        footer(
            term,
            "--no-open: nothing will be launched; copy the URL by hand",
        );
    } else {
        footer(term, "nothing opens until you choose it · Esc cancels");
    }
    consent_pause(term)?;
    let picked = select(term, "What do you want to do?", &items, 0)?;
    let choice = items[picked].as_str();
    if choice.starts_with("Decline") {
        return Ok(UrlOutcome::Declined);
    }
    if choice.starts_with("Cancel") {
        return Err(Interrupt::Cancelled);
    }
    let target = a.normalized.as_deref().unwrap_or(raw_url);
    if choice.starts_with("Open") {
        match opener.launch(target) {
            Ok(()) => {
                let _ = term.write_line(&format!(
                    "{} opened in {}",
                    style("✓").green(),
                    opener
                        .program
                        .as_deref()
                        .map(crate::sanitize::sanitize_line)
                        .unwrap_or_else(|| "your browser".into())
                ));
            }
            Err(e) => {
                let why = match (e.kind(), &opener.program) {
                    (io::ErrorKind::NotFound, None) => {
                        "no opener found: install xdg-utils, or pass --browser PROGRAM".to_string()
                    }
                    (_, None) => "the system opener (xdg-open or the like) failed".to_string(),
                    (_, Some(_)) => crate::sanitize::sanitize_line(&e.to_string()),
                };
                let _ = term.write_line(&format!(
                    "{} could not open a browser ({why}); copy the URL above and open it yourself",
                    style("✗").red().bold(),
                ));
            }
        }
    } else {
        let _ = term.write_line(&format!(
            "{} copy the URL above and open it yourself",
            style("→").cyan()
        ));
    }
    wait_for_person(term)
}

fn show_url(term: &Term, a: &UrlAssessment) {
    let bar = style("│").dim();
    let _ = term.write_line(&format!("{bar}"));
    let _ = term.write_line(&format!("{bar} {}  {}", style("URL ").dim(), a.display));
    // Show a non-default port with the host: it is part of where you go.
    let port = a
        .normalized
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.port())
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    let host_ascii = a.host_ascii.as_ref().map(|h| format!("{h}{port}"));
    match (&host_ascii, &a.host_unicode) {
        (Some(host), Some(uni)) => {
            let _ = term.write_line(&format!(
                "{bar} {}  {}   {}",
                style("Host").dim(),
                style(format!(" {host} ")).reverse().bold(),
                style(format!("displayed as {uni}")).yellow()
            ));
        }
        (Some(host), None) => {
            let _ = term.write_line(&format!(
                "{bar} {}  {}",
                style("Host").dim(),
                style(format!(" {host} ")).reverse().bold()
            ));
        }
        _ => {}
    }
    for w in &a.warnings {
        let (mark, text) = if w.is_blocking() {
            (style("✗").red().bold(), style(w.to_string()).red())
        } else if matches!(w, crate::url_safety::UrlWarning::LoopbackHttp) {
            (style("ℹ").cyan(), style(w.to_string()).dim())
        } else {
            (style("⚠").yellow().bold(), style(w.to_string()).yellow())
        };
        let _ = term.write_line(&format!("{bar} {mark} {text}"));
    }
}

/// Waits until the person says they are done (Enter), declines (d) or
/// cancels (Esc, q, Ctrl-C, end of input), showing the time elapsed.
fn wait_for_person(term: &Term) -> Prompted<UrlOutcome> {
    check_interrupt()?;
    // "Done" must be a key pressed at this screen, not a second Enter
    // typed on from the choice before it.
    discard_typeahead(term);
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let hint = "Enter: done · d: decline · Esc: cancel";
    let draw = {
        let term = term.clone();
        move |elapsed: Duration| {
            let s = elapsed.as_secs();
            let _ = term.clear_line();
            let _ = term.write_str(&format!(
                "{} waiting for you to finish in the browser… {}  {}",
                style("⏳").cyan(),
                style(format!("{}:{:02}", s / 60, s % 60)).bold(),
                style(hint).dim()
            ));
            let _ = term.flush();
        }
    };
    draw(Duration::ZERO);
    let ticker = {
        let stop = stop.clone();
        let draw = draw.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(250));
                if !stop.load(Ordering::SeqCst) {
                    draw(started.elapsed());
                }
            }
        })
    };
    // Keys are read only when one is there, so the loop can also notice
    // [`done_elsewhere`]; without a key-at-a-time mode the terminal would
    // hold `d` or Esc back until Enter.
    let mode = KeyAtATime::start();
    let outcome = loop {
        if DONE_ELSEWHERE.load(Ordering::SeqCst) {
            break Ok(UrlOutcome::Completed);
        }
        match mode
            .as_ref()
            .map(|m| m.key_ready(Duration::from_millis(100)))
        {
            Some(Ok(false)) => {
                if let Err(e) = check_interrupt() {
                    break Err(e);
                }
                continue;
            }
            Some(Err(e)) => break Err(Interrupt::from(e)),
            Some(Ok(true)) | None => {}
        }
        match term.read_key() {
            Ok(Key::Enter) => break Ok(UrlOutcome::Completed),
            Ok(Key::Char('d' | 'D')) => break Ok(UrlOutcome::Declined),
            Ok(Key::Escape | Key::Char('q' | 'Q') | Key::CtrlC | Key::Char('\u{4}')) => {
                break Err(Interrupt::Cancelled)
            }
            Ok(_) => {}
            Err(e) => break Err(Interrupt::from(e)),
        }
    };
    drop(mode);
    stop.store(true, Ordering::SeqCst);
    let _ = ticker.join();
    let _ = term.clear_line();
    let s = started.elapsed().as_secs();
    let said = match &outcome {
        Ok(UrlOutcome::Completed) => "done",
        Ok(UrlOutcome::Declined) => "declined",
        Err(_) => "cancelled",
    };
    let _ = term.write_line(&format!(
        "{} {said} after {}:{:02}",
        style("⏳").dim(),
        s / 60,
        s % 60
    ));
    outcome
}

/// The terminal in non-canonical mode (no echo, signals kept) for the
/// waiting screen, put back as it was on drop. `console` switches to raw
/// mode only inside `read_key`, which blocks; polling first needs the keys
/// delivered one at a time. `None` when the terminal cannot be set (the
/// screen then waits on `read_key` alone, without the done-elsewhere signal).
struct KeyAtATime {
    file: std::fs::File,
    saved: libc::termios,
}

impl KeyAtATime {
    fn start() -> Option<Self> {
        use std::os::fd::AsRawFd;
        // The device `console` reads keys from: stdin when it is a terminal,
        // else /dev/tty (the mode belongs to the device, not the descriptor).
        let file = std::fs::File::open("/dev/tty").ok()?;
        let fd = file.as_raw_fd();
        let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: fd is open; t points at writable termios memory that
        // tcgetattr fills on success.
        if unsafe { libc::tcgetattr(fd, t.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: initialised by the successful tcgetattr.
        let saved = unsafe { t.assume_init() };
        let mut raw = saved;
        raw.c_lflag &= !(libc::ICANON | libc::ECHO);
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // SAFETY: fd is open; raw is a valid termios value.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return None;
        }
        Some(KeyAtATime { file, saved })
    }

    /// Whether a key is waiting, after at most `wait`.
    fn key_ready(&self, wait: Duration) -> io::Result<bool> {
        use std::os::fd::AsRawFd;
        let mut pfd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, wait.as_millis() as libc::c_int) };
        match n {
            n if n > 0 => Ok(true),
            0 => Ok(false),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    Ok(false)
                } else {
                    Err(e)
                }
            }
        }
    }
}

impl Drop for KeyAtATime {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: the fd is open; saved came from tcgetattr.
        unsafe {
            libc::tcsetattr(self.file.as_raw_fd(), libc::TCSANOW, &self.saved);
        }
    }
}
