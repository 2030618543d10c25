//! Small prompt widgets on the terminal: a list, a checklist, one line of
//! text. All are our own rather than dialoguer's, for reasons dialoguer
//! cannot meet: keys come from [`super::keys`] so an abandoned prompt stops
//! reading; Esc, Ctrl-C and Ctrl-D cancel everywhere; every widget leaves
//! the screen the same way whatever the key (`Block`); the current row is
//! marked with `❯` even without colour; a yes/no can start with nothing
//! chosen; a rejected checklist answer is never shown as accepted; long
//! lists filter as you type.

use std::io;

use console::style;
use elicit_platform::terminal::Key;

pub use super::interrupt::Interrupt;
pub(crate) use super::interrupt::Prompted;
use super::keys::{self, read_key};
use super::tty::Screen;

/// How long a consent screen (the URL screen, the review before submit, an
/// approve-only form) is shown, with every key ignored, before its choices
/// appear: a key pressed just as the screen was drawn (or typed ahead) must
/// not answer a question the person has not seen.
pub const CONSENT_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// Drops whatever was typed but not yet read (type-ahead): keys pressed
/// while waiting for a server, or typed on from the last prompt, must not
/// answer a consent choice (open a URL, send the answers, approve) or a
/// prompt not yet drawn. Called before consent choices and before a form
/// or picker appears, never between ordinary fields: there keys typed
/// ahead belong to the next field.
pub(crate) fn discard_typeahead(term: &Screen) {
    elicit_platform::terminal::discard_input(term.keys());
}

/// Leaves a consent screen up for [`CONSENT_PAUSE`] with keys ignored, then
/// discards them, saying so when there were any; Ctrl-C still cancels at
/// once.
pub(crate) fn consent_pause(term: &Screen) -> Prompted<()> {
    let _ = term.flush();
    let until = std::time::Instant::now() + CONSENT_PAUSE;
    while std::time::Instant::now() < until {
        check_interrupt()?;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let ignored = keys::typed_ahead(term);
    discard_typeahead(term);
    if ignored {
        let _ = term.write_line(&format!(
            "  {}",
            style("keys typed ahead were ignored: read this screen, then choose").dim()
        ));
    }
    check_interrupt()
}

/// Fails with `Cancelled` when Ctrl-C arrived between two prompts.
pub(crate) fn check_interrupt() -> Prompted<()> {
    if keys::stopped() {
        Err(Interrupt::Abandoned)
    } else if elicit_platform::handlers::interrupted() {
        Err(Interrupt::Cancelled)
    } else {
        Ok(())
    }
}

/// Lists longer than this filter as you type.
pub const FILTER_FROM: usize = 10;

/// The most characters a list item shows (the README's promise), before
/// the terminal's width cuts it further.
pub const MAX_ITEM_CHARS: usize = 100;

/// Cuts a list line to [`MAX_ITEM_CHARS`] and to the terminal's width less
/// `reserved` columns (the marks), so it never wraps: a redrawn block is
/// cleared by counting lines, and a wrapped line would leave stale rows
/// behind. Styling escapes are kept intact by `truncate_str`.
fn fit(term: &Screen, text: &str, reserved: usize) -> String {
    let width = term.size().1 as usize;
    let max = width.saturating_sub(reserved).clamp(10, MAX_ITEM_CHARS);
    console::truncate_str(text, max, "…").into_owned()
}

/// Cuts a whole line to the terminal's width (one column spare).
fn fit_line(term: &Screen, line: &str) -> String {
    let width = (term.size().1 as usize).saturating_sub(1).max(10);
    console::truncate_str(line, width, "…").into_owned()
}

/// The lines a prompt has drawn below where it started, redrawn in place
/// and removed the same way however the prompt ends (answer, Esc, Ctrl-C,
/// Ctrl-D, timeout): the one way to leave a prompt.
struct Block<'a> {
    term: &'a Screen,
    lines: usize,
}

impl<'a> Block<'a> {
    fn new(term: &'a Screen) -> Self {
        let _ = term.hide_cursor();
        Block { term, lines: 0 }
    }

    fn draw(&mut self, lines: &[String]) -> io::Result<()> {
        self.clear()?;
        for l in lines {
            self.term.write_line(&fit_line(self.term, l))?;
        }
        self.lines = lines.len();
        self.term.flush()
    }

    fn clear(&mut self) -> io::Result<()> {
        if self.lines > 0 {
            self.term.clear_last_lines(self.lines)?;
        }
        self.lines = 0;
        Ok(())
    }

