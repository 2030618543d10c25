//! Command-line definitions (clap derive). Kept apart from `main.rs` so the
//! completions and man page generators read the same definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod choices;
mod examples;
mod flag_groups;
mod hook;
mod mock;
pub mod server_command;
mod test;
pub use examples::{AFTER_HELP, CALL_HELP, LINT_HELP, PROXY_HELP, RESPOND_HELP, RESULT_HELP};
pub use flag_groups::{AnswerArgs, StrictArgs};
pub use hook::{ClaudeCodeHookArgs, HookCommand, HookFallback};
pub use mock::{MockArgs, MOCK_HELP};
pub use test::{TestArgs, TestFormat, TEST_HELP};

/// Resolve MCP elicitations (elicitation/create) in a terminal.
///
/// Reads an elicitation from FILE or stdin (bare params, {method, params},
/// a JSON-RPC request, a 2026 input_required result or a -32042 error),
/// asks the person at the terminal (or takes --answer), and prints the
/// ElicitResult JSON on stdout. Prompts go to the terminal, never stdout.
#[derive(Debug, Parser)]
#[command(
    name = "elicit",
    version,
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// When to colour the terminal: auto (unless NO_COLOR is set or
    /// TERM=dumb), always, never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: choices::Color,

    #[command(flatten)]
    pub resolve: ResolveArgs,
}

#[derive(Debug, Args, Clone)]
pub struct ResolveArgs {
    /// The elicitation to resolve; `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    #[command(flatten)]
    pub answers: AnswerArgs,

    /// Newline-delimited JSON: one elicitation per line, one output line per
    /// input line, in order. A bad line yields an error line and the run goes on.
    #[arg(long, conflicts_with = "pretty")]
    pub lines: bool,

    /// Indent the JSON output.
    #[arg(long)]
    pub pretty: bool,

    /// Exit 3 when the result is decline and 4 when it is cancel (default: 0).
    #[arg(short = 'e', long)]
    pub exit_status: bool,

    /// Give up waiting for the person after DURATION (e.g. 90s, 5m): the
    /// result is cancel.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,

    /// The same as --timeout, by the name `call` and `proxy` use for it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub prompt_timeout: Option<std::time::Duration>,
    /// Say on stderr which --answers rule answered what.
    #[arg(short, long)]
    pub verbose: bool,

    /// End when the process that started elicit is gone (the SDK
    /// resolvers pass it: a client killed meanwhile leaves no elicit or
    /// page behind).
    #[arg(long)]
    pub exit_with_parent: bool,
}

#[derive(Debug, Args, Clone)]
pub struct CallArgs {
    /// Print the tool result as JSON even on a terminal (it is JSON
    /// whenever stdout is not a terminal).
    #[arg(long)]
    pub json: bool,

    /// The tool to call. Without it, on a terminal, pick one from the list.
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,

    /// The tool's arguments as a JSON object.
    #[arg(long = "args", value_name = "JSON")]
    pub args_json: Option<String>,

    /// One argument, KEY=VALUE, coerced by the tool's inputSchema (repeatable).
    #[arg(long = "arg", value_name = "KEY=VALUE")]
    pub arg: Vec<String>,

    #[command(flatten)]
    pub answers: AnswerArgs,

    /// How long to wait for the reply to each request: notifications and
    /// other chatter from the server do not extend it, and the time a
    /// person spends answering an elicitation (or signing in) does not count.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "60s")]
    pub timeout: std::time::Duration,

    /// Give up waiting for the person after DURATION: the elicitation is
    /// answered cancel.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub prompt_timeout: Option<std::time::Duration>,

    /// Send the server's stderr to FILE instead of elicit's stderr.
    #[arg(long, value_name = "FILE")]
    pub server_log: Option<PathBuf>,

    /// Record every message both ways as JSON lines ({dir, time, message}).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Write a cassette of the call to FILE (the tool, its arguments, each
    /// elicitation with the answer sent, the result) for `elicit test`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// The protocol lifecycle: auto uses the initialize handshake (where a
    /// server can ask in every way), and 2026-07-28 discovery when the
    /// server refuses it; a tool is never called twice.
    #[arg(long, value_enum, default_value = "auto")]
    pub protocol: choices::Protocol,

    /// Show the server's notifications and requests on stderr.
    #[arg(short, long)]
    pub verbose: bool,

    /// Indent the JSON output.
    #[arg(long)]
    pub pretty: bool,

    /// Exit 3 when an elicitation of the call was declined and 4 when one
    /// was cancelled (default: the tool's outcome decides).
    #[arg(short = 'e', long)]
    pub exit_status: bool,

