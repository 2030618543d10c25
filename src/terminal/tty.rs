//! The controlling terminal: opened as `/dev/tty` so elicit can prompt in the
//! middle of a pipe (`cat req.json | elicit | jq .`) and with stderr sent to
//! a file (`2>log`), where a prompt library checking stderr would refuse.

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
            install_exit_guard(s);
        }
        let colors = crate::terminal::color::enabled();
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

/// The terminal as it was, for the exit guard: a descriptor of our own
/// (never closed) and the saved mode, readable without a lock from a signal
/// handler or an `atexit` function.
struct GuardState {
    fd: libc::c_int,
    termios: libc::termios,
}

static GUARD: OnceLock<GuardState> = OnceLock::new();

/// True while a prompt may hold the terminal (raw mode, hidden cursor).
static PROMPTING: AtomicBool = AtomicBool::new(false);

/// Marks the span during which a prompt may have changed the terminal:
/// every exit path in it restores the terminal (see [`restore_now`]).
pub fn set_prompting(on: bool) {
    PROMPTING.store(on, Ordering::SeqCst);
}

/// Registers, once, the restore that no exit path can skip: a panic hook
/// (any thread; runs before the default hook, even with `panic = "abort"`)
/// and an `atexit` function (a return from `main`, or `std::process::exit`
/// from any thread). Fatal signals are [`restore_on_fatal_signals`].
fn install_exit_guard(saved: &SavedMode) {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: dup of an open descriptor; the copy is kept for the life
        // of the process so the guard can always reach the terminal.
        let fd = unsafe { libc::dup(saved.file.as_raw_fd()) };
        if fd < 0 {
            return;
        }
        let _ = GUARD.set(GuardState {
            fd,
            termios: saved.termios,
        });
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_now();
            previous(info);
        }));
        extern "C" fn at_exit() {
            restore_now();
        }
        // SAFETY: registers a plain function that only calls restore_now,
        // which does no allocation, takes no lock and cannot unwind.
        unsafe {
            libc::atexit(at_exit);
        }
    });
}

/// Puts the terminal back if a prompt may have changed it: the saved line
/// mode (only when it differs, so an idle elicit never touches a terminal
/// it left alone) and a visible cursor. Async-signal-safe: only
/// `tcgetattr`, `tcsetattr` and `write` on a descriptor opened beforehand,
/// no lock, no allocation.
pub fn restore_now() {
    let Some(g) = GUARD.get() else {
        return;
    };
    let prompting = PROMPTING.load(Ordering::SeqCst);
    let mut now = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: g.fd is open for the life of the process; `now` is written by
    // a successful tcgetattr before it is read.
    let changed = unsafe {
        if libc::tcgetattr(g.fd, now.as_mut_ptr()) != 0 {
            false
        } else {
            let now = now.assume_init();
            now.c_lflag != g.termios.c_lflag
                || now.c_iflag != g.termios.c_iflag
                || now.c_oflag != g.termios.c_oflag
                || now.c_cflag != g.termios.c_cflag
        }
    };
    if changed {
        // SAFETY: as above; termios was filled in by tcgetattr at open.
        unsafe {
            libc::tcsetattr(g.fd, libc::TCSANOW, &g.termios);
        }
    }
    if changed || prompting {
        const SHOW_CURSOR: &[u8] = b"\x1b[?25h";
        // SAFETY: writes a static buffer to an open descriptor.
        unsafe {
            libc::write(g.fd, SHOW_CURSOR.as_ptr().cast(), SHOW_CURSOR.len());
        }
    }
}

/// For a run that has nothing else to do on SIGTERM, SIGHUP or SIGQUIT
/// (resolving a document): restore the terminal, then die of the signal as
/// if no handler were installed (the exit status still says which signal).
/// `elicit call` and `elicit proxy` handle these signals themselves (they
/// stop or forward to the server) and call [`restore_now`] on their way out
/// or rely on the `atexit` guard.
pub fn restore_on_fatal_signals() {
    use signal_hook::consts::{SIGHUP, SIGQUIT, SIGTERM};
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        for sig in [SIGTERM, SIGHUP, SIGQUIT] {
            // SAFETY: the action is async-signal-safe: restore_now (see
            // there) and signal-hook's emulate_default_handler, which resets
            // the default action and raises the signal again.
            let _ = unsafe {
                signal_hook::low_level::register(sig, move || {
                    restore_now();
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                })
            };
        }
    });
}
