//! Sign-in against hostile authorization servers and protected resources.
//!
//! Every server here is the shared fake of `common::fake_auth` on
//! 127.0.0.1, started by the test: a protected MCP server (the resource,
//! with its RFC 9728 metadata) and one or more authorization servers, each
//! on its own port, whose metadata, token and redirect answers a test
//! replaces with hooks. Every request
//! is recorded, so a test asserts on what elicit really sent (above all:
//! what it did not send, and to whom).

use crate::common;
use crate::common::fake_auth::{
    as_metadata, call_echo, curl_browser, Config, FakeAuth, Handler, Http, Req, Resp, ECHOED,
};
use crate::common::Test;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

/// An authorization server of these tests: it registers public clients,
/// and its token endpoint answers a Bearer `tok-1` (no refresh token) to
/// any request, checking nothing; its metadata offers client_secret_basic
/// and none.
fn as_config() -> Config {
    Config {
        auth_methods: vec!["client_secret_basic", "none"],
        register: Some(Arc::new(|_| {
            Resp::json(json!({"client_id": "dcr-client", "token_endpoint_auth_method": "none"}))
        })),
        token: Some(Arc::new(bearer_token)),
        ..Default::default()
    }
}

fn bearer_token(_: &Req) -> Resp {
    Resp::json(json!({
        "access_token": "tok-1",
        "token_type": "Bearer",
        "expires_in": 3600,
    }))
}

/// A protected MCP server at `/mcp` (and its metadata), protected by the
/// authorization server at `as_base`: it takes that server's `tok-…`
/// tokens and serves no authorization server of its own.
fn resource_config(as_base: &str) -> Config {
    Config {
        authorization_server: Some(as_base.into()),
        foreign_tokens: Some("tok-"),
        ..Default::default()
    }
}

/// `elicit call` of the echo tool on `server`'s MCP endpoint, in a store
/// of its own, signing in through the scripted browser (curl).
fn sign_in_to(server: &FakeAuth) -> Test {
    let dir = tempfile::tempdir().unwrap();
    call_echo(
        &dir.path().join("t"),
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", server.base),
    )
}

/// A resource protected by the authorization server at `as_base`.
fn resource_for(as_base: &str) -> FakeAuth {
    FakeAuth::start(resource_config(as_base))
}

/// A resource protected by the authorization server at `as_base` whose
/// metadata URL answers `prm(base, request)`; `strict`: `initialize`
/// needs a token too (as on most real servers), so sign-in happens while
/// connecting.
fn resource_answering(as_base: &str, prm: Handler, strict: bool) -> FakeAuth {
    FakeAuth::start(Config {
        prm: Some(prm),
        initialize_needs_token: strict,
        ..resource_config(as_base)
    })
}

/// An authorization server that offers only the client credentials grant
/// (no person involved: nothing stands between the secret and the wire).
fn client_credentials_as() -> FakeAuth {
    FakeAuth::start(Config {
        grants: vec!["client_credentials"],
        ..as_config()
    })
}

const SECRET: &str = "PRE-SECRET-VALUE";

/// Whether any request to `server` carried the client secret (HTTP Basic
/// or in the form).
fn saw_secret(server: &FakeAuth) -> bool {
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("pre-id:{SECRET}"));
    server.requests().iter().any(|r| {
        r.form.get("client_secret").map(String::as_str) == Some(SECRET)
            || r.headers
                .get("authorization")
                .is_some_and(|h| h.contains(&basic))
            || String::from_utf8_lossy(&r.body).contains(SECRET)
    })
}

// ---- 1. Pre-registered client credentials belong to one issuer ----------

