//! The URL flow: show the full URL and its host before anything else, warn
//! about what looks wrong, open the browser only on an explicit choice, then
//! wait for the person to say they finished.
//!
//! The URL is never fetched, not even a HEAD: the spec forbids pre-fetching,
//! and the page is for the person, not for elicit.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use console::style;
use elicit_platform::terminal::Key;

use super::keys::read_key_unless;
use super::render::{footer, header};
use super::tty::Screen;
use super::widgets::{
    check_interrupt, consent_pause, discard_typeahead, select, Interrupt, Prompted,
};
use elicit_core::text::url_safety::{assess_url, UrlAssessment};

/// How the URL flow ended (cancel is `Err(Interrupt::Cancelled)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlOutcome {
    /// The person says they finished on the page.
    Completed,
    Declined,
}

pub use elicit_platform::opener::Opener;

/// Runs the flow for `raw_url`.
pub(crate) fn run(
    term: &Screen,
    server: &str,
    message: &str,
    position: Option<(usize, usize)>,
    raw_url: &str,
    opener: &Opener,
) -> Prompted<UrlOutcome> {
    elicit_platform::handlers::clear_done_elsewhere();
    let a = assess_url(raw_url);
    discard_typeahead(term);
    header(term, server, "asks you to open a link", message, position);
    show_url(term, &a);
    let open_allowed = a.openable && !opener.never;
    let mut items: Vec<String> = Vec::new();
    if open_allowed {
        items.push("Open in the browser".into());
    }
    if a.openable {
        items.push("Show only (I will copy the URL myself)".into());
    }
    items.push("Decline".into());
    items.push("Cancel".into());
    if !a.openable {
        footer(
            term,
            "this URL will not be opened: you can only decline or cancel",
        );
    } else if opener.never {
        footer(
            term,
            "--no-open: nothing will be launched; copy the URL by hand",
        );
    } else {
        footer(term, "nothing opens until you choose it · Esc cancels");
    }
    consent_pause(term)?;
    // A URL that carries a warning starts on "Show only": Enter alone must
    // not open it; opening stays one arrow key away.
    let default = if open_allowed && a.warnings.iter().any(is_warning) {
        1
    } else {
        0
    };
    let picked = select(term, "What do you want to do?", &items, Some(default))?;
    let choice = items[picked].as_str();
    if choice.starts_with("Decline") {
        return Ok(UrlOutcome::Declined);
    }
    if choice.starts_with("Cancel") {
        return Err(Interrupt::Cancelled);
    }
    let target = a.normalized.as_deref().unwrap_or(raw_url);
    if choice.starts_with("Open") {
        match opener.launch(target) {
            Ok(()) => {
                let _ = term.write_line(&format!(
                    "{} opened in {}",
                    style("✓").green(),
                    opener
                        .name()
                        .as_deref()
                        .map(elicit_core::text::sanitize::sanitize_line)
                        .unwrap_or_else(|| "your browser".into())
                ));
            }
            Err(e) => {
                let why = match (e.kind(), opener.command_line()) {
                    (io::ErrorKind::NotFound, None) => {
                        "no opener found: install xdg-utils, or pass --browser COMMAND".to_string()
                    }
                    _ => elicit_core::text::sanitize::sanitize_line(&e.to_string()),
                };
                let _ = term.write_line(&format!(
                    "{} could not open a browser ({why}); copy the URL above and open it yourself",
                    style("✗").red().bold(),
                ));
            }
        }
    } else {
        let _ = term.write_line(&format!(
            "{} copy the URL above and open it yourself",
            style("→").cyan()
        ));
    }
    wait_for_person(term)
}

/// A warning rather than information (plain http to this machine is fine).
fn is_warning(w: &elicit_core::text::url_safety::UrlWarning) -> bool {
    !matches!(w, elicit_core::text::url_safety::UrlWarning::LoopbackHttp)
}

