//! Signing in to protected MCP servers: the MCP authorization spec (OAuth
//! 2.1) for the HTTP transport.
//!
//! # The interface the transport calls
//!
//! ```text
//! let mut auth = Authenticator::new(AuthOptions { .. }, agent.clone());
//! auth.set_person(Box::new(terminal_resolver));   // optional: the URL consent flow
//! // before each request:
//! if let Some(v) = auth.authorization_header(url) { req.header("Authorization", v) }
//! // on a 401, or a 403 whose WWW-Authenticate says insufficient_scope:
//! auth.on_unauthorized(url, resp.header("WWW-Authenticate"), status)?;  // then retry once
//! ```
//!
//! - [`Authenticator::authorization_header`]: `Bearer …` from the store, or
//!   from a refresh when the stored token expired; `None` when there is
//!   nothing usable (send the request without, the 401 starts sign-in).
//! - [`Authenticator::on_unauthorized`]: discovery ([`discovery`]), client
//!   identity, the person's consent and the browser round-trip to the
//!   loopback listener ([`loopback`]), the code exchange ([`flow`]), then
//!   the token is stored ([`store`]). `Ok(())` means: retry the request.
//!   It refuses to loop: a refresh is tried once per resource, full sign-ins
//!   at most [`MAX_SIGN_INS`] times, step-ups at most [`MAX_STEP_UPS`].
//! - [`list`] and [`logout`] back `elicit auth list` / `elicit auth logout`.
//!
//! Tokens, refresh tokens, client secrets and codes never appear in an
//! error, a `Debug` print or the terminal ([`store::Secret`]).
//!
//! # The order of things (MCP authorization, 2025-11-25 and 2026-07-28)
//!
//! 1. Protected resource metadata (RFC 9728): the challenge's
//!    `resource_metadata`, else `/.well-known/oauth-protected-resource/PATH`,
//!    else the root one. Its `resource` is required and must be the server
//!    URL or a parent (a parent is warned about).
//!    No metadata at all: a 2025-03-26 server, whose origin is the
//!    authorization server.
//! 2. Authorization server metadata: RFC 8414, then OpenID discovery, with
//!    path insertion; the document's `issuer` must be the one asked for.
//!    None for a 2025-03-26 server: `/authorize`, `/token`, `/register`.
//!    Every authorization server URL is https or loopback http
//!    ([`discovery::check_as_url`]); metadata redirects stay on their origin.
//! 3. Client identity: `--client-id`/`--client-secret` (only for the
//!    issuer they are bound to: `--client-issuer`, else the first one they
//!    were used with; a secret from the environment needs a named issuer),
//!    else a Client ID Metadata Document URL (`--client-metadata-url`)
//!    when the server advertises `client_id_metadata_document_supported`,
//!    else dynamic registration (RFC 7591), kept per authorization server.
//! 4. Scopes: the challenge's `scope`, else the resource's
//!    `scopes_supported`, else none; plus `offline_access` when the
//!    authorization server lists it. A step-up asks for the union of what
//!    was asked before and what the 403 names.
//! 5. Authorization code + PKCE S256 (a server that does not list S256 is
//!    refused), `state` checked, `iss` (RFC 9207) compared by simple string
//!    comparison when present and required when advertised, `resource`
//!    (RFC 8707) on the authorization and token requests.

mod accounts;
mod browser;
pub mod challenge;
pub mod discovery;
pub mod dpop;
pub mod flow;
pub mod grants;
pub mod hook;
pub mod http;
pub mod jwt;
pub mod loopback;
pub mod store;

pub use accounts::{list, logout};
use browser::launch;
pub use browser::unattended_url;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use url::Url;

use discovery::{Discovered, ServerMetadata};
use elicit_core::elicitation::protocol::ElicitationParams;
use elicit_core::elicitation::resolve::{Elicitation, Pending, Resolver, SchemaCache};
use store::{ClientRecord, Entry, Secret, TokenRecord, TokenStore};

