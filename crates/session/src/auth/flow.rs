//! The OAuth steps after discovery: client identity, the authorization URL
//! (PKCE S256, `state`, `resource`), the code exchange and refresh.
//!
//! Token requests go through the `oauth2` crate: it builds the form bodies,
//! client authentication (HTTP Basic with RFC 6749 §2.3.1 encoding, or the
//! body), PKCE and the response parsing that a hand-written version would
//! have to get right on its own. Dynamic client registration (RFC 7591) is
//! not in `oauth2`; it is one JSON POST here.

use std::time::Duration;

use oauth2::basic::{BasicClient, BasicErrorResponseType, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use serde_json::json;

use super::discovery::ServerMetadata;
use super::dpop::TokenHttp;
use super::http::{post_json, HttpFailure};
use super::store::{now, ClientRecord, Secret, TokenRecord};
use super::AuthError;
use elicit_core::text::sanitize::sanitize_line;

pub(crate) const BASIC: &str = "client_secret_basic";
/// The client authenticates with its secret in the token request's body.
pub const POST: &str = "client_secret_post";
/// A public client: no client authentication.
pub(crate) const NONE: &str = "none";

/// The token endpoint authentication to use, from what the server lists
/// (RFC 8414: absent means `client_secret_basic`).
pub(crate) fn choose_auth_method(has_secret: bool, supported: Option<&[String]>) -> &'static str {
    if !has_secret {
        return NONE;
    }
    let Some(list) = supported else {
        return BASIC;
    };
    let has = |m: &str| list.iter().any(|x| x == m);
    if has(BASIC) {
        BASIC
    } else if has(POST) {
        POST
    } else if has(NONE) {
        NONE
    } else {
        BASIC
    }
}

/// The method to ask for at registration: a native app cannot keep a
/// secret, so `none` when the server allows it, else what it supports.
fn registration_auth_method(supported: Option<&[String]>) -> &'static str {
    match supported {
        None => NONE,
        Some(list) if list.iter().any(|m| m == NONE) => NONE,
        Some(list) if list.iter().any(|m| m == BASIC) => BASIC,
        Some(list) if list.iter().any(|m| m == POST) => POST,
        Some(_) => NONE,
    }
}