/// `--client-issuer` names the one authorization server the client belongs
/// to: a server protected by another one gets neither the secret nor a
/// token request; the error names both issuers. The named one works.
#[test]
fn client_credentials_go_only_to_the_named_issuer() {
    let good = client_credentials_as();
    let evil = client_credentials_as();
    let server = resource_for(&evil.base);
    let dir = tempfile::tempdir().unwrap();
    let creds = [
        "--client-id",
        "pre-id",
        "--client-secret",
        SECRET,
        "--client-issuer",
        &good.base,
    ];
    let r = call_echo(
        &dir.path().join("t"),
        &creds,
        &[],
        &format!("{}/mcp", server.base),
    )
    .status(1)
    .run();
    assert!(evil.find("/token").is_empty(), "{:?}", evil.requests());
    assert!(!saw_secret(&evil));
    assert!(
        r.stderr().contains(&good.base) && r.stderr().contains(&evil.base),
        "{}",
        r.stderr()
    );
    assert!(r.stderr().contains("--client-issuer"), "{}", r.stderr());
    assert!(!r.stderr().contains(SECRET));

    let server = resource_for(&good.base);
    let r = call_echo(
        &dir.path().join("t"),
        &creds,
        &[],
        &format!("{}/mcp", server.base),
    )
    .run();
    assert!(r.stdout().contains("echo: hi"));
    assert!(saw_secret(&good));
}

/// Without `--client-issuer`, the first issuer the client is used with is
/// stored as its own; another server naming another issuer is refused,
/// also in a later run, before any request reaches that issuer's token
/// endpoint.
#[test]
fn client_credentials_are_bound_to_the_first_issuer() {
    let first = client_credentials_as();
    let other = client_credentials_as();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t");
    let creds = ["--client-id", "pre-id", "--client-secret", SECRET];
    let a = resource_for(&first.base);
    let r = call_echo(&store, &creds, &[], &format!("{}/mcp", a.base))
        .stdout(ECHOED)
        .run();
    assert!(saw_secret(&first));
    assert!(r.stderr().contains("bound to"), "{}", r.stderr());

    let b = resource_for(&other.base);
    let r = call_echo(&store, &creds, &[], &format!("{}/mcp", b.base))
        .status(1)
        .run();
    assert!(other.find("/token").is_empty(), "{:?}", other.requests());
    assert!(!saw_secret(&other));
    assert!(
        r.stderr().contains(&first.base) && r.stderr().contains(&other.base),
        "{}",
        r.stderr()
    );
    // Naming the other issuer explicitly re-binds the client.
    call_echo(
        &store,
        &[&creds[..], &["--client-issuer", &other.base]].concat(),
        &[],
        &format!("{}/mcp", b.base),
    )
    .stdout(ECHOED)
    .run();
    assert!(saw_secret(&other));
}

/// A secret from the environment goes to no issuer nobody named: with
/// ELICIT_CLIENT_ID/ELICIT_CLIENT_SECRET alone, the client credentials
/// grant is not tried and the error says to set ELICIT_CLIENT_ISSUER;
/// with it, sign-in works.
#[test]
fn an_environment_secret_needs_a_named_issuer() {
    let authz = client_credentials_as();
    let server = resource_for(&authz.base);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t");
    let env = [
        ("ELICIT_CLIENT_ID", "pre-id"),
        ("ELICIT_CLIENT_SECRET", SECRET),
    ];
    let url = format!("{}/mcp", server.base);
    let r = call_echo(&store, &[], &env, &url).status(1).run();
    assert!(authz.find("/token").is_empty(), "{:?}", authz.requests());
    assert!(!saw_secret(&authz));
    assert!(
        r.stderr().contains("ELICIT_CLIENT_ISSUER"),
        "{}",
        r.stderr()
    );
    assert!(!r.stderr().contains(SECRET));

    let named = [&env[..], &[("ELICIT_CLIENT_ISSUER", authz.base.as_str())]].concat();
    call_echo(&store, &[], &named, &url).stdout(ECHOED).run();
    assert!(saw_secret(&authz));
}

// ---- 2. Authorization servers: https only, no cross-origin redirects ---

/// An authorization server whose token endpoint is plain http on a host
/// that is not loopback (0.0.0.0 is not 127.0.0.0/8; port 9 is closed, so
/// nothing leaves the machine) is refused at discovery: no authorization
/// request, no browser, nothing sent in clear.
#[test]
fn plain_http_authorization_server_endpoints_are_refused() {
    for field in [
        "token_endpoint",
        "authorization_endpoint",
        "registration_endpoint",
    ] {
        let authz = FakeAuth::start(Config {
            meta: Some(Arc::new(move |_, m| {
                m[field] = json!("http://0.0.0.0:9/oauth")
            })),
            ..as_config()
        });
        let server = resource_for(&authz.base);
        let r = sign_in_to(&server).status(1).run();
        assert!(
            r.stderr().contains(field) && r.stderr().contains("not https"),
            "{field}: {}",
            r.stderr()
        );
        assert!(authz.find("/authorize").is_empty(), "{field}");
        assert!(authz.find("/register").is_empty(), "{field}");
    }
}

