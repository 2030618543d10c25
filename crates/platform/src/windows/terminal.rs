//! The console on Windows: `CONIN$`/`CONOUT$` (never stdin/stdout, so a
//! prompt works in the middle of a pipe), console modes through
//! `windows-sys`, keys as console input events through `crossterm`.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::os::windows::io::AsRawHandle;
use std::sync::OnceLock;
use std::time::Duration;

pub use crate::terminal_shared::{DrawOn, Key};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Console::{
    FlushConsoleInputBuffer, GetConsoleMode, GetStdHandle, SetConsoleMode, SetStdHandle,
    CONSOLE_MODE, ENABLE_ECHO_INPUT, ENABLE_LINE_INPUT, ENABLE_PROCESSED_INPUT,
    ENABLE_VIRTUAL_TERMINAL_PROCESSING, STD_ERROR_HANDLE,
};

/// Where prompts are drawn and keys read: the console.
pub const NAME: &str = "the console (CONIN$/CONOUT$)";

fn open_console(name: &str) -> io::Result<File> {
    OpenOptions::new().read(true).write(true).open(name)
}

/// The console mode of `file`, if it is a console.
fn mode_of(file: &File) -> Option<CONSOLE_MODE> {
    let mut mode: CONSOLE_MODE = 0;
    // SAFETY: FFI without a safe wrapper in windows-sys; the handle is
    // open (owned by `file`) and `mode` is a valid place for the result.
    let ok = unsafe { GetConsoleMode(file.as_raw_handle(), &mut mode) };
    (ok != 0).then_some(mode)
}

