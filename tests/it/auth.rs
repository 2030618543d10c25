//! Sign-in against a fake authorization server and protected resource,
//! both served by std `TcpListener` threads on 127.0.0.1 from this file.
//!
//! The fake authorization server verifies PKCE S256 itself, checks client
//! authentication, and records every request, so each test asserts on what
//! elicit really sent. The "browser" is either a `Resolver` that fetches
//! the authorization URL and follows the redirect to elicit's loopback
//! listener, or (under `no_input`) a `--browser` program doing the same
//! with curl.

use crate::common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use sha2::{Digest, Sha256};

use elicit::auth::store::{Entry, Secret, TokenRecord, TokenStore};
use elicit::auth::{AuthError, AuthOptions, Authenticator};
use elicit::elicitation::contract::Answer;
use elicit::elicitation::resolve::{Elicitation, Pending, Resolver};
use elicit::error::ElicitError;

#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    query: HashMap<String, String>,
    form: HashMap<String, String>,
    json: Option<serde_json::Value>,
    headers: HashMap<String, String>,
}

/// What the fake servers do. Paths are on the one listener: the resource
/// at `/mcp`, the authorization server under `as_prefix`.
#[derive(Clone)]
struct Config {
    /// Where protected resource metadata is served (None: nowhere).
    prm_path: Option<&'static str>,
    prm_resource: Option<String>,
    prm_scopes: Option<Vec<&'static str>>,
    as_prefix: &'static str,
    /// Where the authorization server metadata is served (None: nowhere).
    as_metadata_path: Option<String>,
    metadata_issuer: Option<String>,
    auth_methods: Vec<&'static str>,
    pkce_methods: Option<Vec<&'static str>>,
    iss_supported: bool,
    /// "correct", "wrong", "omit".
    iss_mode: &'static str,
    registration: bool,
    cimd: bool,
    as_scopes: Option<Vec<&'static str>>,
    /// Pre-registered client expected at the token endpoint.
    client: Option<(&'static str, &'static str)>,
    expires_in: u64,
    /// The MCP endpoint at `/mcp` answers 401 even to issued tokens.
    reject_tokens: bool,
    /// `grant_types_supported` of the authorization server.
    grants: Vec<&'static str>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            prm_path: Some("/.well-known/oauth-protected-resource/mcp"),
            prm_resource: None,
            prm_scopes: None,
            as_prefix: "",
            as_metadata_path: Some("/.well-known/oauth-authorization-server".into()),
            metadata_issuer: None,
            auth_methods: vec!["none"],
            pkce_methods: Some(vec!["S256"]),
            iss_supported: true,
            iss_mode: "correct",
            registration: true,
            cimd: false,
            as_scopes: None,
            client: None,
            expires_in: 3600,
            reject_tokens: false,
            grants: vec!["authorization_code", "refresh_token"],
        }
    }
}

struct Fake {
    base: String,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Fake {
    fn start(cfg: Config) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(Mutex::new(Shared::default()));
        {
            let (base, log) = (base.clone(), log.clone());
            std::thread::spawn(move || {
                for s in listener.incoming().flatten() {
                    let (cfg, base, log, state) =
                        (cfg.clone(), base.clone(), log.clone(), state.clone());
                    std::thread::spawn(move || serve(s, &cfg, &base, &log, &state));
                }
            });
        }
        Fake { base, log }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }

    fn paths(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    fn find(&self, path_end: &str) -> Vec<Req> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with(path_end))
            .collect()
    }

    fn challenge(&self, scope: Option<&str>) -> String {
        let mut h = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            self.base
        );
        if let Some(s) = scope {
            h.push_str(&format!(", scope=\"{s}\""));
        }
        h
    }
}

#[derive(Default)]
struct Shared {
    challenge: Option<String>,
    tokens: u32,
}

fn read_req(s: &mut TcpStream) -> Option<Req> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let mut headers = HashMap::new();
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let url = url::Url::parse(&format!("http://x{target}")).ok()?;
    let query = url.query_pairs().into_owned().collect();
    let form = url::form_urlencoded::parse(&body).into_owned().collect();
    let json = serde_json::from_slice(&body).ok();
    Some(Req {
        method,
        path: url.path().to_string(),
        query,
        form,
        json,
        headers,
    })
}

fn reply(s: &mut TcpStream, status: u16, extra: &str, body: &str) {
    let ctype = if body.starts_with('{') {
        "application/json"
    } else {
        "text/plain"
    };
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
}

