//! What the handler does, set in code or read from the environment
//! variables the `elicit` command reads for the same flags.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use elicit_core::duration::parse_duration;
use elicit_core::elicitation::protocol::Action;
use elicit_session::mcp::modes::ElicitModes;
use elicit_ui::person::{PersonOptions, Wording};

use crate::error::Error;

/// Where a person answers (the command's `--ui`, env `ELICIT_UI`): the
/// command's own choice ([`elicit_ui::person`]).
pub use elicit_ui::person::Ui;

/// How elicitations are answered: scripted answers and answer rules first,
/// then a person (terminal, page), as the `elicit` command answers them.
///
/// [`Options::default`] reads nothing from the environment;
/// [`Options::from_env`] starts from the `ELICIT_*` variables (and `CI`).
/// Every setting has a builder method.
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) answers: Vec<String>,
    pub(crate) answers_file: Option<PathBuf>,
    pub(crate) no_input: bool,
    pub(crate) ui: Ui,
    pub(crate) browser: Option<String>,
    pub(crate) no_open: bool,
    pub(crate) prompt_timeout: Option<Duration>,
    pub(crate) server: Option<String>,
    pub(crate) modes: ElicitModes,
    pub(crate) verbose: bool,
    pub(crate) ci: bool,
    pub(crate) fallback: Option<Action>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            answers: Vec::new(),
            answers_file: None,
            no_input: false,
            ui: Ui::Auto,
            browser: None,
            no_open: false,
            prompt_timeout: None,
            server: None,
            modes: ElicitModes::default(),
            verbose: false,
            ci: false,
            fallback: None,
        }
    }
}

impl Options {
    /// The defaults, then the environment variables of the matching flags:
    ///
    /// | variable | flag | builder method |
    /// |---|---|---|
    /// | `ELICIT_ANSWERS` | `--answers FILE` | [`Options::answers_file`] |
    /// | `ELICIT_NO_INPUT` | `--no-input` | [`Options::no_input`] |
    /// | `ELICIT_UI` | `--ui auto\|terminal\|browser` | [`Options::ui`] |
    /// | `ELICIT_BROWSER` | `--browser COMMAND` | [`Options::browser`] |
    /// | `ELICIT_NO_OPEN` | `--no-open` | [`Options::no_open`] |
    /// | `ELICIT_PROMPT_TIMEOUT` | `--prompt-timeout DURATION` | [`Options::prompt_timeout`] |
    /// | `ELICIT_MODES` | `--modes form,url\|form\|url\|none` | [`Options::modes`] |
    /// | `ELICIT_VERBOSE` | `--verbose` | [`Options::verbose`] |
    /// | `CI` | (the page fallback) | [`Options::ci`] |
    ///
    /// Read as the command reads them: an empty variable is unset; switches
    /// are off for `0`, `false`, `no`, `n`, `off`, `f` (any case), on for
    /// anything else. `BROWSER` is read
    /// when a URL or the page is opened, as by the command. A value that
    /// does not parse is an [`Error::Env`] naming the variable.
    pub fn from_env() -> Result<Options, Error> {
        Options::from_vars(|name| std::env::var_os(name))
    }

