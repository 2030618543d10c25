//! Who a Ctrl-C belongs to in `elicit proxy`: the prompt, while one is up;
//! the server (or, for a remote server, the session) otherwise.
//!
//! The decision is taken inside the SIGINT handler, at the moment the
//! signal arrives, not by a thread looking afterwards (which could see the
//! prompt already gone, and send a Ctrl-C meant for it to the server). That
//! is exact for both ways a Ctrl-C reaches elicit while a prompt is up:
//!
//! - during a key read the terminal is in raw mode, so Ctrl-C is a byte the
//!   prompt reads; `console` then raises SIGINT on the prompt's own thread,
//!   and the handler runs on that thread before `raise` returns, while the
//!   resolver is still waiting for that prompt ([`Owned`] is held);
//! - between key reads (cooked mode) the terminal driver sends SIGINT to
//!   elicit's process group; the handler runs then, with [`Owned`] held for
//!   as long as the elicitation is being resolved.
//!
//! A Ctrl-C with no prompt up is counted ([`for_server`]); the proxy's
//! watcher forwards it (stdio) or ends the session (remote). The server is
//! in its own process group, so the terminal never signals it directly.
//! The terminal's own handler (which cancels the prompt) is chained and
//! still runs for every Ctrl-C.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// True while the resolver works on an elicitation (a prompt may be up).
static OWNED: AtomicBool = AtomicBool::new(false);
/// Ctrl-C presses that arrived with no prompt up.
static FOR_SERVER: AtomicUsize = AtomicUsize::new(0);

/// Installs the handler (once). The terminal's SIGINT handler is installed
/// first, so that this one chains to it rather than being replaced by it.
pub fn install() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        crate::terminal::tty::install_interrupt_handler();
        // SAFETY: the action only loads and increments atomics, which is
        // async-signal-safe (no lock, no allocation).
        let _ = unsafe {
            signal_hook::low_level::register(signal_hook::consts::SIGINT, || {
                if !OWNED.load(Ordering::SeqCst) {
                    FOR_SERVER.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
    });
}

/// How many Ctrl-C presses so far were not a prompt's.
pub fn for_server() -> usize {
    FOR_SERVER.load(Ordering::SeqCst)
}

/// Held while an elicitation is resolved: a Ctrl-C meanwhile is the
/// prompt's (it cancels that elicitation only).
pub struct Owned(());

impl Owned {
    pub fn take() -> Owned {
        OWNED.store(true, Ordering::SeqCst);
        Owned(())
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        OWNED.store(false, Ordering::SeqCst);
    }
}