fn serve(mut s: TcpStream, cfg: &Config, base: &str, log: &Mutex<Vec<Req>>, st: &Mutex<Shared>) {
    let Some(req) = read_req(&mut s) else { return };
    log.lock().unwrap().push(req.clone());
    let p = cfg.as_prefix;
    let issuer = cfg
        .metadata_issuer
        .clone()
        .unwrap_or_else(|| format!("{base}{p}"));
    let path = req.path.as_str();
    if Some(path) == cfg.prm_path {
        let mut doc = serde_json::json!({
            "resource": cfg.prm_resource.clone().unwrap_or_else(|| format!("{base}/mcp")),
            "authorization_servers": [format!("{base}{p}")],
        });
        if let Some(sc) = &cfg.prm_scopes {
            doc["scopes_supported"] = serde_json::json!(sc);
        }
        return reply(&mut s, 200, "", &doc.to_string());
    }
    if Some(path) == cfg.as_metadata_path.as_deref() {
        let mut doc = serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{base}{p}/authorize"),
            "token_endpoint": format!("{base}{p}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": cfg.grants,
            "token_endpoint_auth_methods_supported": cfg.auth_methods,
            "authorization_response_iss_parameter_supported": cfg.iss_supported,
            "client_id_metadata_document_supported": cfg.cimd,
        });
        if cfg.registration {
            doc["registration_endpoint"] = serde_json::json!(format!("{base}{p}/register"));
        }
        if let Some(m) = &cfg.pkce_methods {
            doc["code_challenge_methods_supported"] = serde_json::json!(m);
        }
        if let Some(sc) = &cfg.as_scopes {
            doc["scopes_supported"] = serde_json::json!(sc);
        }
        return reply(&mut s, 200, "", &doc.to_string());
    }
    if path == format!("{p}/register") && req.method == "POST" {
        let body = serde_json::json!({
            "client_id": "dcr-client",
            "client_secret": "dcr-secret-XYZ",
            "token_endpoint_auth_method": cfg.auth_methods[0],
            "redirect_uris": req.json.as_ref().and_then(|j| j.get("redirect_uris")).cloned(),
        });
        return reply(&mut s, 201, "", &body.to_string());
    }
    if path == format!("{p}/authorize") {
        st.lock().unwrap().challenge = req.query.get("code_challenge").cloned();
        let mut to = url::Url::parse(&req.query["redirect_uri"]).unwrap();
        to.query_pairs_mut()
            .append_pair("code", "the-code")
            .append_pair(
                "state",
                req.query.get("state").map(String::as_str).unwrap_or(""),
            );
        match cfg.iss_mode {
            "correct" => {
                to.query_pairs_mut().append_pair("iss", &issuer);
            }
            "wrong" => {
                to.query_pairs_mut()
                    .append_pair("iss", "https://evil.example.com");
            }
            _ => {}
        }
        return reply(&mut s, 302, &format!("Location: {to}\r\n"), "");
    }
    if path == format!("{p}/token") && req.method == "POST" {
        let f = &req.form;
        if let Some((id, secret)) = cfg.client {
            let basic = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
            );
            let ok = match cfg.auth_methods[0] {
                "client_secret_basic" => req.headers.get("authorization") == Some(&basic),
                _ => {
                    f.get("client_id").map(String::as_str) == Some(id)
                        && f.get("client_secret").map(String::as_str) == Some(secret)
                }
            };
            if !ok {
                return reply(&mut s, 401, "", r#"{"error":"invalid_client"}"#);
            }
        }
        if f.get("grant_type").map(String::as_str) == Some("authorization_code") {
            let verifier = f.get("code_verifier").cloned().unwrap_or_default();
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(verifier.as_bytes()));
            if Some(computed) != st.lock().unwrap().challenge.clone() {
                return reply(
                    &mut s,
                    400,
                    "",
                    r#"{"error":"invalid_grant","error_description":"PKCE verification failed"}"#,
                );
            }
        }
        let n = {
            let mut g = st.lock().unwrap();
            g.tokens += 1;
            g.tokens
        };
        let body = serde_json::json!({
            "access_token": format!("SECRET-ACCESS-{n}"),
            "refresh_token": format!("SECRET-REFRESH-{n}"),
            "token_type": "Bearer",
            "expires_in": cfg.expires_in,
        });
        return reply(&mut s, 200, "", &body.to_string());
    }
    if path == "/mcp" {
        return serve_mcp(&mut s, cfg, base, &req, st);
    }
    reply(&mut s, 404, "", "not found");
}

