//! Discovery: which authorization server protects a resource, and where its
//! endpoints are.
//!
//! - Protected resource metadata (RFC 9728): the `resource_metadata` URL of
//!   the `WWW-Authenticate` challenge, else the well-known URIs in the MCP
//!   spec's order (path-inserted, then root).
//! - Authorization server metadata: RFC 8414 then OpenID Connect Discovery,
//!   in the spec's path-insertion order.
//! - MCP 2025-03-26 servers without resource metadata: the authorization
//!   server is the MCP server's origin, and without metadata its endpoints
//!   are `/authorize`, `/token` and `/register` there.

use serde::Deserialize;
use url::Url;

use super::http::{get_json, Reply};
use super::AuthError;

/// What the protected resource says about itself (RFC 9728 §2).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ResourceMetadata {
    #[serde(default)]
    /// `resource`: the protected resource's identifier.
    pub resource: Option<String>,
    #[serde(default)]
    /// `authorization_servers`: their issuers.
    pub authorization_servers: Vec<String>,
    #[serde(default)]
    /// `scopes_supported`.
    pub scopes_supported: Option<Vec<String>>,
    /// RFC 9449 §5.2: the resource takes DPoP-bound tokens only.
    #[serde(default)]
    pub dpop_bound_access_tokens_required: bool,
}

/// Authorization server metadata (RFC 8414 §2), the fields sign-in uses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServerMetadata {
    /// `issuer`.
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    #[serde(default)]
    /// `registration_endpoint`, for dynamic client registration.
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    /// `scopes_supported`.
    pub scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    /// `code_challenge_methods_supported` (PKCE).
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    /// `token_endpoint_auth_methods_supported`.
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    /// `grant_types_supported`.
    pub grant_types_supported: Option<Vec<String>>,
    #[serde(default)]
    /// `client_id_metadata_document_supported`.
    pub client_id_metadata_document_supported: bool,
    #[serde(default)]
    /// `authorization_response_iss_parameter_supported` (RFC 9207).
    pub authorization_response_iss_parameter_supported: bool,
    /// RFC 9449 §5.1: the proof algorithms the server takes.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// RFC 8414: the algorithms of `private_key_jwt` client assertions.
    #[serde(default)]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// No metadata document was found: these are the 2025-03-26 default
    /// endpoints at the server's origin.
    #[serde(skip)]
    pub(crate) defaults_only: bool,
}

/// Where sign-in goes for one resource.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The `resource` parameter (RFC 8707): the metadata's `resource`, else
    /// the MCP server URL without fragment.
    pub resource: String,
    /// Protected resource metadata, when the server publishes it.
    pub prm: Option<ResourceMetadata>,
    /// The authorization server's metadata.
    pub server: ServerMetadata,
}

/// The well-known protected resource metadata URIs for `server_url`, in
/// the spec's order: path-inserted first (when the URL has a path), then
/// the root.
pub(crate) fn prm_candidates(server_url: &Url) -> Vec<Url> {
    let mut out = Vec::new();
    let path = server_url.path().trim_end_matches('/');
    let mut base = server_url.clone();
    base.set_query(None);
    base.set_fragment(None);
    if !path.is_empty() {
        let mut u = base.clone();
        u.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
        out.push(u);
    }
    let mut root = base;
    root.set_path("/.well-known/oauth-protected-resource");
    out.push(root);
    out
}

