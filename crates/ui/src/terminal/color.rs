//! `--color auto|always|never`: one process-wide choice that the terminal UI
//! reads when it opens the terminal. `auto` colours the terminal unless
//! `NO_COLOR` is set (and not empty) or `TERM` is `dumb`.

use std::sync::atomic::{AtomicU8, Ordering};

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
}
