//! DPoP (RFC 9449): sender-constrained tokens.
//!
//! - Each sign-in that uses DPoP gets its own P-256 key ([`DpopKey`]); its
//!   PKCS#8 document is kept with the tokens in the store entry (a 0600
//!   file), so `elicit auth logout` removes it with them and a refresh
//!   proves possession of the same key.
//! - A proof (`typ: dpop+jwt`, the public `jwk`, a fresh `jti`, `htm`,
//!   `htu` without query and fragment, `iat`, and the latest `nonce` the
//!   server gave) goes on every token request ([`TokenHttp`]) and on every
//!   MCP request, there with `ath`, the access token's hash, and
//!   `Authorization: DPoP <token>`.
//! - Nonces (RFC 9449 §8, §9): the latest `DPoP-Nonce` of each server
//!   (a token endpoint, or an MCP server: two servers even on one
//!   origin) is kept for this run and put in every later proof. A
//!   token endpoint's `400 use_dpop_nonce` is retried once at once here; a
//!   resource's `401` with `DPoP error="use_dpop_nonce"` is retried once
//!   per new nonce (`super::Authenticator::dpop_nonce_retry`).
//! - When: `--dpop`, or by itself when the authorization server lists
//!   ES256 in `dpop_signing_alg_values_supported` and the resource asks
//!   for DPoP (a `DPoP` challenge, or `dpop_bound_access_tokens_required`
//!   in its metadata). The token is DPoP-bound only when the token
//!   response says `token_type: DPoP`; a `Bearer` answer is used as Bearer
//!   and its key dropped.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::json;
use sha2::{Digest, Sha256};
use ureq::http;
use url::Url;

use super::discovery::Discovered;
use super::http::{send, HttpFailure};
use super::jwt::{b64, now, SigningKey};
use super::store::{Secret, TokenRecord};
use super::{challenge, AuthError};

/// The one proof algorithm elicit signs with.
pub(crate) const ALG: &str = "ES256";

/// A sign-in's DPoP key.
pub struct DpopKey {
    key: SigningKey,
    /// The PKCS#8 document, base64: what the store keeps.
    stored: Secret,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DpopKey(jkt {})", self.thumbprint())
    }
}

impl DpopKey {
    /// A fresh key pair.
    pub(crate) fn generate() -> Result<DpopKey, AuthError> {
        let (key, pkcs8) = SigningKey::generate_es256().map_err(AuthError::Protocol)?;
        Ok(DpopKey {
            key,
            stored: Secret(STANDARD.encode(pkcs8)),
        })
    }

    /// The key kept in a token record.
    pub(crate) fn from_stored(stored: &Secret) -> Result<DpopKey, AuthError> {
        let bad = |why: String| {
            AuthError::Store(format!(
                "the stored DPoP key cannot be read ({why}); sign in again after `elicit auth logout URL`"
            ))
        };
        let der = STANDARD
            .decode(stored.expose())
            .map_err(|_| bad("not base64".into()))?;
        let key = SigningKey::from_es256_pkcs8(&der).map_err(bad)?;
        Ok(DpopKey {
            key,
            stored: stored.clone(),
        })
    }

    /// The private key as stored (PKCS#8, base64).
    pub fn stored(&self) -> &Secret {
        &self.stored
    }

    /// The JWK thumbprint a bound token's `cnf.jkt` names.
    pub fn thumbprint(&self) -> String {
        self.key.thumbprint()
    }

    /// A proof for one request. `access_token` adds `ath` (resource
    /// requests); `nonce` is the server's latest `DPoP-Nonce`.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut claims = json!({
            "jti": uuid::Uuid::new_v4().to_string(),
            "htm": method,
            "htu": htu(url),
            "iat": now(),
        });
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        if let Some(t) = access_token {
            claims["ath"] = json!(access_token_hash(t));
        }
        let header = json!({"typ": "dpop+jwt", "alg": ALG, "jwk": self.key.public_jwk()});
        self.key
            .sign(header, &claims)
            .map_err(|e| AuthError::Protocol(format!("cannot sign a DPoP proof: {e}")))
    }
}