    /// Removes the block, shows the cursor, and on success leaves the
    /// one-line record of the answer (`✔ question · answer`).
    fn leave<T>(mut self, result: Prompted<T>, report: impl FnOnce(&T) -> String) -> Prompted<T> {
        let _ = self.clear();
        let _ = self.term.show_cursor();
        if let Ok(v) = &result {
            let _ = self.term.write_line(&fit_line(self.term, &report(v)));
        }
        let _ = self.term.flush();
        result
    }
}

impl Drop for Block<'_> {
    fn drop(&mut self) {
        let _ = self.term.show_cursor();
    }
}

fn question_line(prompt: &str, filter: Option<&str>) -> String {
    let mut s = format!(
        "{} {} {}",
        style("?").yellow().bold(),
        style(prompt).bold(),
        style("›").black().bright()
    );
    match filter {
        Some("") => s.push_str(&format!(" {}", style("type to filter").dim())),
        Some(f) => s.push_str(&format!(" {f}")),
        None => {}
    }
    s
}

/// The record left once a question is answered.
pub(crate) fn answered_line(prompt: &str, answer: &str) -> String {
    format!(
        "{} {} {} {}",
        style("✔").green(),
        style(prompt).bold(),
        style("·").black().bright(),
        style(answer).green()
    )
}

/// One row: `❯` marks the current row (a character, so it shows without
/// colour too), then the tick box for a checklist.
fn item_line(text: &str, active: bool, checked: Option<bool>) -> String {
    let mark = if active {
        style("❯").green().to_string()
    } else {
        " ".to_string()
    };
    let tick = match checked {
        Some(true) => format!("{} ", style("✔").green()),
        Some(false) => format!("{} ", style("⬚").magenta()),
        None => String::new(),
    };
    let text = if active {
        style(text).cyan().to_string()
    } else {
        text.to_string()
    };
    format!("{mark} {tick}{text}")
}

/// The rows to show of `n` so the cursor stays visible on a short screen.
fn window(
    term: &Screen,
    n: usize,
    cursor: Option<usize>,
    reserved: usize,
) -> std::ops::Range<usize> {
    let rows = term.size().0 as usize;
    let room = rows.saturating_sub(reserved + 1).max(3);
    if n <= room {
        return 0..n;
    }
    let c = cursor.unwrap_or(0);
    let start = c.saturating_sub(room / 2).min(n - room);
    start..start + room
}

fn error_line(reason: &str) -> String {
    format!(
        "  {} {}",
        style("✗").red().bold(),
        style(elicit_core::text::sanitize::sanitize_line(reason)).red()
    )
}

/// Moves a cursor over `n` rows, wrapping; from nothing, down starts at
/// the top and up at the bottom.
fn step(cursor: Option<usize>, n: usize, down: bool) -> Option<usize> {
    if n == 0 {
        return None;
    }
    Some(match (cursor, down) {
        (None, true) => 0,
        (None, false) => n - 1,
        (Some(c), true) => (c + 1) % n,
        (Some(c), false) => (c + n - 1) % n,
    })
}

fn is_cancel(key: &Key) -> bool {
    matches!(key, Key::Escape | Key::CtrlC | Key::Char('\u{4}'))
}

/// A list of choices: ↑/↓ move, Enter picks, Esc/Ctrl-C/Ctrl-D cancel.
/// `default: None` starts with nothing chosen: Enter then only asks to
/// choose. More than [`FILTER_FROM`] items filter as you type.
pub fn select(
    term: &Screen,
    prompt: &str,
    items: &[String],
    default: Option<usize>,
) -> Prompted<usize> {
    select_keyed(term, prompt, items, default, &[])
}

/// The hint line naming each shortcut (`y: yes · n: no`), when any works.
fn keys_hint(items: &[String], shortcuts: &[(char, usize)], filterable: bool) -> Option<String> {
    let named: Vec<String> = shortcuts
        .iter()
        .filter(|&&(_, i)| i < items.len() && !filterable)
        .map(|&(k, i)| {
            format!(
                "{k}: {}",
                console::strip_ansi_codes(&items[i]).to_lowercase()
            )
        })
        .collect();
    (!named.is_empty()).then(|| format!("  {}", style(named.join(" · ")).dim()))
}