/// Metadata redirects are followed within the origin only: a protected
/// resource metadata or authorization server metadata URL that redirects
/// to another origin (which serves a document naming the right issuer, and
/// endpoints of its own) is refused, and that origin gets no request. A
/// same-origin redirect is still followed.
#[test]
fn metadata_redirects_stay_on_their_origin() {
    // The attacker's origin: it serves metadata claiming to be `victim`'s.
    let victim_base = Arc::new(Mutex::new(String::new()));
    let claimed = victim_base.clone();
    let evil = FakeAuth::start(Config {
        meta: Some(Arc::new(move |_, m| {
            m["issuer"] = json!(*claimed.lock().unwrap())
        })),
        ..as_config()
    });
    let evil_meta = format!("{}/.well-known/oauth-authorization-server", evil.base);
    let victim = Http::start(Arc::new(move |_base: &str, req: &Req| {
        match req.path.as_str() {
            "/.well-known/oauth-authorization-server" => Resp::redirect(&evil_meta),
            _ => Resp::status(404, "{}"),
        }
    }));
    *victim_base.lock().unwrap() = victim.base.clone();
    let server = resource_for(&victim.base);
    let r = sign_in_to(&server).status(1).run();
    assert!(r.stderr().contains("another origin"), "{}", r.stderr());
    assert!(evil.requests().is_empty(), "{:?}", evil.requests());

    // The resource metadata redirecting away: not followed either.
    let evil_prm = format!("{}/prm", evil.base);
    let redirecting = resource_answering(
        &victim.base,
        Arc::new(move |_: &str, _: &Req| Resp::redirect(&evil_prm)),
        false,
    );
    sign_in_to(&redirecting)
        .status(1)
        .run()
        .stderr_has("redirects to another origin");
    assert!(evil.requests().is_empty(), "{:?}", evil.requests());

    // A redirect within the origin is fine.
    let moved = Http::start(Arc::new(move |base: &str, req: &Req| {
        match req.path.as_str() {
            "/.well-known/oauth-authorization-server" => Resp::redirect("/meta"),
            "/meta" => Resp::json(as_metadata(&as_config(), base)),
            _ => Resp::status(404, "{}"),
        }
    }));
    let server = resource_for(&moved.base);
    let r = sign_in_to(&server).status(1).run();
    r.stderr_has("client registration failed");
    // Discovery got past the metadata: the sign-in went on to /register on
    // the same origin (which this server does not serve).
    assert!(!r.stderr().contains("another origin"), "{}", r.stderr());
    assert!(!moved.find("/register").is_empty(), "{}", r.stderr());
}

// ---- 3. An unattended browser gets only what the terminal would open ---

/// Under `--no-input --browser PROGRAM` (and `ELICIT_BROWSER`), a sign-in
/// URL the terminal flow would only show with a warning (here: a Punycode
/// host imitating another name) is not handed to the program; a clean one
/// is.
#[test]
fn an_unattended_browser_is_not_given_a_suspicious_sign_in_url() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("opened");
    let recorder = dir.path().join("browser");
    common::write_script(
        &recorder,
        &format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", seen.display()),
    );
    let authz = FakeAuth::start(Config {
        meta: Some(Arc::new(|_, m| {
            m["authorization_endpoint"] = json!("https://xn--pple-43d.com/authorize")
        })),
        ..as_config()
    });
    let server = resource_for(&authz.base);
    let url = format!("{}/mcp", server.base);
    let recorder = recorder.to_str().unwrap();
    for (flags, env) in [
        (vec!["--browser", recorder], vec![]),
        (vec![], vec![("ELICIT_BROWSER", recorder)]),
    ] {
        let mut flags = flags;
        flags.extend(["--timeout", "3s"]);
        let r = call_echo(&dir.path().join("t"), &flags, &env, &url)
            .status(1)
            .run();
        assert!(r.stderr().contains("Punycode"), "{}", r.stderr());
        assert!(
            !seen.exists(),
            "launched: {:?}",
            std::fs::read_to_string(&seen)
        );
    }
    // The same program with a clean sign-in URL is launched.
    let authz = FakeAuth::start(as_config());
    let server = resource_for(&authz.base);
    call_echo(
        &dir.path().join("t"),
        &["--browser", recorder, "--timeout", "3s"],
        &[],
        &format!("{}/mcp", server.base),
    )
    .status(1)
    .run()
    .stderr_has("sign-in did not finish within 3s: the browser never came back to elicit");
    let opened = std::fs::read_to_string(&seen).unwrap();
    assert!(
        opened.starts_with(&format!("{}/authorize?", authz.base)),
        "{opened}"
    );
}

