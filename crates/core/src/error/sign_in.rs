//! Why signing in did not work: the kinds of [`AuthError`]. A sign-in
//! error is carried whole by [`super::ServerError::SignIn`], so a caller can
//! tell a refused sign-in from a network failure without reading text.
//! The text never holds a token or secret.

use std::time::Duration;

/// Why signing in did not work. The text never holds a token or secret.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("sign-in discovery failed: {0}")]
    /// Finding the authorization server failed.
    Discovery(String),
    #[error("cannot reach {url}: {detail}")]
    /// A sign-in URL could not be reached.
    Network {
        /// The URL.
        url: String,
        /// What went wrong, as shown.
        detail: String,
    },
    #[error("token store: {0}")]
    /// The token store could not be read or written.
    Store(String),
    #[error("sign-in listener: {0}")]
    /// The loopback listener for the browser's return failed.
    Listener(String),
    #[error("sign-in did not finish within {}s: the browser never came back to elicit", .0.as_secs())]
    /// The browser did not come back in time.
    Timeout(Duration),
    #[error("the authorization server refused the sign-in: {}{}", one_line(.error), .description.as_deref().map(|d| format!(" ({})", one_line(d))).unwrap_or_default())]
    /// The authorization server refused the sign-in.
    Denied {
        /// Its `error` code.
        error: String,
        /// Its `error_description`, if any.
        description: Option<String>,
    },
    #[error("sign-in failed: {0}")]
    /// The sign-in broke the protocol.
    Protocol(String),
    #[error("{}", issuer_message(.expected, .got.as_deref()))]
    /// The `iss` returned is not the authorization server's (a mix-up attack).
    IssuerMismatch {
        /// The issuer expected.
        expected: String,
        /// The issuer returned, if any.
        got: Option<String>,
    },
    #[error("the authorization server {issuer} does not support PKCE with S256: elicit will not sign in without it")]
    /// The authorization server does not offer PKCE with S256.
    NoPkce {
        /// The authorization server's issuer.
        issuer: String,
    },
    #[error("no way to identify elicit to {issuer}: it offers no dynamic client registration{cimd}; register a client there and pass --client-id (and --client-secret)")]
    /// No way to identify elicit to the authorization server.
    NoClient {
        /// The authorization server's issuer.
        issuer: String,
        /// A note on client ID metadata documents, as shown.
        cimd: String,
    },
    #[error("client registration failed: {0}")]
    /// Dynamic client registration failed.
    Registration(String),
    #[error("token request failed: {0}")]
    /// A token request failed.
    Token(String),
    #[error("{server} needs you to sign in, and nobody can be asked (--no-input, or no terminal) and no --browser was given: run the command once on a terminal without --no-input to sign in (the token is kept), or pass --browser PROGRAM to open the sign-in page")]
    /// A person must sign in, and nobody can be asked.
    NeedsPerson {
        /// The server.
        server: String,
    },
    #[error("sign-in {reason}")]
    /// The sign-in did not complete (`reason`, in words).
    NotSignedIn {
        /// Why, in words.
        reason: String,
    },
    #[error("cannot open the sign-in page with {program}: {detail}")]
    /// The browser could not be started.
    Browser {
        /// The browser program.
        program: String,
        /// What went wrong, as shown.
        detail: String,
    },
    #[error("{0}")]
    /// The server still refuses access after sign-in.
    Forbidden(String),
    #[error("{0}")]
    /// Sign-in was retried as often as allowed.
    TooManyAttempts(String),
    #[error("{0}")]
    /// A URL that cannot be used (not a server URL, or not HTTPS where required).
    BadUrl(String),
    /// Pre-registered client credentials and an issuer they do not belong to.
    #[error("{0}")]
    ClientIssuer(String),
}

/// A single-line field from a server (an `error`, `error_description`,
/// issuer, scope) as it may be shown: on one line, without controls.
pub fn one_line(s: &str) -> String {
    crate::text::sanitize::sanitize_line(s)
}

fn issuer_message(expected: &str, got: Option<&str>) -> String {
    let expected = one_line(expected);
    let got = got.map(one_line);
    let got = got.as_deref();
    match got {
        Some(g) => format!(
            "the sign-in response names issuer {g:?}, not {expected:?}: refused (RFC 9207; a mix-up attack or a misconfigured server)"
        ),
        None => format!(
            "the sign-in response carries no `iss` although {expected} advertises it: refused (RFC 9207)"
        ),
    }
}
