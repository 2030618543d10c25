//! The token store: one JSON file per MCP server URL in
//! `$ELICIT_DATA_DIR/tokens`, else `elicit/tokens` in the user's data
//! directory ([`elicit_platform::fs::user_data_dir`]: `$XDG_DATA_HOME`,
//! else `~/.local/share`; `~/Library/Application Support` on macOS;
//! `%LOCALAPPDATA%` on Windows, where the modes below are access lists,
//! owner-only and protected, and owners and lists are read back from each
//! file's security descriptor as the uid and mode are on Unix).
//!
//! Safety rules, each tested:
//! - the directory is 0700 and every file 0600 (created so, never widened);
//! - every change is a read-modify-write under an exclusive `flock` on
//!   `tokens/.lock`, and lands by writing a temporary file and renaming it
//!   over the old one, so concurrent elicit processes never interleave and a
//!   crash never leaves half a file;
//! - a file that cannot be read as a store entry is a clear error naming the
//!   file and how to clear it, never a panic;
//! - what another user could have written is never trusted: the directory
//!   must be the user's own (a wider mode is tightened), and an entry (or
//!   the lock) that is a symbolic link, not a regular file, not owned by
//!   the user or writable by group or others is refused, checked on the
//!   open descriptor; temporary files are created exclusively
//!   (`O_EXCL|O_NOFOLLOW`) under unpredictable names, so nothing planted
//!   in the directory is ever written through;
//! - secrets never appear in `Debug` output or error text.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::AuthError;
use elicit_platform::fs as pfs;

/// The key of a server in the store: its URL without fragment.
pub(crate) fn server_key(url: &str) -> Result<String, AuthError> {
    let mut u = url::Url::parse(url)
        .map_err(|e| AuthError::BadUrl(format!("{url:?} is not a server URL: {e}")))?;
    u.set_fragment(None);
    Ok(u.to_string())
}

/// The file of the store that binds pre-registered client ids to the one
/// issuer each may be presented to (not a `.json` entry: `list` skips it).
const CLIENT_ISSUERS: &str = "client-issuers";

/// The largest store file read (a real one is a few KiB).
const MAX_FILE: u64 = 1024 * 1024;

/// A string that is never shown: `Debug` prints `<redacted>`.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Secret {
    /// The secret's text.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// How this client identifies itself to one authorization server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    /// The client id.
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The client secret, for a confidential client.
    pub client_secret: Option<Secret>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    pub auth_method: String,
    /// The redirect URI registered with it (dynamic registration only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    /// `dynamic`, `metadata-document` or `pre-registered`.
    pub source: String,
}

/// The tokens one authorization server issued for the resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The issuer that issued the tokens.
    pub issuer: String,
    /// Where to refresh them.
    pub token_endpoint: String,
    /// The access token.
    pub access_token: Secret,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The refresh token, if any.
    pub refresh_token: Option<Secret>,
    /// Seconds since the epoch; `None` when the server gave no lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes asked for (space-separated), for step-up unions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// When the tokens were obtained, in seconds since the epoch.
    pub obtained_at: u64,
    /// The DPoP key the token is bound to (RFC 9449), PKCS#8 in base64:
    /// kept only for a token the server issued as `token_type: DPoP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

impl TokenRecord {
    /// The `Authorization` scheme the token is sent with.
    pub fn scheme(&self) -> &'static str {
        if self.dpop_key.is_some() {
            "DPoP"
        } else {
            "Bearer"
        }
    }

    /// Expired, or within a minute of it.
    pub(crate) fn is_expired(&self, now: u64) -> bool {
        self.expires_at.is_some_and(|t| now + 60 >= t)
    }
}

/// Everything kept for one MCP server URL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The MCP server's URL.
    pub server_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The server's name, for listings.
    pub server_name: Option<String>,
    /// The `resource` parameter the tokens were issued for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Client registrations, by issuer: a client id is only ever shown to
    /// the authorization server that issued it.
    #[serde(default)]
    pub clients: BTreeMap<String, ClientRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The tokens, once signed in.
    pub token: Option<TokenRecord>,
}