// ---- 4. The token store trusts only what the user wrote -----------------

use elicit::auth::store::{ClientRecord, Entry, Secret, TokenRecord, TokenStore};
use elicit::auth::{AuthOptions, Authenticator};
use std::os::unix::fs::{MetadataExt, PermissionsExt};

/// A store directory of the user's, 0700.
fn private_store(dir: &std::path::Path) -> (std::path::PathBuf, TokenStore) {
    let d = dir.join("tokens");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    (d.clone(), TokenStore::at(d))
}

fn token_for(token_endpoint: &str) -> TokenRecord {
    TokenRecord {
        issuer: "http://127.0.0.1:1".into(),
        token_endpoint: token_endpoint.into(),
        access_token: Secret("SECRET-ACCESS-planted".into()),
        refresh_token: Some(Secret("SECRET-REFRESH-planted".into())),
        // Expired: the next request refreshes at `token_endpoint`.
        expires_at: Some(1),
        scope: None,
        obtained_at: 1,
        ..Default::default()
    }
}

/// A link planted under the name the store writes its temporary file to
/// (before: `FILE.tmp.PID`, known in advance) is never written through:
/// the tokens do not reach the link's target, and the entry ends up a
/// regular 0600 file.
#[test]
fn the_store_never_writes_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = private_store(dir.path());
    let url = "http://127.0.0.1:1/mcp";
    let file = store.file_for(url);
    let stolen = dir.path().join("stolen");
    std::fs::write(&stolen, "").unwrap();
    std::fs::set_permissions(&stolen, std::fs::Permissions::from_mode(0o644)).unwrap();
    let planted = file.with_extension(format!("tmp.{}", std::process::id()));
    std::os::unix::fs::symlink(&stolen, &planted).unwrap();
    store
        .update(url, |e| {
            e.token = Some(token_for("http://127.0.0.1:1/token"))
        })
        .unwrap();
    let leaked = std::fs::read_to_string(&stolen).unwrap();
    assert!(
        !leaked.contains("SECRET"),
        "written through the link: {leaked}"
    );
    let meta = std::fs::symlink_metadata(&file).unwrap();
    assert!(meta.file_type().is_file(), "{meta:?}");
    assert_eq!(meta.mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("SECRET-ACCESS-planted"));
}

/// An entry another user could have written (writable by others, a link,
/// or, when the tests run as root, owned by another uid) is refused on
/// load and reported by `list`; its token is not sent, and its token
/// endpoint gets no refresh request (no refresh token, no secret).
#[test]
fn store_entries_another_user_could_have_written_are_not_trusted() {
    let steal = Http::start(Arc::new(|_: &str, _: &Req| bearer_token_resp()));
    let url = "http://127.0.0.1:1/mcp";
    let entry = |steal: &Http| Entry {
        server_url: url.into(),
        clients: [(
            "http://127.0.0.1:1".to_string(),
            ClientRecord {
                client_id: "dcr-client".into(),
                client_secret: Some(Secret("PRE-SECRET-VALUE".into())),
                auth_method: "client_secret_post".into(),
                redirect_uri: None,
                source: "dynamic".into(),
            },
        )]
        .into(),
        token: Some(token_for(&format!("{}/steal", steal.base))),
        ..Default::default()
    };
    let as_root = elicit_is_root();
    let mut cases: Vec<(&str, Plant)> = vec![
        (
            "writable by other users",
            Box::new(|f| {
                std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o666)).unwrap()
            }),
        ),
        (
            "symbolic link",
            Box::new(|f| {
                let real = f.with_file_name("elsewhere");
                std::fs::rename(f, &real).unwrap();
                std::os::unix::fs::symlink(&real, f).unwrap();
            }),
        ),
    ];
    if as_root {
        cases.push((
            "another user",
            Box::new(|f| std::os::unix::fs::chown(f, Some(65534), Some(65534)).unwrap()),
        ));
    }
    for (why, plant) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (store_dir, store) = private_store(dir.path());
        let file = store.file_for(url);
        std::fs::write(&file, serde_json::to_vec(&entry(&steal)).unwrap()).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        plant(&file);
        let e = store.load(url).unwrap_err().to_string();
        assert!(e.contains(why), "{why}: {e}");
        let (listed, bad) = store.list().unwrap();
        assert!(listed.is_empty(), "{why}: {listed:?}");
        assert_eq!(bad.len(), 1, "{why}");
        let mut auth = Authenticator::new(
            AuthOptions {
                store_dir: Some(store_dir),
                ..Default::default()
            },
            ureq::Agent::new_with_defaults(),
        );
        assert_eq!(auth.authorization_header(url), None, "{why}");
        assert!(steal.requests().is_empty(), "{why}: {:?}", steal.requests());
    }
    if as_root {
        // A store directory of another user's is not used at all.
        let dir = tempfile::tempdir().unwrap();
        let (store_dir, store) = private_store(dir.path());
        std::os::unix::fs::chown(&store_dir, Some(65534), Some(65534)).unwrap();
        let e = store.load(url).unwrap_err().to_string();
        assert!(e.contains("another user"), "{e}");
        assert!(store.update(url, |_| ()).is_err());
    } else {
        eprintln!("not root: the other-owner cases need chown and were not run");
    }
}

