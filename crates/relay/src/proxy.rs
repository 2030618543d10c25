//! `elicit proxy` as a whole: which of the two proxies a server takes (the
//! stdio relay for a command, the remote one for a URL, [`crate`]),
//! its recorder (`--record`), and the exit status under `--strict`. Who
//! the person is, the sign-in hook and the client's pipes are the
//! caller's.

use std::path::PathBuf;
use std::time::Duration;

use crate::remote::{run_remote_proxy, RemoteProxyOptions, MAX_IN_FLIGHT};
use crate::stdio::{run_proxy, ProxyOptions};
use crate::{Parties, Recording, RelayOptions};
use elicit_core::error::ElicitError;
use elicit_session::mcp::strict::{Strict, EXIT_STRICT};
use elicit_session::mcp::StepFailure;
use elicit_session::transport::http::Authenticator;
use elicit_session::transport::{ConnectOptions, MessageLog, ServerTarget, TransportChoice};

/// Makes the recorder of `--record` (elicit-cassette's), or says why it
/// cannot write its file.
pub type MakeRecording = Box<dyn FnOnce() -> Result<Recording, ElicitError>>;

/// How the proxy runs (`elicit proxy`'s flags, as plain values).
pub struct ProxyRunOptions {
    /// The server: a command to start, or a URL.
    pub target: ServerTarget,
    /// The relay core's settings; its recorder is made here from `record`.
    pub relay: RelayOptions,
    /// `--record FILE`: makes the recorder (checking that the file can be
    /// written) once the server is reached.
    pub record: Option<MakeRecording>,
    /// `--log`: every message, with who sent and who got it.
    pub log: Option<MessageLog>,
    /// `--server-log` (a command's stderr).
    pub server_log: Option<PathBuf>,
    /// `--shutdown-grace` (a command).
    pub shutdown_grace: Duration,
    /// Forward SIGINT to a command (when no terminal is in use).
    pub forward_sigint: bool,
    /// The descriptors of the client's pipes, for splice(2) (a command).
    pub client_fds: Option<(i32, i32)>,
    /// `--request-timeout` (a URL).
    pub request_timeout: Duration,
    /// `--transport` (a URL).
    pub transport: TransportChoice,
    /// `--header`s (a URL).
    pub headers: Vec<(String, String)>,
    /// The sign-in hook (a URL), unless the headers carry authorization.
    pub auth: Option<Box<dyn Authenticator>>,
}

/// Runs the proxy until the client or the server ends it; the status is
/// the server's (a remote one: 0 once the client hangs up).
pub fn run(mut options: ProxyRunOptions, parties: Parties) -> Result<i32, StepFailure> {
    let running = StepFailure::in_step("running the proxy");
    let command = match options.target {
        ServerTarget::Command(ref command) => command.clone(),
        ServerTarget::Url(_) => {
            elicit_platform::handlers::install_interrupt_handler();
            let connect = ConnectOptions {
                server_log: None,
                // Written by the relay, which knows who sent and who got
                // each message.
                log: None,
                headers: std::mem::take(&mut options.headers),
                transport: options.transport,
                auth: options.auth.take(),
                timeout: None,
            };
            let server = elicit_session::transport::connect(&options.target, connect)
                .map_err(StepFailure::in_step("reaching the server"))?;
            options.relay.record = options.record.take().map(|make| make()).transpose()?;
            let remote = RemoteProxyOptions {
                max_in_flight: MAX_IN_FLIGHT,
                request_timeout: options.request_timeout,
                log: options.log,
                relay: options.relay,
            };
            return run_remote_proxy(server, remote, parties).map_err(running);
        }
    };
    options.relay.record = options.record.take().map(|make| make()).transpose()?;
    if let Some(path) = &options.server_log {
        elicit_session::transport::stdio::start_server_log(path)?;
    }
    let stdio = ProxyOptions {
        command,
        server_log: options.server_log,
        log: options.log,
        shutdown_grace: options.shutdown_grace,
        forward_sigint: options.forward_sigint,
        client_fds: options.client_fds,
        relay: options.relay,
    };
    run_proxy(stdio, parties).map_err(running)
}

/// The exit status once `--strict` has had its say (its summary printed):
/// the server's own status stands unless it is a success, which an error
/// finding makes [`EXIT_STRICT`].
pub fn exit_status(strict: Option<&Strict>, code: i32) -> i32 {
    match strict {
        Some(strict) => {
            strict.finish();
            if code == 0 && strict.has_errors() {
                EXIT_STRICT
            } else {
                code
            }
        }
        None => code,
    }
}