/// Full sign-ins per resource in one run before elicit gives up (a server
/// that keeps answering 401 to fresh tokens).
pub const MAX_SIGN_INS: u32 = 3;
/// Step-ups (403 `insufficient_scope`) per resource in one run.
pub const MAX_STEP_UPS: u32 = 2;
/// How long the browser has to come back when no `--timeout` is given.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(300);

pub(crate) use elicit_core::error::sign_in::one_line;
pub use elicit_core::error::sign_in::AuthError;

/// Settings for sign-in (from the command line).
#[derive(Clone, Default)]
pub struct AuthOptions {
    /// `--client-id`: a client registered with the authorization server.
    pub client_id: Option<String>,
    /// `--client-secret`, with `--client-id`.
    pub client_secret: Option<String>,
    /// The secret came from the environment (`ELICIT_CLIENT_SECRET`), not
    /// the command line: it is presented only to an issuer named for it
    /// (`client_issuer`, or a binding stored by an earlier run).
    pub client_secret_from_env: bool,
    /// `--client-issuer` / `ELICIT_CLIENT_ISSUER`: the one authorization
    /// server the pre-registered client belongs to. Without it, the first
    /// issuer the client is used with is stored as its binding.
    pub client_issuer: Option<String>,
    /// `--client-metadata-url`: a Client ID Metadata Document URL.
    pub client_metadata_url: Option<String>,
    /// `--browser` / `ELICIT_BROWSER`: with `no_input`, launched directly.
    pub browser: Option<String>,
    /// `--no-open`.
    pub no_open: bool,
    /// `--no-input`: no consent prompt; only `browser` can sign in.
    pub no_input: bool,
    /// How long to wait for the browser to come back (default 5 minutes).
    pub timeout: Option<Duration>,
    /// The token store directory (default: see [`store::default_dir`]).
    pub store_dir: Option<PathBuf>,
    /// The server's name, shown with the sign-in link and kept in the store.
    pub server_name: Option<String>,
    /// DPoP, private-key JWT, JWT bearer and enterprise sign-in.
    pub extensions: grants::ExtensionOptions,
}

impl std::fmt::Debug for AuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthOptions")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_secret_from_env", &self.client_secret_from_env)
            .field("client_issuer", &self.client_issuer)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("browser", &self.browser)
            .field("no_open", &self.no_open)
            .field("no_input", &self.no_input)
            .field("timeout", &self.timeout)
            .field("store_dir", &self.store_dir)
            .field("server_name", &self.server_name)
            .field("extensions", &self.extensions)
            .finish()
    }
}

/// A warning about sign-in on stderr, on one line.
pub(crate) fn warn(text: &str) {
    eprintln!(
        "elicit: warning: {}",
        elicit_core::text::sanitize::sanitize_line(text)
    );
}

/// The key of a server in the store: its URL without fragment.
pub(crate) fn server_key(url: &str) -> Result<String, AuthError> {
    let mut u = Url::parse(url)
        .map_err(|e| AuthError::BadUrl(format!("{url:?} is not a server URL: {e}")))?;
    u.set_fragment(None);
    Ok(u.to_string())
}

/// Signs in for the HTTP transport and hands it `Authorization` headers.
pub struct Authenticator {
    opts: AuthOptions,
    agent: ureq::Agent,
    person: Option<Box<dyn Resolver + Send>>,
    store: Option<TokenStore>,
    /// Entries read or written in this run, by server key.
    memory: HashMap<String, Entry>,
    /// Keys the store had nothing for in this run: not read again before
    /// every request (a sign-in puts the entry in `memory`).
    absent: HashSet<String>,
    sign_ins: HashMap<String, u32>,
    step_ups: HashMap<String, u32>,
    refreshed_on_401: HashSet<String>,
    /// Client id to issuer bindings of this run (the store keeps them
    /// across runs; this covers a run without a store).
    bound: HashMap<String, String>,
    /// The latest DPoP nonce of each server, and the ones retried with.
    nonces: dpop::Nonces,
    nonce_retries: HashSet<String>,
}