    /// [`Options::from_env`] over any source of variables (a test's map).
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Result<Options, Error> {
        // An empty variable is an unset one, as clap reads `env`.
        let text = |name: &'static str| -> Result<Option<String>, Error> {
            match var(name).filter(|v| !v.is_empty()) {
                None => Ok(None),
                Some(v) => v.into_string().map(Some).map_err(|v| Error::Env {
                    var: name,
                    value: v.to_string_lossy().into_owned(),
                    reason: "not valid UTF-8".into(),
                }),
            }
        };
        let switch = |name: &'static str| -> Result<bool, Error> {
            Ok(text(name)?.is_some_and(|v| falsey_is_on(&v)))
        };
        let mut o = Options::default();
        if let Some(path) = var("ELICIT_ANSWERS").filter(|p| !p.is_empty()) {
            o.answers_file = Some(PathBuf::from(path));
        }
        o.no_input = switch("ELICIT_NO_INPUT")?;
        if let Some(ui) = text("ELICIT_UI")? {
            o.ui = Ui::parse(&ui).ok_or_else(|| Error::Env {
                var: "ELICIT_UI",
                value: ui.clone(),
                reason: "expected auto, terminal or browser".into(),
            })?;
        }
        o.browser = text("ELICIT_BROWSER")?;
        o.no_open = switch("ELICIT_NO_OPEN")?;
        if let Some(t) = text("ELICIT_PROMPT_TIMEOUT")? {
            o.prompt_timeout = Some(parse_duration(&t).map_err(|reason| Error::Env {
                var: "ELICIT_PROMPT_TIMEOUT",
                value: t.clone(),
                reason,
            })?);
        }
        if let Some(m) = text("ELICIT_MODES")? {
            o.modes = ElicitModes::parse(&m).map_err(|reason| Error::Env {
                var: "ELICIT_MODES",
                value: m.clone(),
                reason,
            })?;
        }
        o.verbose = switch("ELICIT_VERBOSE")?;
        o.ci = elicit_ui::person::in_ci(&var);
        Ok(o)
    }

    /// A scripted answer, as `-a`/`--answer` takes it (repeatable):
    /// `NAME=VALUE`, a JSON object of field values, `@FILE`, or one of
    /// `accept`, `decline`, `cancel` (`accept` fills the other fields from
    /// their defaults). They apply to every elicitation, before the rules
    /// and the person.
    pub fn answer(mut self, answer: impl Into<String>) -> Self {
        self.answers.push(answer.into());
        self
    }

    /// Answer rules (`--answers FILE`): a JSON file (`"elicit": "answers/1"`)
    /// whose first matching rule answers each elicitation, or a cassette.
    pub fn answers_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.answers_file = Some(path.into());
        self
    }

    /// Never ask a person (`--no-input`): what scripted answers leave open
    /// fails, and with answer rules, what no rule matches is declined.
    pub fn no_input(mut self, on: bool) -> Self {
        self.no_input = on;
        self
    }

    /// Where a person answers (`--ui`).
    pub fn ui(mut self, ui: Ui) -> Self {
        self.ui = ui;
        self
    }

    /// The command line that opens URLs and the page (`--browser`), split
    /// like a shell, run with the URL in place of `%s` or added last.
    pub fn browser(mut self, command: impl Into<String>) -> Self {
        self.browser = Some(command.into());
        self
    }

    /// Never launch a browser (`--no-open`): a URL is shown to copy, and
    /// the page's address is printed on stderr.
    pub fn no_open(mut self, on: bool) -> Self {
        self.no_open = on;
        self
    }

    /// How long a person has for each elicitation (`--prompt-timeout`);
    /// past it the elicitation is answered `cancel`.
    pub fn prompt_timeout(mut self, timeout: Duration) -> Self {
        self.prompt_timeout = Some(timeout);
        self
    }

    /// The server name shown to the person (`--server`); by default the
    /// name the server gives itself in its `serverInfo`.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server = Some(name.into());
        self
    }

    /// The elicitation modes declared to the server (`--modes`): an
    /// elicitation of another mode is refused with -32602.
    pub fn modes(mut self, modes: ElicitModes) -> Self {
        self.modes = modes;
        self
    }

    /// Say on stderr which answer rule answered what (`--verbose`).
    pub fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    /// Whether this is a CI job (`CI`): then `Ui::Auto` with no terminal
    /// never falls back to a page nobody would see.
    pub fn ci(mut self, on: bool) -> Self {
        self.ci = on;
        self
    }

    /// When nobody may answer (no scripted answer, rule or person), answer
    /// with this action instead of failing the request (as the hook's
    /// `--fallback decline|cancel`). `Action::Accept` is taken as given:
    /// an accept with no content.
    pub fn fallback(mut self, action: Action) -> Self {
        self.fallback = Some(action);
        self
    }

    /// The modes declared to the server.
    pub fn declared_modes(&self) -> ElicitModes {
        self.modes
    }

    /// What the person is chosen from, named as these options are.
    pub(crate) fn person(&self) -> PersonOptions {
        PersonOptions {
            ui: self.ui,
            no_input: self.no_input,
            server: self.server.clone(),
            timeout: self.prompt_timeout,
            timeout_flag: "prompt_timeout",
            browser: self.browser.clone(),
            no_open: self.no_open,
            ci: self.ci,
            wording: WORDING,
        }
    }
}