/// What `elicit auth list` shows of an entry: no secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The MCP server's URL.
    pub server_url: String,
    /// The server's name, if known.
    pub server_name: Option<String>,
    /// The issuer of its tokens.
    pub issuer: Option<String>,
    /// The scopes granted.
    pub scope: Option<String>,
    /// When the access token expires, in seconds since the epoch.
    pub expires_at: Option<u64>,
    pub(crate) has_refresh_token: bool,
    /// The token is DPoP-bound (its key is in the entry).
    pub(crate) dpop_bound: bool,
    /// The file the entry is kept in.
    pub file: PathBuf,
}

/// The time now, in seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The token store directory.
#[derive(Debug, Clone)]
pub struct TokenStore {
    dir: PathBuf,
}

/// The default store directory, from the environment.
pub fn default_dir() -> Result<PathBuf, AuthError> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = env("ELICIT_DATA_DIR") {
        return Ok(PathBuf::from(d).join("tokens"));
    }
    if let Some(d) = pfs::user_data_dir() {
        return Ok(d.join("elicit").join("tokens"));
    }
    Err(AuthError::Store(format!(
        "no place for the token store: set ELICIT_DATA_DIR, {}",
        pfs::DATA_DIR_SOURCES
    )))
}

/// Holds the store's exclusive lock until dropped.
struct Lock(File);

impl Drop for Lock {
    fn drop(&mut self) {
        // Unlocking cannot fail in a way that matters (closing the file
        // releases the lock anyway).
        let _ = pfs::unlock(&self.0);
    }
}

fn store_err(what: &str, path: &Path, e: std::io::Error) -> AuthError {
    if pfs::is_link_refused(&e) {
        return AuthError::Store(format!(
            "{what} {}: it is a symbolic link, which the token store never follows; remove it",
            path.display()
        ));
    }
    AuthError::Store(format!("{what} {}: {e}", path.display()))
}

/// Refuses a store file that another user could have written: a file of
/// another owner, or one writable by group or others (what it says, an
/// endpoint that gets the refresh token and the client secret, or a token,
/// could be anyone's). What is judged is read from the open file, so the
/// file judged is the file read; what it says of others is returned.
fn check_trusted(path: &Path, f: &File) -> Result<pfs::Access, AuthError> {
    let fix = "remove it (elicit auth logout), then sign in again";
    let meta = f
        .metadata()
        .map_err(|e| store_err("cannot open", path, e))?;
    if !meta.is_file() {
        return Err(AuthError::Store(format!(
            "{} is not a regular file: not a token store file; {fix}",
            path.display()
        )));
    }
    let access = pfs::file_access(f).map_err(|e| store_err("cannot check", path, e))?;
    if !access.mine {
        return Err(AuthError::Store(format!(
            "{} belongs to another user ({}): elicit does not trust a token store file it did not write; {fix}",
            path.display(),
            access.who
        )));
    }
    if let Some(why) = &access.writable_by_others {
        return Err(AuthError::Store(format!(
            "{} is writable by other users ({why}): anyone could have changed it, so elicit does not trust it; {fix}",
            path.display(),
        )));
    }
    Ok(access)
}

/// A temporary file name next to `path` that nobody can guess ahead.
fn temp_name(path: &Path, attempt: u32) -> PathBuf {
    let mut seed = [0u8; 8];
    // Without the system's random source the exclusive create still
    // holds; the name is then only easier to guess.
    let _ = getrandom::fill(&mut seed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tag: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}.{}.{nanos:x}.{attempt}.{tag}.tmp",
        std::process::id()
    ))
}

