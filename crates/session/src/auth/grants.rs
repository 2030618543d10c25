//! Sign-in without a browser, for machines and enterprises:
//!
//! - **Client credentials with a private-key JWT** (RFC 7523 §2.2,
//!   `private_key_jwt`): `--client-assertion-key FILE` with `--client-id`.
//!   The assertion has `iss` = `sub` = the client id, `aud` = the
//!   authorization server's issuer, a fresh `jti` and a one-minute `exp`.
//! - **JWT bearer grant** (RFC 7523 §2.1) for workload identity:
//!   `--assertion FILE|-` (a platform's OIDC token). No registration;
//!   token endpoint authentication `none` unless client credentials are
//!   given. A refused assertion is an error: never retried, never another
//!   grant.
//! - **Enterprise-managed authorization** (the MCP extension, an identity
//!   assertion authorization grant, ID-JAG): an RFC 8693 token exchange
//!   at the enterprise IdP (`--idp-token-endpoint` or `--idp-issuer`,
//!   `--idp-id-token FILE|-`, `--idp-client-id`) turns the person's ID
//!   token into an ID-JAG for this authorization server and resource, and
//!   the JWT bearer grant turns that into the access token, with the
//!   client's own authentication at the authorization server.
//!
//! Every request here may carry a DPoP proof ([`super::dpop::TokenHttp`]).
//! Assertions, ID tokens, keys and secrets are never printed: errors quote
//! the server's `error` code and description and name files, nothing else.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value};
use ureq::http;

use super::discovery::{self, Discovered, ServerMetadata};
use super::dpop::{DpopKey, Nonces, TokenHttp};
use super::flow;
use super::http::HttpFailure;
use super::jwt::{now, unverified_claims, SigningKey};
use super::store::{Secret, TokenRecord};
use super::AuthError;

pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
pub(crate) const CLIENT_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
pub(crate) const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
pub(crate) const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// How long a client assertion elicit signs is valid.
const ASSERTION_LIFETIME: u64 = 60;
/// The largest assertion, ID token or key file read.
const MAX_INPUT: u64 = 256 * 1024;

/// The sign-in extensions' settings (from the command line).
#[derive(Clone, Default)]
pub struct ExtensionOptions {
    /// `--dpop`: DPoP-bound tokens even when the resource does not ask.
    pub dpop: bool,
    /// `--client-assertion-key FILE`: sign in as `--client-id` with a
    /// private-key JWT (client credentials grant).
    pub client_assertion_key: Option<PathBuf>,
    /// `--assertion FILE|-`: the JWT bearer grant with this assertion.
    pub assertion: Option<PathBuf>,
    /// `--idp-token-endpoint URL`.
    pub idp_token_endpoint: Option<String>,
    /// `--idp-issuer URL`: the IdP whose metadata names its token endpoint.
    pub idp_issuer: Option<String>,
    /// `--idp-id-token FILE|-`.
    pub idp_id_token: Option<PathBuf>,
    /// `--idp-client-id ID`: elicit's client at the IdP.
    pub idp_client_id: Option<String>,
    /// `--idp-client-secret SECRET`.
    pub idp_client_secret: Option<String>,
}

