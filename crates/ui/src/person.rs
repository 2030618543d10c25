//! Who answers what scripted answers and rules leave open: the terminal
//! when one opens, else the local browser page, else nobody (with the reason
//! in words). The `elicit` command and `elicit-rmcp` choose alike, through
//! [`choose`]; only how they name their settings differs ([`Wording`]).

use std::time::Duration;

use elicit_core::elicitation::resolve::{NoTerminal, Resolver};

use crate::page::{BrowserResolver, PageOptions};
use crate::terminal::{TerminalOptions, TerminalResolver};

/// Where a person answers (the command's `--ui`, env `ELICIT_UI`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ui {
    /// The terminal when one opens, else the local browser page (not in CI,
    /// and only when a browser really opens it, unless `no_open`).
    #[default]
    Auto,
    /// The terminal only: with no terminal nobody is asked.
    Terminal,
    /// Always the local browser page.
    Browser,
}

impl Ui {
    /// Reads `auto`, `terminal` or `browser`, as `--ui` does.
    pub fn parse(text: &str) -> Option<Ui> {
        match text {
            "auto" => Some(Ui::Auto),
            "terminal" => Some(Ui::Terminal),
            "browser" => Some(Ui::Browser),
            _ => None,
        }
    }
}

/// How a caller names its settings in the reasons a person reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wording {
    /// Why nobody is asked under `no_input` (`--no-input was given`).
    pub no_input: &'static str,
    /// What asks for the page when CI stops the fallback to it
    /// (`--ui browser or --no-open`).
    pub ask_for_page: &'static str,
}

/// The `elicit` command's words: its flags.
pub const FLAGS: Wording = Wording {
    no_input: "--no-input was given",
    ask_for_page: "--ui browser or --no-open",
};

/// What the choice is made from.
#[derive(Debug, Clone)]
pub struct PersonOptions {
    /// `--ui`.
    pub ui: Ui,
    /// `--no-input`: nobody is asked.
    pub no_input: bool,
    /// `--server NAME`: shown in the header.
    pub server: Option<String>,
    /// How long the person has for each prompt.
    pub timeout: Option<Duration>,
    /// The setting `timeout` comes from, named when it runs out
    /// (`--prompt-timeout`).
    pub timeout_flag: &'static str,
    /// `--browser COMMAND`.
    pub browser: Option<String>,
    /// `--no-open`.
    pub no_open: bool,
    /// Whether this is a CI job ([`in_ci`]): then `Ui::Auto` with no
    /// terminal never falls back to a page nobody would see.
    pub ci: bool,
    /// How the reasons name the settings.
    pub wording: Wording,
}

/// Who settles what scripted answers leave open.
pub enum Person {
    /// The person at the terminal.
    Terminal(TerminalResolver),
    /// The person with the local browser page.
    Page(BrowserResolver),
    /// Nobody, and why: what is left open fails (or is declined by rules).
    Nobody(NoTerminal),
}

impl Person {
    /// The resolver, borrowed.
    pub fn resolver(&mut self) -> &mut dyn Resolver {
        match self {
            Person::Terminal(t) => t,
            Person::Page(p) => p,
            Person::Nobody(n) => n,
        }
    }

    /// The resolver, owned (the proxies run it on their own thread).
    pub fn boxed(self) -> Box<dyn Resolver + Send> {
        match self {
            Person::Terminal(t) => Box::new(t),
            Person::Page(p) => Box::new(p),
            Person::Nobody(n) => Box::new(n),
        }
    }

    /// Whether a person sits at the terminal (who can pick from a list, and
    /// whose Ctrl-C is theirs).
    pub fn at_terminal(&self) -> bool {
        matches!(self, Person::Terminal(_))
    }
}

/// What [`decide`] settles on.
#[derive(Debug)]
pub enum Choice<T> {
    /// The terminal that opened.
    Terminal(T),
    /// The page. `unattended`: nobody asked for it, so an elicitation fails
    /// at once when no browser opens it.
    Page {
        /// Nobody asked for the page.
        unattended: bool,
    },
    /// Nobody, and why.
    Nobody(String),
}