impl Authenticator {
    /// An authenticator with `opts`, making its HTTP requests with `agent`.
    pub fn new(opts: AuthOptions, agent: ureq::Agent) -> Self {
        let store = match &opts.store_dir {
            Some(d) => Some(TokenStore::at(d)),
            None => TokenStore::open_default().ok(),
        };
        Authenticator {
            opts,
            agent,
            person: None,
            store,
            memory: HashMap::new(),
            absent: HashSet::new(),
            sign_ins: HashMap::new(),
            step_ups: HashMap::new(),
            refreshed_on_401: HashSet::new(),
            bound: HashMap::new(),
            nonces: dpop::Nonces::default(),
            nonce_retries: HashSet::new(),
        }
    }

    /// Who consents to opening the sign-in page: the terminal's URL flow.
    /// Without one (and without `no_input` + `browser`), sign-in fails with
    /// a message saying how to sign in.
    pub fn set_person(&mut self, person: Box<dyn Resolver + Send>) {
        self.person = Some(person);
    }

    /// `Bearer …` (`DPoP …` for a DPoP-bound token: see
    /// [`Authenticator::request_credentials`] for its proof) for
    /// `resource_url` when a usable token is stored (after a refresh if it
    /// expired); `None` otherwise.
    pub fn authorization_header(&mut self, resource_url: &str) -> Option<String> {
        let key = server_key(resource_url).ok()?;
        let entry = self.entry(&key).ok()??;
        let token = entry.token.clone()?;
        if !token.is_expired(store::now()) {
            return Some(format!(
                "{} {}",
                token.scheme(),
                token.access_token.expose()
            ));
        }
        let fresh = self.try_refresh(&key, &entry, &token).ok()?;
        Some(format!(
            "{} {}",
            fresh.scheme(),
            fresh.access_token.expose()
        ))
    }

