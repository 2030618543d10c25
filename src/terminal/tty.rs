//! The controlling terminal: opened as `/dev/tty` so elicit can prompt in the
//! middle of a pipe (`cat req.json | elicit | jq .`) and with stderr sent to
//! a file (`2>log`), where dialoguer's own stderr check would refuse.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use console::Term;

/// Set by the SIGINT handler. console raises SIGINT on itself when it reads
/// Ctrl-C in raw mode; with a handler installed the read then fails with
/// `Interrupted`, which elicit turns into `cancel` instead of dying with the
/// cursor hidden and nothing printed.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How many times Ctrl-C was pressed: lets a wait that is not a prompt (a
/// live server's reply) notice a *new* Ctrl-C, whatever happened before.
static INTERRUPT_COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

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

static RESTORE: OnceLock<Mutex<Option<SavedMode>>> = OnceLock::new();

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
            let cell = RESTORE.get_or_init(|| Mutex::new(None));
            if let Ok(mut slot) = cell.lock() {
                *slot = Some(s.clone());
            }
        }
        let colors = crate::color::enabled();
        // Our styles are drawn on the tty, not stderr, so decide colours from
        // the tty (and --color, NO_COLOR, TERM=dumb), not from where stderr
        // points.
        console::set_colors_enabled_stderr(colors);
        console::set_colors_enabled(colors);
        install_interrupt_handler();
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

/// Restores the terminal saved by the last [`Tty::open`], from anywhere
/// (used when a timeout abandons a prompt that is still blocked reading).
pub fn restore_global() {
    if let Some(cell) = RESTORE.get() {
        if let Ok(slot) = cell.lock() {
            if let Some(s) = slot.as_ref() {
                s.apply();
                // Show the cursor again (a select hides it while drawn).
                use std::io::Write;
                let mut f: &File = &s.file;
                let _ = f.write_all(b"\x1b[?25h");
                let _ = f.flush();
            }
        }
    }
}

/// Installs the SIGINT handler (once). Also used by `elicit call` without
/// a terminal, so Ctrl-C ends a call cleanly (server stopped) rather than
/// killing elicit and orphaning the server.
pub fn install_interrupt_handler() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let _ = ctrlc::set_handler(|| {
            INTERRUPT_COUNT.fetch_add(1, Ordering::SeqCst);
            INTERRUPTED.store(true, Ordering::SeqCst);
        });
    });
}

/// Forgets an earlier Ctrl-C (a new prompt starts afresh).
pub fn clear_interrupt() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// The number of Ctrl-C presses so far.
pub fn interrupt_count() -> usize {
    INTERRUPT_COUNT.load(Ordering::SeqCst)
}

/// True once Ctrl-C was pressed (between prompts, the terminal is in cooked
/// mode and the signal arrives here rather than as a key).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