/// The choice, given how opening the terminal goes (tried only when the
/// terminal may be used): nobody under `no_input`; the page for
/// `Ui::Browser`; else the terminal when it opens; else, for `Ui::Auto`,
/// the page (asked for with `no_open`; outside CI only if a browser really
/// opens it); else nobody.
pub fn decide<T>(
    o: &PersonOptions,
    open_terminal: impl FnOnce() -> Result<T, String>,
) -> Choice<T> {
    if o.no_input {
        return Choice::Nobody(o.wording.no_input.into());
    }
    if o.ui == Ui::Browser {
        return Choice::Page { unattended: false };
    }
    match open_terminal() {
        Ok(t) => Choice::Terminal(t),
        Err(detail) if o.ui == Ui::Auto => {
            if o.no_open {
                Choice::Page { unattended: false }
            } else if o.ci {
                Choice::Nobody(format!(
                    "{detail}; CI is set, so elicit does not fall back to a browser page nobody would see ({} asks for the page)",
                    o.wording.ask_for_page
                ))
            } else {
                Choice::Page { unattended: true }
            }
        }
        Err(detail) => Choice::Nobody(detail),
    }
}

/// Who answers, by [`decide`]: the terminal opened, or the page started
/// (nobody, with its error, when it cannot start).
pub fn choose(o: &PersonOptions) -> Person {
    let terminal = || {
        TerminalResolver::open(TerminalOptions {
            server: o.server.clone(),
            timeout: o.timeout,
            browser: o.browser.clone(),
            no_open: o.no_open,
        })
    };
    match decide(o, terminal) {
        Choice::Terminal(t) => Person::Terminal(t.with_timeout_flag(o.timeout_flag)),
        Choice::Page { unattended } => BrowserResolver::new(PageOptions {
            server: o.server.clone(),
            timeout: o.timeout,
            browser: o.browser.clone(),
            no_open: o.no_open,
            fail_unless_opened: unattended,
        })
        .map(Person::Page)
        .unwrap_or_else(|e| {
            Person::Nobody(NoTerminal {
                detail: e.to_string(),
            })
        }),
        Choice::Nobody(detail) => Person::Nobody(NoTerminal { detail }),
    }
}

/// Whether the environment says this is a CI job: `CI` set to anything
/// but an empty string, `0` or `false` (the convention GitHub Actions,
/// GitLab, CircleCI, Travis and Buildkite share).
pub fn in_ci(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    var("CI").is_some_and(|v| {
        let v = v.to_string_lossy();
        let v = v.trim();
        !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> PersonOptions {
        PersonOptions {
            ui: Ui::Auto,
            no_input: false,
            server: None,
            timeout: None,
            timeout_flag: "--prompt-timeout",
            browser: None,
            no_open: false,
            ci: false,
            wording: FLAGS,
        }
    }

    fn page(c: Choice<()>) -> Option<bool> {
        match c {
            Choice::Page { unattended } => Some(unattended),
            _ => None,
        }
    }

    #[test]
    fn the_reasons_use_the_callers_words() {
        let no_tty = || Err::<(), _>("no terminal (/dev/tty: No such device)".to_string());
        let ci = PersonOptions {
            ci: true,
            ..options()
        };
        match decide(&ci, no_tty) {
            Choice::Nobody(why) => assert_eq!(
                why,
                "no terminal (/dev/tty: No such device); CI is set, so elicit does not fall back to a browser page nobody would see (--ui browser or --no-open asks for the page)"
            ),
            other => panic!("{other:?}"),
        }
        let nobody = PersonOptions {
            no_input: true,
            ..options()
        };
        assert!(
            matches!(decide(&nobody, no_tty), Choice::Nobody(why) if why == "--no-input was given")
        );
        // CI does not stop the page when it was asked for.
        let asked = PersonOptions {
            no_open: true,
            ..ci
        };
        assert_eq!(page(decide(&asked, no_tty)), Some(false));
    }

    #[test]
    fn ci_is_any_value_but_empty_zero_or_false() {
        for (value, on) in [
            ("", false),
            ("0", false),
            (" False ", false),
            ("1", true),
            ("no", true),
        ] {
            assert_eq!(in_ci(|_| Some(value.into())), on, "CI={value:?}");
        }
        assert!(!in_ci(|_| None));
    }
}