/// The metadata URIs for an issuer, in the MCP spec's order.
pub(crate) fn server_metadata_candidates(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/').to_string();
    let mut base = issuer.clone();
    base.set_query(None);
    base.set_fragment(None);
    let at = |p: String| {
        let mut u = base.clone();
        u.set_path(&p);
        u
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// Reads a JSON document from a reply, or `None` when the reply is not one
/// (a 404, an HTML page, JSON of the wrong shape).
fn json_doc<T: serde::de::DeserializeOwned>(reply: &Reply) -> Option<T> {
    if !reply.is_success() {
        return None;
    }
    serde_json::from_slice(&reply.body).ok()
}

/// Fetches protected resource metadata: the challenge's URL first, then the
/// well-known URIs. `None` when the server publishes none (a 2025-03-26
/// server).
pub(crate) fn fetch_resource_metadata(
    agent: &ureq::Agent,
    server_url: &Url,
    from_header: Option<&str>,
) -> Result<Option<ResourceMetadata>, AuthError> {
    let mut candidates: Vec<String> = Vec::new();
    if let Some(h) = from_header {
        match server_url.join(h) {
            Ok(u) => candidates.push(u.to_string()),
            Err(_) => candidates.push(h.to_string()),
        }
    }
    candidates.extend(prm_candidates(server_url).into_iter().map(String::from));
    candidates.dedup();
    for url in candidates {
        let reply = get_json(agent, &url)?;
        if let Some(doc) = json_doc::<ResourceMetadata>(&reply) {
            if doc.authorization_servers.is_empty() {
                return Err(AuthError::Discovery(format!(
                    "the protected resource metadata at {url} lists no authorization server"
                )));
            }
            return Ok(Some(doc));
        }
    }
    Ok(None)
}

/// True when `resource` (from the metadata) may stand for `server_url`:
/// same scheme, host and port, and a path that is the server's path or a
/// parent of it on a segment boundary (RFC 9728 §3.3, MCP's resource
/// validation).
pub(crate) fn resource_matches(resource: &str, server_url: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.scheme() != server_url.scheme()
        || r.host_str() != server_url.host_str()
        || r.port_or_known_default() != server_url.port_or_known_default()
    {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server_url.path().trim_end_matches('/');
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// When `resource` (already matched) is a parent of the server URL rather
/// than the server itself: the token asked for is valid for every server
/// under it, which is worth saying.
pub(crate) fn parent_resource_warning(resource: &str, server_url: &Url) -> Option<String> {
    let path = |u: &Url| u.path().trim_end_matches('/').to_string();
    let parent = Url::parse(resource).is_ok_and(|r| path(&r) != path(server_url));
    parent.then(|| {
        format!(
            "{server_url} names the resource {} (a parent of its URL) in its metadata: the token elicit asks for will be valid for every server under {}, not only this one",
            elicit_core::text::sanitize::sanitize_line(resource),
            elicit_core::text::sanitize::sanitize_line(resource)
        )
    })
}

/// Two issuer identifiers are the same when equal as strings, ignoring one
/// trailing slash (`https://as.example` and `https://as.example/` name the
/// same issuer with an empty path).
pub(crate) fn same_issuer(a: &str, b: &str) -> bool {
    a == b || a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Fetches the authorization server's metadata. The document's `issuer`
/// must be the issuer the URL was built from (RFC 8414 §3.3): a document
/// naming another issuer is refused, not used.
pub(crate) fn fetch_server_metadata(
    agent: &ureq::Agent,
    issuer: &str,
) -> Result<Option<ServerMetadata>, AuthError> {
    let issuer_url = Url::parse(issuer).map_err(|e| {
        AuthError::Discovery(format!("authorization server {issuer:?} is not a URL: {e}"))
    })?;
    for url in server_metadata_candidates(&issuer_url) {
        let reply = get_json(agent, url.as_str())?;
        if let Some(doc) = json_doc::<ServerMetadata>(&reply) {
            if !same_issuer(&doc.issuer, issuer) {
                return Err(AuthError::Discovery(format!(
                    "the authorization server metadata at {url} names issuer {:?}, not {:?}: refusing to use it (RFC 8414 §3.3)",
                    elicit_core::text::sanitize::sanitize_line(&doc.issuer),
                    elicit_core::text::sanitize::sanitize_line(issuer)
                )));
            }
            // The issuer kept (and compared with `iss` later) is this
            // string, checked like every authorization server URL.
            check_as_url("issuer", &doc.issuer)?;
            return Ok(Some(doc));
        }
    }
    Ok(None)
}

/// The 2025-03-26 default endpoints at `origin`, for servers that publish
/// no metadata at all.
pub(crate) fn default_endpoints(origin: &Url) -> ServerMetadata {
    let at = |p: &str| {
        let mut u = origin.clone();
        u.set_path(p);
        u.set_query(None);
        u.set_fragment(None);
        u.to_string()
    };
    ServerMetadata {
        issuer: origin_string(origin),
        authorization_endpoint: at("/authorize"),
        token_endpoint: at("/token"),
        registration_endpoint: Some(at("/register")),
        defaults_only: true,
        ..Default::default()
    }
}

/// `scheme://host[:port]`, no trailing slash.
pub(crate) fn origin_string(u: &Url) -> String {
    u.origin().ascii_serialization()
}

/// Whether `u` names this machine: `localhost`, 127.0.0.0/8 or `[::1]`.
pub(crate) fn is_loopback(u: &Url) -> bool {
    match u.host() {
        Some(url::Host::Domain(d)) => d.trim_end_matches('.').eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Checks an authorization server URL (its issuer, or one of its
/// endpoints) before anything is sent to it: an absolute https URL, or
/// plain http to this machine only. MCP authorization requires https for
/// every authorization server endpoint: over plain http the code, the PKCE
/// verifier, secrets and tokens can be read on the way.
pub fn check_as_url(what: &str, raw: &str) -> Result<Url, AuthError> {
    let shown = elicit_core::text::sanitize::sanitize_line(raw);
    // The URL parser would quietly drop a newline or tab and encode a
    // space: what is checked, used and stored must be the string itself.
    if shown != raw || raw.chars().any(char::is_whitespace) {
        return Err(AuthError::Discovery(format!(
            "the authorization server's {what} {shown:?} holds spaces, line breaks or control characters: refused"
        )));
    }
    let u = Url::parse(raw).map_err(|e| {
        AuthError::Discovery(format!(
            "the authorization server's {what} {shown:?} is not a URL ({e})"
        ))
    })?;
    match u.scheme() {
        "https" => Ok(u),
        "http" if is_loopback(&u) => Ok(u),
        scheme => Err(AuthError::Discovery(format!(
            "the authorization server's {what} {shown} is not https ({scheme}): elicit sends codes, secrets and tokens only over https (plain http only to this machine: localhost, 127.0.0.1, [::1])"
        ))),
    }
}

/// The whole discovery for one resource.
pub fn discover(
    agent: &ureq::Agent,
    server_url: &Url,
    resource_metadata_url: Option<&str>,
) -> Result<Discovered, AuthError> {
    let prm = fetch_resource_metadata(agent, server_url, resource_metadata_url)?;
    let mut canonical = server_url.clone();
    canonical.set_fragment(None);
    let (issuer, resource) = match &prm {
        Some(p) => {
            let resource = match &p.resource {
                Some(r) if resource_matches(r, server_url) => {
                    if let Some(w) = parent_resource_warning(r, &canonical) {
                        super::warning::warn(&w);
                    }
                    r.clone()
                }
                Some(r) => {
                    return Err(AuthError::Discovery(format!(
                        "the protected resource metadata names resource {:?}, which is not {server_url}: refusing to sign in (a token for it could be used elsewhere)",
                        elicit_core::text::sanitize::sanitize_line(r)
                    )))
                }
                // RFC 9728 §2 and §3.3: `resource` is required, and is
                // what says the document is about this server.
                None => {
                    return Err(AuthError::Discovery(format!(
                        "the protected resource metadata for {server_url} has no `resource` (RFC 9728 requires it, and it is how elicit checks the document is about this server): refusing to sign in"
                    )))
                }
            };
            (p.authorization_servers[0].clone(), resource)
        }
        // 2025-03-26: the authorization server is the MCP server's origin.
        None => (origin_string(server_url), canonical.to_string()),
    };
    check_as_url("issuer", &issuer)?;
    let server = match fetch_server_metadata(agent, &issuer)? {
        Some(m) => m,
        None if prm.is_none() => {
            let origin = Url::parse(&issuer).map_err(|e| {
                AuthError::Discovery(format!("bad origin {issuer:?}: {e}"))
            })?;
            default_endpoints(&origin)
        }
        None => {
            return Err(AuthError::Discovery(format!(
                "no authorization server metadata found for {issuer} (tried RFC 8414 and OpenID Connect discovery)"
            )))
        }
    };
    for (name, value) in [
        (
            "authorization_endpoint",
            Some(&server.authorization_endpoint),
        ),
        ("token_endpoint", Some(&server.token_endpoint)),
        (
            "registration_endpoint",
            server.registration_endpoint.as_ref(),
        ),
    ] {
        if let Some(value) = value {
            check_as_url(name, value)?;
        }
    }
    Ok(Discovered {
        resource,
        prm,
        server,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn prm_order_is_path_then_root() {
        let c: Vec<String> = prm_candidates(&u("https://ex.com/public/mcp?x=1"))
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            c,
            vec![
                "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
                "https://ex.com/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(prm_candidates(&u("https://ex.com/")).len(), 1);
    }

    #[test]
    fn server_metadata_order_follows_the_spec() {
        let c: Vec<String> = server_metadata_candidates(&u("https://as.com/tenant1"))
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            c,
            vec![
                "https://as.com/.well-known/oauth-authorization-server/tenant1",
                "https://as.com/.well-known/openid-configuration/tenant1",
                "https://as.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let c: Vec<String> = server_metadata_candidates(&u("https://as.com"))
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            c,
            vec![
                "https://as.com/.well-known/oauth-authorization-server",
                "https://as.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn authorization_server_urls_are_https_or_loopback() {
        for ok in [
            "https://as.example.com/tenant",
            "http://127.0.0.1:9/token",
            "http://127.8.0.1/token",
            "http://localhost:8080",
            "http://LOCALHOST./x",
            "http://[::1]:9/token",
        ] {
            assert!(check_as_url("token_endpoint", ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://as.example.com/token",
            "http://0.0.0.0:9/token",
            "http://localhost.evil.example/token",
            "http://10.0.0.1/token",
            "ftp://as.example.com/",
            "javascript:alert(1)",
            "/token",
        ] {
            let e = check_as_url("token_endpoint", bad).unwrap_err().to_string();
            assert!(e.contains("token_endpoint"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_parent_resource_is_said_a_same_one_is_not() {
        let s = u("http://127.0.0.1:9/api/mcp?x=1");
        for same in ["http://127.0.0.1:9/api/mcp", "http://127.0.0.1:9/api/mcp/"] {
            assert_eq!(parent_resource_warning(same, &s), None, "{same}");
        }
        for parent in ["http://127.0.0.1:9/api", "http://127.0.0.1:9/"] {
            let w = parent_resource_warning(parent, &s).unwrap();
            assert!(w.contains(parent.trim_end_matches('/')), "{w}");
        }
    }

    #[test]
    fn resource_must_be_the_server_or_a_parent() {
        let s = u("http://127.0.0.1:9/api/mcp");
        assert!(resource_matches("http://127.0.0.1:9/api/mcp", &s));
        assert!(resource_matches("http://127.0.0.1:9/api", &s));
        assert!(resource_matches("http://127.0.0.1:9", &s));
        assert!(!resource_matches("http://127.0.0.1:9/ap", &s));
        assert!(!resource_matches("https://evil.example.com/mcp", &s));
        assert!(!resource_matches("http://127.0.0.1:10/api/mcp", &s));
        assert!(!resource_matches("not a url", &s));
    }
}