/// How the reasons nobody is asked name these options.
const WORDING: Wording = Wording {
    no_input: "no_input (ELICIT_NO_INPUT) is set",
    ask_for_page: "Ui::Browser or no_open",
};

/// clap's `FalseyValueParser`, which the command's switches use: these
/// words (any case) are off, anything else is on.
fn falsey_is_on(value: &str) -> bool {
    let v = value.trim().to_ascii_lowercase();
    !matches!(v.as_str(), "" | "n" | "no" | "f" | "false" | "off" | "0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn nothing_set_is_the_default() {
        let o = Options::from_vars(vars(&[])).unwrap();
        assert_eq!(o.ui, Ui::Auto);
        assert!(!o.no_input && !o.no_open && !o.verbose && !o.ci);
        assert_eq!(o.modes, ElicitModes::default());
        assert_eq!(o.answers_file, None);
        assert_eq!(o.prompt_timeout, None);
        assert_eq!(o.browser, None);
    }

    #[test]
    fn every_variable_is_read_as_the_command_reads_it() {
        let o = Options::from_vars(vars(&[
            ("ELICIT_ANSWERS", "rules.json"),
            ("ELICIT_NO_INPUT", "1"),
            ("ELICIT_UI", "browser"),
            ("ELICIT_BROWSER", "firefox --new-window"),
            ("ELICIT_NO_OPEN", "yes"),
            ("ELICIT_PROMPT_TIMEOUT", "1m30s"),
            ("ELICIT_MODES", "url"),
            ("ELICIT_VERBOSE", "true"),
            ("CI", "true"),
        ]))
        .unwrap();
        assert_eq!(o.answers_file, Some(PathBuf::from("rules.json")));
        assert!(o.no_input && o.no_open && o.verbose && o.ci);
        assert_eq!(o.ui, Ui::Browser);
        assert_eq!(o.browser.as_deref(), Some("firefox --new-window"));
        assert_eq!(o.prompt_timeout, Some(Duration::from_secs(90)));
        assert_eq!(o.modes, ElicitModes::parse("url").unwrap());
    }

    #[test]
    fn falsey_switches_are_off() {
        for off in ["", "0", "false", "FALSE", "no", "n", "off", "f"] {
            let o = Options::from_vars(vars(&[("ELICIT_NO_INPUT", off), ("ELICIT_NO_OPEN", off)]))
                .unwrap();
            assert!(!o.no_input && !o.no_open, "{off:?}");
        }
        // CI's own convention: only empty, 0 and false say "not CI".
        for (ci, on) in [
            ("", false),
            ("0", false),
            ("False", false),
            ("1", true),
            ("no", true),
        ] {
            let o = Options::from_vars(vars(&[("CI", ci)])).unwrap();
            assert_eq!(o.ci, on, "CI={ci:?}");
        }
        let o = Options::from_vars(vars(&[("ELICIT_PROMPT_TIMEOUT", "45")])).unwrap();
        assert_eq!(o.prompt_timeout, Some(Duration::from_secs(45)));
    }

    #[test]
    fn empty_variables_are_unset() {
        let empty = [
            "ELICIT_ANSWERS",
            "ELICIT_UI",
            "ELICIT_BROWSER",
            "ELICIT_PROMPT_TIMEOUT",
            "ELICIT_MODES",
        ]
        .map(|v| (v, ""));
        let o = Options::from_vars(vars(&empty)).unwrap();
        assert_eq!(o.ui, Ui::Auto);
        assert_eq!(o.answers_file, None);
        assert_eq!(o.browser, None);
        assert_eq!(o.prompt_timeout, None);
        assert_eq!(o.modes, ElicitModes::default());
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        for (var, value) in [
            ("ELICIT_UI", "popup"),
            ("ELICIT_MODES", "form,popup"),
            ("ELICIT_PROMPT_TIMEOUT", "soon"),
            ("ELICIT_PROMPT_TIMEOUT", "400days"),
            ("ELICIT_PROMPT_TIMEOUT", "99999999999999999999999"),
        ] {
            match Options::from_vars(vars(&[(var, value)])) {
                Err(Error::Env {
                    var: v, value: got, ..
                }) => {
                    assert_eq!((v, got.as_str()), (var, value));
                }
                other => panic!("{var}={value}: {other:?}"),
            }
        }
    }
}
