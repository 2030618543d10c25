//! elicit's one integration-test binary: one module per area, each driving
//! the real `elicit` binary (or the library, where a test needs its types)
//! the way a user, a script or a server would. One binary links the crate
//! once, so `cargo test` builds a single test executable instead of one per
//! file. Each module's own doc comment says what belongs in it; shared
//! helpers (the command builder, pseudo-terminal sessions, server starters,
//! waits with a limit) are in `common`.
//!
//! Built on Unix hosts only: the tests use a pseudo-terminal, `sh` and Unix
//! signals. The Windows build is checked from Linux under Wine (`wine`).
#![cfg(unix)]

mod common;

/// Sign-in against a fake authorization server: discovery, flows, the store.
mod auth;
/// Sign-in extensions (DPoP, private-key JWT, JWT bearer, enterprise ID-JAG)
/// against a fake authorization server, IdP and resource with independent
/// verifiers.
mod auth_extensions;
/// Memory and time bounds against hostile servers: floods, shapes, stalls.
mod bounds;
/// The browser page in headless Chromium (chromedriver, W3C WebDriver).
mod browser;
/// `elicit call` against a deterministic fake server of our own.
mod call;
/// Cassettes: `elicit call --record` against real servers (npm
mod cassette;
/// Every fixture and input shape through the binary; flags, errors, exit codes.
mod cli;
/// `elicit test --explore`: every other answer of a recorded flow, run and
/// classified; `--save`, `--invalid`, `--max`, a crash and a hang.
mod explore;
/// A server author's first hour: `elicit call` with no `--protocol` flag
mod first_hour;
/// Saved fuzz inputs replayed through the fuzz targets' own checks.
mod fuzz_regressions;
/// Every example `--help` prints runs; every man page can be produced.
mod help_examples;
/// `elicit hook claude-code`: Claude Code's Elicitation hook, in and out.
mod hook;
/// Hostile stdio servers through `call` and `proxy`.
mod hostile;
/// Hostile input documents: huge numbers, duplicate keys, odd files.
mod hostile_input;
/// Hostile servers, repositories and local users against `proxy --record` and
/// `elicit test`: giant cassettes, symlink loops, secrets, logs, pinned servers.
mod hostile_repo;
/// Remote servers over Streamable HTTP and legacy SSE.
mod http;
/// `--lines`: a stream gives line for line what each line gives alone.
mod lines_cache;
/// `elicit lint` (the rule corpus, the formats, SARIF against its schema)
/// and `--strict`/`--modes` on `call` and `proxy`.
mod lint;
/// `elicit mock`: cassettes served as an MCP server, answered by `elicit
/// call` (stdio, HTTP, both generations), through `elicit proxy`, and by the
/// Python and TypeScript SDKs' clients.
mod mock;
/// The npm package's `elicit` command: its install step puts the binary in
/// the JS launcher's place where it may; the launcher runs it elsewhere.
mod npm_launcher;
/// Attacks on the browser page from this machine: another local user (run
/// as `nobody`) taking its port or its address, idle connections, endless
/// request heads.
mod page_hostile;
/// elicit ends when the process that started it is gone: the hook, the SDK
/// resolvers' runs, `mock` on stdio.
mod parent_gone;
/// `elicit call --park`, `elicit respond`, `elicit pending`: calls parked
/// for an answer later (FastMCP, server-everything, Streamable HTTP,
/// expiry, another local user).
mod park;
/// Property tests (proptest) of the schema model, answers and input paths.
mod properties;
/// `elicit proxy` between a fake client and a fake server.
mod proxy;
/// Clients that start `elicit proxy` their own way: no `--`, by hand on a
/// terminal, no elicitation declared.
mod proxy_clients;
/// `elicit proxy` keeping a client's request alive while a person answers
/// (a TypeScript SDK client whose timeout progress resets).
mod proxy_keepalive;
/// `elicit proxy URL` against servers that stall: bounds, timeouts, ending at once.
mod proxy_url;
/// `elicit call` with a person at a pseudo-terminal.
mod pty_call;
/// Pseudo-terminal tests of what a server author meets in the first hour:
mod pty_first_hour;
/// The form flow at a pseudo-terminal.
mod pty_form;
/// Terminal cases of hostile input: type-ahead, per-prompt time, restore.
mod pty_hostile;
/// The keys at every prompt, and every prompt left tidy.
mod pty_keys;
/// The URL flow at a pseudo-terminal: consent before anything opens.
mod pty_url;
/// `elicit call` against real servers nobody here wrote.
mod real_servers;
/// `elicit request` -> a resolver -> `elicit result`.
mod request_result;
/// The SDK resolvers (python/elicit_mcp, npm/elicit-mcp's elicitHandler)
/// with each SDK's real client against real servers: rules, then the page.
mod sdk_resolvers;
/// A stdio server never outlives elicit: SIGTERM to a proxy whose server
/// ignores it, SIGKILL of elicit itself.
mod server_lifetime;
/// Sign-in against hostile authorization servers and protected resources.
mod signin_hostile;
/// Tools that run as tasks (2025-11-25) and ask while `input_required`:
/// `call`, `--record`, `test`, `--explore`, `proxy`.
mod tasks;
/// Nobody at a terminal: fail at once rather than wait on a page nobody sees.
mod unattended;
/// The Windows build under Wine: the same bytes as Linux, `call` and
/// `proxy` against a Windows stdio server, nothing left behind.
mod wine;
