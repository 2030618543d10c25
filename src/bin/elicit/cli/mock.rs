//! `elicit mock`'s flags.

use std::path::PathBuf;

use clap::Args;

use super::parse_duration;

pub const MOCK_HELP: &str = "\
Examples:
  # serve a recorded flow over stdio, and answer it with elicit call
  elicit call --tool trigger-elicitation-request -a accept -a name=Ada -- elicit mock fixtures/server-everything/everything.cassette.json
  # over Streamable HTTP on 127.0.0.1:3999/mcp
  elicit mock --http 3999 fixtures/server-everything/everything.cassette.json
  # an offline loop: a client's elicitation UI through elicit proxy
  elicit proxy -- elicit mock fixtures/server-everything/everything.cassette.json

A client's answer that differs from the recorded one is said on stderr and
in the result (a text block, and _meta.\"elicit/mock\".mismatches); with
--strict the call returns a tool error instead.";

#[derive(Debug, Args, Clone)]
pub struct MockArgs {
    /// The cassettes to serve (files, or folders searched for
    /// *.cassette.json): their tools become the mock's tools.
    #[arg(value_name = "CASSETTE", required = true)]
    pub paths: Vec<PathBuf>,

    /// Serve Streamable HTTP on 127.0.0.1:PORT at /mcp instead of stdio
    /// (0: any free port; the address is said on stderr).
    #[arg(long, value_name = "PORT")]
    pub http: Option<u16>,

    /// A client answer that differs from the recorded one makes the call
    /// return a tool error (isError) instead of the recorded result.
    #[arg(long)]
    pub strict: bool,

    /// Over HTTP: how long a call waits for each answer of the client.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m")]
    pub timeout: std::time::Duration,
}
