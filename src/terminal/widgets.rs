//! Small prompt widgets on the terminal. Lists, checklists and yes/no use
//! dialoguer; the one-line text input is our own because dialoguer's
//! `Input` ignores Esc and Ctrl-D, and the spec wants decline and cancel to
//! be reachable from every prompt.

use std::io;

use console::{Key, Term};
use dialoguer::theme::ColorfulTheme;
use dialoguer::{MultiSelect, Select};

/// Why a prompt did not produce a value.
#[derive(Debug)]
pub enum Interrupt {
    /// Esc, Ctrl-C or end of input: the elicitation is cancelled.
    Cancelled,
    /// The terminal failed.
    Io(io::Error),
}

impl From<io::Error> for Interrupt {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::Interrupted | io::ErrorKind::UnexpectedEof => Interrupt::Cancelled,
            _ => Interrupt::Io(e),
        }
    }
}

impl From<dialoguer::Error> for Interrupt {
    fn from(e: dialoguer::Error) -> Self {
        match e {
            dialoguer::Error::IO(io) => io.into(),
        }
    }
}

pub type Prompted<T> = Result<T, Interrupt>;

/// How many lines the list prompt on screen occupies (0: none). When a
/// timeout or a missed Ctrl-C abandons a list, the waiting side clears them,
/// so no half-drawn menu stays behind.
pub static LIST_LINES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Records the lines a list of `items` takes: its prompt plus one line an
/// item. A list too long for the screen pages, and its height is not known
/// here: then nothing is recorded, and nothing is cleared.
fn list_drawn(term: &Term, items: usize) {
    let rows = term.size().0 as usize;
    let lines = if items + 3 < rows { items + 1 } else { 0 };
    LIST_LINES.store(lines, std::sync::atomic::Ordering::SeqCst);
}

fn list_gone() {
    LIST_LINES.store(0, std::sync::atomic::Ordering::SeqCst);
}

/// How long a consent screen (the URL screen, the review before submit, an
/// approve-only form) is shown, with every key ignored, before its choices
/// appear: a key pressed just as the screen was drawn (or typed ahead) must
/// not answer a question the person has not seen.
pub const CONSENT_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// Drops whatever was typed but not yet read (type-ahead): keys pressed
/// while waiting for a server, or typed on for the last prompt, must not
/// answer the next one. Called before each prompt is drawn.
pub fn discard_typeahead(term: &Term) {
    use std::os::fd::AsRawFd;
    // SAFETY: tcflush on the terminal's descriptor; it fails harmlessly
    // (ENOTTY) on anything else.
    unsafe {
        libc::tcflush(term.as_raw_fd(), libc::TCIFLUSH);
    }
}