/// `ath`: base64url(SHA-256(ASCII access token)) (RFC 9449 §4.2).
pub(crate) fn access_token_hash(token: &str) -> String {
    b64(&Sha256::digest(token.as_bytes()))
}

/// `htu`: the request URL without query and fragment (RFC 9449 §4.2).
pub fn htu(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_string(),
    }
}

/// The latest `DPoP-Nonce` of each server: a token endpoint (by its URL)
/// or a resource (by the MCP server URL), see [`token_server`] and
/// [`resource_server`].
#[derive(Clone, Default)]
pub struct Nonces(Arc<Mutex<HashMap<String, String>>>);

/// The longest nonce kept: a server's header is untrusted.
const MAX_NONCE: usize = 1024;

/// The nonce key of a token endpoint.
pub fn token_server(url: &str) -> String {
    format!("token {}", htu(url))
}

/// The nonce key of an MCP server (its store key).
pub fn resource_server(server_key: &str) -> String {
    format!("resource {server_key}")
}

impl Nonces {
    /// The last nonce `server` gave, if any.
    pub fn get(&self, server: &str) -> Option<String> {
        self.0.lock().ok()?.get(server).cloned()
    }

    /// Keeps `nonce` for `server`. Returns whether it is new.
    /// A value that is not a plain token (RFC 9449 §8.1: NQCHAR) is not
    /// kept.
    pub fn set(&self, server: &str, nonce: &str) -> bool {
        let usable = !nonce.is_empty()
            && nonce.len() <= MAX_NONCE
            && nonce
                .bytes()
                .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\');
        if !usable {
            return false;
        }
        let Ok(mut map) = self.0.lock() else {
            return false;
        };
        map.insert(server.to_string(), nonce.to_string()).as_deref() != Some(nonce)
    }
}

/// oauth2's HTTP client for token requests, with a DPoP proof on each
/// when the sign-in has a key; without one it is the plain client.
/// A `400 use_dpop_nonce` that brings a `DPoP-Nonce` is sent once more
/// with a fresh proof carrying it.
pub struct TokenHttp<'a> {
    agent: &'a ureq::Agent,
    key: Option<&'a DpopKey>,
    nonces: &'a Nonces,
    /// A success answered `token_type: DPoP`.
    bound: Cell<bool>,
}

impl<'a> TokenHttp<'a> {
    /// Token requests over `agent`, with DPoP proofs when `key` is given.
    pub fn new(agent: &'a ureq::Agent, key: Option<&'a DpopKey>, nonces: &'a Nonces) -> Self {
        TokenHttp {
            agent,
            key,
            nonces,
            bound: Cell::new(false),
        }
    }

    /// Whether the requests carry a DPoP proof (so a `token_type: DPoP`
    /// answer is one elicit asked for).
    pub fn dpop_requested(&self) -> bool {
        self.key.is_some()
    }

    /// Whether the last successful token response was a DPoP-bound token.
    pub fn bound(&self) -> bool {
        self.bound.get()
    }

    /// `token` as this sign-in leaves it: bound to the key (kept with it)
    /// when the server said `token_type: DPoP`, else a Bearer token.
    pub fn finish(&self, mut token: TokenRecord) -> TokenRecord {
        token.dpop_key = match (self.key, self.bound()) {
            (Some(k), true) => Some(k.stored().clone()),
            _ => None,
        };
        token
    }

    fn once(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
    ) -> Result<http::Response<Vec<u8>>, HttpFailure> {
        let mut b = http::Request::builder()
            .method(parts.method.clone())
            .uri(parts.uri.clone());
        for (k, v) in &parts.headers {
            b = b.header(k, v);
        }
        let url = parts.uri.to_string();
        let server = token_server(&url);
        if let Some(key) = self.key {
            let nonce = self.nonces.get(&server);
            let proof = key
                .proof(parts.method.as_str(), &url, nonce.as_deref(), None)
                .map_err(|e| HttpFailure(e.to_string()))?;
            b = b.header("DPoP", proof);
        }
        let req = b
            .body(body.to_vec())
            .map_err(|e| HttpFailure(e.to_string()))?;
        let resp = send(self.agent, req, false).map_err(|e| HttpFailure(e.to_string()))?;
        if let Some(n) = resp
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
        {
            self.nonces.set(&server, n);
        }
        Ok(resp)
    }
}