impl std::fmt::Debug for ExtensionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionOptions")
            .field("dpop", &self.dpop)
            .field("client_assertion_key", &self.client_assertion_key)
            .field("assertion", &self.assertion)
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_id_token", &self.idp_id_token)
            .field("idp_client_id", &self.idp_client_id)
            .field(
                "idp_client_secret",
                &self.idp_client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl ExtensionOptions {
    fn enterprise(&self) -> bool {
        self.idp_id_token.is_some()
            || self.idp_token_endpoint.is_some()
            || self.idp_issuer.is_some()
    }
}

/// Standard input, read once (`-` may be named by more than one flag, and
/// sign-in may run more than once).
fn stdin_text() -> Result<String, String> {
    static STDIN: OnceLock<Result<String, String>> = OnceLock::new();
    STDIN
        .get_or_init(|| {
            let mut s = String::new();
            std::io::stdin()
                .take(MAX_INPUT)
                .read_to_string(&mut s)
                .map(|_| s)
                .map_err(|e| e.to_string())
        })
        .clone()
}

/// A file's text (or standard input for `-`), bounded. `what` names the
/// flag in errors.
fn read_input(path: &Path, what: &str) -> Result<String, AuthError> {
    let text = if path == Path::new("-") {
        stdin_text()
            .map_err(|e| AuthError::Protocol(format!("{what}: cannot read standard input: {e}")))?
    } else {
        let f = std::fs::File::open(path).map_err(|e| {
            AuthError::Protocol(format!("{what}: cannot read {}: {e}", path.display()))
        })?;
        let mut s = String::new();
        f.take(MAX_INPUT + 1).read_to_string(&mut s).map_err(|e| {
            AuthError::Protocol(format!("{what}: cannot read {}: {e}", path.display()))
        })?;
        if s.len() as u64 > MAX_INPUT {
            return Err(AuthError::Protocol(format!(
                "{what}: {} is over {MAX_INPUT} bytes",
                path.display()
            )));
        }
        s
    };
    Ok(text)
}

/// A JWT from `--assertion` / `--idp-id-token`: one compact JWS, not yet
/// expired (the server would refuse it; saying so here names the file).
fn read_jwt(path: &Path, what: &str) -> Result<Secret, AuthError> {
    let text = read_input(path, what)?;
    let jwt = text.trim();
    let shown = if path == Path::new("-") {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let Some(claims) = unverified_claims(jwt) else {
        return Err(AuthError::Protocol(format!(
            "{what}: {shown} does not hold a JWT (three base64url parts, the second a JSON object)"
        )));
    };
    if let Some(exp) = claims.get("exp").and_then(Value::as_u64) {
        if exp <= now() {
            return Err(AuthError::Protocol(format!(
                "{what}: the JWT in {shown} expired {} ago: get a fresh one",
                humantime::format_duration(std::time::Duration::from_secs(now() - exp))
            )));
        }
    }
    Ok(Secret(jwt.to_string()))
}

/// The key of `--client-assertion-key`.
pub fn read_key(path: &Path) -> Result<SigningKey, AuthError> {
    let text = read_input(path, "--client-assertion-key")?;
    SigningKey::from_pem(text.as_bytes()).map_err(|e| {
        AuthError::Protocol(format!("--client-assertion-key: {}: {e}", path.display()))
    })
}

/// How the client authenticates at a token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// A public client: `client_id` in the body when there is one.
    None(Option<&'a str>),
    /// `client_secret_basic` (RFC 6749 §2.3.1 encoding).
    Basic(&'a str, &'a str),
    /// `client_secret_post`.
    Post(&'a str, &'a str),
    /// `private_key_jwt` (RFC 7523 §2.2), with the assertion's audience.
    PrivateKeyJwt {
        client_id: &'a str,
        key: &'a SigningKey,
        audience: &'a str,
    },
}

/// A private-key JWT client assertion.
pub(crate) fn client_assertion(
    key: &SigningKey,
    client_id: &str,
    audience: &str,
) -> Result<String, AuthError> {
    let iat = now();
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "jti": uuid::Uuid::new_v4().to_string(),
        "iat": iat,
        "exp": iat + ASSERTION_LIFETIME,
    });
    key.sign(json!({"typ": "JWT"}), &claims)
        .map_err(|e| AuthError::Protocol(format!("cannot sign the client assertion: {e}")))
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// `text` with every occurrence of the non-empty `secrets` replaced.
fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| s.len() >= 4) {
        out = out.replace(*s, "<redacted>");
    }
    out
}

