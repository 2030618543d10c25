//! Sign-in against a fake authorization server and protected resource,
//! both served on 127.0.0.1 by the shared fake in `common::fake_auth`.
//!
//! The fake authorization server verifies PKCE S256 itself, checks client
//! authentication, and records every request, so each test asserts on what
//! elicit really sent. The "browser" is either a `Resolver` that fetches
//! the authorization URL and follows the redirect to elicit's loopback
//! listener, or (under `no_input`) a `--browser` program doing the same
//! with curl.

use crate::common;
use crate::common::fake_auth::{call_echo, curl_browser, Config, FakeAuth, Iss, Req};
use crate::common::Test;

use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use elicit::auth::store::{Entry, Secret, TokenRecord, TokenStore};
use elicit::auth::{AuthError, AuthOptions, Authenticator};
use elicit::elicitation::contract::Answer;
use elicit::elicitation::resolve::{Elicitation, Pending, Resolver};
use elicit::error::ElicitError;

/// What the consent flow was shown: (server name, URL).
type Shown = Arc<Mutex<Vec<(Option<String>, String)>>>;

/// The person: accepts, then plays the browser (GET the authorization URL,
/// follow its redirect to the loopback listener).
struct Browser {
    shown: Shown,
}

fn browse(url: &str) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .into();
    let r = agent.get(url).call().unwrap();
    let to = r
        .headers()
        .get("location")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let _ = agent.get(&to).call();
}

impl Resolver for Browser {
    fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        assert_eq!(pending, Pending::Url);
        let url = e.params.url.clone().unwrap();
        self.shown
            .lock()
            .unwrap()
            .push((e.server.clone(), url.clone()));
        browse(&url);
        Ok(Answer::from_action(
            &e.request.id,
            elicit::Action::Accept,
            None,
        ))
    }
}

struct Setup {
    auth: Authenticator,
    shown: Shown,
    _dir: tempfile::TempDir,
}

fn setup(opts: AuthOptions) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let opts = AuthOptions {
        store_dir: Some(dir.path().join("tokens")),
        timeout: Some(Duration::from_secs(20)),
        server_name: Some("fake".into()),
        ..opts
    };
    let mut auth = Authenticator::new(opts, ureq::Agent::new_with_defaults());
    let shown = Arc::new(Mutex::new(Vec::new()));
    auth.set_person(Box::new(Browser {
        shown: shown.clone(),
    }));
    Setup {
        auth,
        shown,
        _dir: dir,
    }
}

#[test]
fn full_flow_with_dynamic_registration_pkce_resource_and_iss() {
    let fake = FakeAuth::start(Config::default());
    let mut s = setup(AuthOptions::default());
    assert_eq!(s.auth.authorization_header(&fake.url()), None);
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    assert_eq!(
        s.auth.authorization_header(&fake.url()).as_deref(),
        Some("Bearer SECRET-ACCESS-1")
    );
    // The consent flow saw the server name and the authorization URL.
    let shown = s.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].0.as_deref(), Some("fake"));
    assert!(shown[0].1.starts_with(&format!("{}/authorize?", fake.base)));
    // Order: resource metadata from the header, AS metadata, DCR, authorize, token.
    assert_eq!(
        fake.paths(),
        vec![
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server",
            "POST /register",
            "GET /authorize",
            "POST /token",
        ]
    );
    let reg = &fake.find("/register")[0];
    let j = reg.json.as_ref().unwrap();
    assert_eq!(j["application_type"], "native");
    assert_eq!(j["grant_types"][1], "refresh_token");
    assert!(j["redirect_uris"][0]
        .as_str()
        .unwrap()
        .starts_with("http://127.0.0.1:"));
    let a = &fake.find("/authorize")[0].query;
    assert_eq!(a["code_challenge_method"], "S256");
    assert_eq!(a["resource"], fake.url());
    assert_eq!(a["response_type"], "code");
    assert!(!a.contains_key("scope"), "no scopes known: scope omitted");
    let t = &fake.find("/token")[0].form;
    assert_eq!(t["resource"], fake.url());
    assert_eq!(t["redirect_uri"], a["redirect_uri"]);
    // A second authenticator (a second run) reuses the stored token.
    let dir = s._dir.path().join("tokens");
    let mut again = Authenticator::new(
        AuthOptions {
            store_dir: Some(dir),
            ..Default::default()
        },
        ureq::Agent::new_with_defaults(),
    );
    assert_eq!(
        again.authorization_header(&fake.url()).as_deref(),
        Some("Bearer SECRET-ACCESS-1")
    );
}

