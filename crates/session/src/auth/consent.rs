//! The person's part of a sign-in: sent to the authorization server's
//! page (the URL consent flow of the resolver the transport set, or
//! `--browser` under `--no-input`), then the wait for the browser to come
//! back to the loopback listener.

use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use elicit_core::elicitation::protocol::ElicitationParams;
use elicit_core::elicitation::resolve::{Elicitation, Pending, Resolver, SchemaCache};

use super::browser::launch;
use super::discovery::ServerMetadata;
use super::{loopback, one_line, AuthError, AuthOptions, DEFAULT_WAIT};

/// Shows the sign-in link through the URL consent flow (or launches
/// `--browser` under `--no-input`) and waits for the loopback redirect.
pub(super) fn human_step(
    opts: &AuthOptions,
    person: Option<&mut Box<dyn Resolver + Send>>,
    key: &str,
    server: &ServerMetadata,
    listener: loopback::Loopback,
    url: &str,
    state: &str,
) -> Result<String, AuthError> {
    let name = opts.server_name.clone().unwrap_or_else(|| key.to_string());
    let timeout = opts.timeout.unwrap_or(DEFAULT_WAIT);
    let port = listener.port();
    let stop = Arc::new(AtomicBool::new(false));
    let callback = wait_for_callback(listener, server, state, timeout, stop.clone());
    // A sign-in that cannot go on ends the listener's wait (its port
    // freed) before it says why.
    if let Err(e) = send_person_to_sign_in(opts, person, &name, server, port, url) {
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        return Err(e);
    }
    match callback.recv() {
        Ok(r) => r.map(|cb| cb.code),
        Err(_) => Err(AuthError::Listener("the listener thread ended".into())),
    }
}

/// Sends the person to the sign-in page: `--browser` under `--no-input`,
/// else the URL consent flow of the resolver set with `set_person`.
fn send_person_to_sign_in(
    opts: &AuthOptions,
    person: Option<&mut Box<dyn Resolver + Send>>,
    name: &str,
    server: &ServerMetadata,
    port: u16,
    url: &str,
) -> Result<(), AuthError> {
    let needs_person = || AuthError::NeedsPerson {
        server: name.to_string(),
    };
    if opts.no_input {
        return match (&opts.browser, opts.no_open) {
            (Some(program), false) => launch(program, url),
            _ => Err(needs_person()),
        };
    }
    let Some(person) = person else {
        return Err(needs_person());
    };
    let message = format!(
        "Sign in to {}. The page belongs to its authorization server ({}); after you sign in, your browser comes back to elicit on 127.0.0.1:{port} and elicit goes on by itself.",
        one_line(name),
        one_line(&server.issuer)
    );
    let mut params = ElicitationParams::url(message, url);
    params.elicitation_id = Some(format!("sign-in-{port}"));
    let mut e = Elicitation::prepare(params, &mut SchemaCache::default())
        .map_err(|err| AuthError::Protocol(err.to_string()))?;
    e.server = Some(name.to_string());
    match person.resolve(&e, Pending::Url) {
        Ok(a) if a.ok => Ok(()),
        Ok(a) => Err(AuthError::NotSignedIn {
            reason: match a.reason.as_deref() {
                Some("declined") => "declined".into(),
                Some("expired") => "timed out at the prompt".into(),
                _ => "cancelled".into(),
            },
        }),
        Err(err) => Err(AuthError::NotSignedIn {
            reason: format!("not possible: {err}"),
        }),
    }
}

/// Waits for the browser's redirect on a thread of its own, so the consent flow
/// can be on screen meanwhile; `stop` ends the wait early.
fn wait_for_callback(
    listener: loopback::Loopback,
    server: &ServerMetadata,
    state: &str,
    timeout: Duration,
    stop: Arc<AtomicBool>,
) -> mpsc::Receiver<Result<loopback::Callback, AuthError>> {
    // The RFC 9207 rule, owned by the listener thread.
    let expected_iss = (!server.defaults_only).then(|| server.issuer.clone());
    let iss_required = server.authorization_response_iss_parameter_supported;
    let (tx, rx) = mpsc::channel();
    let state = state.to_string();
    std::thread::spawn(move || {
        let validate = |cb: &loopback::Callback| match (&cb.iss, &expected_iss) {
            (Some(got), Some(want)) if got != want => Err(AuthError::IssuerMismatch {
                expected: want.clone(),
                got: Some(got.clone()),
            }),
            (None, Some(want)) if iss_required => Err(AuthError::IssuerMismatch {
                expected: want.clone(),
                got: None,
            }),
            _ => Ok(()),
        };
        let got = listener.wait(&state, timeout, &stop, &validate);
        // The browser came back (or the wait ended): the URL flow's
        // waiting screen ends by itself. Not after a decline: a
        // later URL flow may be on screen by then.
        if !stop.load(std::sync::atomic::Ordering::SeqCst) {
            elicit_platform::handlers::finish_link_elsewhere();
        }
        let _ = tx.send(got);
    });
    rx
}
