//! The terminal on Unix: `/dev/tty`, termios (through `rustix`), and keys
//! decoded from the bytes a terminal sends.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub use crate::terminal_shared::{DrawOn, Key};
use rustix::termios::{self, OptionalActions, QueueSelector, Termios};

/// Where prompts are drawn and keys read: the controlling terminal.
pub const NAME: &str = "/dev/tty";

/// Opens the terminal for reading and for writing (two descriptors: a UI
/// draws on the one and reads keys from the other). Fails, with the reason as text,
/// when the process has no controlling terminal (CI, cron, setsid).
pub fn open() -> Result<(File, File), String> {
    let open = || OpenOptions::new().read(true).write(true).open(NAME);
    let read = open().map_err(|e| format!("cannot open {NAME}: {e}"))?;
    let write = open().map_err(|e| format!("cannot open {NAME}: {e}"))?;
    if !termios::isatty(&read) {
        return Err(format!("{NAME} is not a terminal"));
    }
    Ok((read, write))
}

/// The terminal's mode when elicit opened it, to put back on the way out.
#[derive(Clone)]
pub struct SavedMode {
    file: Arc<File>,
    termios: Termios,
}

impl SavedMode {
    /// The mode of the terminal `file` is open on; `None` if it has none.
    pub fn save(file: &File) -> Option<SavedMode> {
        let termios = termios::tcgetattr(file).ok()?;
        Some(SavedMode {
            file: Arc::new(file.try_clone().ok()?),
            termios,
        })
    }

    /// Puts the saved mode back (now, not after output drains).
    pub fn apply(&self) {
        let _ = termios::tcsetattr(&*self.file, OptionalActions::Now, &self.termios);
    }
}

/// The terminal put back from a signal handler or an exit function: a
/// descriptor of our own (never closed) and the saved mode.
struct Remembered {
    fd: OwnedFd,
    termios: Termios,
}

static REMEMBERED: OnceLock<Remembered> = OnceLock::new();

/// Keeps, for the life of the process, what [`restore_remembered`] needs
/// (a duplicate descriptor and the mode). True the first time only.
pub fn remember(saved: &SavedMode) -> bool {
    let Ok(fd) = rustix::io::dup(&*saved.file) else {
        return false;
    };
    REMEMBERED
        .set(Remembered {
            fd,
            termios: saved.termios.clone(),
        })
        .is_ok()
}

/// Puts the remembered terminal back: the saved line mode, only when it
/// differs (so an idle elicit never touches a terminal it left alone), and
/// a visible cursor when the mode differed or `show_cursor`. Only
/// `tcgetattr`, `tcsetattr` and `write` on a descriptor opened beforehand:
/// no lock, no allocation, so it may run in a signal handler.
pub fn restore_remembered(show_cursor: bool) {
    let Some(t) = REMEMBERED.get() else {
        return;
    };
    let changed = match termios::tcgetattr(&t.fd) {
        Ok(now) => {
            now.local_modes != t.termios.local_modes
                || now.input_modes != t.termios.input_modes
                || now.output_modes != t.termios.output_modes
                || now.control_modes != t.termios.control_modes
        }
        Err(_) => false,
    };
    if changed {
        let _ = termios::tcsetattr(&t.fd, OptionalActions::Now, &t.termios);
    }
    if changed || show_cursor {
        let _ = rustix::io::write(&t.fd, b"\x1b[?25h");
    }
}

/// Drops whatever was typed but not yet read (type-ahead) on the terminal
/// `input` is open on. Harmless on a file that is not a terminal.
pub fn discard_input(input: &File) {
    let _ = termios::tcflush(input, QueueSelector::IFlush);
}

/// How long the rest of an escape sequence may take to arrive after Esc.
const ESC_WAIT: Duration = Duration::from_millis(30);

/// Raw mode (no echo, no line buffering, no signal keys) for as long as it
/// lives, restored on drop; keys are read through it. Output processing is
/// kept, so `\n` still starts a new line.
pub struct RawKeys<'a> {
    fd: BorrowedFd<'a>,
    saved: Termios,
}

impl<'a> RawKeys<'a> {
    /// Puts the terminal `input` is open on in raw mode for key reading
    /// (keys are read from `input`); the mode is put back on drop.
    pub fn enter(input: &'a File) -> io::Result<RawKeys<'a>> {
        let fd = input.as_fd();
        let saved = termios::tcgetattr(fd)?;
        let mut raw = saved.clone();
        raw.make_raw();
        raw.output_modes = saved.output_modes;
        termios::tcsetattr(fd, OptionalActions::Drain, &raw)?;
        Ok(RawKeys { fd, saved })
    }

    /// Waits up to `timeout` for a key; an interrupted wait is "not yet".
    pub fn ready(&self, timeout: Duration) -> io::Result<bool> {
        ready(self.fd, timeout)
    }

    /// Reads the key whose first byte is waiting. `Ok(None)`: the terminal
    /// ended (hung up). Ctrl-C is `Key::CtrlC` (in raw mode it is a key, not
    /// a signal), Ctrl-D `Key::Char('\u{4}')`.
    pub fn read_key(&self) -> io::Result<Option<Key>> {
        match read_ready_key(self.fd) {
            Ok(k) => Ok(Some(k)),
            Err(Failed::Ended) => Ok(None),
            Err(Failed::Io(e)) => Err(e),
        }
    }
}

impl Drop for RawKeys<'_> {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(self.fd, OptionalActions::Drain, &self.saved);
    }
}