/// POSTs a token request and reads the JSON answer; an OAuth error is
/// `AuthError::Token` with the server's code and description (one line).
pub(crate) fn token_request(
    http: &TokenHttp<'_>,
    endpoint: &str,
    params: &[(&str, &str)],
    auth: &ClientAuth<'_>,
) -> Result<Value, AuthError> {
    use oauth2::SyncHttpClient;
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        form.append_pair(k, v);
    }
    let mut signed: Option<String> = None;
    let mut req = http::Request::post(endpoint)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Accept", "application/json");
    match auth {
        ClientAuth::None(id) => {
            if let Some(id) = id {
                form.append_pair("client_id", id);
            }
        }
        ClientAuth::Basic(id, secret) => {
            use base64::Engine;
            let pair = format!("{}:{}", form_encode(id), form_encode(secret));
            req = req.header(
                "Authorization",
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                ),
            );
        }
        ClientAuth::Post(id, secret) => {
            form.append_pair("client_id", id);
            form.append_pair("client_secret", secret);
        }
        ClientAuth::PrivateKeyJwt {
            client_id,
            key,
            audience,
        } => {
            let assertion = signed.insert(client_assertion(key, client_id, audience)?);
            form.append_pair("client_id", client_id);
            form.append_pair("client_assertion_type", CLIENT_ASSERTION_TYPE);
            form.append_pair("client_assertion", assertion);
        }
    }
    let req = req
        .body(form.finish().into_bytes())
        .map_err(|e| AuthError::Network {
            url: endpoint.to_string(),
            detail: e.to_string(),
        })?;
    let resp = http
        .call(req)
        .map_err(|HttpFailure(detail)| AuthError::Network {
            url: endpoint.to_string(),
            detail,
        })?;
    let status = resp.status().as_u16();
    let body: Option<Value> = serde_json::from_slice(resp.body()).ok();
    if !(200..300).contains(&status) {
        // The server's text, on one line, with anything elicit sent it
        // that is secret (an assertion, a token, a secret) cut out: a
        // server may echo the request in its description.
        let mut secrets: Vec<&str> = params
            .iter()
            .filter(|(k, _)| matches!(*k, "assertion" | "subject_token"))
            .map(|(_, v)| *v)
            .collect();
        if let ClientAuth::Basic(_, secret) | ClientAuth::Post(_, secret) = auth {
            secrets.push(secret);
        }
        secrets.extend(signed.as_deref());
        let field = |k: &str| {
            body.as_ref()
                .and_then(|b| b.get(k))
                .and_then(Value::as_str)
                .map(|t| elicit_core::text::sanitize::sanitize_line(&scrub(t, &secrets)))
        };
        let detail = match (field("error"), field("error_description")) {
            (Some(e), Some(d)) => format!("{e} ({d})"),
            (Some(e), None) => e,
            _ => format!("HTTP {status}"),
        };
        return Err(AuthError::Token(format!("{endpoint} refused: {detail}")));
    }
    body.filter(Value::is_object).ok_or_else(|| {
        AuthError::Token(format!(
            "{endpoint} answered with something that is not a token response"
        ))
    })
}

/// A token response as a stored record. Its `token_type` must be one
/// elicit can present (RFC 6749 §7.1): `Bearer`, or `DPoP` when a proof
/// was sent (see [`TokenHttp::finish`]).
fn record(
    server: &ServerMetadata,
    body: &Value,
    scopes: &[String],
    dpop_requested: bool,
) -> Result<TokenRecord, AuthError> {
    let token_type = body.get("token_type").and_then(Value::as_str).unwrap_or("");
    flow::token_use(&server.token_endpoint, token_type, dpop_requested)?;
    let access = body
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            AuthError::Token(format!(
                "{} answered without an access_token",
                server.token_endpoint
            ))
        })?;
    let at = now();
    Ok(TokenRecord {
        issuer: server.issuer.clone(),
        token_endpoint: server.token_endpoint.clone(),
        access_token: Secret(access.to_string()),
        refresh_token: body
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(|r| Secret(r.to_string())),
        expires_at: body
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(|d| at + d),
        scope: (!scopes.is_empty()).then(|| scopes.join(" ")),
        obtained_at: at,
        dpop_key: None,
    })
}