    /// When an elicitation is left that nothing answers, keep the call open
    /// in the background, print it as one JSON object ({"parked": ID, …})
    /// and exit 5; `elicit respond ID` answers it later (for agents whose
    /// person is in the chat, not at this terminal).
    #[arg(long, env = "ELICIT_PARK", value_parser = clap::builder::FalseyValueParser::new())]
    pub park: bool,

    /// With --park: how long a parked question waits for `elicit respond`;
    /// then it is cancelled and the call ended.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10m")]
    pub park_for: std::time::Duration,

    #[command(flatten)]
    pub checks: StrictArgs,

    #[command(flatten)]
    pub target: TargetArgs,
}

/// `elicit respond`'s flags.
#[derive(Debug, Args, Clone)]
pub struct RespondArgs {
    /// The parked call's id (`"parked"` in what `elicit call --park` printed).
    #[arg(value_name = "ID")]
    pub id: String,

    /// An answer (repeatable), as `elicit call -a` takes it: NAME=VALUE, a
    /// JSON object of field values, @FILE, or accept, decline, cancel.
    /// Without it (and without --answers and --ui) the Answer JSON is read
    /// from stdin.
    #[arg(short = 'a', long = "answer", value_name = "ANSWER")]
    pub answers: Vec<String>,

    /// Answer rules (as `elicit call --answers`): the first rule that
    /// matches the parked question answers it.
    #[arg(long = "answers", value_name = "FILE", conflicts_with = "ui")]
    pub answers_file: Option<PathBuf>,

    /// A person answers the parked question here: at this terminal, or on
    /// the local browser page.
    #[arg(long, value_enum, value_name = "UI", conflicts_with = "answers")]
    pub ui: Option<choices::Ui>,
}

/// `elicit pending`'s flags.
#[derive(Debug, Args, Clone)]
pub struct PendingArgs {
    /// One JSON array: each parked call's id, server, tool, question, age
    /// and expiry (with --ui browser: what became of each call).
    #[arg(long)]
    pub json: bool,

    /// Answer every parked call on one local browser page; then print what
    /// became of each call.
    #[arg(long, value_enum, value_name = "UI")]
    pub ui: Option<PendingUi>,

    /// With --ui browser: print the page's address on stderr instead of
    /// opening it.
    #[arg(long, env = "ELICIT_NO_OPEN", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_open: bool,

    /// With --ui browser: the command that opens the page (as elicit
    /// call's --browser).
    #[arg(long, value_name = "COMMAND", env = "ELICIT_BROWSER")]
    pub browser: Option<String>,
}

/// Where `elicit pending --ui` lets a person answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PendingUi {
    /// One local browser page listing every parked question.
    Browser,
}

/// The parked call's holder (started by `elicit call --park`, never by hand).
#[derive(Debug, Args, Clone)]
pub struct HoldArgs {
    /// The call's id.
    #[arg(long = "park-id", value_name = "ID")]
    pub id: String,

    #[command(flatten)]
    pub call: CallArgs,
}

#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    /// An HTTP header for a remote server, 'Name: Value' (repeatable), e.g.
    /// 'Authorization: Bearer TOKEN'. Values are never printed.
    #[arg(short = 'H', long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,

    #[command(flatten)]
    pub sign_in: SignInArgs,

    /// How to reach a URL: Streamable HTTP with a fallback to the legacy
    /// HTTP+SSE transport (auto), or only one of them.
    #[arg(long, value_enum, default_value = "auto")]
    pub transport: choices::Transport,

    /// The server's URL (http:// or https://): a remote server.
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// The stdio server's command and its arguments, after `--` (for
    /// `proxy`, `--` may be left out: its first word that is no option
    /// starts the command).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub answers: AnswerArgs,

    /// Leave elicitations of a mode the client declared itself to the client.
    #[arg(long, env = "ELICIT_PASSTHROUGH_DECLARED", value_parser = clap::builder::FalseyValueParser::new())]
    pub passthrough_declared: bool,

    /// Give up waiting for the person after DURATION: the elicitation is
    /// answered cancel.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, env = "ELICIT_PROMPT_TIMEOUT")]
    pub prompt_timeout: Option<std::time::Duration>,

    /// After the client hangs up, how long the server has to exit before it
    /// is sent SIGTERM.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s", env = "ELICIT_SHUTDOWN_GRACE")]
    pub shutdown_grace: std::time::Duration,

    /// With a server URL: how long a request may wait for the server's reply
    /// before the client gets a JSON-RPC error (time spent answering its
    /// elicitations does not count).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m", env = "ELICIT_REQUEST_TIMEOUT")]
    pub request_timeout: std::time::Duration,

    /// Send the server's stderr to FILE instead of elicit's stderr.
    #[arg(long, value_name = "FILE", env = "ELICIT_SERVER_LOG")]
    pub server_log: Option<PathBuf>,

    /// Record every message both ways as JSON lines ({dir, by|to, time, message}).
    #[arg(long, value_name = "FILE", env = "ELICIT_LOG")]
    pub log: Option<PathBuf>,

    /// Write a cassette for each tool call that elicited (FILE, then FILE
    /// numbered -2, -3, …), for `elicit test`.
    #[arg(long, value_name = "FILE", env = "ELICIT_RECORD")]
    pub record: Option<PathBuf>,

    /// Say on stderr what the proxy does.
    #[arg(short, long, env = "ELICIT_VERBOSE", value_parser = clap::builder::FalseyValueParser::new())]
    pub verbose: bool,

    #[command(flatten)]
    pub checks: StrictArgs,

    #[command(flatten)]
    pub target: TargetArgs,
}

