//! `elicit test`'s flags.

use std::path::PathBuf;

use clap::Args;

use super::flag_groups::StrictArgs;
use super::parse_duration;

pub const TEST_HELP: &str = "\
Examples:
  # record once, answering at the terminal
  elicit call --record elicit-tests/ask.cassette.json --tool ask -- ./server
  # replay every cassette under ./elicit-tests
  elicit test
  # in CI: JUnit XML for the test report
  elicit test --format junit > elicit-junit.xml
  # the server's form changed on purpose: rewrite the cassettes
  elicit test --update
  # try every other answer: decline, cancel and each field's edges
  elicit test --explore --save elicit-tests/explored elicit-tests/ask.cassette.json
  # HTTP cassettes: start their server first, on a free port
  elicit test --start-server 'python server.py --port {port}'

Exit status: 0 every test passed; 1 some failed; 2 a cassette could not be
read (the message names the file and the JSON pointer) or bad usage.
With --explore: 1 when a variant crashed the server, hung, broke the
protocol, or (--invalid) had content that breaks the form accepted.";

#[derive(Debug, Args, Clone)]
pub struct TestArgs {
    /// Cassette files, or folders searched for *.cassette.json (default:
    /// ./elicit-tests).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Replay against this server instead of each cassette's: a command
    /// line (split like a shell) or a URL.
    #[arg(long, value_name = "CMD|URL")]
    pub server: Option<String>,

    /// Start the server of the HTTP cassettes first: a command line (split
    /// like a shell). `{port}` in it is replaced by a free port on
    /// 127.0.0.1; without it, the port is the first HTTP cassette's. The
    /// cassettes' URLs are replayed on 127.0.0.1 at that port, once it
    /// accepts connections (see --start-timeout); the server is ended when
    /// the tests end, however they end.
    #[arg(long, value_name = "CMD")]
    pub start_server: Option<String>,

    /// How long the server --start-server started has to accept
    /// connections before the run fails.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30s")]
    pub start_timeout: std::time::Duration,

    /// An HTTP header for a remote server, 'Name: Value' (repeatable).
    /// Values are never printed or written to a cassette.
    #[arg(short = 'H', long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,

    /// Rewrite each cassette from this run: recorded answers are kept by
    /// field name, a field renamed (unambiguously) keeps its answer, and
    /// everything else written in the cassette stays.
    #[arg(long)]
    pub update: bool,

    /// A value for a field the cassette has no answer for (a field the
    /// server added since it was recorded): NAME=VALUE, repeatable. The
    /// cassette's own answers come first.
    #[arg(short = 'a', long = "answer", value_name = "NAME=VALUE")]
    pub answers: Vec<String>,

    /// Answer rules (as for `call`) for what the cassette and -a leave.
    #[arg(long = "answers", value_name = "FILE")]
    pub answers_file: Option<PathBuf>,

    /// How many tests run at once (default: the number of CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<std::num::NonZeroUsize>,

    /// A report on stdout: TAP, JUnit XML or JSON.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<TestFormat>,

    /// How long to wait for each reply from a server.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "60s")]
    pub timeout: std::time::Duration,

    /// Show the servers' notifications and requests on stderr.
    #[arg(short, long)]
    pub verbose: bool,

    /// Run only cassettes whose server is this command line (compared
    /// word for word, split like a shell) or URL; any other is refused,
    /// named (repeatable). Put it in CI's own configuration: a cassette
    /// names the command `elicit test` runs.
    #[arg(long = "allow-server", value_name = "CMD|URL")]
    pub allow_servers: Vec<String>,

    /// The commit a cassette's server command is compared with: a cassette
    /// changed since then (or not committed, or outside git) has its
    /// command printed before it runs (default: HEAD~1, so the last commit
    /// and uncommitted changes).
    #[arg(long, value_name = "REV", default_value = "HEAD~1")]
    pub since: String,

    /// Run the other answers of each recorded flow instead of the flow:
    /// decline and cancel at each elicitation, each field at its edges
    /// (minimum and maximum, shortest and longest, each option, its
    /// default, left out). Each variant's outcome is classified; a crash,
    /// a hang or a protocol error fails the run.
    #[arg(long, conflicts_with_all = ["update", "strict", "answers", "answers_file"])]
    pub explore: bool,

    /// With --explore: also send content that breaks the form on purpose
    /// (out of range, the wrong type, a required field missing, an unknown
    /// option); a server that accepts it without an error fails the run.
    #[arg(long, requires = "explore")]
    pub invalid: bool,

    /// With --explore: keep each variant that ended in a result or a tool
    /// error as a cassette in DIR, named for what it tests
    /// (NAME.decline-at-2.cassette.json), recorded with what the server
    /// returned.
    #[arg(long, value_name = "DIR", requires = "explore")]
    pub save: Option<PathBuf>,

    /// With --explore: run at most N variants (the rest are counted as
    /// skipped).
    #[arg(long, value_name = "N", default_value = "100", requires = "explore")]
    pub max: usize,

    /// With --explore: start no variant after this long (the rest are
    /// counted as skipped); each wait for a server stays bounded by
    /// --timeout.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m", requires = "explore")]
    pub max_time: std::time::Duration,

    // As for `call`; under --strict an error finding fails the test.
    #[command(flatten)]
    pub checks: StrictArgs,
}

/// The report formats of `elicit test --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestFormat {
    Tap,
    Junit,
    Json,
}