/// The ID token goes to the IdP's token endpoint: https only, or plain
/// http to this machine (as for authorization servers).
fn check_idp_url(endpoint: &str) -> Result<(), AuthError> {
    let u = url::Url::parse(endpoint).map_err(|e| {
        AuthError::BadUrl(format!(
            "the IdP token endpoint {endpoint:?} is not a URL: {e}"
        ))
    })?;
    let loopback = match u.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match u.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(AuthError::BadUrl(format!(
            "the IdP token endpoint {endpoint} is not https: elicit sends an ID token only over https (or to this machine)"
        ))),
    }
}

fn offers(server: &ServerMetadata, grant: &str) -> bool {
    server
        .grant_types_supported
        .as_ref()
        .is_none_or(|g| g.iter().any(|x| x == grant))
}

/// What a grant here needs of the authenticator: its HTTP agent, the
/// client it signs in as, and the DPoP nonces servers sent. The
/// authenticator lends them for one sign-in; storing the token is its own.
pub(super) struct GrantClient<'a> {
    pub(super) agent: &'a ureq::Agent,
    /// `--client-id`.
    pub(super) client_id: Option<&'a str>,
    /// `--client-secret`.
    pub(super) client_secret: Option<&'a str>,
    pub(super) nonces: &'a Nonces,
}

/// The grant the options ask for, if they ask for one of these (else the
/// usual sign-in goes on).
pub(super) fn extension_grant(ext: &ExtensionOptions) -> Option<&'static str> {
    if ext.assertion.is_some() || ext.enterprise() {
        Some(JWT_BEARER)
    } else if ext.client_assertion_key.is_some() {
        Some("client_credentials")
    } else {
        None
    }
}