/// How a test turns a good store file into a suspicious one.
type Plant = Box<dyn Fn(&std::path::Path)>;

fn bearer_token_resp() -> Resp {
    Resp::json(json!({"access_token": "tok-stolen", "token_type": "Bearer"}))
}

/// Whether the tests run as root (then files of another uid can be made).
fn elicit_is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

// ---- 5. Resource metadata and token responses are validated --------------

/// Protected resource metadata without `resource` is refused (RFC 9728
/// requires it): no authorization server is contacted.
#[test]
fn resource_metadata_without_resource_is_refused() {
    let authz = FakeAuth::start(as_config());
    let as_base = authz.base.clone();
    let prm = json!({"authorization_servers": [as_base]});
    let server = resource_answering(
        &as_base,
        Arc::new(move |_: &str, _: &Req| Resp::json(prm.clone())),
        false,
    );
    let r = sign_in_to(&server).status(1).run();
    assert!(r.stderr().contains("no `resource`"), "{}", r.stderr());
    assert!(authz.requests().is_empty(), "{:?}", authz.requests());
}

/// A token whose `token_type` is not Bearer (`mac`, `DPoP` that elicit did
/// not ask for, an extension) is refused, never sent as a Bearer token; a
/// lower-case `bearer` is fine (the type is case-insensitive).
#[test]
fn tokens_that_are_not_bearer_are_never_sent_as_bearer() {
    for token_type in ["mac", "DPoP", "N_A", "bearer"] {
        let authz = FakeAuth::start(Config {
            token: Some(Arc::new(move |_| {
                Resp::json(json!({"access_token": "tok-typed", "token_type": token_type}))
            })),
            ..as_config()
        });
        let server = resource_for(&authz.base);
        let test = sign_in_to(&server);
        let r = if token_type == "bearer" {
            test.stdout(ECHOED).run()
        } else {
            test.status(1).run()
        };
        let sent = server.requests().iter().any(|q| {
            q.headers
                .get("authorization")
                .is_some_and(|h| h.contains("tok-typed"))
        });
        if token_type == "bearer" {
            assert!(sent);
            continue;
        }
        assert!(!sent, "{token_type}: the token was sent");
        // The type is named (oauth2 reads it in lower case).
        assert!(
            r.stderr()
                .to_lowercase()
                .contains(&token_type.to_lowercase()),
            "{token_type}: {}",
            r.stderr()
        );
        if token_type == "DPoP" {
            assert!(r.stderr().contains("DPoP-bound"), "{}", r.stderr());
        }
    }
}

