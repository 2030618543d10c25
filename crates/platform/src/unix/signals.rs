//! Signals on Unix, through `signal-hook`.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM};

use crate::Signal;

fn raw(sig: Signal) -> i32 {
    match sig {
        Signal::Interrupt => SIGINT,
        Signal::Terminate => SIGTERM,
        Signal::HangUp => SIGHUP,
        Signal::Quit => SIGQUIT,
        Signal::Kill => SIGKILL,
    }
}

/// Runs `action` in the signal handler of every Ctrl-C (SIGINT). `action`
/// must be async-signal-safe: atomics only, no lock, no allocation.
pub fn on_interrupt(action: fn()) {
    // SAFETY: signal-hook has no safe way to run an arbitrary action in
    // the handler itself (its safe `flag` module only sets flags, and the
    // decision whose a Ctrl-C is must be taken at that moment); `action`
    // is async-signal-safe by this function's contract.
    let _ = unsafe { signal_hook::low_level::register(SIGINT, action) };
}

/// On each of `signals`, runs `action` (async-signal-safe, as for
/// [`on_interrupt`]), then dies of the signal as if no handler were
/// installed (the exit status still says which signal).
pub(crate) fn then_default(signals: &[Signal], action: fn()) {
    for &sig in signals {
        let n = raw(sig);
        // SAFETY: as in on_interrupt: `action` is async-signal-safe, and
        // signal-hook's emulate_default_handler resets the default action
        // and raises the signal again (no safe API runs both in the
        // handler).
        let _ = unsafe {
            signal_hook::low_level::register(n, move || {
                action();
                let _ = signal_hook::low_level::emulate_default_handler(n);
            })
        };
    }
}

/// Runs `on_signal` on a thread of its own for every arrival of one of
/// `signals`. False when the handlers could not be installed.
pub(crate) fn on_thread(
    signals: &[Signal],
    mut on_signal: impl FnMut(Signal) + Send + 'static,
) -> bool {
    let raws: Vec<i32> = signals.iter().map(|&s| raw(s)).collect();
    let Ok(mut iter) = signal_hook::iterator::Signals::new(raws) else {
        return false;
    };
    std::thread::spawn(move || {
        for n in iter.forever() {
            if let Some(sig) = Signal::from_number(n) {
                on_signal(sig);
            }
        }
    });
    true
}

/// Stores the signal's number into `flag` on each of `signals`, instead of
/// ending the process.
pub(crate) fn set_flag(signals: &[Signal], flag: &Arc<AtomicUsize>) {
    for &sig in signals {
        let _ = signal_hook::flag::register_usize(raw(sig), flag.clone(), sig.number() as usize);
    }
}

/// Runs `f` when the process exits normally (a return from `main`, or
/// `std::process::exit` on any thread). `f` must not unwind.
pub(crate) fn at_exit(f: extern "C" fn()) {
    // SAFETY: no crate offers atexit(3) safely; it only registers a plain
    // function pointer, which the caller promises cannot unwind.
    unsafe {
        libc::atexit(f);
    }
}
