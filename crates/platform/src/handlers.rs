//! Every signal handler elicit installs, and the state a prompt shares with
//! them. Nothing else in elicit registers a handler (the operating system's
//! side is [`crate::handlers`]: signal-hook on Unix, a console
//! control handler on Windows): what a signal does depends on what is on
//! the screen, and that is known here.
//!
//! - **Ctrl-C** (SIGINT): one handler counts presses. While a prompt is up
//!   ([`PromptOwnsCtrlC`]), a press is the prompt's (it cancels that
//!   elicitation); with no prompt up it is counted for the server
//!   ([`ctrl_c_for_server`]): the proxy forwards it, `call` ends its wait.
//!   The decision is taken inside the handler, at the moment the signal
//!   arrives, never by a thread looking afterwards (which could see the
//!   prompt already gone and send a press meant for it to the server). That
//!   is exact both ways a Ctrl-C reaches elicit at a prompt: during a key
//!   read the terminal is raw, the prompt reads the byte and `console`
//!   raises SIGINT on the prompt's own thread, where the handler runs before
//!   `raise` returns; between key reads the terminal driver sends SIGINT to
//!   elicit's process group, with the prompt's ownership still held.
//! - **The terminal**: once a terminal was opened ([`guard_terminal`]), its
//!   mode and cursor are put back on every way out: a panic on any thread,
//!   `exit`, a return from `main`, SIGTERM/SIGHUP/SIGQUIT while resolving a
//!   document ([`restore_on_fatal_signals`]), and whenever a caller asks
//!   ([`restore_terminal`]).
//! - **Termination** (SIGTERM, SIGHUP): `call` ends its servers and exits
//!   with 128 + the signal ([`exit_on_termination`]); the stdio proxy
//!   forwards them to its server ([`forward`]); the remote proxy ends its
//!   session ([`termination_flag`]).
//! - **The prompt gate** ([`Prompt`]): while a prompt is drawn, lines a
//!   server writes to stderr are held back ([`print_or_hold`]) and printed
//!   when it ends, so nothing is drawn into the middle of a consent screen.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate as platform;
use crate::Signal;

// ---------------------------------------------------------------- Ctrl-C

/// Set by the SIGINT handler, cleared when a new prompt starts. console
/// raises SIGINT on itself when it reads Ctrl-C in raw mode; with a handler
/// installed the read then fails with `Interrupted`, which elicit turns into
/// `cancel` instead of dying with the cursor hidden.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Every Ctrl-C so far: a wait that is not a prompt (a server's reply)
/// notices a new press, whatever happened before it.
static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
/// The presses a wait or a prompt has acted on ([`take_interrupt`]): one
/// pressed between two waits is the next wait's, not lost.
static ACTED_ON: AtomicUsize = AtomicUsize::new(0);
/// True while an elicitation is being resolved (a prompt may be up).
static PROMPT_OWNS_CTRL_C: AtomicBool = AtomicBool::new(false);
/// Ctrl-C presses that arrived with no elicitation being resolved.
static FOR_SERVER: AtomicUsize = AtomicUsize::new(0);

/// Installs the SIGINT handler (once; later calls do nothing).
pub fn install_interrupt_handler() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| platform::signals::on_interrupt(on_ctrl_c));
}

/// What a Ctrl-C does, in the handler: only loads and stores atomics,
/// which is async-signal-safe (no lock, no allocation).
fn on_ctrl_c() {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
    if !PROMPT_OWNS_CTRL_C.load(Ordering::SeqCst) {
        FOR_SERVER.fetch_add(1, Ordering::SeqCst);
    }
}

/// True once Ctrl-C was pressed since the last [`clear_interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Forgets an earlier Ctrl-C (a new prompt starts afresh).
pub fn clear_interrupt() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// The number of Ctrl-C presses so far.
pub fn interrupt_count() -> usize {
    INTERRUPTS.load(Ordering::SeqCst)
}