#[test]
fn discovery_falls_back_through_the_spec_order() {
    // No resource_metadata in the header, metadata only at the root;
    // the AS has a path and only OpenID discovery appended to it.
    let fake = FakeAuth::start(Config {
        prm_path: Some("/.well-known/oauth-protected-resource"),
        prm_resource: None,
        as_prefix: "/tenant1",
        as_metadata_path: Some("/tenant1/.well-known/openid-configuration".into()),
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    // The root PRM names the origin as resource: a parent of /mcp.
    s.auth
        .on_unauthorized(&fake.url(), Some("Bearer"), 401)
        .ok();
    let paths = fake.paths();
    assert_eq!(
        &paths[..5],
        &[
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-protected-resource",
            "GET /.well-known/oauth-authorization-server/tenant1",
            "GET /.well-known/openid-configuration/tenant1",
            "GET /tenant1/.well-known/openid-configuration",
        ]
    );
    assert!(!paths.contains(&"GET /.well-known/oauth-authorization-server".to_string()));
    assert!(paths.contains(&"POST /tenant1/token".to_string()));
    assert!(s.auth.authorization_header(&fake.url()).is_some());
}

#[test]
fn a_2025_03_26_server_uses_root_metadata_then_default_endpoints() {
    let fake = FakeAuth::start(Config {
        prm_path: None,
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    s.auth
        .on_unauthorized(&fake.url(), Some("Bearer"), 401)
        .unwrap();
    assert!(s.auth.authorization_header(&fake.url()).is_some());

    // No metadata at all: /authorize, /token, /register at the origin.
    let bare = FakeAuth::start(Config {
        prm_path: None,
        as_metadata_path: None,
        iss: Iss::Omit,
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    s.auth.on_unauthorized(&bare.url(), None, 401).unwrap();
    let paths = bare.paths();
    assert_eq!(
        &paths[paths.len() - 3..],
        &["POST /register", "GET /authorize", "POST /token"]
    );
}

#[test]
fn pre_registered_client_with_basic_and_post() {
    for method in ["client_secret_basic", "client_secret_post"] {
        let fake = FakeAuth::start(Config {
            registration: false,
            auth_methods: vec![method],
            client: Some(("pre-id", "pre-secret")),
            ..Default::default()
        });
        let mut s = setup(AuthOptions {
            client_id: Some("pre-id".into()),
            client_secret: Some("pre-secret".into()),
            ..Default::default()
        });
        s.auth
            .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        assert!(fake.find("/register").is_empty());
        let t = &fake.find("/token")[0];
        match method {
            "client_secret_basic" => {
                assert!(t.headers["authorization"].starts_with("Basic "));
                assert!(!t.form.contains_key("client_secret"));
            }
            _ => {
                assert!(!t.headers.contains_key("authorization"));
                assert_eq!(t.form["client_secret"], "pre-secret");
            }
        }
    }
}

#[test]
fn without_registration_or_client_id_the_error_says_what_to_pass() {
    let fake = FakeAuth::start(Config {
        registration: false,
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    let e = s
        .auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap_err();
    assert!(matches!(e, AuthError::NoClient { .. }), "{e}");
    assert!(e.to_string().contains("--client-id"));
}

#[test]
fn client_id_metadata_document_when_advertised() {
    let fake = FakeAuth::start(Config {
        cimd: true,
        ..Default::default()
    });
    let mut s = setup(AuthOptions {
        client_metadata_url: Some("https://example.com/elicit.json".into()),
        ..Default::default()
    });
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    assert!(fake.find("/register").is_empty());
    assert_eq!(
        fake.find("/authorize")[0].query["client_id"],
        "https://example.com/elicit.json"
    );
}

#[test]
fn iss_mismatch_and_missing_iss_are_refused_before_the_token_request() {
    for (mode, supported) in [(Iss::Wrong, true), (Iss::Wrong, false), (Iss::Omit, true)] {
        let fake = FakeAuth::start(Config {
            iss: mode,
            iss_supported: supported,
            ..Default::default()
        });
        let mut s = setup(AuthOptions::default());
        let e = s
            .auth
            .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
            .unwrap_err();
        assert!(
            matches!(e, AuthError::IssuerMismatch { .. }),
            "{mode:?}: {e}"
        );
        assert!(fake.find("/token").is_empty(), "{mode:?}: no token request");
    }
    // Not advertised and absent: fine.
    let fake = FakeAuth::start(Config {
        iss: Iss::Omit,
        iss_supported: false,
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
}

#[test]
fn refused_servers_no_pkce_wrong_resource_wrong_issuer() {
    let cases: Vec<(Config, &str)> = vec![
        (
            Config {
                pkce_methods: None,
                ..Default::default()
            },
            "PKCE",
        ),
        (
            Config {
                pkce_methods: Some(vec!["plain"]),
                ..Default::default()
            },
            "PKCE",
        ),
        (
            Config {
                prm_resource: Some("https://evil.example.com/mcp".into()),
                ..Default::default()
            },
            "evil.example.com",
        ),
        (
            Config {
                metadata_issuer: Some("https://attacker.example.com".into()),
                ..Default::default()
            },
            "attacker.example.com",
        ),
    ];
    for (cfg, says) in cases {
        let fake = FakeAuth::start(cfg);
        let mut s = setup(AuthOptions::default());
        let e = s
            .auth
            .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
            .unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
        assert!(fake.find("/authorize").is_empty(), "{e}");
        assert!(s.shown.lock().unwrap().is_empty());
    }
}

#[test]
fn scopes_from_header_then_resource_metadata_plus_offline_access() {
    let fake = FakeAuth::start(Config {
        prm_scopes: Some(vec!["mcp:read", "mcp:write"]),
        as_scopes: Some(vec!["mcp:read", "mcp:write", "offline_access"]),
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(Some("mcp:basic"))), 401)
        .unwrap();
    assert_eq!(
        fake.find("/authorize")[0].query["scope"],
        "mcp:basic offline_access"
    );

    let mut s = setup(AuthOptions::default());
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    assert_eq!(
        fake.find("/authorize")[1].query["scope"],
        "mcp:read mcp:write offline_access"
    );
}

#[test]
fn step_up_asks_for_the_union_and_stops_after_the_limit() {
    let fake = FakeAuth::start(Config::default());
    let mut s = setup(AuthOptions::default());
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(Some("mcp:basic"))), 401)
        .unwrap();
    let insufficient = format!(
        "{}, error=\"insufficient_scope\"",
        fake.challenge(Some("mcp:write"))
    );
    s.auth
        .on_unauthorized(&fake.url(), Some(&insufficient), 403)
        .unwrap();
    assert_eq!(
        fake.find("/authorize")[1].query["scope"],
        "mcp:basic mcp:write"
    );
    s.auth
        .on_unauthorized(&fake.url(), Some(&insufficient), 403)
        .unwrap();
    let e = s
        .auth
        .on_unauthorized(&fake.url(), Some(&insufficient), 403)
        .unwrap_err();
    assert!(matches!(e, AuthError::TooManyAttempts(_)), "{e}");
    assert_eq!(fake.find("/authorize").len(), 3);
    // A 403 that is not insufficient_scope is not a sign-in matter.
    let e = s
        .auth
        .on_unauthorized(&fake.url(), Some("Bearer"), 403)
        .unwrap_err();
    assert!(matches!(e, AuthError::Forbidden(_)), "{e}");
}

#[test]
fn expired_token_is_refreshed_before_asking_again() {
    let fake = FakeAuth::start(Config {
        expires_in: 1, // within the minute of slack: counts as expired
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    assert_eq!(
        s.auth.authorization_header(&fake.url()).as_deref(),
        Some("Bearer SECRET-ACCESS-2")
    );
    let t = fake.find("/token");
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].form["grant_type"], "refresh_token");
    assert_eq!(t[1].form["refresh_token"], "SECRET-REFRESH-1");
    assert_eq!(t[1].form["resource"], fake.url());
    // A 401 on a token: refresh once before a new sign-in.
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    assert_eq!(fake.find("/authorize").len(), 1, "no new sign-in");
    assert_eq!(fake.find("/token").len(), 3);
    // The next 401 is a full sign-in.
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    assert_eq!(fake.find("/authorize").len(), 2);
    assert_eq!(s.shown.lock().unwrap().len(), 2);
}

#[test]
fn no_input_launches_the_browser_program_or_explains() {
    let fake = FakeAuth::start(Config::default());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("browser.sh");
    std::fs::write(&script, "#!/bin/sh\nexec curl -sSL -o /dev/null \"$1\"\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut auth = Authenticator::new(
        AuthOptions {
            no_input: true,
            browser: Some(script.display().to_string()),
            store_dir: Some(dir.path().join("tokens")),
            timeout: Some(Duration::from_secs(20)),
            ..Default::default()
        },
        ureq::Agent::new_with_defaults(),
    );
    auth.on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    assert!(auth.authorization_header(&fake.url()).is_some());

    let fake = FakeAuth::start(Config::default());
    let mut auth = Authenticator::new(
        AuthOptions {
            no_input: true,
            store_dir: Some(dir.path().join("other")),
            ..Default::default()
        },
        ureq::Agent::new_with_defaults(),
    );
    let e = auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap_err();
    assert!(matches!(e, AuthError::NeedsPerson { .. }));
    assert!(e.to_string().contains("--browser"), "{e}");
    assert!(fake.find("/authorize").is_empty());
}

#[test]
fn store_files_are_private() {
    let fake = FakeAuth::start(Config::default());
    let s = {
        let mut s = setup(AuthOptions::default());
        s.auth
            .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
            .unwrap();
        s
    };
    let dir = s._dir.path().join("tokens");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    assert!(files
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "json")));
    for f in files {
        assert_eq!(mode(&f), 0o600, "{}", f.display());
    }
    // list shows the server, never the token; logout removes it.
    let listed = elicit::auth::list(Some(dir.clone())).unwrap();
    assert!(listed.contains(&fake.url()), "{listed}");
    assert!(!listed.contains("SECRET"), "{listed}");
    let out = elicit::auth::logout(Some(&fake.url()), Some(dir.clone())).unwrap();
    assert!(out.contains("signed out"), "{out}");
    assert!(elicit::auth::list(Some(dir))
        .unwrap()
        .contains("no stored sign-ins"));
}

#[test]
fn a_widened_store_directory_is_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("tokens");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    TokenStore::at(&d).update("http://x/mcp", |_| ()).unwrap();
    assert_eq!(
        std::fs::metadata(&d).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

fn token(n: u32) -> TokenRecord {
    TokenRecord {
        issuer: "http://as".into(),
        token_endpoint: "http://as/token".into(),
        access_token: Secret(format!("SECRET-{n}")),
        refresh_token: None,
        expires_at: None,
        scope: None,
        obtained_at: n as u64,
        ..Default::default()
    }
}

#[test]
fn concurrent_writers_never_corrupt_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("tokens");
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let d = d.clone();
            std::thread::spawn(move || {
                // Each thread opens its own store (its own lock descriptor),
                // as separate processes would.
                let store = TokenStore::at(&d);
                for i in 0..25u32 {
                    store
                        .update("http://shared/mcp", |e| {
                            e.clients.insert(format!("t{t}-{i}"), Default::default());
                            e.token = Some(token(t * 100 + i));
                        })
                        .unwrap();
                    store
                        .update(&format!("http://own-{t}/mcp"), |e| e.token = Some(token(i)))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let store = TokenStore::at(&d);
    let shared: Entry = store.load("http://shared/mcp").unwrap().unwrap();
    assert_eq!(shared.clients.len(), 8 * 25, "no update was lost");
    for t in 0..8 {
        let e = store.load(&format!("http://own-{t}/mcp")).unwrap().unwrap();
        assert_eq!(e.token.unwrap().access_token.expose(), "SECRET-24");
    }
    let (all, bad) = store.list().unwrap();
    assert_eq!(all.len(), 9);
    assert!(bad.is_empty());
    // No temporary files left behind.
    assert!(std::fs::read_dir(&d).unwrap().all(|f| !f
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".tmp")));
}

/// Separate processes writing one store: the test re-runs itself (this
/// binary, this test only) as four writers, told apart by the environment.
/// One test plays both parts, so no test passes by doing nothing.
#[test]
fn concurrent_processes_never_corrupt_the_store() {
    const ME: &str = "auth::concurrent_processes_never_corrupt_the_store";
    if let (Ok(dir), Ok(id)) = (
        std::env::var("AUTH_TEST_WRITER_DIR"),
        std::env::var("AUTH_TEST_WRITER_ID"),
    ) {
        let store = TokenStore::at(dir);
        for i in 0..30 {
            store
                .update("http://shared/mcp", |e| {
                    e.clients.insert(format!("p{id}-{i}"), Default::default());
                })
                .unwrap();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let kids: Vec<_> = (0..4)
        .map(|i| {
            std::process::Command::new(&exe)
                .args(["--exact", ME, "--nocapture"])
                .env("AUTH_TEST_WRITER_DIR", dir.path())
                .env("AUTH_TEST_WRITER_ID", i.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let e = TokenStore::at(dir.path())
        .load("http://shared/mcp")
        .unwrap()
        .unwrap();
    assert_eq!(e.clients.len(), 4 * 30);
}

#[test]
fn a_damaged_store_file_is_a_clear_error_not_a_crash() {
    let fake = FakeAuth::start(Config::default());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("tokens");
    let store = TokenStore::at(&d);
    store.update(&fake.url(), |_| ()).unwrap();
    let file = store.file_for(&fake.url());
    for garbage in [
        &b"{not json"[..],
        b"",
        b"\xff\xfe",
        b"[1,2]",
        b"{\"server_url\": 5}",
    ] {
        std::fs::write(&file, garbage).unwrap();
        let e = store.load(&fake.url()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("damaged") && text.contains("logout"),
            "{text}"
        );
        assert!(text.contains(&file.display().to_string()), "{text}");
        let mut auth = Authenticator::new(
            AuthOptions {
                store_dir: Some(d.clone()),
                no_input: true,
                ..Default::default()
            },
            ureq::Agent::new_with_defaults(),
        );
        assert_eq!(auth.authorization_header(&fake.url()), None);
        let e = auth
            .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
            .unwrap_err();
        assert!(matches!(e, AuthError::Store(_)), "{e}");
        let listed = elicit::auth::list(Some(d.clone())).unwrap();
        assert!(
            listed.contains("warning") && listed.contains("damaged"),
            "{listed}"
        );
    }
    elicit::auth::logout(Some(&fake.url()), Some(d.clone())).unwrap();
    assert!(store.load(&fake.url()).unwrap().is_none());
}

#[test]
fn no_token_or_secret_in_errors_or_debug() {
    // A flow that gets a token, then failures after it.
    let fake = FakeAuth::start(Config {
        auth_methods: vec!["client_secret_post"],
        client: Some(("pre-id", "PRE-SECRET-VALUE")),
        registration: false,
        ..Default::default()
    });
    let mut s = setup(AuthOptions {
        client_id: Some("pre-id".into()),
        client_secret: Some("PRE-SECRET-VALUE".into()),
        ..Default::default()
    });
    s.auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap();
    let mut texts = Vec::new();
    let insufficient = format!(
        "{}, error=\"insufficient_scope\"",
        fake.challenge(Some("x"))
    );
    for _ in 0..4 {
        if let Err(e) = s
            .auth
            .on_unauthorized(&fake.url(), Some(&insufficient), 403)
        {
            texts.push(format!("{e} {e:?}"));
        }
    }
    // A wrong secret: the token endpoint refuses.
    let mut bad = setup(AuthOptions {
        client_id: Some("pre-id".into()),
        client_secret: Some("WRONG-SECRET-VALUE".into()),
        ..Default::default()
    });
    let e = bad
        .auth
        .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
        .unwrap_err();
    texts.push(format!("{e} {e:?}"));
    texts.push(format!(
        "{:?}",
        AuthOptions {
            client_secret: Some("PRE-SECRET-VALUE".into()),
            ..Default::default()
        }
    ));
    let store = TokenStore::at(s._dir.path().join("tokens"));
    texts.push(format!("{:?}", store.load(&fake.url()).unwrap()));
    texts.push(elicit::auth::list(Some(s._dir.path().join("tokens"))).unwrap());
    assert!(!texts.is_empty());
    for t in &texts {
        for secret in [
            "SECRET-ACCESS",
            "SECRET-REFRESH",
            "PRE-SECRET",
            "WRONG-SECRET",
            "the-code",
        ] {
            assert!(!t.contains(secret), "{secret} leaked in: {t}");
        }
    }
}

#[test]
fn auth_list_and_logout_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::at(dir.path().join("tokens"));
    store
        .update("http://127.0.0.1:1/mcp", |e| {
            e.server_name = Some("demo".into());
            let mut t = token(1);
            // Server text with a terminal escape: shown sanitised.
            t.scope = Some("read\u{1b}[31m".into());
            e.token = Some(t);
        })
        .unwrap();
    let auth = |args: &str| Test::new().arg("auth").words(args).data_dir(dir.path());
    let out = auth("list").run().stdout().to_string();
    assert!(
        out.contains("http://127.0.0.1:1/mcp") && out.contains("demo"),
        "{out}"
    );
    assert!(!out.contains("SECRET") && !out.contains('\u{1b}'), "{out}");
    // A damaged file is reported, not fatal; logout clears everything.
    std::fs::write(store.file_for("http://bad/mcp"), "{oops").unwrap();
    auth("list").run().stdout_has("damaged");
    auth("logout http://127.0.0.1:1/mcp")
        .run()
        .stdout_has("signed out");
    auth("logout").run().stdout_has("removed 1");
    auth("list").run().stdout_has("no stored sign-ins");
    auth("logout")
        .arg("not a url")
        .status(1)
        .stdout("")
        .run()
        .stderr_has("not a server URL");
}

/// Every secret the fake hands out or is handed: none may show.
const SECRETS: [&str; 4] = [
    "SECRET-ACCESS",
    "SECRET-REFRESH",
    "PRE-SECRET-VALUE",
    "the-code",
];

fn assert_no_secret(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} shows {s}:\n{text}");
    }
}

/// A full sign-in through `elicit call` without a terminal (`--no-input`
/// and `--browser`): the tool result comes back, and no token, refresh
/// token, client secret or code appears on stdout, stderr (even with
/// `--verbose`) or in the `--log`; a second run reuses the stored token.
#[test]
fn call_signs_in_without_a_terminal_and_leaks_no_secret() {
    let fake = FakeAuth::start(Config {
        registration: false,
        auth_methods: vec!["client_secret_post"],
        client: Some(("pre-id", "PRE-SECRET-VALUE")),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("tokens");
    let log = dir.path().join("session.jsonl");
    let browser = curl_browser();
    let log_arg = log.to_str().unwrap();
    let r = call_echo(
        &store,
        &[
            "--browser",
            &browser,
            "--client-id",
            "pre-id",
            "--client-secret",
            "PRE-SECRET-VALUE",
            "--log",
            log_arg,
            "--verbose",
        ],
        &[],
        &fake.url(),
    )
    .run();
    assert!(r.stdout().contains("echo: hi"), "{}", r.stdout());
    assert_no_secret("stdout", r.stdout());
    assert_no_secret("stderr", r.stderr());
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("tools/call"), "{logged}");
    assert_no_secret("--log", &logged);
    // The MCP requests after initialize carried the token.
    let mcp: Vec<Req> = fake.find("/mcp");
    assert!(mcp
        .iter()
        .any(|r| r.headers.get("authorization").map(String::as_str)
            == Some("Bearer SECRET-ACCESS-1")));
    // The token is kept, readable by the user only.
    let files: Vec<_> = std::fs::read_dir(&store).unwrap().flatten().collect();
    assert!(!files.is_empty());
    for f in &files {
        if f.path().is_file() {
            let mode = f.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", f.path().display());
        }
    }
    // A second run: no browser, no sign-in, the stored token.
    let authorizations = fake.find("/authorize").len();
    let r = call_echo(&store, &[], &[], &fake.url()).run();
    assert!(r.stdout().contains("echo: hi"), "{}", r.stdout());
    assert_eq!(fake.find("/authorize").len(), authorizations);
    assert_no_secret("stderr", r.stderr());
}

/// Sign-in that cannot succeed ends with an error that names the problem
/// and holds no secret; without --browser under --no-input it says how to
/// sign in.
#[test]
fn failed_sign_in_errors_hold_no_secret() {
    let fake = FakeAuth::start(Config {
        reject_tokens: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("tokens");
    let browser = curl_browser();
    let r = call_echo(&store, &["--browser", &browser], &[], &fake.url())
        .status(1)
        .run();
    assert!(r.stderr().contains("401"), "{}", r.stderr());
    assert_no_secret("stderr", r.stderr());
    assert_no_secret("stdout", r.stdout());
    assert!(!r.stderr().contains("dcr-secret-XYZ"), "{}", r.stderr());

    let fresh = FakeAuth::start(Config::default());
    let r = call_echo(&dir.path().join("other"), &[], &[], &fresh.url())
        .status(1)
        .run();
    assert!(
        r.stderr().contains("needs you to sign in") && r.stderr().contains("--browser"),
        "{}",
        r.stderr()
    );
    assert!(fresh.find("/authorize").is_empty());
}

/// A pre-registered confidential client, against a server that offers only
/// the client credentials grant, signs in without any browser.
#[test]
fn client_credentials_grant_needs_no_browser() {
    let fake = FakeAuth::start(Config {
        registration: false,
        auth_methods: vec!["client_secret_basic"],
        client: Some(("pre-id", "PRE-SECRET-VALUE")),
        grants: vec!["client_credentials"],
        pkce_methods: None,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let r = call_echo(
        &dir.path().join("tokens"),
        &[
            "--client-id",
            "pre-id",
            "--client-secret",
            "PRE-SECRET-VALUE",
        ],
        &[],
        &fake.url(),
    )
    .run();
    assert!(r.stdout().contains("echo: hi"));
    assert!(fake.find("/authorize").is_empty());
    let t = &fake.find("/token")[0];
    assert_eq!(t.form["grant_type"], "client_credentials");
    assert_eq!(t.form["resource"], fake.url());
    assert_no_secret("stderr", r.stderr());
}

/// The done-when check of sign-in on a terminal: `elicit call URL --tool …`
/// against a protected server shows the sign-in link through the URL flow
/// and asks before opening it; the (stub) browser reaches elicit's loopback
/// listener and the waiting screen ends by itself, without a key; the tool
/// result is printed. A second run reuses the stored token without asking.
#[test]
fn call_on_a_terminal_asks_opens_finishes_by_itself_then_reuses_the_token() {
    let fake = FakeAuth::start(Config::default());
    let store = tempfile::tempdir().unwrap();
    let store_path = store.path().join("tokens");
    let args = [
        "call",
        "--protocol",
        "2025-11-25",
        "--browser",
        &curl_browser(),
        "--tool",
        "echo",
        "--arg",
        "text=hi",
        &fake.url(),
    ]
    .map(str::to_string);
    let mut p = Test::new()
        .stdin("")
        .args(&args)
        .env("ELICIT_DATA_DIR", store_path.to_str().unwrap())
        .pty();
    p.expect("asks you to open a link")
        .expect("Sign in to")
        .expect("127.0.0.1")
        .expect("nothing opens until you choose it")
        .answer("What do you want to do?", common::ENTER)
        .expect("opened in")
        .expect("done after");
    let f = p.finish();
    assert_eq!(f.json()["content"][0]["text"], "echo: hi");
    assert_eq!(fake.find("/authorize").len(), 1);
    assert_no_secret("the terminal", &f.screen_text());

    let mut p = Test::new()
        .stdin("")
        .args(&args)
        .env("ELICIT_DATA_DIR", store_path.to_str().unwrap())
        .pty();
    let f = p.finish();
    assert_eq!(f.json()["content"][0]["text"], "echo: hi");
    assert!(
        !f.screen_text().contains("asks you to open a link"),
        "{}",
        f.screen_text()
    );
    assert_eq!(fake.find("/authorize").len(), 1, "no second sign-in");
}