/// [`select`], where each `(key, item)` of `shortcuts` picks that item at
/// once (`y`/`n` on a yes/no). Ignored on a list that filters as you type.
pub(crate) fn select_keyed(
    term: &Screen,
    prompt: &str,
    items: &[String],
    default: Option<usize>,
    shortcuts: &[(char, usize)],
) -> Prompted<usize> {
    check_interrupt()?;
    let items: Vec<String> = items.iter().map(|i| fit(term, i, 4)).collect();
    let prompt = fit(term, prompt, 8);
    let filterable = items.len() > FILTER_FROM;
    let mut filter = String::new();
    let mut cursor = default.filter(|&d| d < items.len());
    let mut notice: Option<&str> = None;
    let shortcut = |c: char| {
        shortcuts
            .iter()
            .find(|&&(k, i)| k == c.to_ascii_lowercase() && i < items.len())
            .map(|&(_, i)| i)
    };
    let mut block = Block::new(term);
    let _raw = keys::hold_raw(term);
    let result = loop {
        let needle = filter.to_lowercase();
        let shown: Vec<usize> = (0..items.len())
            .filter(|&i| {
                needle.is_empty()
                    || console::strip_ansi_codes(&items[i])
                        .to_lowercase()
                        .contains(&needle)
            })
            .collect();
        cursor = cursor.map(|c| c.min(shown.len().saturating_sub(1)));
        if shown.is_empty() {
            cursor = None;
        }
        // The keys' hint is part of the block, so it goes with it once
        // answered (drawn above it, it stayed on the screen).
        let mut lines: Vec<String> = keys_hint(&items, shortcuts, filterable)
            .into_iter()
            .collect();
        lines.push(question_line(
            &prompt,
            filterable.then_some(filter.as_str()),
        ));
        for k in window(term, shown.len(), cursor, 2) {
            lines.push(item_line(&items[shown[k]], cursor == Some(k), None));
        }
        if shown.is_empty() {
            lines.push(format!("  {}", style("no match (Backspace to edit)").dim()));
        }
        if let Some(n) = notice {
            lines.push(error_line(n));
        }
        if let Err(e) = block.draw(&lines) {
            break Err(e.into());
        }
        let key = match read_key(term) {
            Ok(k) => k,
            Err(e) => break Err(e),
        };
        notice = None;
        match key {
            k if is_cancel(&k) => break Err(Interrupt::Cancelled),
            Key::Char(c) if !filterable && shortcut(c).is_some() => {
                if let Some(i) = shortcut(c) {
                    break Ok(i);
                }
            }
            Key::Char('q') if !filterable => break Err(Interrupt::Cancelled),
            Key::Enter | Key::Char(' ') if !(filterable && key == Key::Char(' ')) => match cursor {
                Some(c) => break Ok(shown[c]),
                None if shown.is_empty() => {
                    notice = Some("nothing matches: Backspace edits the filter")
                }
                None => notice = Some("nothing is chosen: pick one with ↑/↓, then Enter"),
            },
            Key::ArrowDown | Key::Tab => cursor = step(cursor, shown.len(), true),
            Key::ArrowUp | Key::BackTab => cursor = step(cursor, shown.len(), false),
            Key::Char('j') if !filterable => cursor = step(cursor, shown.len(), true),
            Key::Char('k') if !filterable => cursor = step(cursor, shown.len(), false),
            Key::Home if !shown.is_empty() => cursor = Some(0),
            Key::End if !shown.is_empty() => cursor = Some(shown.len() - 1),
            Key::Backspace if filterable => {
                filter.pop();
                cursor = Some(0);
            }
            Key::Char('\u{15}') if filterable => {
                filter.clear();
                cursor = Some(0);
            }
            Key::Char(c) if filterable && !c.is_control() => {
                filter.push(c);
                cursor = Some(0);
            }
            _ => {}
        }
    };
    block.leave(result, |&i| answered_line(&prompt, &items[i]))
}

