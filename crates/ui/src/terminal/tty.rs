//! The controlling terminal: opened as `/dev/tty` (on Windows the console,
//! `CONIN$`/`CONOUT$`) so elicit can prompt in the middle of a pipe
//! (`cat req.json | elicit | jq .`) and with stderr sent to a file
//! (`2>log`), where a prompt library checking stderr would refuse.

use console::Term;

use elicit_platform::terminal::{self, SavedMode};

/// The terminal prompts are drawn on, plus what is needed to put it back as
/// it was whatever happens (Ctrl-C, timeout, a panic in a prompt).
pub(crate) struct Tty {
    pub term: Term,
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
        let term = terminal::term(read, write)?;
        Ok(Tty { term, saved })
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