/// A protected MCP server (2025-11-25, JSON replies, no session): like the
/// conformance suite's, `initialize` and notifications need no token; every
/// other request needs `Bearer SECRET-ACCESS-N` for an N the token endpoint
/// issued, else 401 with the challenge. One tool, `echo`.
fn serve_mcp(s: &mut TcpStream, cfg: &Config, base: &str, req: &Req, st: &Mutex<Shared>) {
    if req.method != "POST" {
        return reply(s, 405, "", "");
    }
    let Some(msg) = req.json.clone() else {
        return reply(s, 400, "", "not json");
    };
    let method = msg["method"].as_str().unwrap_or("");
    let id = msg.get("id").cloned();
    if id.is_none() {
        return reply(s, 202, "", "");
    }
    if method != "initialize" {
        let issued = st.lock().unwrap().tokens;
        let good = req
            .headers
            .get("authorization")
            .and_then(|v| v.strip_prefix("Bearer SECRET-ACCESS-"))
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n >= 1 && n <= issued);
        if !good || cfg.reject_tokens {
            let challenge = format!(
                "WWW-Authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n"
            );
            return reply(s, 401, &challenge, r#"{"error":"invalid_token"}"#);
        }
    }
    let result = match method {
        "initialize" => serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected", "version": "1.0.0"}
        }),
        "tools/list" => serde_json::json!({"tools": [{
            "name": "echo",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        }]}),
        "tools/call" => serde_json::json!({"content": [{"type": "text",
            "text": format!("echo: {}", msg["params"]["arguments"]["text"].as_str().unwrap_or(""))}]}),
        _ => serde_json::json!({}),
    };
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
    reply(s, 200, "", &body.to_string());
}

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
    let fake = Fake::start(Config::default());
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
    let fake = Fake::start(Config {
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
    let fake = Fake::start(Config {
        prm_path: None,
        ..Default::default()
    });
    let mut s = setup(AuthOptions::default());
    s.auth
        .on_unauthorized(&fake.url(), Some("Bearer"), 401)
        .unwrap();
    assert!(s.auth.authorization_header(&fake.url()).is_some());

    // No metadata at all: /authorize, /token, /register at the origin.
    let bare = Fake::start(Config {
        prm_path: None,
        as_metadata_path: None,
        iss_mode: "omit",
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
        let fake = Fake::start(Config {
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
    let fake = Fake::start(Config {
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
    let fake = Fake::start(Config {
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
    for (mode, supported) in [("wrong", true), ("wrong", false), ("omit", true)] {
        let fake = Fake::start(Config {
            iss_mode: mode,
            iss_supported: supported,
            ..Default::default()
        });
        let mut s = setup(AuthOptions::default());
        let e = s
            .auth
            .on_unauthorized(&fake.url(), Some(&fake.challenge(None)), 401)
            .unwrap_err();
        assert!(matches!(e, AuthError::IssuerMismatch { .. }), "{mode}: {e}");
        assert!(fake.find("/token").is_empty(), "{mode}: no token request");
    }
    // Not advertised and absent: fine.
    let fake = Fake::start(Config {
        iss_mode: "omit",
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
        let fake = Fake::start(cfg);
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
    let fake = Fake::start(Config {
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
    let fake = Fake::start(Config::default());
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
    let fake = Fake::start(Config {
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
    let fake = Fake::start(Config::default());
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

    let fake = Fake::start(Config::default());
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
    let fake = Fake::start(Config::default());
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
    let fake = Fake::start(Config::default());
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
    let fake = Fake::start(Config {
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
    let bin = env!("CARGO_BIN_EXE_elicit");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(bin)
            .args(args)
            .env("ELICIT_DATA_DIR", dir.path())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, out, _) = run(&["auth", "list"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("http://127.0.0.1:1/mcp") && out.contains("demo"),
        "{out}"
    );
    assert!(!out.contains("SECRET") && !out.contains('\u{1b}'), "{out}");
    // A damaged file is reported, not fatal; logout clears everything.
    std::fs::write(store.file_for("http://bad/mcp"), "{oops").unwrap();
    let (code, out, _) = run(&["auth", "list"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("damaged"), "{out}");
    let (code, out, _) = run(&["auth", "logout", "http://127.0.0.1:1/mcp"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("signed out"), "{out}");
    let (code, out, _) = run(&["auth", "logout"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("removed 1"), "{out}");
    let (_, out, _) = run(&["auth", "list"]);
    assert!(out.contains("no stored sign-ins"), "{out}");
    let (code, _, err) = run(&["auth", "logout", "not a url"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("not a server URL"), "{err}");
}

/// `elicit call` against the fake protected server, as a process.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn elicit_call(store: &std::path::Path, extra: &[&str], url: &str) -> Run {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_elicit"))
        .arg("call")
        .args(["--protocol", "2025-11-25", "--timeout", "20s"])
        .args(extra)
        .args(["--tool", "echo", "--arg", "text=hi", url])
        .env("ELICIT_DATA_DIR", store)
        .env_remove("ELICIT_BROWSER")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The conformance suite's "person with a browser": curl follows the
/// authorization redirect to elicit's loopback listener.
fn curl_browser() -> String {
    format!("{}/scripts/conformance-browser", env!("CARGO_MANIFEST_DIR"))
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
    let fake = Fake::start(Config {
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
    let r = elicit_call(
        &store,
        &[
            "--no-input",
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
        &fake.url(),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("echo: hi"), "{}", r.stdout);
    assert_no_secret("stdout", &r.stdout);
    assert_no_secret("stderr", &r.stderr);
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
    let r = elicit_call(&store, &["--no-input"], &fake.url());
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("echo: hi"), "{}", r.stdout);
    assert_eq!(fake.find("/authorize").len(), authorizations);
    assert_no_secret("stderr", &r.stderr);
}

/// Sign-in that cannot succeed ends with an error that names the problem
/// and holds no secret; without --browser under --no-input it says how to
/// sign in.
#[test]
fn failed_sign_in_errors_hold_no_secret() {
    let fake = Fake::start(Config {
        reject_tokens: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("tokens");
    let browser = curl_browser();
    let r = elicit_call(&store, &["--no-input", "--browser", &browser], &fake.url());
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("401"), "{}", r.stderr);
    assert_no_secret("stderr", &r.stderr);
    assert_no_secret("stdout", &r.stdout);
    assert!(!r.stderr.contains("dcr-secret-XYZ"), "{}", r.stderr);

    let fresh = Fake::start(Config::default());
    let r = elicit_call(&dir.path().join("other"), &["--no-input"], &fresh.url());
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("needs you to sign in") && r.stderr.contains("--browser"),
        "{}",
        r.stderr
    );
    assert!(fresh.find("/authorize").is_empty());
}

/// A pre-registered confidential client, against a server that offers only
/// the client credentials grant, signs in without any browser.
#[test]
fn client_credentials_grant_needs_no_browser() {
    let fake = Fake::start(Config {
        registration: false,
        auth_methods: vec!["client_secret_basic"],
        client: Some(("pre-id", "PRE-SECRET-VALUE")),
        grants: vec!["client_credentials"],
        pkce_methods: None,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let r = elicit_call(
        &dir.path().join("tokens"),
        &[
            "--no-input",
            "--client-id",
            "pre-id",
            "--client-secret",
            "PRE-SECRET-VALUE",
        ],
        &fake.url(),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("echo: hi"));
    assert!(fake.find("/authorize").is_empty());
    let t = &fake.find("/token")[0];
    assert_eq!(t.form["grant_type"], "client_credentials");
    assert_eq!(t.form["resource"], fake.url());
    assert_no_secret("stderr", &r.stderr);
}

/// The done-when check of sign-in on a terminal: `elicit call URL --tool …`
/// against a protected server shows the sign-in link through the URL flow
/// and asks before opening it; the (stub) browser reaches elicit's loopback
/// listener and the waiting screen ends by itself, without a key; the tool
/// result is printed. A second run reuses the stored token without asking.
#[test]
fn call_on_a_terminal_asks_opens_finishes_by_itself_then_reuses_the_token() {
    let fake = Fake::start(Config::default());
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
    let mut p = common::elicit("")
        .args(&args)
        .env("ELICIT_DATA_DIR", store_path.to_str().unwrap())
        .spawn();
    p.expect("asks you to open a link")
        .expect("Sign in to")
        .expect("127.0.0.1")
        .expect("nothing opens until you choose it")
        .answer("What do you want to do?", common::ENTER)
        .expect("opened in")
        .expect("done after");
    let f = p.finish();
    assert_eq!(f.code, 0, "{}", f.screen_text());
    assert_eq!(f.json()["content"][0]["text"], "echo: hi");
    assert_eq!(fake.find("/authorize").len(), 1);
    assert_no_secret("the terminal", &f.screen_text());

    let mut p = common::elicit("")
        .args(&args)
        .env("ELICIT_DATA_DIR", store_path.to_str().unwrap())
        .spawn();
    let f = p.finish();
    assert_eq!(f.code, 0, "{}", f.screen_text());
    assert_eq!(f.json()["content"][0]["text"], "echo: hi");
    assert!(
        !f.screen_text().contains("asks you to open a link"),
        "{}",
        f.screen_text()
    );
    assert_eq!(fake.find("/authorize").len(), 1, "no second sign-in");
}