impl GrantClient<'_> {
    /// The client's authentication at the authorization server for the
    /// grants here: a secret (the method the server lists), a private-key
    /// JWT, or none.
    fn client_auth<'a>(
        &'a self,
        server: &'a ServerMetadata,
        key: Option<&'a SigningKey>,
    ) -> ClientAuth<'a> {
        match (self.client_id, self.client_secret, key) {
            (Some(id), _, Some(key)) => ClientAuth::PrivateKeyJwt {
                client_id: id,
                key,
                audience: &server.issuer,
            },
            (Some(id), Some(secret), None) => {
                match flow::choose_auth_method(
                    true,
                    server.token_endpoint_auth_methods_supported.as_deref(),
                ) {
                    flow::POST => ClientAuth::Post(id, secret),
                    _ => ClientAuth::Basic(id, secret),
                }
            }
            (id, _, _) => ClientAuth::None(id),
        }
    }

    /// Runs `grant` (one of [`extension_grant`]'s) for `found`'s resource:
    /// the token it gives, not stored yet.
    pub(super) fn run_grant(
        &self,
        grant: &str,
        ext: &ExtensionOptions,
        found: &Discovered,
        scopes: &[String],
        dpop: Option<&DpopKey>,
    ) -> Result<TokenRecord, AuthError> {
        let server = &found.server;
        if !offers(server, grant) {
            return Err(AuthError::Protocol(format!(
                "the authorization server {} does not offer the {grant} grant ({}), which {} needs",
                server.issuer,
                match grant {
                    JWT_BEARER => "JWT bearer",
                    _ => "client credentials",
                },
                match (grant, ext.assertion.is_some()) {
                    (JWT_BEARER, true) => "--assertion",
                    (JWT_BEARER, false) => "enterprise sign-in (--idp-…)",
                    _ => "--client-assertion-key",
                }
            )));
        }
        let signing_key = match &ext.client_assertion_key {
            Some(path) => {
                if self.client_id.is_none() {
                    return Err(AuthError::Protocol(
                        "--client-assertion-key needs --client-id: the assertion is issued by and about that client".into(),
                    ));
                }
                let k = read_key(path)?;
                if let Some(algs) = &server.token_endpoint_auth_signing_alg_values_supported {
                    if !algs.iter().any(|a| a == k.alg()) {
                        return Err(AuthError::Protocol(format!(
                            "--client-assertion-key: {} is a {} key, and the authorization server {} takes {} client assertions only",
                            path.display(),
                            k.alg(),
                            server.issuer,
                            algs.join(", ")
                        )));
                    }
                }
                Some(k)
            }
            None => None,
        };
        let http = TokenHttp::new(self.agent, dpop, self.nonces);
        let auth = self.client_auth(server, signing_key.as_ref());
        let scope = scopes.join(" ");
        let mut params: Vec<(&str, &str)> = vec![("grant_type", grant)];
        let assertion;
        if grant == JWT_BEARER {
            assertion = match &ext.assertion {
                Some(path) => read_jwt(path, "--assertion")?,
                None => self.id_jag(ext, found)?,
            };
            params.push(("assertion", assertion.expose()));
        }
        if !scope.is_empty() {
            params.push(("scope", &scope));
        }
        params.push(("resource", &found.resource));
        let body = token_request(&http, &server.token_endpoint, &params, &auth)?;
        let token = record(server, &body, scopes, http.dpop_requested())?;
        Ok(http.finish(token))
    }

    /// The RFC 8693 token exchange at the IdP: the ID token for an ID-JAG
    /// whose audience is the authorization server and whose resource is
    /// the protected resource, exactly as its metadata names it.
    fn id_jag(&self, ext: &ExtensionOptions, found: &Discovered) -> Result<Secret, AuthError> {
        let id_token_path = ext.idp_id_token.as_deref().ok_or_else(|| {
            AuthError::Protocol(
                "enterprise sign-in needs --idp-id-token FILE|- (the ID token from your identity provider)".into(),
            )
        })?;
        let endpoint = match (&ext.idp_token_endpoint, &ext.idp_issuer) {
            (Some(e), _) => e.clone(),
            (None, Some(issuer)) => discovery::fetch_server_metadata(self.agent, issuer)?
                .map(|m| m.token_endpoint)
                .ok_or_else(|| {
                    AuthError::Discovery(format!(
                        "no metadata found for the identity provider {issuer}: pass --idp-token-endpoint"
                    ))
                })?,
            (None, None) => {
                return Err(AuthError::Protocol(
                    "enterprise sign-in needs --idp-token-endpoint URL (or --idp-issuer URL)".into(),
                ))
            }
        };
        check_idp_url(&endpoint)?;
        let id_token = read_jwt(id_token_path, "--idp-id-token")?;
        // The IdP sees no DPoP proof: the ID-JAG is not a token for it.
        let http = TokenHttp::new(self.agent, None, self.nonces);
        let auth = match (
            ext.idp_client_id.as_deref(),
            ext.idp_client_secret.as_deref(),
        ) {
            (Some(id), Some(secret)) => ClientAuth::Basic(id, secret),
            (id, _) => ClientAuth::None(id),
        };
        let params = [
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG_TYPE),
            ("audience", found.server.issuer.as_str()),
            ("resource", found.resource.as_str()),
            ("subject_token", id_token.expose()),
            ("subject_token_type", ID_TOKEN_TYPE),
        ];
        let body = token_request(&http, &endpoint, &params, &auth)?;
        let issued = body.get("issued_token_type").and_then(Value::as_str);
        if issued.is_some_and(|t| t != ID_JAG_TYPE) {
            return Err(AuthError::Token(format!(
                "{endpoint} issued a {} instead of an ID-JAG",
                elicit_core::text::sanitize::sanitize_line(issued.unwrap_or_default())
            )));
        }
        body.get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(|t| Secret(t.to_string()))
            .ok_or_else(|| AuthError::Token(format!("{endpoint} answered without an ID-JAG")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_assertion_claims() {
        let (key, _) = SigningKey::generate_es256().unwrap();
        let jwt = client_assertion(&key, "cid", "https://as.example").unwrap();
        let c = unverified_claims(&jwt).unwrap();
        assert_eq!(c["iss"], "cid");
        assert_eq!(c["sub"], "cid");
        assert_eq!(c["aud"], "https://as.example");
        let exp = c["exp"].as_u64().unwrap();
        assert!(exp > now() && exp <= now() + ASSERTION_LIFETIME);
        assert_ne!(
            unverified_claims(&client_assertion(&key, "cid", "a").unwrap()).unwrap()["jti"],
            c["jti"]
        );
    }
}
