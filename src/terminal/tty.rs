//! The controlling terminal: opened as `/dev/tty` so elicit can prompt in the
//! middle of a pipe (`cat req.json | elicit | jq .`) and with stderr sent to
//! a file (`2>log`), where a prompt library checking stderr would refuse.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::sync::Arc;

use console::Term;

/// The terminal prompts are drawn on, plus what is needed to put it back as
/// it was whatever happens (Ctrl-C, timeout, a panic in a prompt).
pub struct Tty {
    pub term: Term,
    saved: Option<SavedMode>,
    pub colors: bool,
}

/// The terminal's mode when elicit started, restored on the way out.
///
/// Written with `libc` by hand: console switches to raw mode inside each
/// key read and restores it itself, but when a timeout abandons a blocked
/// read, nobody else is left to restore it.
#[derive(Clone)]
struct SavedMode {
    file: Arc<File>,
    termios: libc::termios,
}

impl Tty {
    /// Opens `/dev/tty` for reading and writing. Fails (with the reason as
    /// text) when the process has no controlling terminal: CI, cron, setsid.
    pub fn open() -> Result<Tty, String> {
        let open = || OpenOptions::new().read(true).write(true).open("/dev/tty");
        let read = open().map_err(|e| format!("cannot open /dev/tty: {e}"))?;
        let write = open().map_err(|e| format!("cannot open /dev/tty: {e}"))?;
        // SAFETY: isatty only inspects the descriptor, which is open.
        if unsafe { libc::isatty(read.as_raw_fd()) } != 1 {
            return Err("/dev/tty is not a terminal".into());
        }
        let saved = save_mode(&write);
        if let Some(s) = &saved {
            // A duplicate the guard keeps for the life of the process, so
            // it can always reach the terminal (in a signal handler too).
            // SAFETY: dup of an open descriptor.
            let fd = unsafe { libc::dup(s.file.as_raw_fd()) };
            if fd >= 0 {
                crate::signals::guard_terminal(fd, s.termios);
            }
        }
        let colors = crate::terminal::color::enabled();
        // Our styles are drawn on the tty, not stderr, so decide colours from
        // the tty (and --color, NO_COLOR, TERM=dumb), not from where stderr
        // points.
        console::set_colors_enabled_stderr(colors);
        console::set_colors_enabled(colors);
        crate::signals::install_interrupt_handler();
        let term = Term::read_write_pair(read, write);
        Ok(Tty {
            term,
            saved,
            colors,
        })
    }

    /// Puts the terminal back: visible cursor, the original line mode.
    pub fn restore(&self) {
        let _ = self.term.show_cursor();
        let _ = self.term.flush();
        if let Some(s) = &self.saved {
            s.apply();
        }
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        self.restore();
    }
}

fn save_mode(file: &File) -> Option<SavedMode> {
    let mut termios = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: the fd is open and termios points at writable memory of the
    // right type; on success tcgetattr has initialised it.
    let ok = unsafe { libc::tcgetattr(file.as_raw_fd(), termios.as_mut_ptr()) } == 0;
    if !ok {
        return None;
    }
    Some(SavedMode {
        file: Arc::new(file.try_clone().ok()?),
        // SAFETY: initialised by the successful tcgetattr above.
        termios: unsafe { termios.assume_init() },
    })
}

impl SavedMode {
    fn apply(&self) {
        // SAFETY: the fd is open (we hold the File) and termios is a value
        // previously filled in by tcgetattr.
        unsafe {
            libc::tcsetattr(self.file.as_raw_fd(), libc::TCSANOW, &self.termios);
        }
    }
}
