//! What is running, for a person watching: one status line on stderr
//! naming what is in flight and for how long, redrawn as time passes.
//! `elicit test`: the tests in flight, cleared before each finished test's
//! line. `elicit call`: connecting, then calling the tool, cleared before a
//! prompt, a server's stderr line or the result. Drawn only when stderr is
//! a terminal: never in `--format` output or the result (stdout), or a
//! log. The line is drawn through [`elicit::signals::show_status`], so a
//! prompt or a server's line erases it first.

use std::io::{IsTerminal, Write};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use console::{measure_text_width, style, Term};
use elicit::text::sanitize::sanitize_line;

/// How often the line's times move on.
const TICK: Duration = Duration::from_millis(250);

pub struct Progress {
    live: bool,
    /// The word before the list ("running").
    word: &'static str,
    /// Names are paths: only their last part is shown (tests).
    paths: bool,
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    running: Vec<(String, Instant)>,
    done: bool,
}

impl Progress {
    /// `elicit test`'s: "running a.cassette.json (1.2 s), …".
    pub fn new() -> Progress {
        Progress {
            live: std::io::stderr().is_terminal(),
            word: "running",
            paths: true,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        }
    }

    /// `elicit call`'s: one step at a time ([`Self::step`]), "connecting
    /// to …", then "calling TOOL".
    pub fn steps() -> Progress {
        Progress {
            word: "",
            paths: false,
            ..Progress::new()
        }
    }

    /// What runs now, in place of what ran before (its time starts now).
    pub fn step(&self, what: &str) {
        let mut st = self.lock();
        st.running = vec![(what.to_string(), Instant::now())];
        self.draw(&mut st);
    }

    /// Nothing runs until the next step: the line goes.
    pub fn idle(&self) {
        let mut st = self.lock();
        st.running.clear();
        self.clear(&mut st);
    }

    /// Takes the line off until the next step or tick (before elicit writes
    /// a line of its own).
    pub fn hide(&self) {
        let _st = self.lock();
        elicit::signals::hide_status();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A test started.
    pub fn start(&self, name: &str) {
        let mut st = self.lock();
        st.running.push((name.to_string(), Instant::now()));
        self.draw(&mut st);
    }

    /// A test ended: its lines go out, the status line after them.
    pub fn finish(&self, name: &str, text: &str) {
        let mut st = self.lock();
        if let Some(at) = st.running.iter().position(|(n, _)| n == name) {
            st.running.remove(at);
        }
        self.clear(&mut st);
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
        drop(err);
        self.draw(&mut st);
    }

    /// Redraws the line every [`TICK`] until [`Self::stop`].
    pub fn tick(&self) {
        if !self.live {
            return;
        }
        let mut st = self.lock();
        while !st.done {
            st = self
                .wake
                .wait_timeout(st, TICK)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if !st.done {
                self.draw(&mut st);
            }
        }
        self.clear(&mut st);
    }

    /// Everything ended: the line goes now, and the ticker with it.
    pub fn stop(&self) {
        let mut st = self.lock();
        st.done = true;
        self.clear(&mut st);
        self.wake.notify_all();
    }

    fn clear(&self, _st: &mut State) {
        if self.live {
            elicit::signals::hide_status();
        }
    }

    fn draw(&self, st: &mut State) {
        if !self.live || st.done {
            return;
        }
        self.clear(st);
        if st.running.is_empty() {
            return;
        }
        let width = Term::stderr().size().1 as usize;
        let parts: Vec<String> = st
            .running
            .iter()
            .map(|(name, since)| {
                let short = match self.paths {
                    true => name.rsplit('/').next().unwrap_or(name),
                    false => name,
                };
                format!(
                    "{} ({:.1} s)",
                    sanitize_line(short),
                    since.elapsed().as_secs_f64()
                )
            })
            .collect();
        let mut line = match self.word {
            "" => parts.join(", "),
            word => format!("{} {}", style(word).cyan(), parts.join(", ")),
        };
        if measure_text_width(&line) >= width.max(20) {
            line = console::truncate_str(&line, width.saturating_sub(2).max(10), "…").into_owned();
        }
        elicit::signals::show_status(|| drop(Term::stderr().write_str(&line)), erase);
    }
}

/// Takes the status line off the screen.
fn erase() {
    let _ = Term::stderr().clear_line();
}