fn ready(fd: BorrowedFd<'_>, timeout: Duration) -> io::Result<bool> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = Timespec::try_from(timeout).unwrap_or(Timespec {
        tv_sec: 1,
        tv_nsec: 0,
    });
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    match poll(&mut fds, Some(&timeout)) {
        Ok(n) => Ok(n > 0
            && fds[0]
                .revents()
                .intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Why no key came: the terminal ended (hung up), or a read failed.
enum Failed {
    Ended,
    Io(io::Error),
}

impl From<io::Error> for Failed {
    fn from(e: io::Error) -> Self {
        Failed::Io(e)
    }
}

fn byte(fd: BorrowedFd<'_>) -> Result<u8, Failed> {
    let mut b = [0u8; 1];
    loop {
        match rustix::io::read(fd, &mut b) {
            Ok(1) => return Ok(b[0]),
            Ok(_) => return Err(Failed::Ended),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(Failed::Io(e.into())),
        }
    }
}

/// The next byte if it arrives within `wait`.
fn byte_soon(fd: BorrowedFd<'_>, wait: Duration) -> Result<Option<u8>, Failed> {
    if ready(fd, wait)? {
        byte(fd).map(Some)
    } else {
        Ok(None)
    }
}

/// Decodes the key whose first byte is waiting on `fd`.
fn read_ready_key(fd: BorrowedFd<'_>) -> Result<Key, Failed> {
    let b = byte(fd)?;
    Ok(match b {
        0x1b => escape(fd)?,
        0x03 => Key::CtrlC,
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        b'\t' => Key::Tab,
        0x01 => Key::Home,
        0x05 => Key::End,
        b if b < 0x80 => Key::Char(b as char),
        lead => {
            let len = match lead {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => return Ok(Key::Unknown),
            };
            let mut buf = vec![lead];
            for _ in 1..len {
                match byte_soon(fd, ESC_WAIT)? {
                    Some(c) => buf.push(c),
                    None => return Ok(Key::Unknown),
                }
            }
            match std::str::from_utf8(&buf)
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) => Key::Char(c),
                None => Key::Unknown,
            }
        }
    })
}

/// Decodes what follows an Esc byte: a CSI/SS3 sequence, or Esc alone.
fn escape(fd: BorrowedFd<'_>) -> Result<Key, Failed> {
    let Some(first) = byte_soon(fd, ESC_WAIT)? else {
        return Ok(Key::Escape);
    };
    if first != b'[' && first != b'O' {
        return Ok(Key::UnknownEscSeq(vec![first as char]));
    }
    let mut body = Vec::new();
    // Parameters, then one final byte in @..~ (bounded: a stray sequence
    // cannot make us read forever).
    let fin = loop {
        match byte_soon(fd, ESC_WAIT)? {
            Some(b @ 0x40..=0x7e) => break b,
            Some(b) if body.len() < 8 => body.push(b),
            _ => return Ok(Key::UnknownEscSeq(vec![first as char])),
        }
    };
    Ok(match (fin, body.as_slice()) {
        (b'A', _) => Key::ArrowUp,
        (b'B', _) => Key::ArrowDown,
        (b'C', _) => Key::ArrowRight,
        (b'D', _) => Key::ArrowLeft,
        (b'H', _) => Key::Home,
        (b'F', _) => Key::End,
        (b'Z', _) => Key::BackTab,
        (b'~', b"1" | b"7") => Key::Home,
        (b'~', b"4" | b"8") => Key::End,
        (b'~', b"2") => Key::Insert,
        (b'~', b"3") => Key::Del,
        (b'~', b"5") => Key::PageUp,
        (b'~', b"6") => Key::PageDown,
        _ => {
            let mut seq = vec![first as char];
            seq.extend(body.iter().map(|&b| b as char));
            seq.push(fin as char);
            Key::UnknownEscSeq(seq)
        }
    })
}

/// Where prompts are drawn: on Unix the terminal just opened, its two files.
pub fn draw_on(read: File, write: File) -> Result<DrawOn, String> {
    Ok(DrawOn::Files { read, write })
}

/// On Unix prompts are drawn on the terminal opened ([`draw_on`]) already:
/// nothing to change while a prompt is up (see the Windows side).
pub struct OnConsole;

/// See [`OnConsole`].
pub fn on_console() -> OnConsole {
    OnConsole
}
