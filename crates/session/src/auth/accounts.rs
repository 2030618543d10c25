//! `elicit auth list` and `elicit auth logout`: the stored sign-ins, never
//! their secrets.

use std::path::PathBuf;

use std::time::Duration;

use super::store::{self, server_key, TokenStore};
use super::{one_line, AuthError};

/// `elicit auth list`: one line per stored server, no secrets.
pub fn list(store_dir: Option<PathBuf>) -> Result<String, AuthError> {
    let store = match store_dir {
        Some(d) => TokenStore::at(d),
        None => TokenStore::open_default()?,
    };
    let (entries, bad) = store.list()?;
    let mut out = String::new();
    if entries.is_empty() && bad.is_empty() {
        out.push_str(&format!(
            "no stored sign-ins (store: {})\n",
            store.dir().display()
        ));
    }
    let now = store::now();
    for s in entries {
        let status = match (s.issuer.as_ref(), s.expires_at) {
            (None, _) => "registered, not signed in".to_string(),
            (Some(_), Some(t)) if t <= now => {
                if s.has_refresh_token {
                    "expired (will refresh)".into()
                } else {
                    "expired".into()
                }
            }
            (Some(_), Some(t)) => format!(
                "valid for {}",
                humantime::format_duration(Duration::from_secs(t - now))
            ),
            (Some(_), None) => "signed in".into(),
        };
        // A DPoP-bound token (RFC 9449) is useless without its key, which
        // the entry keeps (and `auth logout` removes with it).
        let status = if s.dpop_bound {
            format!("{status}, DPoP-bound")
        } else {
            status
        };
        // Every field on its own line (the store holds what servers said).
        out.push_str(&format!(
            "{}{}\n  {status}{}{}\n",
            one_line(&s.server_url),
            s.server_name
                .map(|n| format!("  ({})", one_line(&n)))
                .unwrap_or_default(),
            s.issuer
                .map(|i| format!(" · issuer {}", one_line(&i)))
                .unwrap_or_default(),
            s.scope
                .map(|sc| format!(" · scope {}", one_line(&sc)))
                .unwrap_or_default(),
        ));
    }
    for b in bad {
        out.push_str(&format!("warning: {}\n", one_line(&b.to_string())));
    }
    Ok(out)
}

/// `elicit auth logout [URL]`: forgets one server's tokens and client
/// registrations, or every server's.
pub fn logout(url: Option<&str>, store_dir: Option<PathBuf>) -> Result<String, AuthError> {
    let store = match store_dir {
        Some(d) => TokenStore::at(d),
        None => TokenStore::open_default()?,
    };
    let key = url.map(server_key).transpose()?;
    let removed = store.remove(key.as_deref())?;
    Ok(match (key, removed.len()) {
        (Some(k), 0) => format!("nothing stored for {k}\n"),
        (Some(k), _) => format!("signed out of {k}\n"),
        (None, n) => format!("removed {n} stored sign-in(s)\n"),
    })
}