fn show_url(term: &Screen, a: &UrlAssessment) {
    let bar = style("│").dim();
    let _ = term.write_line(&format!("{bar}"));
    let _ = term.write_line(&format!("{bar} {}  {}", style("URL ").dim(), a.display));
    // Show a non-default port with the host: it is part of where you go.
    let port = a
        .normalized
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.port())
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    let host_ascii = a.host_ascii.as_ref().map(|h| format!("{h}{port}"));
    match (&host_ascii, &a.host_unicode) {
        (Some(host), Some(uni)) => {
            let _ = term.write_line(&format!(
                "{bar} {}  {}   {}",
                style("Host").dim(),
                style(format!(" {host} ")).reverse().bold(),
                style(format!("displayed as {uni}")).yellow()
            ));
        }
        (Some(host), None) => {
            let _ = term.write_line(&format!(
                "{bar} {}  {}",
                style("Host").dim(),
                style(format!(" {host} ")).reverse().bold()
            ));
        }
        _ => {}
    }
    for w in &a.warnings {
        let (mark, text) = if w.is_blocking() {
            (style("✗").red().bold(), style(w.to_string()).red())
        } else if matches!(w, elicit_core::text::url_safety::UrlWarning::LoopbackHttp) {
            (style("ℹ").cyan(), style(w.to_string()).dim())
        } else {
            (style("⚠").yellow().bold(), style(w.to_string()).yellow())
        };
        let _ = term.write_line(&format!("{bar} {mark} {text}"));
    }
}

/// Waits until the person says they are done (Enter), declines (d) or
/// cancels (Esc, q, Ctrl-C, Ctrl-D, end of input), showing the time
/// elapsed. On cancel the line is wiped and the caller says `cancelled`
/// once.
fn wait_for_person(term: &Screen) -> Prompted<UrlOutcome> {
    check_interrupt()?;
    // "Done" must be a key pressed at this screen, not a second Enter
    // typed on from the choice before it.
    discard_typeahead(term);
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let hint = "Enter: done · d: decline · Esc: cancel";
    let draw = {
        let term = term.clone();
        move |elapsed: Duration| {
            let s = elapsed.as_secs();
            let _ = term.clear_line();
            let _ = term.write_str(&format!(
                "{} waiting for you to finish in the browser… {}  {}",
                style("⏳").cyan(),
                style(format!("{}:{:02}", s / 60, s % 60)).bold(),
                style(hint).dim()
            ));
            let _ = term.flush();
        }
    };
    draw(Duration::ZERO);
    let ticker = {
        let stop = stop.clone();
        let draw = draw.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(250));
                if !stop.load(Ordering::SeqCst) {
                    draw(started.elapsed());
                }
            }
        })
    };
    let raw = super::keys::hold_raw(term);
    let outcome = loop {
        let done = elicit_platform::handlers::done_elsewhere;
        match read_key_unless(term, &done) {
            Ok(None) => break Ok(UrlOutcome::Completed),
            Ok(Some(Key::Enter)) => break Ok(UrlOutcome::Completed),
            Ok(Some(Key::Char('d' | 'D'))) => break Ok(UrlOutcome::Declined),
            Ok(Some(Key::Escape | Key::Char('q' | 'Q') | Key::CtrlC | Key::Char('\u{4}'))) => {
                break Err(Interrupt::Cancelled)
            }
            Ok(Some(_)) => {}
            Err(e) => break Err(e),
        }
    };
    drop(raw);
    stop.store(true, Ordering::SeqCst);
    let _ = ticker.join();
    let _ = term.clear_line();
    let s = started.elapsed().as_secs();
    let said = match &outcome {
        Ok(UrlOutcome::Completed) => "done",
        Ok(UrlOutcome::Declined) => "declined",
        Err(_) => {
            let _ = term.flush();
            return outcome;
        }
    };
    let _ = term.write_line(&format!(
        "{} {said} after {}:{:02}",
        style("⏳").dim(),
        s / 60,
        s % 60
    ));
    outcome
}