fn set_mode(file: &File, mode: CONSOLE_MODE) -> io::Result<()> {
    // SAFETY: FFI without a safe wrapper; the handle is open (owned by
    // `file`); SetConsoleMode only reads its arguments.
    if unsafe { SetConsoleMode(file.as_raw_handle(), mode) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens the console for reading (`CONIN$`) and writing (`CONOUT$`).
/// Fails, with the reason as text, when the process has no console (a
/// service, a detached process).
pub fn open() -> Result<(File, File), String> {
    let read = open_console("CONIN$").map_err(|e| format!("cannot open CONIN$: {e}"))?;
    let write = open_console("CONOUT$").map_err(|e| format!("cannot open CONOUT$: {e}"))?;
    if mode_of(&read).is_none() || mode_of(&write).is_none() {
        return Err("CONIN$/CONOUT$ is not a console".into());
    }
    Ok((read, write))
}

/// The console's input and output modes when elicit opened it, to put
/// back on the way out.
pub struct SavedMode {
    input: File,
    input_mode: CONSOLE_MODE,
    output: File,
    output_mode: CONSOLE_MODE,
}

impl SavedMode {
    /// The modes of the console `output` is open on (and of its input);
    /// `None` if it is not a console. The output then also interprets the
    /// VT sequences elicit draws with (colours, cursor moves), which
    /// [`SavedMode::apply`] takes back.
    pub fn save(output: &File) -> Option<SavedMode> {
        let output = output.try_clone().ok()?;
        let output_mode = mode_of(&output)?;
        let input = open_console("CONIN$").ok()?;
        let input_mode = mode_of(&input)?;
        let _ = set_mode(&output, output_mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
        Some(SavedMode {
            input,
            input_mode,
            output,
            output_mode,
        })
    }

    fn try_clone(&self) -> Option<SavedMode> {
        Some(SavedMode {
            input: self.input.try_clone().ok()?,
            input_mode: self.input_mode,
            output: self.output.try_clone().ok()?,
            output_mode: self.output_mode,
        })
    }

    /// Puts the saved modes back.
    pub fn apply(&self) {
        let _ = set_mode(&self.input, self.input_mode);
        let _ = set_mode(&self.output, self.output_mode);
    }

    /// Whether the console's modes differ from the saved ones.
    fn changed(&self) -> bool {
        mode_of(&self.input) != Some(self.input_mode)
            || mode_of(&self.output).is_some_and(|m| {
                // VT processing is elicit's own while it runs.
                m & !ENABLE_VIRTUAL_TERMINAL_PROCESSING
                    != self.output_mode & !ENABLE_VIRTUAL_TERMINAL_PROCESSING
            })
    }
}

static REMEMBERED: OnceLock<SavedMode> = OnceLock::new();

/// Keeps, for the life of the process, what [`restore_remembered`] needs.
/// True the first time only.
pub fn remember(saved: &SavedMode) -> bool {
    saved
        .try_clone()
        .is_some_and(|saved| REMEMBERED.set(saved).is_ok())
}

/// Puts the remembered console back: the saved modes when they differ,
/// and a visible cursor when they differed or `show_cursor`. Called from
/// a console control handler (a thread of its own on Windows), a panic
/// hook or at exit.
pub fn restore_remembered(show_cursor: bool) {
    let Some(t) = REMEMBERED.get() else {
        return;
    };
    let changed = t.changed();
    if changed || show_cursor {
        let _ = (&t.output).write_all(b"\x1b[?25h");
    }
    if changed {
        t.apply();
    }
}

/// Drops whatever was typed but not yet read (type-ahead): the console's
/// own input, whichever file is given.
pub fn discard_input(_input: &File) {
    if let Ok(input) = open_console("CONIN$") {
        // SAFETY: FFI without a safe wrapper; the handle is open (owned by
        // `input`).
        unsafe {
            FlushConsoleInputBuffer(input.as_raw_handle());
        }
    }
}

/// Raw input (no echo, no line editing, Ctrl-C a key rather than a
/// console control event) for as long as it lives, restored on drop; keys
/// are read through it as console input events.
pub struct RawKeys<'a> {
    input: File,
    saved: CONSOLE_MODE,
    _keys: std::marker::PhantomData<&'a File>,
}

impl<'a> RawKeys<'a> {
    /// Puts the console in raw mode for key reading (the console's own
    /// input, `CONIN$`, whichever file is given); the mode is put back on
    /// drop.
    pub fn enter(_input: &'a File) -> io::Result<RawKeys<'a>> {
        let input = open_console("CONIN$")?;
        let saved = mode_of(&input).ok_or_else(|| io::Error::other("CONIN$ is not a console"))?;
        set_mode(
            &input,
            saved & !(ENABLE_LINE_INPUT | ENABLE_ECHO_INPUT | ENABLE_PROCESSED_INPUT),
        )?;
        Ok(RawKeys {
            input,
            saved,
            _keys: std::marker::PhantomData,
        })
    }

    /// Waits up to `timeout` for an input event.
    pub fn ready(&self, timeout: Duration) -> io::Result<bool> {
        event::poll(timeout)
    }

    /// Reads the next input event as a key: `Key::Unknown` for an event
    /// that is not a key press (a release, a resize, the mouse). Never
    /// `Ok(None)`: a console does not hang up.
    pub fn read_key(&self) -> io::Result<Option<Key>> {
        Ok(Some(match event::read()? {
            Event::Key(k) => key(k),
            _ => Key::Unknown,
        }))
    }
}

impl Drop for RawKeys<'_> {
    fn drop(&mut self) {
        let _ = set_mode(&self.input, self.saved);
    }
}

/// A console key event as the key the widgets know; the control keys the
/// Unix decoder gives for bytes (Ctrl-C, Ctrl-D, Ctrl-A, Ctrl-E) alike.
pub(crate) fn key(k: KeyEvent) -> Key {
    if k.kind == KeyEventKind::Release {
        return Key::Unknown;
    }
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    match k.code {
        KeyCode::Char('c' | 'C') if ctrl => Key::CtrlC,
        KeyCode::Char('d' | 'D') if ctrl => Key::Char('\u{4}'),
        KeyCode::Char('a' | 'A') if ctrl => Key::Home,
        KeyCode::Char('e' | 'E') if ctrl => Key::End,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Esc => Key::Escape,
        KeyCode::Up => Key::ArrowUp,
        KeyCode::Down => Key::ArrowDown,
        KeyCode::Left => Key::ArrowLeft,
        KeyCode::Right => Key::ArrowRight,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Insert => Key::Insert,
        KeyCode::Delete => Key::Del,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        _ => Key::Unknown,
    }
}

/// Where prompts are drawn: the console. The UI draws on Windows only
/// through a standard handle, so this is stderr, and while a prompt is
/// drawn ([`on_console`]) elicit's stderr handle is the console's own
/// output, `CONOUT$`: a prompt reaches the console even with stderr
/// redirected (`2> log`), and never stdout, which carries the result.
/// Fails only when there is no console at all.
pub fn draw_on(_read: File, write: File) -> Result<DrawOn, String> {
    if io::stderr().is_terminal() || mode_of(&write).is_some() {
        Ok(DrawOn::StandardError)
    } else {
        Err("CONOUT$ is not a console".into())
    }
}

/// While this lives, elicit's standard error handle is the console's
/// output (`CONOUT$`), so that what the UI draws on "stderr" goes to the
/// console; the handle stderr had is put back when it is dropped. Nothing
/// is changed when stderr is the console already.
pub struct OnConsole {
    previous: Option<HANDLE>,
    _conout: Option<File>,
}

/// Points stderr at the console for the span of a prompt (see
/// [`OnConsole`]). Other threads' writes to stderr meanwhile go to the
/// console too: while a prompt is up the server's lines are held back and
/// the status line is not drawn (`crate::handlers`), so what is left is
/// elicit's own words about the prompt.
pub fn on_console() -> OnConsole {
    let unchanged = OnConsole {
        previous: None,
        _conout: None,
    };
    if io::stderr().is_terminal() {
        return unchanged;
    }
    let Ok(conout) = open_console("CONOUT$") else {
        return unchanged;
    };
    if mode_of(&conout).is_none() {
        return unchanged;
    }
    // SAFETY: FFI without a safe wrapper in windows-sys (std has no way to
    // replace a standard handle). GetStdHandle only reads the process's
    // table; SetStdHandle stores a handle that stays open for as long as
    // it is installed: `conout` is kept in the guard, which puts the old
    // handle back before closing it.
    unsafe {
        let previous = GetStdHandle(STD_ERROR_HANDLE);
        if SetStdHandle(STD_ERROR_HANDLE, conout.as_raw_handle() as HANDLE) == 0 {
            return unchanged;
        }
        OnConsole {
            previous: Some(previous),
            _conout: Some(conout),
        }
    }
}

impl Drop for OnConsole {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            let _ = io::stderr().flush();
            // SAFETY: as in `on_console`: puts back the handle stderr had
            // (still open: elicit never closes its standard handles).
            unsafe {
                SetStdHandle(STD_ERROR_HANDLE, previous);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode, modifiers: KeyModifiers) -> Key {
        key(KeyEvent::new(code, modifiers))
    }

    #[test]
    fn console_keys_map_to_the_keys_the_unix_decoder_gives() {
        assert_eq!(press(KeyCode::Char('c'), KeyModifiers::CONTROL), Key::CtrlC);
        assert_eq!(
            press(KeyCode::Char('d'), KeyModifiers::CONTROL),
            Key::Char('\u{4}')
        );
        assert_eq!(
            press(KeyCode::Char('é'), KeyModifiers::NONE),
            Key::Char('é')
        );
        assert_eq!(press(KeyCode::Enter, KeyModifiers::NONE), Key::Enter);
        assert_eq!(press(KeyCode::Delete, KeyModifiers::NONE), Key::Del);
        assert_eq!(press(KeyCode::Up, KeyModifiers::NONE), Key::ArrowUp);
        assert_eq!(press(KeyCode::Esc, KeyModifiers::NONE), Key::Escape);
        let mut release = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(key(release), Key::Unknown);
    }
}
