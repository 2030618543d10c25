//! Console control events on Windows, as the signals the rest of elicit
//! knows: Ctrl-C and Ctrl-Break are [`Signal::Interrupt`], closing the
//! console window is [`Signal::HangUp`], log-off and shutdown are
//! [`Signal::Terminate`]. One handler (`SetConsoleCtrlHandler`) runs what
//! was registered; Windows calls it on a thread of its own, so unlike a
//! Unix signal handler it may lock and allocate.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT, CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
};

use crate::Signal;

type OnSignal = Box<dyn FnMut(Signal) + Send>;

enum Action {
    Interrupt(fn()),
    /// Run, then let the default handler end the process.
    ThenDefault(Vec<Signal>, fn()),
    Call(Vec<Signal>, Arc<Mutex<OnSignal>>),
    Flag(Vec<Signal>, Arc<AtomicUsize>),
}

static ACTIONS: Mutex<Vec<Action>> = Mutex::new(Vec::new());

fn register(action: Action) {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // SAFETY: FFI without a safe wrapper; `handler` is a plain
        // `extern "system"` function valid for the life of the process.
        unsafe {
            SetConsoleCtrlHandler(Some(handler), 1);
        }
    });
    ACTIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(action);
}

/// The one console control handler.
unsafe extern "system" fn handler(ctrl: u32) -> BOOL {
    let sig = match ctrl {
        CTRL_C_EVENT | CTRL_BREAK_EVENT => Signal::Interrupt,
        CTRL_CLOSE_EVENT => Signal::HangUp,
        CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => Signal::Terminate,
        _ => return 0,
    };
    if dispatch(sig) {
        if sig != Signal::Interrupt {
            // Windows ends the process as soon as this returns (or after
            // a few seconds): give the clean-up running on other threads
            // (ending servers, putting the console back) the time it has.
            std::thread::sleep(Duration::from_secs(4));
        }
        1
    } else {
        0
    }
}

/// Runs every action registered for `sig`; true when one handled it
/// (the default handler, which ends the process, is then not run).
fn dispatch(sig: Signal) -> bool {
    let mut calls = Vec::new();
    let mut handled = false;
    {
        let actions = ACTIONS.lock().unwrap_or_else(|p| p.into_inner());
        for a in actions.iter() {
            match a {
                Action::Interrupt(f) if sig == Signal::Interrupt => {
                    f();
                    handled = true;
                }
                Action::ThenDefault(on, f) if on.contains(&sig) => f(),
                Action::Call(on, f) if on.contains(&sig) => {
                    calls.push(f.clone());
                    handled = true;
                }
                Action::Flag(on, flag) if on.contains(&sig) => {
                    flag.store(sig.number() as usize, Ordering::SeqCst);
                    handled = true;
                }
                _ => {}
            }
        }
    }
    for f in calls {
        std::thread::spawn(move || (f.lock().unwrap_or_else(|p| p.into_inner()))(sig));
    }
    handled
}

/// As a log-off would: every action registered for [`Signal::Terminate`]
/// runs, and the process exits with 128 + its number unless one of them
/// took it on (ending the process itself, or its loop).
pub(crate) fn terminate_self() {
    if !dispatch(Signal::Terminate) {
        std::process::exit(Signal::Terminate.exit_code());
    }
}

/// Runs `action` on every Ctrl-C or Ctrl-Break.
pub fn on_interrupt(action: fn()) {
    register(Action::Interrupt(action));
}

/// On each of `signals`, runs `action`, then lets Windows end the process
/// as it would have without elicit's handler.
pub(crate) fn then_default(signals: &[Signal], action: fn()) {
    register(Action::ThenDefault(signals.to_vec(), action));
}

/// Runs `on_signal` on a thread of its own for every arrival of one of
/// `signals`.
pub(crate) fn on_thread(
    signals: &[Signal],
    on_signal: impl FnMut(Signal) + Send + 'static,
) -> bool {
    register(Action::Call(
        signals.to_vec(),
        Arc::new(Mutex::new(Box::new(on_signal))),
    ));
    true
}

/// Stores the signal's number into `flag` on each of `signals`, instead of
/// ending the process.
pub(crate) fn set_flag(signals: &[Signal], flag: &Arc<AtomicUsize>) {
    register(Action::Flag(signals.to_vec(), flag.clone()));
}

/// Runs `f` when the process exits normally (a return from `main`, or
/// `std::process::exit`). `f` must not unwind.
pub(crate) fn at_exit(f: extern "C" fn()) {
    // SAFETY: no crate offers the C runtime's atexit safely; it only
    // registers a plain function pointer, which the caller promises cannot
    // unwind.
    unsafe {
        libc::atexit(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_gets_the_signal_and_the_event_counts_as_handled() {
        let flag = Arc::new(AtomicUsize::new(0));
        set_flag(&[Signal::HangUp], &flag);
        assert!(dispatch(Signal::HangUp));
        assert_eq!(
            flag.load(Ordering::SeqCst),
            Signal::HangUp.number() as usize
        );
    }
}
