//! Reading one key from the terminal, in a way that can be stopped.
//!
//! Hand-written rather than `console::Term::read_key`: console blocks in
//! `poll(-1)` with no way to stop it, and reads stdin when stdin is a
//! terminal rather than the `/dev/tty` our prompts draw on. A prompt that a
//! `--timeout` (or a missed Ctrl-C) abandoned would then keep reading keys
//! in its thread, and eat the keys of every later prompt. Here the wait is
//! a `poll` in short slices that notices when its prompt was abandoned
//! ([`abandon`]) or Ctrl-C arrived as a signal, and the decoder covers the
//! keys the widgets use (arrows, Home/End, Del, Esc, UTF-8 text).

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use console::{Key, Term};

use super::widgets::{Interrupt, Prompted};

/// Bumped each time the resolver abandons a prompt.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The epoch a prompt thread started in ([`claim`]); `None` on threads
    /// whose prompts are never abandoned.
    static MINE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// How long one `poll` waits before looking at the stop flags again.
const SLICE: Duration = Duration::from_millis(40);

/// How long the rest of an escape sequence may take to arrive after Esc.
const ESC_WAIT: Duration = Duration::from_millis(30);

/// Marks the calling thread as a prompt thread that [`abandon`] stops.
pub fn claim() {
    let now = EPOCH.load(Ordering::SeqCst);
    MINE.with(|m| m.set(Some(now)));
}

/// Stops every prompt thread that [`claim`]ed before this call: their next
/// (or current) key read fails with [`Interrupt::Abandoned`] within
/// [`SLICE`], so they clear what they drew and end.
pub fn abandon() {
    EPOCH.fetch_add(1, Ordering::SeqCst);
}

/// True when this thread's prompt was abandoned.
pub fn stopped() -> bool {
    MINE.with(|m| m.get())
        .is_some_and(|e| e != EPOCH.load(Ordering::SeqCst))
}

/// Raw mode (no echo, no line buffering, no signal keys) for the length of
/// one key read, restored on drop. Output processing is kept, so `\n` still
/// starts a new line.
struct RawMode {
    fd: RawFd,
    saved: libc::termios,
}

impl RawMode {
    fn enter(fd: RawFd) -> io::Result<RawMode> {
        let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: fd is an open descriptor; t is written by tcgetattr
        // before it is read.
        let saved = unsafe {
            if libc::tcgetattr(fd, t.as_mut_ptr()) != 0 {
                return Err(io::Error::last_os_error());
            }
            t.assume_init()
        };
        let mut raw = saved;
        // SAFETY: cfmakeraw only edits the struct it is given.
        unsafe { libc::cfmakeraw(&mut raw) };
        raw.c_oflag = saved.c_oflag;
        // SAFETY: fd is open; raw is a complete termios value.
        if unsafe { libc::tcsetattr(fd, libc::TCSADRAIN, &raw) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(RawMode { fd, saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: fd is still open (the Term owns it); saved came from
        // tcgetattr.
        unsafe {
            libc::tcsetattr(self.fd, libc::TCSADRAIN, &self.saved);
        }
    }
}

/// Waits up to `timeout` for input on `fd`.
fn ready(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, timeout.as_millis() as libc::c_int) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(n > 0 && p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0)
}

fn byte(fd: RawFd) -> Prompted<u8> {
    let mut b = [0u8; 1];
    loop {
        // SAFETY: reads at most one byte into a one-byte buffer.
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
        if n == 1 {
            return Ok(b[0]);
        }
        if n == 0 {
            // End of input (the terminal hung up): nobody can answer.
            return Err(Interrupt::Cancelled);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(Interrupt::Io(e));
        }
    }
}

/// The next byte if it arrives within `wait`.
fn byte_soon(fd: RawFd, wait: Duration) -> Prompted<Option<u8>> {
    if ready(fd, wait)? {
        byte(fd).map(Some)
    } else {
        Ok(None)
    }
}

/// Reads one key from the terminal. Ctrl-C comes back as `Key::CtrlC` (in
/// raw mode it is a key, not a signal), Ctrl-D as `Key::Char('\u{4}')`.
/// Fails with `Cancelled` when Ctrl-C arrived as a signal (between two
/// reads) or the terminal ended, and with `Abandoned` when the resolver
/// gave up on this prompt.
pub fn read_key(term: &Term) -> Prompted<Key> {
    read_key_unless(term, &|| false).map(|k| k.unwrap_or(Key::Unknown))
}

/// [`read_key`], or `None` as soon as `done()` says the wait is over (the
/// URL flow's waiting screen: the sign-in listener saw the browser return).
pub fn read_key_unless(term: &Term, done: &dyn Fn() -> bool) -> Prompted<Option<Key>> {
    let _ = term.flush();
    let fd = term.as_raw_fd();
    let _raw = RawMode::enter(fd)?;
    loop {
        if stopped() {
            return Err(Interrupt::Abandoned);
        }
        if crate::signals::interrupted() {
            return Err(Interrupt::Cancelled);
        }
        if done() {
            return Ok(None);
        }
        if ready(fd, SLICE)? {
            break;
        }
    }
    read_ready_key(fd).map(Some)
}

/// Decodes the key whose first byte is waiting on `fd`.
fn read_ready_key(fd: RawFd) -> Prompted<Key> {
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
fn escape(fd: RawFd) -> Prompted<Key> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandon_stops_claimed_threads_only() {
        let t = std::thread::spawn(|| {
            claim();
            let before = stopped();
            abandon();
            (before, stopped())
        });
        assert_eq!(t.join().unwrap(), (false, true));
        // An unclaimed thread is never stopped.
        assert!(!stopped());
    }
}