    /// Handles a 401 (sign in, or refresh) or a 403 `insufficient_scope`
    /// (step up). `Ok(())`: retry the request with
    /// [`Authenticator::authorization_header`].
    pub fn on_unauthorized(
        &mut self,
        resource_url: &str,
        www_authenticate: Option<&str>,
        status: u16,
    ) -> Result<(), AuthError> {
        let key = server_key(resource_url)?;
        let server_url = Url::parse(&key).map_err(|e| AuthError::BadUrl(e.to_string()))?;
        if self.dpop_nonce_retry(&key, www_authenticate, status) {
            return Ok(());
        }
        let challenge = www_authenticate.and_then(challenge::bearer);
        let step_up = status == 403;
        if step_up {
            let insufficient = challenge
                .as_ref()
                .and_then(|c| c.error())
                .is_some_and(|e| e == "insufficient_scope");
            if !insufficient {
                return Err(AuthError::Forbidden(format!(
                    "{key} answered 403 Forbidden: the signed-in account may not do this (no insufficient_scope challenge to step up from)"
                )));
            }
            let n = self.step_ups.entry(key.clone()).or_insert(0);
            *n += 1;
            if *n > MAX_STEP_UPS {
                return Err(AuthError::TooManyAttempts(format!(
                    "{key} still answers 403 insufficient_scope after {MAX_STEP_UPS} step-up sign-ins: giving up"
                )));
            }
        }
        let found = discovery::discover(
            &self.agent,
            &server_url,
            challenge.as_ref().and_then(|c| c.resource_metadata()),
        )?;
        let entry = self.entry(&key)?.unwrap_or_else(|| Entry {
            server_url: key.clone(),
            ..Default::default()
        });
        let previous = entry
            .token
            .clone()
            .filter(|t| t.issuer == found.server.issuer);
        // A rejected token is refreshed once before anyone is asked again.
        if !step_up && !self.refreshed_on_401.contains(&key) {
            if let Some(old) = previous.as_ref().filter(|t| t.refresh_token.is_some()) {
                self.refreshed_on_401.insert(key.clone());
                if self.try_refresh(&key, &entry, old).is_ok() {
                    return Ok(());
                }
            }
        }
        if !step_up {
            let n = self.sign_ins.entry(key.clone()).or_insert(0);
            *n += 1;
            if *n > MAX_SIGN_INS {
                return Err(AuthError::TooManyAttempts(format!(
                    "{key} keeps answering 401 to fresh tokens after {MAX_SIGN_INS} sign-ins: giving up"
                )));
            }
        }
        let challenged = challenge.as_ref().and_then(|c| c.scopes());
        let mut scopes: Vec<String> = if step_up {
            let mut s: Vec<String> = previous
                .as_ref()
                .and_then(|t| t.scope.as_deref())
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            for c in challenged.unwrap_or_default() {
                if !s.contains(&c) {
                    s.push(c);
                }
            }
            s
        } else {
            challenged
                .or_else(|| found.prm.as_ref().and_then(|p| p.scopes_supported.clone()))
                .unwrap_or_default()
        };
        let offline = "offline_access".to_string();
        if found
            .server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.contains(&offline))
            && !scopes.contains(&offline)
        {
            scopes.push(offline);
        }
        let dpop = self.new_dpop_key(&found, dpop::asks_for_dpop(www_authenticate))?;
        self.sign_in(&key, entry, &found, &scopes, dpop.as_ref())
    }

    /// The entry for `key`: this run's copy, else the store's.
    fn entry(&mut self, key: &str) -> Result<Option<Entry>, AuthError> {
        if let Some(e) = self.memory.get(key) {
            return Ok(Some(e.clone()));
        }
        let Some(store) = &self.store else {
            return Ok(None);
        };
        if self.absent.contains(key) {
            return Ok(None);
        }
        let e = store.load(key)?;
        match &e {
            Some(e) => {
                self.memory.insert(key.to_string(), e.clone());
            }
            None => {
                self.absent.insert(key.to_string());
            }
        }
        Ok(e)
    }

    /// Saves the entry (in memory, and in the store when there is one).
    fn save(&mut self, key: &str, entry: Entry) -> Result<(), AuthError> {
        self.memory.insert(key.to_string(), entry.clone());
        if let Some(store) = &self.store {
            store.update(key, |e| *e = entry)?;
        }
        Ok(())
    }

    /// The client identity for a refresh of `token`.
    fn client_for(
        &mut self,
        key: &str,
        entry: &Entry,
        issuer: &str,
    ) -> Result<Option<ClientRecord>, AuthError> {
        if let Some(c) = entry.clients.get(issuer) {
            if c.source != "pre-registered" {
                return Ok(Some(c.clone()));
            }
        }
        self.pre_registered(key, issuer, None)
    }

    /// The pre-registered client (`--client-id`), for `issuer` only: the
    /// credentials belong to one authorization server (RFC 6749 §2.3), and
    /// presenting them to another one is what a mix-up attack wants
    /// (RFC 9700 §4.4). See [`Authenticator::check_client_issuer`].
    fn pre_registered(
        &mut self,
        key: &str,
        issuer: &str,
        server: Option<&ServerMetadata>,
    ) -> Result<Option<ClientRecord>, AuthError> {
        let Some(id) = self.opts.client_id.clone() else {
            return Ok(None);
        };
        self.check_client_issuer(key, &id, issuer)?;
        let secret = self.opts.client_secret.clone().map(Secret);
        let method = flow::choose_auth_method(
            secret.is_some(),
            server.and_then(|s| s.token_endpoint_auth_methods_supported.as_deref()),
        );
        Ok(Some(ClientRecord {
            client_id: id,
            client_secret: secret,
            auth_method: method.to_string(),
            redirect_uri: None,
            source: "pre-registered".into(),
        }))
    }

    /// Whether client `id` may be presented to `issuer` (named by the
    /// metadata of the server `key`):
    /// - with `--client-issuer`, only to that issuer (and the binding is
    ///   stored, replacing an earlier one);
    /// - else to the issuer stored as its binding by an earlier run;
    /// - else, with a secret from the environment, to nobody: nobody named
    ///   an issuer for it, and the environment goes to every run;
    /// - else (flags on this command line) this first issuer becomes its
    ///   binding, said on stderr.
    fn check_client_issuer(&mut self, key: &str, id: &str, issuer: &str) -> Result<(), AuthError> {
        let shown_id = elicit_core::text::sanitize::sanitize_line(id);
        let shown_issuer = elicit_core::text::sanitize::sanitize_line(issuer);
        if let Some(named) = self.opts.client_issuer.clone() {
            if !discovery::same_issuer(&named, issuer) {
                return Err(AuthError::ClientIssuer(format!(
                    "the client {shown_id} belongs to the authorization server {} (--client-issuer), but {key} is protected by {shown_issuer}: elicit will not present the client's credentials to another issuer (drop --client-id for this server, or name its issuer)",
                    elicit_core::text::sanitize::sanitize_line(&named)
                )));
            }
            return self.bind(id, issuer);
        }
        let stored = match self.bound.get(id) {
            Some(b) => Some(b.clone()),
            None => match &self.store {
                Some(store) => store.client_issuer(id)?,
                None => None,
            },
        };
        match stored {
            Some(b) if discovery::same_issuer(&b, issuer) => Ok(()),
            Some(b) => Err(AuthError::ClientIssuer(format!(
                "the client {shown_id} is bound to the authorization server {} (the first one it was used with), but {key} is protected by {shown_issuer}: elicit will not present the client's credentials to another issuer (RFC 9700 §4.4). If the client is registered there, pass --client-issuer {shown_issuer}",
                elicit_core::text::sanitize::sanitize_line(&b)
            ))),
            None if self.opts.client_secret.is_some() && self.opts.client_secret_from_env => {
                Err(AuthError::ClientIssuer(format!(
                    "ELICIT_CLIENT_SECRET is set, but no authorization server is named for it, and {key} is protected by {shown_issuer}: elicit does not send a secret from the environment to whichever issuer a server names. Set ELICIT_CLIENT_ISSUER (or pass --client-issuer) to the issuer the client {shown_id} is registered with"
                )))
            }
            None => {
                self.bind(id, issuer)?;
                eprintln!(
                    "elicit: the client {shown_id} is now bound to the authorization server {shown_issuer} (first use): elicit will refuse to present it to another issuer (--client-issuer names one explicitly)"
                );
                Ok(())
            }
        }
    }

    /// Stores that client `id` belongs to `issuer`.
    fn bind(&mut self, id: &str, issuer: &str) -> Result<(), AuthError> {
        if let Some(store) = &self.store {
            store.bind_client(id, issuer)?;
        }
        self.bound.insert(id.to_string(), issuer.to_string());
        Ok(())
    }

    fn try_refresh(
        &mut self,
        key: &str,
        entry: &Entry,
        token: &TokenRecord,
    ) -> Result<TokenRecord, AuthError> {
        let who = self
            .client_for(key, entry, &token.issuer)?
            .ok_or_else(|| AuthError::Token("no client identity to refresh with".into()))?;
        let resource = entry.resource.clone().unwrap_or_else(|| key.to_string());
        // A DPoP-bound refresh token is refreshed with the same key.
        let dpop = token
            .dpop_key
            .as_ref()
            .map(dpop::DpopKey::from_stored)
            .transpose()?;
        let http = dpop::TokenHttp::new(&self.agent, dpop.as_ref(), &self.nonces);
        let fresh = http.finish(flow::refresh(&http, token, &who, &resource)?);
        let mut e = entry.clone();
        e.token = Some(fresh.clone());
        self.save(key, e)?;
        Ok(fresh)
    }

    /// The full sign-in: identity, consent, browser, loopback, exchange.
    fn sign_in(
        &mut self,
        key: &str,
        mut entry: Entry,
        found: &Discovered,
        scopes: &[String],
        dpop: Option<&dpop::DpopKey>,
    ) -> Result<(), AuthError> {
        if let Some(done) = self.extension_sign_in(key, &mut entry, found, scopes, dpop) {
            return done;
        }
        let server = &found.server;
        let pre_registered = self.pre_registered(key, &server.issuer, Some(server))?;
        if let Some(who) = pre_registered
            .clone()
            .filter(|c| flow::wants_client_credentials(server, c))
        {
            let http = dpop::TokenHttp::new(&self.agent, dpop, &self.nonces);
            let token = http.finish(flow::client_credentials(
                &http,
                server,
                &who,
                scopes,
                &found.resource,
            )?);
            entry.server_url = key.to_string();
            if self.opts.server_name.is_some() {
                entry.server_name = self.opts.server_name.clone();
            }
            entry.resource = Some(found.resource.clone());
            entry.token = Some(token);
            return self.save(key, entry);
        }
        // PKCE: without metadata (2025-03-26 defaults) S256 is assumed;
        // with metadata it must be listed.
        if !server.defaults_only {
            let s256 = server
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|m| m.iter().any(|x| x == "S256"));
            if !s256 {
                return Err(AuthError::NoPkce {
                    issuer: server.issuer.clone(),
                });
            }
        }
        let stored = entry
            .clients
            .get(&server.issuer)
            .filter(|c| c.source == "dynamic")
            .cloned();
        let preferred_port = stored
            .as_ref()
            .and_then(|c| c.redirect_uri.as_deref())
            .and_then(|r| Url::parse(r).ok())
            .and_then(|u| u.port());
        let listener = loopback::Loopback::bind(preferred_port)?;
        let redirect_uri = listener.redirect_uri();
        let who = if let Some(c) = pre_registered {
            c
        } else if let (Some(url), true) = (
            &self.opts.client_metadata_url,
            server.client_id_metadata_document_supported,
        ) {
            ClientRecord {
                client_id: url.clone(),
                client_secret: None,
                auth_method: flow::NONE.into(),
                redirect_uri: None,
                source: "metadata-document".into(),
            }
        } else if let Some(c) = stored.filter(|c| c.redirect_uri.as_deref() == Some(&redirect_uri))
        {
            c
        } else if let Some(endpoint) = &server.registration_endpoint {
            let c = flow::register(&self.agent, server, endpoint, &redirect_uri)?;
            entry.clients.insert(server.issuer.clone(), c.clone());
            c
        } else {
            return Err(AuthError::NoClient {
                issuer: server.issuer.clone(),
                cimd: if server.client_id_metadata_document_supported {
                    " (it accepts a Client ID Metadata Document: pass --client-metadata-url)".into()
                } else {
                    String::new()
                },
            });
        };
        let auth = flow::authorization(server, &who, &redirect_uri, scopes, &found.resource)?;
        let code = self.human_step(key, server, listener, &auth.url, &auth.state)?;
        let http = dpop::TokenHttp::new(&self.agent, dpop, &self.nonces);
        let token = http.finish(flow::exchange(&http, server, &who, auth, code)?);
        entry.server_url = key.to_string();
        if self.opts.server_name.is_some() {
            entry.server_name = self.opts.server_name.clone();
        }
        entry.resource = Some(found.resource.clone());
        entry.token = Some(token);
        self.save(key, entry)
    }

    /// Shows the sign-in link through the URL consent flow (or launches
    /// `--browser` under `--no-input`) and waits for the loopback redirect.
    fn human_step(
        &mut self,
        key: &str,
        server: &ServerMetadata,
        listener: loopback::Loopback,
        url: &str,
        state: &str,
    ) -> Result<String, AuthError> {
        let name = self
            .opts
            .server_name
            .clone()
            .unwrap_or_else(|| key.to_string());
        let timeout = self.opts.timeout.unwrap_or(DEFAULT_WAIT);
        let port = listener.port();
        let stop = Arc::new(AtomicBool::new(false));
        let callback = wait_for_callback(listener, server, state, timeout, stop.clone());
        // A sign-in that cannot go on ends the listener's wait (its port
        // freed) before it says why.
        if let Err(e) = self.send_person_to_sign_in(&name, server, port, url) {
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
        &mut self,
        name: &str,
        server: &ServerMetadata,
        port: u16,
        url: &str,
    ) -> Result<(), AuthError> {
        let needs_person = || AuthError::NeedsPerson {
            server: name.to_string(),
        };
        if self.opts.no_input {
            return match (&self.opts.browser, self.opts.no_open) {
                (Some(program), false) => launch(program, url),
                _ => Err(needs_person()),
            };
        }
        let Some(person) = self.person.as_mut() else {
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

#[cfg(test)]
mod tests {
    /// The authenticator, with whatever resolver it is handed, may be moved
    /// to another thread by the transport.
    #[test]
    fn the_authenticator_is_send() {
        fn send<T: Send>() {}
        send::<super::Authenticator>();
    }
}