/// A `resource` that is a parent path of the server URL is accepted with a
/// warning that names it (the token is valid for every server under it).
#[test]
fn a_parent_path_resource_is_warned_about() {
    let authz = FakeAuth::start(as_config());
    let as_base = authz.base.clone();
    let server = resource_answering(
        &authz.base,
        Arc::new(move |base: &str, _: &Req| {
            Resp::json(json!({"resource": format!("{base}/"), "authorization_servers": [as_base]}))
        }),
        false,
    );
    let r = sign_in_to(&server).stdout(ECHOED).run();
    let warning = r
        .stderr()
        .lines()
        .find(|l| l.starts_with("elicit: warning:") && l.contains("parent"))
        .unwrap_or_else(|| panic!("no warning: {}", r.stderr()));
    assert!(warning.contains(&format!("{}/", server.base)), "{warning}");
}

// ---- 6. OAuth text stays on one line ---------------------------------

/// The forged line each hostile field tries to add to elicit's output.
const FORGED: &str = "elicit: signed in to https://bank.example as admin";

/// No line of `text` is the forged one (it may appear inside a line).
fn assert_not_forged(what: &str, text: &str) {
    assert!(
        !text.lines().any(|l| l.trim_start().starts_with(FORGED)),
        "{what} holds a forged line:\n{text}"
    );
}

/// `error_description` with a line break, from the token endpoint, the
/// registration endpoint and the authorization redirect, is shown on the
/// one line of the error.
#[test]
fn error_descriptions_cannot_forge_lines() {
    let hostile = format!("nope\r\n{FORGED}\n\u{1b}[2K");
    let h = hostile.clone();
    let token = Config {
        token: Some(Arc::new(move |_| Resp {
            status: 400,
            ..Resp::json(json!({"error": "invalid_grant", "error_description": h}))
        })),
        ..as_config()
    };
    let h = hostile.clone();
    let register = Config {
        register: Some(Arc::new(move |_| Resp {
            status: 400,
            ..Resp::json(json!({"error": "invalid_client_metadata", "error_description": h}))
        })),
        ..as_config()
    };
    let h = hostile.clone();
    let redirect = Config {
        authorize: Some(Arc::new(move |_, req| {
            let mut to = url::Url::parse(&req.query["redirect_uri"]).unwrap();
            to.query_pairs_mut()
                .append_pair("error", "access_denied")
                .append_pair("error_description", &h)
                .append_pair("state", &req.query["state"]);
            Resp::redirect(to.as_str())
        })),
        ..as_config()
    };
    let cases = [
        ("token", token),
        ("register", register),
        ("redirect", redirect),
    ];
    for ((what, cfg), strict) in cases
        .into_iter()
        .flat_map(|c| [(c.clone(), false), (c, true)])
    {
        let authz = FakeAuth::start(cfg);
        let as_base = authz.base.clone();
        let prm: Handler = Arc::new(move |base: &str, _: &Req| {
            Resp::json(
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [as_base]}),
            )
        });
        let server = resource_answering(&authz.base, prm, strict);
        let r = sign_in_to(&server).status(1).run();
        assert!(
            r.stderr().contains("nope"),
            "{what} {strict}: {}",
            r.stderr()
        );
        assert_not_forged(what, r.stderr());
        assert!(!r.stderr().contains('\u{1b}'), "{what}: {:?}", r.stderr());
    }
}

/// An issuer with a line break in it (which the URL parser would quietly
/// drop) is refused, so it never reaches the store or `auth list` as a line
/// of the server's making.
#[test]
fn an_issuer_with_a_line_break_is_refused_not_stored() {
    let issuer_of = |base: &str| format!("{base}?\n{FORGED}");
    let authz = FakeAuth::start(Config {
        meta: Some(Arc::new(move |base, m| {
            m["issuer"] = json!(issuer_of(base))
        })),
        ..as_config()
    });
    let server = resource_for(&issuer_of(&authz.base));
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("data");
    let r = call_echo(
        &store,
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", server.base),
    )
    .status(1)
    .run();
    assert_not_forged("stderr", r.stderr());
    let list = Test::new().words("auth list").data_dir(&store).run();
    let out = &list.stdout();
    assert_not_forged("auth list", out);
    assert!(!out.contains("issuer"), "{out}");
}

