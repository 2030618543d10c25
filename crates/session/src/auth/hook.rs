//! The adapter between sign-in ([`super::Authenticator`]) and the HTTP
//! transport's credentials hook ([`crate::transport::http::Authenticator`]).
//!
//! It only translates: the server URL the person named is the resource
//! (the legacy SSE transport POSTs to a per-session endpoint URL, which is
//! not a resource to sign in to), and a sign-in failure becomes the
//! transport's error, prefixed with what elicit was doing.

use super::Authenticator;
use elicit_core::error::{ElicitError, ServerError};

/// [`Authenticator`] as the transport's credentials hook.
pub struct SignInHook {
    auth: Authenticator,
    server_url: String,
}

impl SignInHook {
    /// Signs in to `server_url` (the URL given to `call` or `proxy`).
    pub fn new(auth: Authenticator, server_url: &str) -> Self {
        SignInHook {
            auth,
            server_url: server_url.to_string(),
        }
    }
}

impl crate::transport::http::Authenticator for SignInHook {
    fn authorization(&mut self, _url: &str) -> Option<String> {
        self.auth.authorization_header(&self.server_url)
    }

    fn credentials(&mut self, method: &str, url: &str) -> Vec<(String, String)> {
        self.auth.request_credentials(&self.server_url, method, url)
    }

    fn dpop_nonce(&mut self, _url: &str, nonce: &str) {
        // Kept under the server the person named (the legacy SSE
        // endpoint is another URL of the same server).
        self.auth.dpop_nonce_seen(&self.server_url, nonce);
    }

    fn challenge(
        &mut self,
        _url: &str,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<bool, ElicitError> {
        self.auth
            .on_unauthorized(&self.server_url, www_authenticate, status)
            .map(|()| true)
            .map_err(|e| {
                // One line, whatever a server put in the fields the error
                // quotes: it cannot add lines of its own to elicit's output.
                ElicitError::Server(ServerError::SignIn {
                    server: elicit_core::text::sanitize::sanitize_line(&self.server_url),
                    status,
                    error: e,
                })
            })
    }
}