impl TokenStore {
    /// A store in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        TokenStore { dir: dir.into() }
    }

    pub(crate) fn open_default() -> Result<Self, AuthError> {
        Ok(Self::at(default_dir()?))
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file for a server URL: a readable slug plus a hash of the URL,
    /// so distinct URLs never share a file and names stay portable.
    pub fn file_for(&self, server_url: &str) -> PathBuf {
        let digest = Sha256::digest(server_url.as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let slug: String = server_url
            .split_once("://")
            .map(|(_, rest)| rest)
            .unwrap_or(server_url)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(60)
            .collect();
        self.dir.join(format!("{slug}-{hex}.json"))
    }

    /// Creates the directory 0700 (and tightens it if it exists wider).
    fn ensure_dir(&self) -> Result<(), AuthError> {
        pfs::create_private_dir(&self.dir)
            .map_err(|e| store_err("cannot create the token store", &self.dir, e))?;
        let meta = fs::metadata(&self.dir)
            .map_err(|e| store_err("cannot read the token store", &self.dir, e))?;
        if !meta.is_dir() {
            return Err(AuthError::Store(format!(
                "the token store {} is not a directory",
                self.dir.display()
            )));
        }
        let access = pfs::dir_access(&self.dir)
            .map_err(|e| store_err("cannot read the token store", &self.dir, e))?;
        if !access.mine {
            return Err(AuthError::Store(format!(
                "the token store {} belongs to another user ({}): elicit keeps and reads tokens only in a directory of yours (set ELICIT_DATA_DIR to one)",
                self.dir.display(),
                access.who
            )));
        }
        if access.open_to_others {
            pfs::make_private(&self.dir, &meta)
                .map_err(|e| store_err("cannot restrict the token store", &self.dir, e))?;
        }
        Ok(())
    }

    fn lock(&self) -> Result<Lock, AuthError> {
        self.ensure_dir()?;
        let path = self.dir.join(".lock");
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        let f = pfs::open_private(pfs::no_follow_non_blocking(&mut options), &path)
            .map_err(|e| store_err("cannot open the lock", &path, e))?;
        check_trusted(&path, &f)?;
        pfs::lock_exclusive(&f).map_err(|e| store_err("cannot lock", &path, e))?;
        Ok(Lock(f))
    }

    fn read_file(path: &Path) -> Result<Option<Entry>, AuthError> {
        Self::read_doc(path)
    }

    /// Reads one JSON document of the store (an entry, the client issuers).
    fn read_doc<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, AuthError> {
        // Not through a link; and a FIFO planted under the name must not
        // block the open (it is refused as not a regular file).
        let f = match pfs::no_follow_non_blocking(OpenOptions::new().read(true)).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_err("cannot open", path, e)),
        };
        if check_trusted(path, &f)?.open_to_others {
            // Readable by others (never written so by elicit): no wider
            // than it must be from now on.
            let _ = pfs::make_file_private(&f);
        }
        let mut bytes = Vec::new();
        f.take(MAX_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| store_err("cannot read", path, e))?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(AuthError::Store(format!(
                "{} is over {MAX_FILE} bytes: not a token store file; remove it (elicit auth logout URL)",
                path.display()
            )));
        }
        // The serde error names a line and column, never the content.
        serde_json::from_slice::<T>(&bytes).map(Some).map_err(|e| {
            AuthError::Store(format!(
                "{} is damaged (line {}, column {}); remove it with `elicit auth logout`, then sign in again",
                path.display(),
                e.line(),
                e.column()
            ))
        })
    }

    /// Writes `entry` to `path` through a temporary file and a rename.
    fn write_file(path: &Path, entry: &impl Serialize) -> Result<(), AuthError> {
        let text = serde_json::to_vec_pretty(entry).unwrap_or_default();
        // A new file, never one that exists (or a link planted under the
        // name): O_CREAT|O_EXCL|O_NOFOLLOW.
        let mut attempt = 0;
        let (tmp, mut f) = loop {
            let tmp = temp_name(path, attempt);
            let mut options = OpenOptions::new();
            options.create_new(true).write(true);
            match pfs::open_private(pfs::no_follow(&mut options), &tmp) {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                    attempt += 1;
                }
                Err(e) => return Err(store_err("cannot write", &tmp, e)),
            }
        };
        let written = f
            .write_all(&text)
            .and_then(|_| f.sync_all())
            .and_then(|_| fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(store_err("cannot write", path, e));
        }
        Ok(())
    }

    /// The entry for a server URL, if any.
    pub fn load(&self, server_url: &str) -> Result<Option<Entry>, AuthError> {
        if !self.dir.exists() {
            return Ok(None);
        }
        let _lock = self.lock()?;
        Self::read_file(&self.file_for(server_url))
    }

    /// Read-modify-write of one entry under the lock.
    pub fn update<T>(
        &self,
        server_url: &str,
        f: impl FnOnce(&mut Entry) -> T,
    ) -> Result<T, AuthError> {
        let _lock = self.lock()?;
        let path = self.file_for(server_url);
        let mut entry = Self::read_file(&path)?.unwrap_or_else(|| Entry {
            server_url: server_url.to_string(),
            ..Default::default()
        });
        let out = f(&mut entry);
        Self::write_file(&path, &entry)?;
        Ok(out)
    }

    /// The issuer a pre-registered client id is bound to, if any.
    pub fn client_issuer(&self, client_id: &str) -> Result<Option<String>, AuthError> {
        if !self.dir.exists() {
            return Ok(None);
        }
        let _lock = self.lock()?;
        let map: Option<BTreeMap<String, String>> = Self::read_doc(&self.dir.join(CLIENT_ISSUERS))?;
        Ok(map.and_then(|mut m| m.remove(client_id)))
    }

    /// Binds a pre-registered client id to one issuer (replacing an
    /// earlier binding: only an explicit `--client-issuer` does that).
    pub(crate) fn bind_client(&self, client_id: &str, issuer: &str) -> Result<(), AuthError> {
        let _lock = self.lock()?;
        let path = self.dir.join(CLIENT_ISSUERS);
        let mut map: BTreeMap<String, String> = Self::read_doc(&path)?.unwrap_or_default();
        if map.get(client_id).map(String::as_str) == Some(issuer) {
            return Ok(());
        }
        map.insert(client_id.to_string(), issuer.to_string());
        Self::write_file(&path, &map)
    }

    /// Every entry (damaged files are reported in the second list, not
    /// fatal: `auth list` still shows the rest).
    pub fn list(&self) -> Result<(Vec<Summary>, Vec<AuthError>), AuthError> {
        if !self.dir.exists() {
            return Ok((Vec::new(), Vec::new()));
        }
        let _lock = self.lock()?;
        let mut out = Vec::new();
        let mut bad = Vec::new();
        let rd = fs::read_dir(&self.dir)
            .map_err(|e| store_err("cannot list the token store", &self.dir, e))?;
        let mut paths: Vec<PathBuf> = rd
            .filter_map(|d| d.ok().map(|d| d.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        for path in paths {
            match Self::read_file(&path) {
                Ok(Some(e)) => out.push(Summary {
                    server_url: e.server_url,
                    server_name: e.server_name,
                    issuer: e.token.as_ref().map(|t| t.issuer.clone()),
                    scope: e.token.as_ref().and_then(|t| t.scope.clone()),
                    expires_at: e.token.as_ref().and_then(|t| t.expires_at),
                    has_refresh_token: e.token.as_ref().is_some_and(|t| t.refresh_token.is_some()),
                    dpop_bound: e.token.as_ref().is_some_and(|t| t.dpop_key.is_some()),
                    file: path,
                }),
                Ok(None) => {}
                Err(e) => bad.push(e),
            }
        }
        Ok((out, bad))
    }

    /// Forgets one server (by URL), or every server with `None`. Damaged
    /// files are removed too. Returns what was removed.
    pub(crate) fn remove(&self, server_url: Option<&str>) -> Result<Vec<PathBuf>, AuthError> {
        if !self.dir.exists() {
            return Ok(Vec::new());
        }
        let _lock = self.lock()?;
        let targets: Vec<PathBuf> = match server_url {
            Some(u) => vec![self.file_for(u)],
            None => fs::read_dir(&self.dir)
                .map_err(|e| store_err("cannot list the token store", &self.dir, e))?
                .filter_map(|d| d.ok().map(|d| d.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect(),
        };
        let mut removed = Vec::new();
        for p in targets {
            match fs::remove_file(&p) {
                Ok(()) => removed.push(p),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(store_err("cannot remove", &p, e)),
            }
        }
        // Forgetting every server forgets which issuer each client id
        // was bound to as well.
        if server_url.is_none() {
            let p = self.dir.join(CLIENT_ISSUERS);
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(store_err("cannot remove", &p, e)),
            }
        }
        Ok(removed)
    }
}