/// Dynamic client registration (RFC 7591) for a loopback redirect URI.
pub fn register(
    agent: &ureq::Agent,
    server: &ServerMetadata,
    endpoint: &str,
    redirect_uri: &str,
) -> Result<ClientRecord, AuthError> {
    let method = registration_auth_method(server.token_endpoint_auth_methods_supported.as_deref());
    let body = json!({
        "client_name": "elicit",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    let reply = post_json(agent, endpoint, &body)?;
    if !reply.is_success() {
        // The error body is the server's text (RFC 7591 §3.2.2), no secret.
        let detail: Option<String> = serde_json::from_slice::<serde_json::Value>(&reply.body)
            .ok()
            .and_then(|v| {
                let e = v.get("error")?.as_str()?.to_string();
                let d = v.get("error_description").and_then(|d| d.as_str());
                Some(match d {
                    Some(d) => format!("{}: {}", sanitize_line(&e), sanitize_line(d)),
                    None => sanitize_line(&e),
                })
            });
        return Err(AuthError::Registration(format!(
            "{endpoint} answered HTTP {}{}",
            reply.status,
            detail.map(|d| format!(" ({d})")).unwrap_or_default()
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&reply.body)
        .map_err(|_| AuthError::Registration(format!("{endpoint} did not answer with JSON")))?;
    let client_id = v
        .get("client_id")
        .and_then(|c| c.as_str())
        .filter(|c| !c.is_empty())
        .ok_or_else(|| AuthError::Registration(format!("{endpoint} returned no client_id")))?
        .to_string();
    let secret = v
        .get("client_secret")
        .and_then(|c| c.as_str())
        .map(|s| Secret(s.to_string()));
    let granted = v
        .get("token_endpoint_auth_method")
        .and_then(|m| m.as_str())
        .map(str::to_string);
    let auth_method = match granted {
        Some(m) => m,
        None if method == NONE && secret.is_some() => choose_auth_method(
            true,
            server.token_endpoint_auth_methods_supported.as_deref(),
        )
        .to_string(),
        None => method.to_string(),
    };
    Ok(ClientRecord {
        client_id,
        client_secret: secret,
        auth_method,
        redirect_uri: Some(redirect_uri.to_string()),
        source: "dynamic".into(),
    })
}

/// An oauth2 client for one authorization server and client identity.
fn client(
    server: &ServerMetadata,
    token_endpoint: &str,
    who: &ClientRecord,
    redirect_uri: Option<&str>,
) -> Result<
    BasicClient<
        oauth2::EndpointSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointSet,
    >,
    AuthError,
> {
    let bad = |what: &str, e: oauth2::url::ParseError| {
        AuthError::Discovery(format!(
            "the authorization server's {what} is not a URL: {e}"
        ))
    };
    let mut c = BasicClient::new(ClientId::new(who.client_id.clone()))
        .set_auth_uri(
            AuthUrl::new(server.authorization_endpoint.clone())
                .map_err(|e| bad("authorization_endpoint", e))?,
        )
        .set_token_uri(
            TokenUrl::new(token_endpoint.to_string()).map_err(|e| bad("token_endpoint", e))?,
        );
    if let Some(r) = redirect_uri {
        c = c.set_redirect_uri(RedirectUrl::new(r.to_string()).map_err(|e| bad("redirect", e))?);
    }
    match (who.auth_method.as_str(), &who.client_secret) {
        (BASIC, Some(s)) => {
            c = c
                .set_client_secret(ClientSecret::new(s.0.clone()))
                .set_auth_type(AuthType::BasicAuth)
        }
        (POST, Some(s)) => {
            c = c
                .set_client_secret(ClientSecret::new(s.0.clone()))
                .set_auth_type(AuthType::RequestBody)
        }
        // `none` (or a method elicit does not speak): the client id in
        // the body, no secret.
        _ => c = c.set_auth_type(AuthType::RequestBody),
    }
    Ok(c)
}

/// A prepared authorization request.
pub struct Authorization {
    /// The URL to open in the browser.
    pub url: String,
    /// The `state` the callback must return.
    pub state: String,
    verifier: PkceCodeVerifier,
    redirect_uri: String,
    resource: String,
    scopes: Vec<String>,
}

/// Builds the authorization URL: code flow, PKCE S256, a random `state`,
/// the scopes, and `resource` (RFC 8707).
pub fn authorization(
    server: &ServerMetadata,
    who: &ClientRecord,
    redirect_uri: &str,
    scopes: &[String],
    resource: &str,
) -> Result<Authorization, AuthError> {
    let c = client(server, &server.token_endpoint, who, Some(redirect_uri))?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = c
        .authorize_url(CsrfToken::new_random)
        .add_scopes(scopes.iter().map(|s| Scope::new(s.clone())))
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", resource.to_string())
        .url();
    Ok(Authorization {
        url: url.to_string(),
        state: state.secret().clone(),
        verifier,
        redirect_uri: redirect_uri.to_string(),
        resource: resource.to_string(),
        scopes: scopes.to_vec(),
    })
}

/// Maps oauth2's error onto ours without ever quoting a response body.
fn token_error(
    endpoint: &str,
    e: RequestTokenError<HttpFailure, oauth2::StandardErrorResponse<BasicErrorResponseType>>,
) -> AuthError {
    match e {
        RequestTokenError::ServerResponse(r) => AuthError::Token(format!(
            "{endpoint} refused: {}{}",
            sanitize_line(r.error().as_ref()),
            r.error_description()
                .map(|d| format!(" ({})", sanitize_line(d)))
                .unwrap_or_default()
        )),
        RequestTokenError::Request(f) => AuthError::Network {
            url: endpoint.to_string(),
            detail: f.0,
        },
        RequestTokenError::Parse(_, _) => AuthError::Token(format!(
            "{endpoint} answered with something that is not a token response"
        )),
        RequestTokenError::Other(s) => AuthError::Token(format!("{endpoint}: {s}")),
    }
}

/// How a token may be presented, from the token response's `token_type`
/// (RFC 6749 §7.1: the client must not use a token whose type it does not
/// understand). The one place that decides: a DPoP-capable sign-in passes
/// `dpop_requested` and gets [`TokenUse::DPoP`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenUse {
    /// `Authorization: Bearer …` (RFC 6750).
    Bearer,
    /// A DPoP-bound token (RFC 9449), only when DPoP was asked for.
    DPoP,
}

/// Decides on `token_type` (compared without regard to case, as RFC 6749
/// §5.1 says): `Bearer` is used as a bearer token; `DPoP` only when the
/// request asked for DPoP; anything else (`mac`, an extension) is refused,
/// never sent as Bearer.
pub(crate) fn token_use(
    endpoint: &str,
    token_type: &str,
    dpop_requested: bool,
) -> Result<TokenUse, AuthError> {
    let shown = elicit_core::text::sanitize::sanitize_line(token_type);
    if token_type.eq_ignore_ascii_case("bearer") {
        Ok(TokenUse::Bearer)
    } else if token_type.eq_ignore_ascii_case("dpop") {
        if dpop_requested {
            Ok(TokenUse::DPoP)
        } else {
            Err(AuthError::Token(format!(
                "{endpoint} issued a DPoP-bound token (token_type {shown}) that elicit did not ask for: it cannot be used as a Bearer token, so it is refused"
            )))
        }
    } else {
        Err(AuthError::Token(format!(
            "{endpoint} issued a token of type {shown:?}: elicit uses Bearer tokens only (RFC 6750) and never sends another kind as one, so it is refused"
        )))
    }
}

fn record(
    issuer: &str,
    token_endpoint: &str,
    t: &BasicTokenResponse,
    scopes: Option<String>,
    old_refresh: Option<Secret>,
    dpop_requested: bool,
) -> Result<TokenRecord, AuthError> {
    // The DPoP key is kept with the record by `TokenHttp::finish` when
    // this says DPoP.
    token_use(token_endpoint, t.token_type().as_ref(), dpop_requested)?;
    let at = now();
    Ok(TokenRecord {
        issuer: issuer.to_string(),
        token_endpoint: token_endpoint.to_string(),
        access_token: Secret(t.access_token().secret().clone()),
        // A refresh response may omit the refresh token: keep the old one.
        refresh_token: t
            .refresh_token()
            .map(|r| Secret(r.secret().clone()))
            .or(old_refresh),
        expires_at: t.expires_in().map(|d: Duration| at + d.as_secs()),
        scope: scopes,
        obtained_at: at,
        dpop_key: None,
    })
}

/// Exchanges the code (with the PKCE verifier, the same redirect URI and
/// the same `resource` as the authorization request).
pub fn exchange(
    http: &TokenHttp<'_>,
    server: &ServerMetadata,
    who: &ClientRecord,
    auth: Authorization,
    code: String,
) -> Result<TokenRecord, AuthError> {
    let c = client(
        server,
        &server.token_endpoint,
        who,
        Some(&auth.redirect_uri),
    )?;
    let scopes = auth.scopes;
    let t = c
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(auth.verifier)
        .add_extra_param("resource", auth.resource)
        .request(http)
        .map_err(|e| token_error(&server.token_endpoint, e))?;
    let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
    record(
        &server.issuer,
        &server.token_endpoint,
        &t,
        scope,
        None,
        http.dpop_requested(),
    )
}

/// Whether sign-in should use the client credentials grant (OAuth 2.1
/// §4.2; the MCP `oauth-client-credentials` extension) instead of the
/// browser: the client is pre-registered with a secret, and the server
/// offers `client_credentials` but not `authorization_code`. No person is
/// involved: the client itself is the one signing in.
pub(crate) fn wants_client_credentials(server: &ServerMetadata, who: &ClientRecord) -> bool {
    let grants = server.grant_types_supported.as_deref().unwrap_or_default();
    who.source == "pre-registered"
        && who.client_secret.is_some()
        && grants.iter().any(|g| g == "client_credentials")
        && !grants.iter().any(|g| g == "authorization_code")
}

/// The client credentials grant, with the scopes and `resource`.
pub fn client_credentials(
    http: &TokenHttp<'_>,
    server: &ServerMetadata,
    who: &ClientRecord,
    scopes: &[String],
    resource: &str,
) -> Result<TokenRecord, AuthError> {
    let c = client(server, &server.token_endpoint, who, None)?;
    let t = c
        .exchange_client_credentials()
        .add_scopes(scopes.iter().map(|s| Scope::new(s.clone())))
        .add_extra_param("resource", resource.to_string())
        .request(http)
        .map_err(|e| token_error(&server.token_endpoint, e))?;
    let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
    record(
        &server.issuer,
        &server.token_endpoint,
        &t,
        scope,
        None,
        http.dpop_requested(),
    )
}

/// Uses the refresh token (with `resource`).
pub fn refresh(
    http: &TokenHttp<'_>,
    old: &TokenRecord,
    who: &ClientRecord,
    resource: &str,
) -> Result<TokenRecord, AuthError> {
    let Some(rt) = &old.refresh_token else {
        return Err(AuthError::Token("no refresh token".into()));
    };
    super::discovery::check_as_url("token_endpoint", &old.token_endpoint)?;
    // The authorization endpoint is not used for a refresh.
    let server = ServerMetadata {
        issuer: old.issuer.clone(),
        authorization_endpoint: old.token_endpoint.clone(),
        token_endpoint: old.token_endpoint.clone(),
        ..Default::default()
    };
    let c = client(&server, &old.token_endpoint, who, None)?;
    let rt = RefreshToken::new(rt.0.clone());
    let t = c
        .exchange_refresh_token(&rt)
        .add_extra_param("resource", resource.to_string())
        .request(http)
        .map_err(|e| token_error(&old.token_endpoint, e))?;
    record(
        &old.issuer,
        &old.token_endpoint,
        &t,
        old.scope.clone(),
        old.refresh_token.clone(),
        http.dpop_requested(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_method_follows_what_is_advertised() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(choose_auth_method(true, None), BASIC);
        assert_eq!(choose_auth_method(true, Some(&l(&[POST]))), POST);
        assert_eq!(choose_auth_method(true, Some(&l(&[POST, BASIC]))), BASIC);
        assert_eq!(choose_auth_method(false, Some(&l(&[BASIC]))), NONE);
        assert_eq!(registration_auth_method(Some(&l(&[BASIC]))), BASIC);
        assert_eq!(registration_auth_method(Some(&l(&[BASIC, NONE]))), NONE);
        assert_eq!(registration_auth_method(None), NONE);
    }
}