/// Leaves a consent screen up for [`CONSENT_PAUSE`] with keys ignored, then
/// discards them; Ctrl-C still cancels at once.
pub fn consent_pause(term: &Term) -> Prompted<()> {
    let _ = term.flush();
    let until = std::time::Instant::now() + CONSENT_PAUSE;
    while std::time::Instant::now() < until {
        check_interrupt()?;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    discard_typeahead(term);
    check_interrupt()
}

/// Fails with `Cancelled` when Ctrl-C arrived between two prompts.
pub fn check_interrupt() -> Prompted<()> {
    if super::tty::interrupted() {
        Err(Interrupt::Cancelled)
    } else {
        Ok(())
    }
}

/// The theme used everywhere: dialoguer's colourful theme (colours follow
/// `console`'s switch, which is off under NO_COLOR or TERM=dumb).
pub fn theme() -> ColorfulTheme {
    ColorfulTheme::default()
}

/// The most characters a list item shows (the README's promise), before
/// the terminal's width cuts it further.
pub const MAX_ITEM_CHARS: usize = 100;

/// Cuts a list line to [`MAX_ITEM_CHARS`] and to the terminal's width less
/// `reserved` columns (the theme's marks), so it never wraps: dialoguer
/// clears a redrawn list by counting lines, and a wrapped item would leave
/// stale rows behind. Styling escapes are kept intact by `truncate_str`.
fn fit(term: &Term, text: &str, reserved: usize) -> String {
    let width = term.size().1 as usize;
    let max = width.saturating_sub(reserved).clamp(10, MAX_ITEM_CHARS);
    console::truncate_str(text, max, "…").into_owned()
}

/// A list of choices; Enter picks, Esc (or Ctrl-C) cancels.
pub fn select(term: &Term, prompt: &str, items: &[String], default: usize) -> Prompted<usize> {
    check_interrupt()?;
    let theme = theme();
    let items: Vec<String> = items.iter().map(|i| fit(term, i, 4)).collect();
    let prompt = fit(term, prompt, 6);
    list_drawn(term, items.len());
    let picked = Select::with_theme(&theme)
        .with_prompt(prompt)
        .items(&items)
        .default(default.min(items.len().saturating_sub(1)))
        .report(true)
        .interact_on_opt(term);
    list_gone();
    let _ = term.show_cursor();
    match picked? {
        Some(i) => Ok(i),
        None => Err(Interrupt::Cancelled),
    }
}

/// A checklist; Space ticks, Enter confirms, Esc cancels.
pub fn multi_select(
    term: &Term,
    prompt: &str,
    items: &[String],
    checked: &[bool],
) -> Prompted<Vec<usize>> {
    check_interrupt()?;
    let theme = theme();
    let items: Vec<String> = items.iter().map(|i| fit(term, i, 6)).collect();
    let prompt = fit(term, prompt, 6);
    list_drawn(term, items.len());
    let picked = MultiSelect::with_theme(&theme)
        .with_prompt(prompt)
        .items(&items)
        .defaults(checked)
        .report(true)
        .interact_on_opt(term);
    list_gone();
    let _ = term.show_cursor();
    match picked? {
        Some(v) => Ok(v),
        None => Err(Interrupt::Cancelled),
    }
}

/// One line of text. Enter submits, Esc cancels, Ctrl-D on an empty line
/// cancels (end of input), Ctrl-U clears, arrows/Home/End move.
///
/// `prompt` is drawn before the text and may contain styling; it must
/// already be sanitised.
pub fn read_line(term: &Term, prompt: &str, initial: &str) -> Prompted<String> {
    check_interrupt()?;
    let mut chars: Vec<char> = initial.chars().collect();
    let mut pos = chars.len();
    let mut start = 0usize;
    loop {
        start = redraw(term, prompt, &chars, pos, start)?;
        match term.read_key()? {
            Key::Enter => {
                term.write_line("")?;
                return Ok(chars.into_iter().collect());
            }
            Key::Escape | Key::CtrlC => {
                term.write_line("")?;
                return Err(Interrupt::Cancelled);
            }
            Key::Char('\u{4}') if chars.is_empty() => {
                term.write_line("")?;
                return Err(Interrupt::Cancelled);
            }
            Key::Char('\u{15}') => {
                chars.clear();
                pos = 0;
            }
            Key::Char(c) if !c.is_control() => {
                chars.insert(pos, c);
                pos += 1;
            }
            Key::Backspace if pos > 0 => {
                pos -= 1;
                chars.remove(pos);
            }
            Key::Del if pos < chars.len() => {
                chars.remove(pos);
            }
            Key::ArrowLeft if pos > 0 => pos -= 1,
            Key::ArrowRight if pos < chars.len() => pos += 1,
            Key::Home => pos = 0,
            Key::End => pos = chars.len(),
            _ => {}
        }
    }
}

/// Draws the prompt and the visible window of the text, with the cursor at
/// `pos`. Long text scrolls horizontally instead of wrapping, so the line can
/// always be redrawn in place. Returns the window start.
fn redraw(
    term: &Term,
    prompt: &str,
    chars: &[char],
    pos: usize,
    mut start: usize,
) -> io::Result<usize> {
    let width = term.size().1 as usize;
    let prompt_w = console::measure_text_width(prompt);
    let avail = width.saturating_sub(prompt_w + 2).max(8);
    if pos < start {
        start = pos;
    }
    while char_width(&chars[start..pos]) >= avail {
        start += 1;
    }
    let mut end = start;
    while end < chars.len() && char_width(&chars[start..=end]) < avail {
        end += 1;
    }
    let visible: String = chars[start..end].iter().collect();
    term.clear_line()?;
    term.write_str(prompt)?;
    term.write_str(&visible)?;
    let back = char_width(&chars[pos..end]);
    if back > 0 {
        term.move_cursor_left(back)?;
    }
    term.flush()?;
    Ok(start)
}

fn char_width(chars: &[char]) -> usize {
    chars
        .iter()
        .map(|c| console::measure_text_width(c.encode_utf8(&mut [0; 4])))
        .sum()
}