/// Whether Ctrl-C was pressed since a wait or a prompt last acted on one
/// (so a press between two waits ends the next, instead of being lost);
/// taking it marks it acted on.
pub fn take_interrupt() -> bool {
    let pressed = INTERRUPTS.load(Ordering::SeqCst);
    ACTED_ON.swap(pressed, Ordering::SeqCst) != pressed
}

/// How many Ctrl-C presses so far came with no elicitation being resolved.
pub fn ctrl_c_for_server() -> usize {
    FOR_SERVER.load(Ordering::SeqCst)
}

/// Held while an elicitation is being resolved: a Ctrl-C meanwhile is the
/// prompt's (it cancels that elicitation only), not the server's.
#[must_use = "Ctrl-C goes back to the server when this is dropped"]
pub struct PromptOwnsCtrlC(());

impl PromptOwnsCtrlC {
    /// Marks a Ctrl-C as the prompt's until the value is dropped.
    pub fn take() -> PromptOwnsCtrlC {
        PROMPT_OWNS_CTRL_C.store(true, Ordering::SeqCst);
        PromptOwnsCtrlC(())
    }
}

impl Drop for PromptOwnsCtrlC {
    fn drop(&mut self) {
        PROMPT_OWNS_CTRL_C.store(false, Ordering::SeqCst);
        // What was pressed meanwhile was the prompt's (it cancelled that
        // elicitation): no wait after it takes it for the server's.
        ACTED_ON.store(INTERRUPTS.load(Ordering::SeqCst), Ordering::SeqCst);
    }
}

// ---------------------------------------------------------- the terminal

/// True while a prompt may hold the terminal (raw mode, hidden cursor).
static PROMPTING: AtomicBool = AtomicBool::new(false);

/// Registers, once, the terminal to put back and the restore no exit path
/// can skip: a panic hook (any thread; runs before the default hook, even
/// with `panic = "abort"`) and an exit function (a return from `main`, or
/// `std::process::exit` from any thread).
pub fn guard_terminal(saved: &platform::terminal::SavedMode) {
    // True the first time only: the hooks are installed once.
    if !platform::terminal::remember(saved) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_if_changed(false);
        previous(info);
    }));
    extern "C" fn at_exit() {
        restore_if_changed(false);
    }
    platform::signals::at_exit(at_exit);
}

/// Marks the span during which a prompt may have changed the terminal:
/// every exit path in it restores the terminal.
pub fn set_prompting(on: bool) {
    PROMPTING.store(on, Ordering::SeqCst);
}

/// Puts the terminal back if a prompt may have changed it: the saved line
/// mode (only when it differs, so an idle elicit never touches a terminal
/// it left alone) and a visible cursor. Async-signal-safe.
pub fn restore_terminal_now() {
    restore_if_changed(false);
}

/// Puts the terminal back and shows the cursor whatever the prompt state
/// (a prompt abandoned by a timeout, a signal handled on a thread).
pub fn restore_terminal() {
    restore_if_changed(true);
}

/// See [`platform::terminal::restore_remembered`]: no lock, no
/// allocation, so it may run in a signal handler.
fn restore_if_changed(show_cursor: bool) {
    platform::terminal::restore_remembered(show_cursor || PROMPTING.load(Ordering::SeqCst));
}

/// For a run that has nothing else to do on SIGTERM, SIGHUP or SIGQUIT
/// (resolving a document): restore the terminal, then die of the signal as
/// if no handler were installed (the exit status still says which signal).
pub fn restore_on_fatal_signals() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        fn restore() {
            restore_if_changed(false);
        }
        platform::signals::then_default(
            &[Signal::Terminate, Signal::HangUp, Signal::Quit],
            restore,
        );
    });
}

// ------------------------------------------------------------ termination

/// The termination signal [`exit_on_termination`] is handling, 0 for none.
static TERMINATING: AtomicI32 = AtomicI32::new(0);