// Sign-in options for remote servers (MCP authorization), in `call` and
// `proxy`; `into_options` builds the `elicit::auth::AuthOptions` the
// transport's sign-in hook takes. (Not a doc comment: see `Command`.)
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Signing in (remote servers)")]
pub struct SignInArgs {
    /// A client registered with the server's authorization server (used
    /// instead of dynamic client registration).
    #[arg(long, value_name = "ID", env = "ELICIT_CLIENT_ID")]
    pub client_id: Option<String>,

    /// The secret of --client-id (confidential clients).
    #[arg(
        long,
        value_name = "SECRET",
        env = "ELICIT_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub client_secret: Option<String>,

    /// The authorization server (issuer) --client-id is registered with:
    /// the client's credentials go to it only. Without it, the first
    /// issuer they are used with is kept as theirs, and a secret from
    /// ELICIT_CLIENT_SECRET is sent nowhere.
    #[arg(long, value_name = "URL", env = "ELICIT_CLIENT_ISSUER")]
    pub client_issuer: Option<String>,

    /// A Client ID Metadata Document URL, used as the client id when the
    /// authorization server supports them.
    #[arg(long, value_name = "URL")]
    pub client_metadata_url: Option<String>,

    /// Sign in as --client-id with a private-key JWT signed by this PEM
    /// key (EC P-256/P-384 or RSA): the client credentials grant.
    #[arg(long, value_name = "FILE")]
    pub client_assertion_key: Option<std::path::PathBuf>,

    /// Ask for DPoP-bound tokens (RFC 9449) even when the server does not
    /// ask for them (it is used by itself when it does).
    #[arg(long)]
    pub dpop: bool,

    /// Sign in with this JWT (a workload identity token, e.g. from
    /// Kubernetes or CI; `-` reads standard input): the JWT bearer grant,
    /// no browser, no registration.
    #[arg(
        long,
        value_name = "FILE|-",
        conflicts_with_all = ["idp_token_endpoint", "idp_issuer", "idp_id_token"]
    )]
    pub assertion: Option<std::path::PathBuf>,

    /// Enterprise sign-in: the identity provider's token endpoint, where
    /// --idp-id-token is exchanged for an authorization grant (ID-JAG).
    #[arg(long, value_name = "URL")]
    pub idp_token_endpoint: Option<String>,

    /// Enterprise sign-in: the identity provider, whose metadata names its
    /// token endpoint (instead of --idp-token-endpoint).
    #[arg(long, value_name = "URL")]
    pub idp_issuer: Option<String>,

    /// Enterprise sign-in: your ID token from the identity provider
    /// (`-` reads standard input).
    #[arg(long, value_name = "FILE|-")]
    pub idp_id_token: Option<std::path::PathBuf>,

    /// Enterprise sign-in: elicit's client id at the identity provider.
    #[arg(long, value_name = "ID")]
    pub idp_client_id: Option<String>,

    /// Enterprise sign-in: the secret of --idp-client-id.
    #[arg(
        long,
        value_name = "SECRET",
        env = "ELICIT_IDP_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub idp_client_secret: Option<String>,
}

/// Written by hand: the secret never reaches a debug print.
impl std::fmt::Debug for SignInArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInArgs")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_issuer", &self.client_issuer)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("extensions", &self.extensions())
            .finish()
    }
}