/// The `error` of an OAuth error body.
fn error_code(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("error")?.as_str().map(str::to_string)
}

impl oauth2::SyncHttpClient for TokenHttp<'_> {
    type Error = HttpFailure;

    fn call(&self, request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, HttpFailure> {
        let (parts, body) = request.into_parts();
        let mut resp = self.once(&parts, &body)?;
        if self.key.is_some()
            && resp.status().as_u16() == 400
            && resp.headers().contains_key("dpop-nonce")
            && error_code(resp.body()).as_deref() == Some("use_dpop_nonce")
        {
            resp = self.once(&parts, &body)?;
        }
        if resp.status().is_success() {
            let token_type = serde_json::from_slice::<serde_json::Value>(resp.body())
                .ok()
                .and_then(|v| v.get("token_type")?.as_str().map(str::to_string));
            self.bound.set(
                self.key.is_some() && token_type.is_some_and(|t| t.eq_ignore_ascii_case("dpop")),
            );
        }
        Ok(resp)
    }
}

/// Whether a `WWW-Authenticate` value holds a DPoP challenge.
pub(crate) fn asks_for_dpop(www_authenticate: Option<&str>) -> bool {
    www_authenticate.is_some_and(|w| challenge::parse(w).iter().any(|c| c.scheme == "dpop"))
}

/// Whether the challenge is a DPoP `use_dpop_nonce` (RFC 9449 §9).
pub(crate) fn is_nonce_challenge(www_authenticate: Option<&str>) -> bool {
    www_authenticate.is_some_and(|w| {
        challenge::parse(w)
            .iter()
            .any(|c| c.scheme == "dpop" && c.error() == Some("use_dpop_nonce"))
    })
}

/// Whether this sign-in uses DPoP (see the module docs). `Err` when it
/// was asked for and the authorization server cannot do ES256.
pub(crate) fn wanted(
    forced: bool,
    found: &Discovered,
    resource_asks: bool,
) -> Result<bool, AuthError> {
    let algs = found.server.dpop_signing_alg_values_supported.as_deref();
    let es256 = algs.is_some_and(|a| a.iter().any(|x| x == ALG));
    let asks = resource_asks
        || found
            .prm
            .as_ref()
            .is_some_and(|p| p.dpop_bound_access_tokens_required);
    if forced {
        // A server that lists algorithms without ES256 would refuse every
        // proof; one that lists none may still bind (or answer Bearer).
        if let Some(a) = algs.filter(|a| !a.is_empty() && !es256) {
            return Err(AuthError::Protocol(format!(
                "--dpop: the authorization server {} takes DPoP proofs signed with {} only; elicit signs them with ES256",
                found.server.issuer,
                a.join(", ")
            )));
        }
        return Ok(true);
    }
    Ok(es256 && asks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn htu_drops_query_and_fragment() {
        assert_eq!(htu("http://h:1/mcp?x=1#f"), "http://h:1/mcp");
        assert_eq!(htu("https://h/token"), "https://h/token");
    }

    #[test]
    fn nonces_are_per_server_and_checked() {
        let n = Nonces::default();
        let (token, resource) = (
            token_server("http://a:1/token?x"),
            resource_server("http://a:1/mcp"),
        );
        assert!(n.set(&token, "n1"));
        assert!(!n.set(&token, "n1"));
        assert_eq!(
            n.get(&token_server("http://a:1/token")).as_deref(),
            Some("n1")
        );
        // The resource on the same origin is another server.
        assert_eq!(n.get(&resource), None);
        assert!(n.set(&resource, "n2"));
        assert!(!n.set(&token, "bad\nvalue"));
        assert!(!n.set(&token, ""));
        assert_eq!(n.get(&token).as_deref(), Some("n1"));
    }

    #[test]
    fn challenges_are_read() {
        assert!(asks_for_dpop(Some("DPoP resource_metadata=\"x\"")));
        assert!(!asks_for_dpop(Some("Bearer realm=\"x\"")));
        assert!(is_nonce_challenge(Some("DPoP error=\"use_dpop_nonce\"")));
        assert!(!is_nonce_challenge(Some("Bearer error=\"use_dpop_nonce\"")));
    }
}
