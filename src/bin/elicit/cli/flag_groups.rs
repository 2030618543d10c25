//! The flag groups several commands flatten in (`#[command(flatten)]`):
//! in their own file, below the commands' own flags that use them.

use std::path::PathBuf;

use clap::Args;

// `--modes` and `--strict`, shared by `call` and `proxy`. (Not a doc
// comment: see `Command`.)
#[derive(Debug, Args, Clone)]
pub struct StrictArgs {
    /// The elicitation modes elicit declares to the server: form, url,
    /// form,url or none. An elicitation of another mode is refused with
    /// -32602, as the spec requires of a client.
    #[arg(long, value_name = "MODES", default_value = "form,url", value_parser = elicit::mcp::modes::ElicitModes::parse, env = "ELICIT_MODES")]
    pub modes: elicit::mcp::modes::ElicitModes,

    /// Check every elicitation the server sends against the lint rules
    /// (`elicit lint`) and the session rules; findings go to stderr as
    /// they happen, with a summary at the end. Exit 5 on an error finding.
    #[arg(long, env = "ELICIT_STRICT", value_parser = clap::builder::FalseyValueParser::new())]
    pub strict: bool,

    /// With --strict: do not report RULE (repeatable); `warnings` and
    /// `info` name every rule of that severity.
    #[arg(long, value_name = "RULE", requires = "strict")]
    pub allow: Vec<String>,

    /// With --strict: report RULE as an error (repeatable); `--deny
    /// warnings` makes every warning an error (and exit 5).
    #[arg(long, value_name = "RULE", requires = "strict")]
    pub deny: Vec<String>,
}

// Which server, and how to reach it: shared by `call` and `proxy`. (Not a
// doc comment: see `Command`.)

#[derive(Debug, Args, Clone, Default)]
pub struct AnswerArgs {
    /// A scripted answer (repeatable): NAME=VALUE, a JSON object of field
    /// values, @FILE (values, an answer {"ok","data","reason"} or an ElicitResult), or one of
    /// the words accept, decline, cancel. `accept` fills the other fields from
    /// their defaults.
    #[arg(short = 'a', long = "answer", value_name = "ANSWER")]
    pub answers: Vec<String>,

    /// The server name shown in the prompt header (default: the name the
    /// server gives itself, in its serverInfo or the input's _meta, else
    /// "An MCP server").
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,

    /// Answer rules for headless runs: a JSON file ("elicit": "answers/1")
    /// whose first matching rule answers each elicitation, or a cassette.
    /// With --no-input, what no rule matches is declined.
    #[arg(long = "answers", value_name = "FILE", env = "ELICIT_ANSWERS")]
    pub answers_file: Option<PathBuf>,

    /// Never prompt: fail at once when answers are missing.
    #[arg(long, env = "ELICIT_NO_INPUT", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_input: bool,

    /// Open URL elicitations with this command instead of the system opener:
    /// a command line split like a shell (`'firefox --new-window'`), run
    /// with the URL added (in place of `%s`, else last). Without it:
    /// ELICIT_BROWSER, then BROWSER, then the system opener.
    #[arg(long, value_name = "COMMAND", env = "ELICIT_BROWSER")]
    pub browser: Option<String>,

    /// Never launch a browser for URL elicitations: show the URL to copy.
    /// With the page (--ui browser), print its address on stderr instead
    /// of opening it (ELICIT_NO_OPEN=1 for clients that cannot pass flags).
    #[arg(long, env = "ELICIT_NO_OPEN", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_open: bool,

    /// Where a person answers: `auto` asks at the terminal when there is
    /// one, else on a local browser page; `terminal` only at the terminal;
    /// `browser` always on the page (e.g. under an agent that owns the
    /// screen). --answer comes first; --no-input never asks.
    #[arg(long, value_enum, value_name = "UI", env = "ELICIT_UI", default_value_t = super::choices::Ui::Auto)]
    pub ui: super::choices::Ui,
}