/// `auth list` shows every stored field on its own line, whatever a store
/// entry written by an older elicit holds.
#[test]
fn auth_list_keeps_stored_fields_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = private_store(dir.path());
    let url = "http://127.0.0.1:1/mcp";
    store
        .update(url, |e| {
            e.server_name = Some(format!("n\n{FORGED}"));
            let mut t = token_for("http://127.0.0.1:1/token");
            t.issuer = format!("http://127.0.0.1:1\n{FORGED}");
            t.scope = Some(format!("a\r\n{FORGED}"));
            e.token = Some(t);
        })
        .unwrap();
    let list = Test::new().words("auth list").data_dir(dir.path()).run();
    let out = &list.stdout();
    assert!(out.contains("issuer"), "{out}");
    assert_not_forged("auth list", out);
}

// ---- 7. The loopback listener cannot be stalled ------------------------

use elicit::auth::loopback::Loopback;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Connects to the listener and sends `GET /` one byte a second, never
/// finishing the head, until the server closes or `stop` is set. Returns
/// how long the server kept the connection.
fn trickle(port: u16, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Duration> {
    // Connected before it returns: what the test sends next comes after.
    let started = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = s.set_read_timeout(Some(Duration::from_millis(900)));
    std::thread::spawn(move || {
        for b in b"GET /callback?state=".iter().cycle() {
            if stop.load(std::sync::atomic::Ordering::SeqCst) || s.write_all(&[*b]).is_err() {
                break;
            }
            let mut buf = [0u8; 512];
            match s.read(&mut buf) {
                Ok(_) => break, // answered or closed
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
            if started.elapsed() > Duration::from_secs(30) {
                break;
            }
        }
        started.elapsed()
    })
}

/// A local client trickling one byte a second (and one sending nothing)
/// does not hold the listener: the browser's redirect, arriving after
/// them, is served at once, and a trickler is cut off by the per-
/// connection deadline, not kept for as long as it keeps sending.
#[test]
fn a_trickling_local_client_cannot_stall_the_sign_in_listener() {
    let l = Loopback::bind(None).unwrap();
    let port = l.port();
    let stop = Arc::new(AtomicBool::new(false));
    let idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let tricklers: Vec<_> = (0..3).map(|_| trickle(port, stop.clone())).collect();
    let browser = std::thread::spawn(move || {
        let started = Instant::now();
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "GET /callback?code=c&state=S1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        (started.elapsed(), out)
    });
    let waited = Instant::now();
    let never = AtomicBool::new(false);
    let r = l.wait("S1", Duration::from_secs(20), &never, &|_| Ok(()));
    let waited = waited.elapsed();
    assert_eq!(r.unwrap().code, "c");
    let (took, page) = browser.join().unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(took < Duration::from_secs(3), "the browser waited {took:?}");
    assert!(waited < Duration::from_secs(4), "the wait took {waited:?}");

    // Without anything else going on, one trickler is cut off by the
    // deadline for its head (a few seconds), not served for minutes.
    let l = Loopback::bind(None).unwrap();
    let port = l.port();
    let lone = trickle(port, Arc::new(AtomicBool::new(false)));
    // The wait ends as soon as the trickler was let go (or at 12 s).
    let done = Arc::new(AtomicBool::new(false));
    let held = {
        let done = done.clone();
        std::thread::spawn(move || {
            let held = lone.join().unwrap();
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            held
        })
    };
    let r = l.wait("S1", Duration::from_secs(12), &done, &|_| Ok(()));
    assert!(r.is_err());
    let held = held.join().unwrap();
    assert!(held < Duration::from_secs(9), "held for {held:?}");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for t in tricklers {
        let _ = t.join();
    }
    drop(idle);
}

// ---- A dropped connection under a metadata GET -------------------------

/// A metadata GET whose connection is reset under it (what a server that
/// closed an idle kept-alive connection does) is sent once more, so sign-in
/// goes on; a second reset is an error.
#[test]
fn a_metadata_get_on_a_dropped_connection_is_sent_again_once() {
    for resets in [1, 2] {
        let authz = FakeAuth::start(as_config());
        let as_base = authz.base.clone();
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let prm: Handler = Arc::new(move |base: &str, _: &Req| {
            if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < resets {
                return Resp::reset();
            }
            Resp::json(
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [as_base]}),
            )
        });
        let server = resource_answering(&authz.base, prm, true);
        if resets == 1 {
            sign_in_to(&server).stdout(ECHOED).run();
        } else {
            let r = sign_in_to(&server).status(1).run();
            assert!(r.stderr().contains("reset"), "{}", r.stderr());
        }
    }
}
