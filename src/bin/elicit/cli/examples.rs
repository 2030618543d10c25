//! The examples and notes under each command's `--help` (and its man
//! page), apart from the flags they describe.

pub const AFTER_HELP: &str = "\
Examples:
  # prompt on the terminal, print the ElicitResult
  elicit fixtures/shapes/form-region.json
  # scripted: no prompt when every field is given
  elicit -a region=us-east-1 -a replicas=3 -a dryRun=yes fixtures/shapes/form-region.json
  # take the defaults for the rest
  elicit -a accept -a name=Ada fixtures/server-everything/form.request.json
  # answer decline
  elicit -a decline < req.json
  # one result line per request line
  elicit --lines -a accept < requests.ndjson
  # your own resolver in the middle
  elicit request req.json | my-resolver | elicit result --input req.json

Exit status: 0 result printed; 2 usage or invalid input (bad JSON, bad
answers, nothing left to ask with); 1 other failures (terminal, I/O).
With -e/--exit-status: 3 when the result is decline, 4 when it is cancel.";

/// Options shared by every command that resolves elicitations.
pub const CALL_HELP: &str = "\
Examples:
  # scripted answers, a stdio server started with npx
  elicit call --tool trigger-elicitation-request -a accept -a name=Ada \\
    -- npx -y @modelcontextprotocol/server-everything stdio
  # a remote server (Streamable HTTP, or legacy SSE)
  elicit call --tool get-sum --arg a=1 --arg b=2 http://127.0.0.1:3001/mcp
  # pick a tool and its arguments on the terminal
  elicit call -- python my_server.py
  # record every message both ways
  elicit call --log session.jsonl --tool ask -- ./server
  # record a cassette, replay it later with `elicit test`
  elicit call --record elicit-tests/ask.cassette.json --tool ask -- ./server
  # with credentials (values are never printed)
  elicit call -H 'Authorization: Bearer TOKEN' https://example.com/mcp

Exit status: 0 the tool result was printed; 1 the tool result has isError, or
the server failed (exited, malformed JSON, no answer within --timeout); 2
usage or answers that cannot be used. With -e/--exit-status: 3 when an
elicitation of the call was declined, 4 when one was cancelled; 5 (with
--strict) an error finding was seen, even when the tool succeeded; 5 (with
--park) the call is parked: stdout holds the parked object.";

/// `elicit respond`'s examples and statuses.
pub const RESPOND_HELP: &str = "\
Examples:
  elicit respond 1f2e3d4c5b6a -a name=Ada -a age=36
  elicit respond 1f2e3d4c5b6a -a decline
  echo '{\"ok\":true,\"data\":{\"name\":\"Ada\"}}' | elicit respond 1f2e3d4c5b6a
  elicit respond 1f2e3d4c5b6a --ui terminal

Exit status: what `elicit call` would have given (0, 1, and 3/4 with -e); 2
the answer does not fit the form (nothing was sent, the call stays parked);
5 the call parked again on its next question (stdout holds the new object);
6 no such parked call (it expired, was answered, or never existed).";

pub const PROXY_HELP: &str = "\
Examples:
  # in the client's configuration, instead of the server's command
  my-mcp-client --server 'elicit proxy -- python server.py'
  # scripted answers
  elicit proxy -a accept -a name=Ada \\
    -- npx -y @modelcontextprotocol/server-everything stdio
  # a remote server, for a client that speaks stdio
  my-mcp-client --server 'elicit proxy https://example.com/mcp'

The client talks to elicit's stdin/stdout as if it were the server. Every
message elicit does not act on passes byte for byte, in order. Prompts are
drawn on the terminal (/dev/tty), never on the client's pipe. The proxy exits
with the server's exit status (with --strict: 5 when an error finding was seen
and the server exited 0). SIGTERM and SIGHUP are forwarded to the server
(SIGKILL 2 s later if it is still running);
Ctrl-C at a prompt cancels that elicitation, otherwise it goes to the server.";

pub const LINT_HELP: &str = "\
Examples:
  # every finding, grouped by elicitation
  elicit lint fixtures/server-everything/form.request.json
  # a recorded stream, one elicitation per line, as SARIF for code scanning
  elicit lint --lines --format sarif session.ndjson > elicit.sarif
  # the rules of one revision; warnings fail the run too
  elicit lint --protocol 2025-11-25 --deny warnings req.json
  # what a rule checks, why, and an example
  elicit lint --explain form-nested-property

Exit status: 0 no error finding; 1 an error finding (after --allow/--deny);
2 usage, or an input that is not an elicitation at all (not JSON, another
method).";

pub const RESULT_HELP: &str = "\
Examples:
  echo '{\"id\":\"r1\",\"ok\":true,\"data\":{\"region\":\"apac\"}}' | elicit result
  echo '{\"id\":\"r1\",\"ok\":false,\"reason\":\"declined\"}' | elicit result
  elicit request req.json | my-resolver | elicit result --input req.json";