/// Makes SIGTERM and SIGHUP end elicit cleanly: on a thread of its own,
/// the terminal is put back, `clean_up` runs (ending every server's
/// processes), the private temporary folders are removed, and elicit exits
/// with 128 + the signal. Without this a
/// terminal hang-up would kill elicit and leave a server, in its own
/// process group and out of the terminal's reach, running.
pub fn exit_on_termination(clean_up: impl FnOnce() + Send + 'static) {
    let mut clean_up = Some(clean_up);
    platform::signals::on_thread(&[Signal::Terminate, Signal::HangUp], move |sig| {
        if let Some(clean_up) = clean_up.take() {
            TERMINATING.store(sig.number(), Ordering::SeqCst);
            hide_status();
            restore_terminal();
            clean_up();
            // `exit` drops nothing: the private folders go now.
            crate::temp_dir::remove_all_live();
            std::process::exit(sig.exit_code());
        }
    });
}

/// Called by the main thread before it reports an outcome: while a
/// termination is being handled, the server it ends may make the session
/// fail first ("the server exited"), which is not what happened. Then this
/// waits for the handler to exit with 128 + the signal; otherwise it
/// returns at once.
pub fn defer_to_termination() {
    if TERMINATING.load(Ordering::SeqCst) == 0 {
        return;
    }
    loop {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `on_signal` on a thread of its own for every arrival of one of
/// `signals` (the stdio proxy passes them on to its server's group).
pub fn forward(signals: &[Signal], on_signal: impl FnMut(Signal) + Send + 'static) {
    platform::signals::on_thread(signals, on_signal);
}

/// A flag SIGTERM and SIGHUP set (to the signal's number) instead of ending
/// the process, for a loop that ends its own session and exits.
pub fn termination_flag() -> Arc<AtomicUsize> {
    let flag = Arc::new(AtomicUsize::new(0));
    platform::signals::set_flag(&[Signal::Terminate, Signal::HangUp], &flag);
    flag
}

// ------------------------------------------------- a link done elsewhere

/// Set when the task behind a link finished elsewhere: elicit's own sign-in
/// listener saw the browser come back. The URL flow's waiting screen then
/// ends as if the person had pressed Enter. Cleared when a URL flow starts,
/// so a late arrival never ends a later flow.
static DONE_ELSEWHERE: AtomicBool = AtomicBool::new(false);

/// Ends the waiting screen of the URL flow now showing (or about to show):
/// "done" without a key press. Harmless when no flow is waiting.
pub fn finish_link_elsewhere() {
    DONE_ELSEWHERE.store(true, Ordering::SeqCst);
}

/// Whether the link now waited on was finished elsewhere.
pub fn done_elsewhere() -> bool {
    DONE_ELSEWHERE.load(Ordering::SeqCst)
}

/// A new URL flow starts: an earlier "done elsewhere" is not its own.
pub fn clear_done_elsewhere() {
    DONE_ELSEWHERE.store(false, Ordering::SeqCst);
}

// --------------------------------------------------------- the prompt gate

/// The most lines held back while a prompt is up.
pub const HELD_LINES: usize = 200;
/// The most bytes held back while a prompt is up.
pub const HELD_BYTES: usize = 64 * 1024;

struct Gate {
    /// How many prompts are up (nested: a picker inside a call).
    prompts: usize,
    /// A status line is on stderr (`elicit call`'s "calling deploy
    /// (2.1 s)"): how to erase it, before a prompt or a line goes out.
    status: Option<fn()>,
    /// Lines held back, each printed after `prefix` (the last one given).
    held: VecDeque<String>,
    prefix: &'static str,
    held_bytes: usize,
    dropped: u64,
}

static GATE: Mutex<Gate> = Mutex::new(Gate {
    prompts: 0,
    status: None,
    held: VecDeque::new(),
    prefix: "",
    held_bytes: 0,
    dropped: 0,
});

fn gate() -> std::sync::MutexGuard<'static, Gate> {
    // A panic while printing must not silence the server for good.
    GATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A prompt is on the screen for as long as this lives: lines given to
/// [`print_or_hold`] wait, and are printed when the last prompt ends.
#[must_use = "the prompt ends when this is dropped"]
pub struct Prompt(());

impl Prompt {
    /// Starts a prompt: server stderr is held back until the value is dropped.
    pub fn start() -> Prompt {
        let mut g = gate();
        erase_status(&mut g);
        g.prompts += 1;
        Prompt(())
    }
}

/// Draws a status line on stderr with `draw`, unless a prompt is up (then
/// nothing is drawn). It stays until [`hide_status`], a prompt starts or a
/// server's line is printed, each of which erases it first with `erase`.
/// Returns whether it was drawn.
pub fn show_status(draw: impl FnOnce(), erase: fn()) -> bool {
    let mut g = gate();
    erase_status(&mut g);
    if g.prompts > 0 {
        return false;
    }
    draw();
    g.status = Some(erase);
    true
}

/// Erases the status line, if one is shown (before elicit writes a line of
/// its own on stderr).
pub fn hide_status() {
    erase_status(&mut gate());
}

fn erase_status(g: &mut Gate) {
    if let Some(erase) = g.status.take() {
        erase();
    }
}

impl Drop for Prompt {
    fn drop(&mut self) {
        let mut g = gate();
        g.prompts = g.prompts.saturating_sub(1);
        if g.prompts == 0 {
            flush_held(&mut g);
        }
    }
}

/// Prints `prefix` and `line` (already sanitised) on stderr now, or holds
/// the line while a prompt is up: at most [`HELD_LINES`] lines and
/// [`HELD_BYTES`] bytes, the oldest dropped and counted.
pub fn print_or_hold(prefix: &'static str, line: String) {
    let mut g = gate();
    if g.prompts == 0 {
        erase_status(&mut g);
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{prefix}{line}");
        let _ = err.flush();
        return;
    }
    g.prefix = prefix;
    g.held_bytes += line.len();
    g.held.push_back(line);
    while g.held.len() > HELD_LINES || (g.held_bytes > HELD_BYTES && g.held.len() > 1) {
        if let Some(old) = g.held.pop_front() {
            g.held_bytes -= old.len();
            g.dropped += 1;
        }
    }
}

fn flush_held(g: &mut Gate) {
    if g.held.is_empty() && g.dropped == 0 {
        return;
    }
    let prefix = g.prefix;
    let mut err = std::io::stderr().lock();
    if g.dropped > 0 {
        let _ = writeln!(
            err,
            "{prefix}({} earlier line{} dropped while a prompt was up)",
            g.dropped,
            if g.dropped == 1 { "" } else { "s" }
        );
    }
    for line in g.held.drain(..) {
        let _ = writeln!(err, "{prefix}{line}");
    }
    let _ = err.flush();
    g.held_bytes = 0;
    g.dropped = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_press_between_waits_is_the_next_waits_and_a_prompts_press_is_nobody_elses() {
        // Whatever other tests pressed is acted on first.
        take_interrupt();
        assert!(!take_interrupt(), "nothing pressed since");
        on_ctrl_c();
        assert!(
            take_interrupt(),
            "pressed with no wait running: the next wait's"
        );
        assert!(!take_interrupt(), "acted on once only");
        {
            let _owned = PromptOwnsCtrlC::take();
            on_ctrl_c();
        }
        assert!(
            !take_interrupt(),
            "the prompt's press cancelled its elicitation only"
        );
        clear_interrupt();
    }

    #[test]
    fn held_lines_are_bounded_and_counted() {
        let prompt = Prompt::start();
        for i in 0..(HELD_LINES + 5) {
            print_or_hold("server: ", format!("held {i}"));
        }
        {
            let g = gate();
            assert_eq!(g.held.len(), HELD_LINES);
            assert_eq!(g.dropped, 5);
            assert_eq!(g.held.front().map(String::as_str), Some("held 5"));
        }
        drop(prompt);
        let g = gate();
        assert!(g.held.is_empty() && g.dropped == 0);
    }
}
