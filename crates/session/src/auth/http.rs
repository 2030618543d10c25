//! The one HTTP client of sign-in: the transport's `ureq` Agent.
//!
//! The `oauth2` crate's own `ureq` feature is built for ureq 2; elicit uses
//! ureq 3 (blocking, rustls) for its transport, so [`OAuthHttp`] adapts ureq
//! 3 to oauth2's [`oauth2::SyncHttpClient`] (a closure over
//! `http::Request<Vec<u8>>`, the same `http` 1.x types ureq 3 speaks). One
//! agent means one TLS setup, one proxy setting and one connection pool
//! for the MCP requests and the OAuth ones.

use std::time::Duration;

use ureq::http;
use ureq::RequestExt;

use super::AuthError;

/// The most a metadata document, registration or token response may be.
const MAX_BODY: u64 = 1024 * 1024;

/// How long one OAuth request may take (the MCP `--timeout` governs MCP
/// requests, not these).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A response reduced to what sign-in reads.
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Runs one request on `agent`: statuses are returned, not turned into
/// errors; redirects are not followed (a token POST must not be replayed
/// elsewhere; metadata URLs are fetched as given).
pub fn send(
    agent: &ureq::Agent,
    request: http::Request<impl ureq::AsSendBody>,
    follow_redirects: bool,
) -> Result<http::Response<Vec<u8>>, ureq::Error> {
    let resp = request
        .with_agent(agent)
        .configure()
        .http_status_as_error(false)
        .max_redirects(if follow_redirects { 5 } else { 0 })
        .max_redirects_will_error(false)
        .timeout_global(Some(REQUEST_TIMEOUT))
        .build()
        .run()?;
    let (parts, mut body) = resp.into_parts();
    let bytes = body.with_config().limit(MAX_BODY).read_to_vec()?;
    Ok(http::Response::from_parts(parts, bytes))
}

/// How many same-origin redirects a metadata GET follows.
const MAX_REDIRECTS: usize = 5;

/// GET `url` asking for JSON. Redirects are followed within the URL's
/// origin only (and from http to https on the same host): a metadata
/// document that redirects to another origin is refused, not fetched from
/// there, since the document decides where codes and secrets go.
pub(crate) fn get_json(agent: &ureq::Agent, url: &str) -> Result<Reply, AuthError> {
    let mut at = url.to_string();
    for _ in 0..=MAX_REDIRECTS {
        let req = http::Request::get(&at)
            .header("Accept", "application/json")
            .body(())
            .map_err(|e| AuthError::Network {
                url: at.clone(),
                detail: e.to_string(),
            })?;
        // A pooled connection the server closed meanwhile (Node closes
        // idle ones after 5 s) fails at once: a GET is safe to send again.
        let resp = match send(agent, req.clone(), false) {
            Err(e) if dropped_connection(&e) => send(agent, req, false),
            other => other,
        }
        .map_err(|e| AuthError::Network {
            url: at.clone(),
            detail: e.to_string(),
        })?;
        let location = resp
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let reply = reply(resp);
        let Some(location) = location.filter(|_| (300..400).contains(&reply.status)) else {
            return Ok(reply);
        };
        let from = url::Url::parse(&at).map_err(|e| AuthError::Network {
            url: at.clone(),
            detail: e.to_string(),
        })?;
        let to = from.join(&location).map_err(|_| {
            AuthError::Discovery(format!(
                "{at} redirects to {:?}, which is not a URL",
                elicit_core::text::sanitize::sanitize_line(&location)
            ))
        })?;
        if !same_origin_or_upgrade(&from, &to) {
            return Err(AuthError::Discovery(format!(
                "{at} redirects to another origin ({}): metadata is only read from the server it names, so the redirect is not followed",
                elicit_core::text::sanitize::sanitize_line(to.as_str())
            )));
        }
        at = to.to_string();
    }
    Err(AuthError::Discovery(format!(
        "{url} redirects more than {MAX_REDIRECTS} times"
    )))
}

/// The connection was closed under the request (reset, or closed before
/// the answer), as happens to a kept-alive connection the server dropped.
/// (The transport's `stale_connection` rule, for the MCP requests.)
fn dropped_connection(e: &ureq::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e, ureq::Error::Io(io) if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof))
}

/// `to` has the origin of `from`, or is its https version (same host).
fn same_origin_or_upgrade(from: &url::Url, to: &url::Url) -> bool {
    from.origin() == to.origin()
        || (from.scheme() == "http"
            && to.scheme() == "https"
            && from.host() == to.host()
            && to.port().is_none())
}

/// POST a JSON body to `url`.
pub(crate) fn post_json(
    agent: &ureq::Agent,
    url: &str,
    body: &serde_json::Value,
) -> Result<Reply, AuthError> {
    let req = http::Request::post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(serde_json::to_vec(body).unwrap_or_default())
        .map_err(|e| AuthError::Network {
            url: url.to_string(),
            detail: e.to_string(),
        })?;
    let resp = send(agent, req, false).map_err(|e| AuthError::Network {
        url: url.to_string(),
        detail: e.to_string(),
    })?;
    Ok(reply(resp))
}

fn reply(resp: http::Response<Vec<u8>>) -> Reply {
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    Reply {
        status: resp.status().as_u16(),
        content_type,
        body: resp.into_body(),
    }
}

/// The error type oauth2 sees from [`OAuthHttp`]. Its text names the
/// network problem only: never a request or response body (they carry
/// codes, secrets and tokens).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpFailure(pub String);

/// oauth2's blocking HTTP client, on the transport's agent.
pub struct OAuthHttp<'a>(pub &'a ureq::Agent);

impl oauth2::SyncHttpClient for OAuthHttp<'_> {
    type Error = HttpFailure;

    fn call(&self, request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, HttpFailure> {
        send(self.0, request, false).map_err(|e| HttpFailure(e.to_string()))
    }
}