impl SignInArgs {
    /// `-` (standard input) for `--assertion` or `--idp-id-token` where
    /// standard input is the MCP client's channel.
    pub fn refuse_stdin(&self, command: &str) -> anyhow::Result<()> {
        for (flag, v) in [
            ("--assertion", &self.assertion),
            ("--idp-id-token", &self.idp_id_token),
        ] {
            if v.as_deref() == Some(std::path::Path::new("-")) {
                anyhow::bail!(
                    "{flag} -: standard input of `elicit {command}` is the MCP client's; pass a file"
                );
            }
        }
        Ok(())
    }

    fn extensions(&self) -> elicit::auth::grants::ExtensionOptions {
        elicit::auth::grants::ExtensionOptions {
            dpop: self.dpop,
            client_assertion_key: self.client_assertion_key.clone(),
            assertion: self.assertion.clone(),
            idp_token_endpoint: self.idp_token_endpoint.clone(),
            idp_issuer: self.idp_issuer.clone(),
            idp_id_token: self.idp_id_token.clone(),
            idp_client_id: self.idp_client_id.clone(),
            idp_client_secret: self.idp_client_secret.clone(),
        }
    }

    pub fn into_options(
        self,
        answers: &AnswerArgs,
        wait: Option<std::time::Duration>,
    ) -> elicit::auth::AuthOptions {
        let extensions = self.extensions();
        // clap fills the secret from ELICIT_CLIENT_SECRET when the flag is
        // absent; the same value in both is taken as the environment's
        // (the stricter rule).
        let client_secret_from_env = self.client_secret.is_some()
            && std::env::var_os("ELICIT_CLIENT_SECRET").as_deref()
                == self.client_secret.as_deref().map(std::ffi::OsStr::new);
        elicit::auth::AuthOptions {
            client_id: self.client_id,
            client_secret: self.client_secret,
            client_secret_from_env,
            client_issuer: self.client_issuer,
            client_metadata_url: self.client_metadata_url,
            browser: answers.browser.clone(),
            no_open: answers.no_open,
            no_input: answers.no_input,
            timeout: wait,
            store_dir: None,
            server_name: answers.server.clone(),
            extensions,
        }
    }
}

/// `elicit auth …` (deferred, as [`Command`]).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum AuthCommand {
    /// List the servers elicit holds sign-ins for (never the tokens).
    List,
    /// Forget the tokens and client registration for URL, or for every
    /// server without URL.
    Logout {
        /// The server URL as given to `elicit call` / `elicit proxy`.
        #[arg(value_name = "URL")]
        url: Option<String>,
    },
}

/// The value parser of every duration flag (the library's one parser).
pub use elicit::duration::parse_duration;

/// The output of `elicit lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    /// For a person: grouped by elicitation, with the offending JSON.
    Human,
    /// One JSON object per finding, one per line.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning and other SARIF readers).
    Sarif,
}

#[derive(Debug, Args, Clone)]
pub struct LintArgs {
    /// The files to check (any shape elicit reads, or a cassette); `-` or
    /// nothing reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Newline-delimited JSON: each line is a document of its own.
    #[arg(long)]
    pub lines: bool,

    /// The revision whose rules apply (default: the one the input shows,
    /// else the newest).
    #[arg(long, value_enum, value_name = "REVISION")]
    pub protocol: Option<choices::Revision>,

    /// How to print the findings.
    #[arg(long, value_enum, default_value = "human")]
    pub format: LintFormat,

    /// Do not report RULE (repeatable); `warnings` and `info` name every
    /// rule of that severity.
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,

    /// Report RULE as an error (repeatable); `--deny warnings` makes every
    /// warning an error.
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,

    /// Print what RULE checks, why, an example and its fix, and exit
    /// (`all` lists the rules).
    #[arg(long, value_name = "RULE")]
    pub explain: Option<String>,

    /// Print docs/lint-rules.md (generated from the rule table) and exit.
    #[arg(long, hide = true)]
    pub rules_markdown: bool,
}

/// A contract Request's `kind`, as `elicit result --kind` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RequestKind {
    /// A form (the contract Request's `input` kind).
    Input,
    /// A URL elicitation (the contract Request's `authorization` kind).
    Authorization,
}

