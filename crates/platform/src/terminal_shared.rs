//! What the terminal module hands out on every system, in elicit's own
//! words rather than a UI library's: the keys the prompts know, and where
//! prompts are drawn.

/// A key, decoded alike on every system: the control keys a terminal sends
/// as bytes on Unix (Ctrl-C, Ctrl-D, Ctrl-A, Ctrl-E) are the same keys as a
/// Windows console's key events.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// A character typed (Ctrl-D is `Char('\u{4}')`, Ctrl-U `Char('\u{15}')`).
    Char(char),
    /// Ctrl-C, read as a key in raw mode rather than a signal.
    CtrlC,
    /// Enter (Return).
    Enter,
    /// Backspace.
    Backspace,
    /// Tab.
    Tab,
    /// Shift-Tab.
    BackTab,
    /// Home (or Ctrl-A).
    Home,
    /// End (or Ctrl-E).
    End,
    /// Esc alone.
    Escape,
    /// The up arrow.
    ArrowUp,
    /// The down arrow.
    ArrowDown,
    /// The left arrow.
    ArrowLeft,
    /// The right arrow.
    ArrowRight,
    /// Insert.
    Insert,
    /// Delete (forward).
    Del,
    /// Page Up.
    PageUp,
    /// Page Down.
    PageDown,
    /// Something that is not a key the prompts know (a key release, a
    /// resize, a broken UTF-8 sequence).
    Unknown,
    /// An escape sequence the decoder does not know, without its Esc.
    UnknownEscSeq(Vec<char>),
}

/// Where prompts are drawn, for the UI to build its terminal on.
pub enum DrawOn {
    /// The terminal's own files: keys are read from `read`, prompts
    /// written to `write` (Unix: `/dev/tty`, opened twice). Unix only, as
    /// a UI library draws on a pair of files there alone.
    #[cfg(unix)]
    Files {
        /// The terminal, for reading.
        read: std::fs::File,
        /// The terminal, for writing.
        write: std::fs::File,
    },
    /// Standard error, which [`super::terminal::on_console`] points at the
    /// console while a prompt is up (Windows, where the UI draws only on a
    /// standard handle).
    StandardError,
}
