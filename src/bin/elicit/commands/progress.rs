//! What `elicit test` is running, for a person watching: one status line
//! on stderr naming the tests in flight and for how long, redrawn as time
//! passes, cleared before each finished test's line. Drawn only when stderr
//! is a terminal: never in `--format` output (stdout) or a log.

use std::io::{IsTerminal, Write};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use console::{measure_text_width, style, Term};
use elicit::text::sanitize::sanitize_line;

/// How often the line's times move on.
const TICK: Duration = Duration::from_millis(250);

pub struct Progress {
    live: bool,
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    running: Vec<(String, Instant)>,
    /// A status line is on screen (and must go before anything else is
    /// written).
    shown: bool,
    done: bool,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            live: std::io::stderr().is_terminal(),
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        }
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

    /// Every test ended: the line goes, and the ticker with it.
    pub fn stop(&self) {
        self.lock().done = true;
        self.wake.notify_all();
    }

    fn clear(&self, st: &mut State) {
        if std::mem::take(&mut st.shown) {
            let _ = Term::stderr().clear_line();
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
                let short = name.rsplit('/').next().unwrap_or(name);
                format!(
                    "{} ({:.1} s)",
                    sanitize_line(short),
                    since.elapsed().as_secs_f64()
                )
            })
            .collect();
        let mut line = format!("{} {}", style("running").cyan(), parts.join(", "));
        if measure_text_width(&line) >= width.max(20) {
            line = console::truncate_str(&line, width.saturating_sub(2).max(10), "…").into_owned();
        }
        let _ = Term::stderr().write_str(&line);
        st.shown = true;
    }
}