/// The subcommands, each built only when it is used (or its help shown,
/// or completions and pages made): clap's `defer`. Building every
/// subcommand's flags was a fifth of a plain resolution's instructions
/// (docs/PERFORMANCE.md). (The flattened argument structs below carry `//`
/// comments rather than doc comments: deferred, a struct's doc comment
/// would replace the subcommand's `about`.)
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Connect to an MCP server (a command run over stdio, or a URL), call
    /// one of its tools, resolve every elicitation it sends on the way, and
    /// print the tool's result.
    #[command(after_help = CALL_HELP)]
    Call(Box<CallArgs>),
    /// Stand between an MCP client and a server (a command, or a URL):
    /// relay everything, declare elicitation for the client, and answer
    /// elicitations here.
    #[command(after_help = PROXY_HELP)]
    Proxy(Box<ProxyArgs>),
    /// Check elicitations against the MCP spec: every finding with its rule
    /// id, severity, JSON pointer and the spec section it comes from.
    #[command(after_help = LINT_HELP)]
    Lint(Box<LintArgs>),
    /// Replay recorded cassettes (`elicit call --record`) against their
    /// servers: the same elicitations must be asked, and the same result
    /// returned.
    #[command(after_help = TEST_HELP)]
    Test(Box<TestArgs>),
    /// Serve recorded cassettes as an MCP server (stdio, or Streamable HTTP
    /// on 127.0.0.1): their tools send the recorded elicitations and return
    /// the recorded result; the client's answers are checked.
    #[command(after_help = MOCK_HELP)]
    Mock(Box<MockArgs>),
    /// Answer a call `elicit call --park` parked: check the answer against
    /// its form, send it, and print what `elicit call` would have printed
    /// (or the next parked question).
    #[command(after_help = RESPOND_HELP)]
    Respond(Box<RespondArgs>),
    /// List the parked calls of this user: id, server, tool, the question,
    /// how long it has waited, when it expires.
    Pending(PendingArgs),
    #[command(name = "__park-hold", hide = true)]
    ParkHold(Box<HoldArgs>),
    /// Answer elicitations from inside another client: `elicit hook
    /// claude-code` is a command for Claude Code's Elicitation hook.
    #[command(subcommand)]
    Hook(HookCommand),
    /// Stored sign-ins for remote servers: list them, sign out.
    #[command(
        subcommand,
        after_help = "Tokens live in $ELICIT_DATA_DIR/tokens, else $XDG_DATA_HOME/elicit/tokens,\nelse ~/.local/share/elicit/tokens (directory 0700, files 0600;\non macOS ~/Library/Application Support/elicit/tokens; on Windows\n%LOCALAPPDATA%\\elicit\\tokens).\n\nExamples:\n  elicit auth list\n  elicit auth logout https://mcp.example.com/mcp\n  elicit auth logout                 forget every server"
    )]
    Auth(AuthCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Examples:\n  elicit completions bash > ~/.local/share/bash-completion/completions/elicit\n  elicit completions zsh > \"${fpath[1]}/_elicit\"\n  elicit completions fish > ~/.config/fish/completions/elicit.fish"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): elicit(1), or a subcommand's page.
    #[command(
        after_help = "Examples:\n  elicit man > /usr/local/share/man/man1/elicit.1\n  elicit man call > /usr/local/share/man/man1/elicit-call.1"
    )]
    Man {
        /// The subcommand whose page to print (call, proxy, request, …).
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
    /// Print what an elicitation asks for, without resolving it, as a plain
    /// Request (`id`, `kind`, `prompt`, `url`, `data`) for a program of your
    /// own to answer.
    #[command(after_help = "Example:\n  elicit request < req.json | my-resolver | elicit result")]
    Request {
        /// The elicitation; `-` or nothing reads stdin.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
        /// Indent the JSON output.
        #[arg(long)]
        pretty: bool,
    },
    /// Turn an Answer (`{"id", "ok", "data", "reason"}`, or an array of them,
    /// as `elicit request` prints for several elicitations) into the
    /// ElicitResult to send back to the server.
    #[command(after_help = RESULT_HELP)]
    Result {
        /// The Answer, or an array of Answers; `-` or nothing reads stdin.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
        /// The Request's kind. With `authorization` (a URL elicitation) an
        /// accept carries no `content`, as the MCP spec requires; with
        /// `input` (or without it) the contract's rule applies (`content` =
        /// data, or `{}`). Not needed with --input.
        #[arg(long, value_enum, value_name = "KIND")]
        kind: Option<RequestKind>,
        /// The elicitation the Answers resolve (the file given to `elicit
        /// request`): the output then takes its shape (a JSON-RPC response
        /// with its id, `inputResponses` keyed as the input, `-32042`
        /// results keyed by elicitation id), each Answer matched to an
        /// elicitation in order, and accepted data is validated against its
        /// schema.
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// Indent the JSON output.
        #[arg(long)]
        pretty: bool,
    },
}
