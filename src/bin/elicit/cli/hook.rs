//! `elicit hook …`: the flags of the commands other clients run.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::flag_groups::AnswerArgs;
use super::parse_duration;

/// `elicit hook …`: one subcommand per client with an elicitation hook
/// (deferred, as [`super::Command`]).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum HookCommand {
    /// Claude Code's `Elicitation` hook: reads the hook input on stdin,
    /// answers from --answer/--answers rules (matched on the server name
    /// too), else on the page, and prints the hook's answer. When nobody
    /// may answer it prints nothing, so Claude Code asks itself (unless
    /// --fallback). The `ElicitationResult` event is recorded with
    /// --record.
    #[command(after_help = HOOK_HELP)]
    ClaudeCode(Box<ClaudeCodeHookArgs>),
}

pub const HOOK_HELP: &str = "\
In ~/.claude/settings.json (or .claude/settings.json of a project):
  {\"hooks\": {\"Elicitation\": [{\"matcher\": \"deploy-bot\",
     \"hooks\": [{\"type\": \"command\", \"command\": \"elicit hook claude-code --answers ~/.config/elicit/answers.json --prompt-timeout 9m\", \"timeout\": 600}]}]}}

Examples:
  elicit hook claude-code --answers answers.json --no-input    headless: rules, else Claude Code asks
  elicit hook claude-code --fallback decline                   decline what no rule or person answers
  elicit hook claude-code --record answered.jsonl              also keep each ElicitationResult";

/// The person's time on the hook's page unless told: Claude Code kills a
/// hook at its `timeout` (60 s by default), and a hook that answers first
/// leaves no page open for nobody.
pub const HOOK_PROMPT_TIMEOUT: &str = "50s";

// `elicit hook claude-code`. (Not a doc comment: see `super::Command`.)
#[derive(Debug, Args)]
pub struct ClaudeCodeHookArgs {
    /// The hook input (default: stdin, as Claude Code gives it).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// What to answer when nobody may answer (no rule matched and
    /// --no-input, no terminal and no browser, or CI): nothing (Claude
    /// Code then shows its own dialog), decline or cancel.
    #[arg(long, value_enum, value_name = "ACTION", env = "ELICIT_HOOK_FALLBACK")]
    pub fallback: Option<HookFallback>,

    /// Append what was answered (this hook's answers and Claude Code's
    /// ElicitationResult events) to FILE, one JSON object a line.
    #[arg(long, value_name = "FILE", env = "ELICIT_HOOK_RECORD")]
    pub record: Option<PathBuf>,

    /// How long the person has on the page, after which the answer is
    /// cancel: under Claude Code's default hook `timeout` (60 s); give a
    /// longer one with a longer `timeout` in settings.json.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = HOOK_PROMPT_TIMEOUT)]
    pub prompt_timeout: std::time::Duration,

    #[command(flatten)]
    pub answers: AnswerArgs,
}

/// `--fallback` of `elicit hook claude-code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookFallback {
    Decline,
    Cancel,
}