/// A checklist: Space ticks, `a` ticks or unticks all, Enter confirms,
/// Esc/Ctrl-C/Ctrl-D cancel. `check` judges the ticked set: a rejected set
/// keeps the list up with the reason under it (each attempt replaces the
/// last reason), and only an accepted one is recorded with `✔`.
pub(crate) fn multi_select(
    term: &Screen,
    prompt: &str,
    items: &[String],
    checked: &[bool],
    check: impl Fn(&[usize]) -> Result<(), String>,
) -> Prompted<Vec<usize>> {
    check_interrupt()?;
    let items: Vec<String> = items.iter().map(|i| fit(term, i, 6)).collect();
    let prompt = fit(term, prompt, 8);
    let mut ticked: Vec<bool> = (0..items.len())
        .map(|i| checked.get(i).copied().unwrap_or(false))
        .collect();
    let mut cursor = if items.is_empty() { None } else { Some(0) };
    let mut problem: Option<String> = None;
    let mut block = Block::new(term);
    let _raw = keys::hold_raw(term);
    let result = loop {
        let mut lines = vec![question_line(&prompt, None)];
        for k in window(term, items.len(), cursor, 2) {
            lines.push(item_line(&items[k], cursor == Some(k), Some(ticked[k])));
        }
        if let Some(p) = &problem {
            lines.push(error_line(p));
        }
        if let Err(e) = block.draw(&lines) {
            break Err(e.into());
        }
        let key = match read_key(term) {
            Ok(k) => k,
            Err(e) => break Err(e),
        };
        match key {
            k if is_cancel(&k) || k == Key::Char('q') => break Err(Interrupt::Cancelled),
            Key::Enter => {
                let picked: Vec<usize> = (0..items.len()).filter(|&i| ticked[i]).collect();
                match check(&picked) {
                    Ok(()) => break Ok(picked),
                    Err(reason) => problem = Some(reason),
                }
            }
            Key::Char(' ') => {
                if let Some(c) = cursor {
                    ticked[c] = !ticked[c];
                }
            }
            Key::Char('a') => {
                let all = ticked.iter().all(|&t| t);
                ticked.iter_mut().for_each(|t| *t = !all);
            }
            Key::ArrowDown | Key::Tab | Key::Char('j') => cursor = step(cursor, items.len(), true),
            Key::ArrowUp | Key::BackTab | Key::Char('k') => {
                cursor = step(cursor, items.len(), false)
            }
            Key::Home if !items.is_empty() => cursor = Some(0),
            Key::End if !items.is_empty() => cursor = Some(items.len() - 1),
            _ => {}
        }
    };
    block.leave(result, |picked| {
        let text = picked
            .iter()
            .map(|&i| items[i].as_str())
            .collect::<Vec<_>>()
            .join(", ");
        answered_line(&prompt, if text.is_empty() { "none" } else { &text })
    })
}

/// The key that shows or hides a masked field's text (Ctrl-R, "reveal").
pub(crate) const REVEAL_KEY: char = '\u{12}';

/// One line of text. Enter submits; Esc, Ctrl-C and Ctrl-D cancel (with
/// or without text: Ctrl-D is "I am done here", as at the other prompts);
/// Ctrl-U clears, arrows/Home/End move. `masked` draws `•` for each
/// character until Ctrl-R reveals the text (and hides it again).
///
/// `prompt` is drawn before the text and may contain styling; it must
/// already be sanitised. On cancel the line is wiped, so whatever follows
/// (`✗ cancelled`) starts on a clean line.
pub fn read_line(term: &Screen, prompt: &str, initial: &str, masked: bool) -> Prompted<String> {
    read_line_or_back(term, prompt, initial, masked, false).map(|line| line.unwrap_or_default())
}

/// [`read_line`], where `back` lets ↑ or Shift-Tab on an empty line ask
/// to go back to the field before: `Ok(None)`.
pub(crate) fn read_line_or_back(
    term: &Screen,
    prompt: &str,
    initial: &str,
    masked: bool,
    back: bool,
) -> Prompted<Option<String>> {
    check_interrupt()?;
    let mut chars: Vec<char> = initial.chars().collect();
    let mut pos = chars.len();
    let mut start = 0usize;
    let mut revealed = !masked;
    let _raw = keys::hold_raw(term);
    let outcome = loop {
        let shown: Vec<char> = if revealed {
            chars.clone()
        } else {
            vec!['•'; chars.len()]
        };
        start = match redraw(term, prompt, &shown, pos, start) {
            Ok(s) => s,
            Err(e) => break Err(e.into()),
        };
        let key = match read_key(term) {
            Ok(k) => k,
            Err(e) => break Err(e),
        };
        match key {
            Key::Enter => break Ok(Some(chars.iter().collect::<String>())),
            k if is_cancel(&k) => break Err(Interrupt::Cancelled),
            Key::ArrowUp | Key::BackTab if back && chars.is_empty() => break Ok(None),
            Key::Char(REVEAL_KEY) if masked => revealed = !revealed,
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
    };
    match outcome {
        Ok(None) => {
            let _ = term.clear_line();
            let _ = term.flush();
            Ok(None)
        }
        Ok(Some(text)) => {
            if masked && revealed {
                // Do not leave a secret on screen once it is entered.
                let _ = redraw(term, prompt, &vec!['•'; chars.len()], chars.len(), 0);
            }
            term.write_line("")?;
            Ok(Some(text))
        }
        Err(e) => {
            let _ = term.clear_line();
            let _ = term.flush();
            Err(e)
        }
    }
}

/// Draws the prompt and the visible window of the text, with the cursor at
/// `pos`. Long text scrolls horizontally instead of wrapping, so the line can
/// always be redrawn in place. Returns the window start.
fn redraw(
    term: &Screen,
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
