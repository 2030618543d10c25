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
mod authenticator;
mod browser;
pub mod challenge;
mod consent;
pub mod discovery;
pub mod dpop;
pub mod flow;
pub mod grants;
pub mod hook;
pub mod http;
pub mod jwt;
pub mod loopback;
pub mod store;
mod warning;

pub use accounts::{list, logout};
pub use authenticator::Authenticator;
pub use browser::unattended_url;

use std::path::PathBuf;
use std::time::Duration;

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
