//! The controlling terminal: opened as `/dev/tty` (on Windows the console,
//! `CONIN$`/`CONOUT$`) so elicit can prompt in the middle of a pipe
//! (`cat req.json | elicit | jq .`) and with stderr sent to a file
//! (`2>log`), where a prompt library checking stderr would refuse.

use std::fs::File;
use std::sync::Arc;

use console::Term;

use elicit_platform::terminal::{self, DrawOn, SavedMode};

/// What prompts draw on (a `console::Term`, which it derefs to) and the
/// terminal's own file their keys are read from.
#[derive(Clone)]
pub struct Screen {
    term: Term,
    keys: Arc<File>,
}

impl Screen {
    /// The terminal's file, for the platform's key reading and type-ahead.
    pub(crate) fn keys(&self) -> &File {
        &self.keys
    }
}

impl std::ops::Deref for Screen {
    type Target = Term;

    fn deref(&self) -> &Term {
        &self.term
    }
}

/// The terminal prompts are drawn on, plus what is needed to put it back as
/// it was whatever happens (Ctrl-C, timeout, a panic in a prompt).
pub(crate) struct Tty {
    pub term: Screen,
    saved: Option<SavedMode>,
}

impl Tty {
    /// Opens the terminal for reading and writing. Fails (with the reason as
    /// text) when the process has no controlling terminal: CI, cron, setsid.
    pub fn open() -> Result<Tty, String> {
        let (read, write) = terminal::open()?;
        let saved = SavedMode::save(&write);
        if let Some(s) = &saved {
            // Kept for the life of the process, so it can always reach the
            // terminal (in a signal handler too).
            elicit_platform::handlers::guard_terminal(s);
        }
        let colors = crate::terminal::color::enabled();
        // Our styles are drawn on the tty, not stderr, so decide colours from
        // the tty (and --color, NO_COLOR, TERM=dumb), not from where stderr
        // points.
        console::set_colors_enabled_stderr(colors);
        console::set_colors_enabled(colors);
        elicit_platform::handlers::install_interrupt_handler();
        // The keys are read from the file prompts are drawn on (the
        // terminal, open for both).
        let keys = write
            .try_clone()
            .map_err(|e| format!("cannot open {}: {e}", terminal::NAME))?;
        let term = match terminal::draw_on(read, write)? {
            // `console` builds a terminal on a pair of files on Unix only
            // (`read_write_pair`); the platform offers them there alone.
            #[cfg(unix)]
            DrawOn::Files { read, write } => Term::read_write_pair(read, write),
            DrawOn::StandardError => Term::stderr(),
        };
        Ok(Tty {
            term: Screen {
                term,
                keys: Arc::new(keys),
            },
            saved,
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
