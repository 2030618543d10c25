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
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use elicit_platform::terminal::{Key, RawKeys};

use super::interrupt::{Interrupt, Prompted};
use super::tty::Screen;

/// Bumped each time the resolver abandons a prompt.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The epoch a prompt thread started in ([`claim`]); `None` on threads
    /// whose prompts are never abandoned.
    static MINE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// How long one `poll` waits before looking at the stop flags again.
const SLICE: Duration = Duration::from_millis(40);

/// Marks the calling thread as a prompt thread that [`abandon`] stops.
pub fn claim() {
    let now = EPOCH.load(Ordering::SeqCst);
    MINE.with(|m| m.set(Some(now)));
}

/// Stops every prompt thread that [`claim`]ed before this call: their next
/// (or current) key read fails with [`Interrupt::Abandoned`] within
/// `SLICE`, so they clear what they drew and end.
pub fn abandon() {
    EPOCH.fetch_add(1, Ordering::SeqCst);
}

/// True when this thread's prompt was abandoned.
pub fn stopped() -> bool {
    MINE.with(|m| m.get())
        .is_some_and(|e| e != EPOCH.load(Ordering::SeqCst))
}

/// Reads one key from the terminal. Ctrl-C comes back as `Key::CtrlC` (in
/// raw mode it is a key, not a signal), Ctrl-D as `Key::Char('\u{4}')`.
/// Fails with `Cancelled` when Ctrl-C arrived as a signal (between two
/// reads) or the terminal ended, and with `Abandoned` when the resolver
/// gave up on this prompt.
pub fn read_key(term: &Screen) -> Prompted<Key> {
    read_key_unless(term, &|| false).map(|k| k.unwrap_or(Key::Unknown))
}

/// [`read_key`], or `None` as soon as `done()` says the wait is over (the
/// URL flow's waiting screen: the sign-in listener saw the browser return).
pub(crate) fn read_key_unless(term: &Screen, done: &dyn Fn() -> bool) -> Prompted<Option<Key>> {
    let _ = term.flush();
    let raw = RawKeys::enter(term.keys())?;
    loop {
        if stopped() {
            return Err(Interrupt::Abandoned);
        }
        if elicit_platform::handlers::interrupted() {
            return Err(Interrupt::Cancelled);
        }
        if done() {
            return Ok(None);
        }
        if raw.ready(SLICE)? {
            break;
        }
    }
    match raw.read_key()? {
        Some(key) => Ok(Some(key)),
        // End of input (the terminal hung up): nobody can answer.
        None => Err(Interrupt::Cancelled),
    }
}

/// Raw mode held for a whole prompt, put back when the guard drops.
///
/// [`read_key`] enters raw mode for each key and leaves it after; between
/// two keys the terminal would be back in line mode for as long as the
/// prompt takes to redraw, and a key arriving then is edited by the line
/// discipline: echoed over the prompt, Backspace eaten, Ctrl-D turned into
/// an end of file that is never read. A prompt holds this guard while it
/// is up, so there is no such gap; the per-key switch inside it changes
/// nothing. `None` when raw mode cannot be entered: the key read says why.
pub(crate) fn hold_raw(term: &Screen) -> Option<RawKeys<'_>> {
    RawKeys::enter(term.keys()).ok()
}

/// Whether keys wait to be read (typed ahead). Looked at in raw mode, where
/// a line not yet ended with Enter counts too.
pub(crate) fn typed_ahead(term: &Screen) -> bool {
    match RawKeys::enter(term.keys()) {
        Ok(raw) => raw.ready(Duration::ZERO).unwrap_or(false),
        Err(_) => false,
    }
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
