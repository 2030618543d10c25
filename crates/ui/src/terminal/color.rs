//! `--color auto|always|never`: one process-wide choice that the terminal UI
//! reads when it opens the terminal. `auto` colours the terminal unless
//! `NO_COLOR` is set (and not empty) or `TERM` is `dumb`.

use std::sync::atomic::{AtomicU8, Ordering};

use elicit_core::lint::render::Emphasis;
use elicit_core::lint::Severity;

/// When to colour what elicit draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Colour a terminal unless NO_COLOR is set or TERM=dumb.
    #[default]
    Auto,
    /// Always colour, even under NO_COLOR.
    Always,
    /// Never colour.
    Never,
}

static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Sets the choice for the rest of the process.
pub fn set(choice: ColorChoice) {
    CHOICE.store(choice as u8, Ordering::Relaxed);
}

/// The choice in force.
pub fn choice() -> ColorChoice {
    match CHOICE.load(Ordering::Relaxed) {
        1 => ColorChoice::Always,
        2 => ColorChoice::Never,
        _ => ColorChoice::Auto,
    }
}

/// Whether to colour a terminal, given the environment.
pub fn enabled() -> bool {
    match choice() {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
        }
    }
}

/// `elicit lint`'s human report in colour: a severity bold in its colour
/// (error red, warning yellow, info cyan), supporting text dim; styled
/// whatever the stream, the caller having chosen colour.
pub fn paint_lint(text: &str, emphasis: Emphasis) -> String {
    let styled = console::style(text).force_styling(true);
    match emphasis {
        Emphasis::Severity(severity) => {
            let bold = styled.bold();
            match severity {
                Severity::Error => bold.red(),
                Severity::Warning => bold.yellow(),
                Severity::Info => bold.cyan(),
            }
        }
        Emphasis::Dim => styled.dim(),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_round_trips() {
        for c in [ColorChoice::Never, ColorChoice::Always, ColorChoice::Auto] {
            set(c);
            assert_eq!(choice(), c);
        }
        set(ColorChoice::Never);
        assert!(!enabled());
        set(ColorChoice::Always);
        assert!(enabled());
        set(ColorChoice::Auto);
    }

    #[test]
    fn lint_emphasis_is_painted_as_the_report_always_was() {
        assert_eq!(
            paint_lint("error", Emphasis::Severity(Severity::Error)),
            "\u{1b}[31m\u{1b}[1merror\u{1b}[0m"
        );
        assert_eq!(
            paint_lint("warning", Emphasis::Severity(Severity::Warning)),
            "\u{1b}[33m\u{1b}[1mwarning\u{1b}[0m"
        );
        assert_eq!(
            paint_lint("info", Emphasis::Severity(Severity::Info)),
            "\u{1b}[36m\u{1b}[1minfo\u{1b}[0m"
        );
        assert_eq!(paint_lint("| {}", Emphasis::Dim), "\u{1b}[2m| {}\u{1b}[0m");
    }
}
