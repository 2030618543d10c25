//! The [`Authenticator`]: what the HTTP transport asks before a request
//! and after a refusal, and the sign-in it runs then (discovery, the
//! client's identity, the person's consent, the code exchange or a grant
//! without a browser), keeping this run's tokens and the store's.

use std::collections::{HashMap, HashSet};

use url::Url;

use elicit_core::elicitation::resolve::Resolver;

use super::discovery::{self, Discovered, ServerMetadata};
use super::store::{self, server_key, ClientRecord, Entry, Secret, TokenRecord, TokenStore};
use super::{
    challenge, consent, dpop, flow, grants, loopback, AuthError, AuthOptions, MAX_SIGN_INS,
    MAX_STEP_UPS,
};

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

    /// The credentials for one MCP request to `request_url` (`method`):
    /// `Authorization`, and for a DPoP-bound token also its `DPoP` proof
    /// (with `ath` and the server's latest nonce). Empty when nothing
    /// usable is stored.
    pub fn request_credentials(
        &mut self,
        resource_url: &str,
        method: &str,
        request_url: &str,
    ) -> Vec<(String, String)> {
        let Some(value) = self.authorization_header(resource_url) else {
            return Vec::new();
        };
        let mut out = vec![("Authorization".to_string(), value)];
        let Ok(key) = server_key(resource_url) else {
            return out;
        };
        let Some(token) = self.memory.get(&key).and_then(|e| e.token.clone()) else {
            return out;
        };
        let Some(stored) = &token.dpop_key else {
            return out;
        };
        let nonce = self.nonces.get(&dpop::resource_server(&key));
        let proof = dpop::DpopKey::from_stored(stored).and_then(|dpop| {
            dpop.proof(
                method,
                request_url,
                nonce.as_deref(),
                Some(token.access_token.expose()),
            )
        });
        match proof {
            Ok(p) => out.push(("DPoP".into(), p)),
            // A bound token without its proof is refused anyway: send
            // nothing, and let the 401 sign in afresh.
            Err(_) => out.clear(),
        }
        out
    }

    /// A response from the MCP server `resource_url` carried `DPoP-Nonce`.
    pub(crate) fn dpop_nonce_seen(&mut self, resource_url: &str, nonce: &str) {
        if let Ok(key) = server_key(resource_url) {
            self.nonces.set(&dpop::resource_server(&key), nonce);
        }
    }

    /// A 401 that is a `use_dpop_nonce` challenge to a DPoP-bound token,
    /// with a nonce not retried yet: send the request again (with a proof
    /// carrying it) instead of signing in.
    fn dpop_nonce_retry(&mut self, key: &str, www_authenticate: Option<&str>, status: u16) -> bool {
        if status != 401 || !dpop::is_nonce_challenge(www_authenticate) {
            return false;
        }
        let bound = self
            .memory
            .get(key)
            .and_then(|e| e.token.as_ref())
            .is_some_and(|t| t.dpop_key.is_some());
        let Some(nonce) = self.nonces.get(&dpop::resource_server(key)) else {
            return false;
        };
        bound && self.nonce_retries.insert(format!("{key} {nonce}"))
    }

    /// The DPoP key for a new sign-in, when it uses DPoP.
    fn new_dpop_key(
        &self,
        found: &Discovered,
        resource_asks: bool,
    ) -> Result<Option<dpop::DpopKey>, AuthError> {
        if dpop::wanted(self.opts.extensions.dpop, found, resource_asks)? {
            dpop::DpopKey::generate().map(Some)
        } else {
            Ok(None)
        }
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
            return self.keep_token(key, &mut entry, found, token);
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
        let code = consent::human_step(
            &self.opts,
            self.person.as_mut(),
            key,
            server,
            listener,
            &auth.url,
            &auth.state,
        )?;
        let http = dpop::TokenHttp::new(&self.agent, dpop, &self.nonces);
        let token = http.finish(flow::exchange(&http, server, &who, auth, code)?);
        self.keep_token(key, &mut entry, found, token)
    }

    /// Keeps the token a sign-in to `found`'s resource gave in `entry`
    /// (with the server's name, when given) and saves it.
    fn keep_token(
        &mut self,
        key: &str,
        entry: &mut Entry,
        found: &Discovered,
        token: TokenRecord,
    ) -> Result<(), AuthError> {
        entry.server_url = key.to_string();
        if self.opts.server_name.is_some() {
            entry.server_name = self.opts.server_name.clone();
        }
        entry.resource = Some(found.resource.clone());
        entry.token = Some(token);
        self.save(key, entry.clone())
    }

    /// Sign-in by one of the grants of [`grants`], when the options ask for
    /// one: `None` lets the usual sign-in go on.
    fn extension_sign_in(
        &mut self,
        key: &str,
        entry: &mut Entry,
        found: &Discovered,
        scopes: &[String],
        dpop: Option<&dpop::DpopKey>,
    ) -> Option<Result<(), AuthError>> {
        let ext = self.opts.extensions.clone();
        let grant = grants::extension_grant(&ext)?;
        // The client's credentials (a secret, or its key's assertion) go
        // only to the issuer the client belongs to.
        if let Some(id) = self.opts.client_id.clone() {
            if let Err(e) = self.check_client_issuer(key, &id, &found.server.issuer) {
                return Some(Err(e));
            }
        }
        let client = grants::GrantClient {
            agent: &self.agent,
            client_id: self.opts.client_id.as_deref(),
            client_secret: self.opts.client_secret.as_deref(),
            nonces: &self.nonces,
        };
        let result = client
            .run_grant(grant, &ext, found, scopes, dpop)
            .and_then(|token| self.keep_token(key, entry, found, token));
        Some(result)
    }
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
