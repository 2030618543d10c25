//! Sign-in against hostile authorization servers and protected resources.
//!
//! Every server here is a std `TcpListener` on 127.0.0.1 started by the
//! test: a protected MCP server (the resource, with its RFC 9728 metadata)
//! and one or more authorization servers, each on its own port, whose
//! metadata, token and redirect answers a test can replace. Every request
//! is recorded, so a test asserts on what elicit really sent (above all:
//! what it did not send, and to whom).

use crate::common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    query: HashMap<String, String>,
    form: HashMap<String, String>,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Req {
    fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn json(v: Value) -> Resp {
        Resp {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: v.to_string(),
        }
    }
    fn status(status: u16, body: &str) -> Resp {
        Resp {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.into(),
        }
    }
    fn redirect(to: &str) -> Resp {
        Resp {
            status: 302,
            headers: vec![("Location".into(), to.into())],
            body: String::new(),
        }
    }
}

type Handler = Arc<dyn Fn(&str, &Req) -> Resp + Send + Sync>;

/// One HTTP server on 127.0.0.1: `handler(base, request)` answers, every
/// request is logged.
struct Http {
    base: String,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Http {
    fn start(handler: Handler) -> Http {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let log = Arc::new(Mutex::new(Vec::new()));
        {
            let (base, log) = (base.clone(), log.clone());
            std::thread::spawn(move || {
                for s in listener.incoming().flatten() {
                    let (base, log, handler) = (base.clone(), log.clone(), handler.clone());
                    std::thread::spawn(move || serve(s, &base, &log, &*handler));
                }
            });
        }
        Http { base, log }
    }

    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }

    fn find(&self, path: &str) -> Vec<Req> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }
}

fn read_req(s: &mut TcpStream) -> Option<Req> {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
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
    Some(Req {
        method,
        path: url.path().to_string(),
        query: url.query_pairs().into_owned().collect(),
        form: url::form_urlencoded::parse(&body).into_owned().collect(),
        headers,
        body,
    })
}

fn serve(
    mut s: TcpStream,
    base: &str,
    log: &Mutex<Vec<Req>>,
    handler: &dyn Fn(&str, &Req) -> Resp,
) {
    let Some(req) = read_req(&mut s) else { return };
    log.lock().unwrap().push(req.clone());
    let r = handler(base, &req);
    if r.status == 0 {
        return reset(s);
    }
    let mut head = format!("HTTP/1.1 {} X\r\n", r.status);
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        r.body.len()
    ));
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(r.body.as_bytes());
}

/// Closes `s` with a TCP reset (SO_LINGER 0), as a server dropping a
/// kept-alive connection under a request does.
fn reset(s: TcpStream) {
    use std::os::unix::io::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a correctly sized option value.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(s);
}

/// What a test may change about an authorization server.
#[derive(Clone)]
struct AsCfg {
    /// The metadata document, from the server's base URL.
    meta: Arc<dyn Fn(&str) -> Value + Send + Sync>,
    /// The token endpoint's answer.
    token: Arc<dyn Fn(&Req) -> Resp + Send + Sync>,
    /// The authorization endpoint's answer, from the issuer it serves.
    authorize: Handler,
    /// The registration endpoint's answer.
    register: Arc<dyn Fn(&Req) -> Resp + Send + Sync>,
}

fn default_meta(base: &str) -> Value {
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
    })
}

fn bearer_token(_: &Req) -> Resp {
    Resp::json(json!({
        "access_token": "tok-1",
        "token_type": "Bearer",
        "expires_in": 3600,
    }))
}

/// Redirects to the loopback listener with a code, our state and `iss`.
fn redirect_with_code(issuer: &str, req: &Req) -> Resp {
    let mut to = url::Url::parse(&req.query["redirect_uri"]).unwrap();
    to.query_pairs_mut()
        .append_pair("code", "the-code")
        .append_pair(
            "state",
            req.query.get("state").map(String::as_str).unwrap_or(""),
        )
        .append_pair("iss", issuer);
    Resp::redirect(to.as_str())
}

impl Default for AsCfg {
    fn default() -> Self {
        AsCfg {
            meta: Arc::new(default_meta),
            token: Arc::new(bearer_token),
            authorize: Arc::new(redirect_with_code),
            register: Arc::new(|_| {
                Resp::json(json!({"client_id": "dcr-client", "token_endpoint_auth_method": "none"}))
            }),
        }
    }
}

fn start_as(cfg: AsCfg) -> Http {
    Http::start(Arc::new(move |base: &str, req: &Req| {
        let meta = (cfg.meta)(base);
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/.well-known/oauth-authorization-server") => Resp::json(meta),
            ("GET", "/authorize") => {
                let issuer = meta["issuer"].as_str().unwrap_or(base).to_string();
                (cfg.authorize)(&issuer, req)
            }
            ("POST", "/token") => (cfg.token)(req),
            ("POST", "/register") => (cfg.register)(req),
            _ => Resp::status(404, "{}"),
        }
    }))
}

/// A protected MCP server at `/mcp` (2025-11-25, JSON replies): every
/// request but `initialize` and notifications needs `Bearer tok-…`.
/// `prm(base)` is its protected resource metadata.
fn start_resource(prm: Arc<dyn Fn(&str) -> Value + Send + Sync>) -> Http {
    start_resource_with(Arc::new(move |base: &str, _: &Req| Resp::json(prm(base))))
}

/// [`start_resource`] with the metadata URL's whole answer up to `prm`.
fn start_resource_with(prm: Handler) -> Http {
    start_resource_gated(prm, false)
}

/// [`start_resource_with`]; `strict`: `initialize` needs a token too (as
/// on most real servers), so sign-in happens while connecting.
fn start_resource_gated(prm: Handler, strict: bool) -> Http {
    Http::start(Arc::new(move |base: &str, req: &Req| {
        let challenge =
            format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => prm(base, req),
            ("POST", "/mcp") => {
                let Some(msg) = req.json() else {
                    return Resp::status(400, "{}");
                };
                let Some(id) = msg.get("id").cloned() else {
                    return Resp::status(202, "");
                };
                let method = msg["method"].as_str().unwrap_or("");
                let authorized = req
                    .headers
                    .get("authorization")
                    .is_some_and(|v| v.starts_with("Bearer tok-"));
                if (strict || method != "initialize") && !authorized {
                    let mut r = Resp::status(401, r#"{"error":"invalid_token"}"#);
                    r.headers.push(("WWW-Authenticate".into(), challenge));
                    return r;
                }
                let result = match method {
                    "initialize" => json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "protected", "version": "1.0.0"}
                    }),
                    "tools/list" => json!({"tools": [{
                        "name": "echo",
                        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}
                    }]}),
                    "tools/call" => json!({"content": [{"type": "text", "text": "echo: hi"}]}),
                    _ => json!({}),
                };
                Resp::json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            }
            _ => Resp::status(404, "{}"),
        }
    }))
}

/// A resource protected by the authorization server at `as_base`.
fn resource_for(as_base: &str) -> Http {
    let as_base = as_base.to_string();
    start_resource(Arc::new(
        move |base| json!({"resource": format!("{base}/mcp"), "authorization_servers": [as_base]}),
    ))
}

/// An authorization server that offers only the client credentials grant
/// (no person involved: nothing stands between the secret and the wire).
fn client_credentials_as() -> Http {
    start_as(AsCfg {
        meta: Arc::new(|base| {
            let mut m = default_meta(base);
            m["grant_types_supported"] = json!(["client_credentials"]);
            m
        }),
        ..Default::default()
    })
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `elicit call --tool echo URL` as a process, with its own token store,
/// no terminal, `extra` flags (`--timeout 20s` unless they hold one) and
/// `env` variables (ELICIT_CLIENT_* and ELICIT_BROWSER are cleared first).
fn elicit_call(store: &std::path::Path, extra: &[&str], env: &[(&str, &str)], url: &str) -> Run {
    let mut cmd = std::process::Command::new(common::BIN);
    cmd.arg("call")
        .args(["--protocol", "2025-11-25", "--no-input"])
        .args(extra);
    if !extra.contains(&"--timeout") {
        cmd.args(["--timeout", "20s"]);
    }
    cmd.args(["--tool", "echo", "--arg", "text=hi", url])
        .env("ELICIT_DATA_DIR", store)
        .env_remove("ELICIT_BROWSER")
        .env_remove("ELICIT_CLIENT_ID")
        .env_remove("ELICIT_CLIENT_SECRET")
        .env_remove("ELICIT_CLIENT_ISSUER")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

const SECRET: &str = "PRE-SECRET-VALUE";

/// Whether any request to `server` carried the client secret (HTTP Basic
/// or in the form).
fn saw_secret(server: &Http) -> bool {
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
    let r = elicit_call(
        &dir.path().join("t"),
        &creds,
        &[],
        &format!("{}/mcp", server.base),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(evil.find("/token").is_empty(), "{:?}", evil.requests());
    assert!(!saw_secret(&evil));
    assert!(
        r.stderr.contains(&good.base) && r.stderr.contains(&evil.base),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--client-issuer"), "{}", r.stderr);
    assert!(!r.stderr.contains(SECRET));

    let server = resource_for(&good.base);
    let r = elicit_call(
        &dir.path().join("t"),
        &creds,
        &[],
        &format!("{}/mcp", server.base),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("echo: hi"));
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
    let r = elicit_call(&store, &creds, &[], &format!("{}/mcp", a.base));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(saw_secret(&first));
    assert!(r.stderr.contains("bound to"), "{}", r.stderr);

    let b = resource_for(&other.base);
    let r = elicit_call(&store, &creds, &[], &format!("{}/mcp", b.base));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(other.find("/token").is_empty(), "{:?}", other.requests());
    assert!(!saw_secret(&other));
    assert!(
        r.stderr.contains(&first.base) && r.stderr.contains(&other.base),
        "{}",
        r.stderr
    );
    // Naming the other issuer explicitly re-binds the client.
    let r = elicit_call(
        &store,
        &[&creds[..], &["--client-issuer", &other.base]].concat(),
        &[],
        &format!("{}/mcp", b.base),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
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
    let r = elicit_call(&store, &[], &env, &url);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(authz.find("/token").is_empty(), "{:?}", authz.requests());
    assert!(!saw_secret(&authz));
    assert!(r.stderr.contains("ELICIT_CLIENT_ISSUER"), "{}", r.stderr);
    assert!(!r.stderr.contains(SECRET));

    let named = [&env[..], &[("ELICIT_CLIENT_ISSUER", authz.base.as_str())]].concat();
    let r = elicit_call(&store, &[], &named, &url);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(saw_secret(&authz));
}

/// The conformance suite's "person with a browser": curl follows the
/// authorization redirect to elicit's loopback listener.
fn curl_browser() -> String {
    format!("{}/scripts/conformance-browser", env!("CARGO_MANIFEST_DIR"))
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
        let authz = start_as(AsCfg {
            meta: Arc::new(move |base| {
                let mut m = default_meta(base);
                m[field] = json!("http://0.0.0.0:9/oauth");
                m
            }),
            ..Default::default()
        });
        let server = resource_for(&authz.base);
        let dir = tempfile::tempdir().unwrap();
        let r = elicit_call(
            &dir.path().join("t"),
            &["--browser", &curl_browser()],
            &[],
            &format!("{}/mcp", server.base),
        );
        assert_eq!(r.code, Some(1), "{field}: {}", r.stderr);
        assert!(
            r.stderr.contains(field) && r.stderr.contains("not https"),
            "{field}: {}",
            r.stderr
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
    let evil = start_as(AsCfg {
        meta: Arc::new(move |base| {
            let mut m = default_meta(base);
            m["issuer"] = json!(*claimed.lock().unwrap());
            m
        }),
        ..Default::default()
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
    let dir = tempfile::tempdir().unwrap();
    let r = elicit_call(
        &dir.path().join("t"),
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", server.base),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("another origin"), "{}", r.stderr);
    assert!(evil.requests().is_empty(), "{:?}", evil.requests());

    // The resource metadata redirecting away: not followed either.
    let evil_prm = format!("{}/prm", evil.base);
    let redirecting =
        start_resource_with(Arc::new(move |_: &str, _: &Req| Resp::redirect(&evil_prm)));
    let r = elicit_call(
        &dir.path().join("t2"),
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", redirecting.base),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(evil.requests().is_empty(), "{:?}", evil.requests());

    // A redirect within the origin is fine.
    let moved = Http::start(Arc::new(move |base: &str, req: &Req| {
        match req.path.as_str() {
            "/.well-known/oauth-authorization-server" => Resp::redirect("/meta"),
            "/meta" => Resp::json(default_meta(base)),
            _ => Resp::status(404, "{}"),
        }
    }));
    let server = resource_for(&moved.base);
    let r = elicit_call(
        &dir.path().join("t3"),
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", server.base),
    );
    // Discovery got past the metadata: the sign-in went on to /register on
    // the same origin (which this server does not serve).
    assert!(!r.stderr.contains("another origin"), "{}", r.stderr);
    assert!(!moved.find("/register").is_empty(), "{}", r.stderr);
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
    let authz = start_as(AsCfg {
        meta: Arc::new(|base| {
            let mut m = default_meta(base);
            m["authorization_endpoint"] = json!("https://xn--pple-43d.com/authorize");
            m
        }),
        ..Default::default()
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
        let r = elicit_call(&dir.path().join("t"), &flags, &env, &url);
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stderr.contains("Punycode"), "{}", r.stderr);
        assert!(
            !seen.exists(),
            "launched: {:?}",
            std::fs::read_to_string(&seen)
        );
    }
    // The same program with a clean sign-in URL is launched.
    let authz = start_as(AsCfg::default());
    let server = resource_for(&authz.base);
    let r = elicit_call(
        &dir.path().join("t"),
        &["--browser", recorder, "--timeout", "3s"],
        &[],
        &format!("{}/mcp", server.base),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
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
    let authz = start_as(AsCfg::default());
    let as_base = authz.base.clone();
    let server = start_resource(Arc::new(
        move |_| json!({"authorization_servers": [as_base]}),
    ));
    let dir = tempfile::tempdir().unwrap();
    let r = elicit_call(
        &dir.path().join("t"),
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", server.base),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("no `resource`"), "{}", r.stderr);
    assert!(authz.requests().is_empty(), "{:?}", authz.requests());
}

/// A token whose `token_type` is not Bearer (`mac`, `DPoP` that elicit did
/// not ask for, an extension) is refused, never sent as a Bearer token; a
/// lower-case `bearer` is fine (the type is case-insensitive).
#[test]
fn tokens_that_are_not_bearer_are_never_sent_as_bearer() {
    for token_type in ["mac", "DPoP", "N_A", "bearer"] {
        let authz = start_as(AsCfg {
            token: Arc::new(move |_| {
                Resp::json(json!({"access_token": "tok-typed", "token_type": token_type}))
            }),
            ..Default::default()
        });
        let server = resource_for(&authz.base);
        let dir = tempfile::tempdir().unwrap();
        let r = elicit_call(
            &dir.path().join("t"),
            &["--browser", &curl_browser()],
            &[],
            &format!("{}/mcp", server.base),
        );
        let sent = server.requests().iter().any(|q| {
            q.headers
                .get("authorization")
                .is_some_and(|h| h.contains("tok-typed"))
        });
        if token_type == "bearer" {
            assert_eq!(r.code, Some(0), "{token_type}: {}", r.stderr);
            assert!(sent);
            continue;
        }
        assert_eq!(r.code, Some(1), "{token_type}: {}", r.stderr);
        assert!(!sent, "{token_type}: the token was sent");
        // The type is named (oauth2 reads it in lower case).
        assert!(
            r.stderr.to_lowercase().contains(&token_type.to_lowercase()),
            "{token_type}: {}",
            r.stderr
        );
        if token_type == "DPoP" {
            assert!(r.stderr.contains("DPoP-bound"), "{}", r.stderr);
        }
    }
}

/// A `resource` that is a parent path of the server URL is accepted with a
/// warning that names it (the token is valid for every server under it).
#[test]
fn a_parent_path_resource_is_warned_about() {
    let authz = start_as(AsCfg::default());
    let as_base = authz.base.clone();
    let server = start_resource(Arc::new(
        move |base| json!({"resource": format!("{base}/"), "authorization_servers": [as_base]}),
    ));
    let dir = tempfile::tempdir().unwrap();
    let r = elicit_call(
        &dir.path().join("t"),
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", server.base),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let warning = r
        .stderr
        .lines()
        .find(|l| l.starts_with("elicit: warning:") && l.contains("parent"))
        .unwrap_or_else(|| panic!("no warning: {}", r.stderr));
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
    let token = AsCfg {
        token: Arc::new(move |_| Resp {
            status: 400,
            ..Resp::json(json!({"error": "invalid_grant", "error_description": h}))
        }),
        ..Default::default()
    };
    let h = hostile.clone();
    let register = AsCfg {
        register: Arc::new(move |_| Resp {
            status: 400,
            ..Resp::json(json!({"error": "invalid_client_metadata", "error_description": h}))
        }),
        ..Default::default()
    };
    let h = hostile.clone();
    let redirect = AsCfg {
        authorize: Arc::new(move |_, req| {
            let mut to = url::Url::parse(&req.query["redirect_uri"]).unwrap();
            to.query_pairs_mut()
                .append_pair("error", "access_denied")
                .append_pair("error_description", &h)
                .append_pair("state", &req.query["state"]);
            Resp::redirect(to.as_str())
        }),
        ..Default::default()
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
        let authz = start_as(cfg);
        let as_base = authz.base.clone();
        let prm: Handler = Arc::new(move |base: &str, _: &Req| {
            Resp::json(
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [as_base]}),
            )
        });
        let server = start_resource_gated(prm, strict);
        let dir = tempfile::tempdir().unwrap();
        let r = elicit_call(
            &dir.path().join("t"),
            &["--browser", &curl_browser()],
            &[],
            &format!("{}/mcp", server.base),
        );
        assert_eq!(r.code, Some(1), "{what}: {}", r.stderr);
        assert!(r.stderr.contains("nope"), "{what} {strict}: {}", r.stderr);
        assert_not_forged(what, &r.stderr);
        assert!(!r.stderr.contains('\u{1b}'), "{what}: {:?}", r.stderr);
    }
}

/// An issuer with a line break in it (which the URL parser would quietly
/// drop) is refused, so it never reaches the store or `auth list` as a line
/// of the server's making.
#[test]
fn an_issuer_with_a_line_break_is_refused_not_stored() {
    let issuer_of = |base: &str| format!("{base}?\n{FORGED}");
    let authz = start_as(AsCfg {
        meta: Arc::new(move |base| {
            let mut m = default_meta(base);
            m["issuer"] = json!(issuer_of(base));
            m
        }),
        ..Default::default()
    });
    let server = resource_for(&issuer_of(&authz.base));
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("data");
    let r = elicit_call(
        &store,
        &["--browser", &curl_browser()],
        &[],
        &format!("{}/mcp", server.base),
    );
    assert_not_forged("stderr", &r.stderr);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let list = std::process::Command::new(common::BIN)
        .args(["auth", "list"])
        .env("ELICIT_DATA_DIR", &store)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&list.stdout);
    assert_not_forged("auth list", &out);
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
    let list = std::process::Command::new(common::BIN)
        .args(["auth", "list"])
        .env("ELICIT_DATA_DIR", dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&list.stdout);
    assert!(out.contains("issuer"), "{out}");
    assert_not_forged("auth list", &out);
}

// ---- 7. The loopback listener cannot be stalled ------------------------

use elicit::auth::loopback::Loopback;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Connects to the listener and sends `GET /` one byte a second, never
/// finishing the head, until the server closes or `stop` is set. Returns
/// how long the server kept the connection.
fn trickle(port: u16, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Duration> {
    std::thread::spawn(move || {
        let started = Instant::now();
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _ = s.set_read_timeout(Some(Duration::from_millis(900)));
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
    std::thread::sleep(Duration::from_millis(300));
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
        let authz = start_as(AsCfg::default());
        let as_base = authz.base.clone();
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let prm: Handler = Arc::new(move |base: &str, _: &Req| {
            if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < resets {
                return Resp::status(0, "");
            }
            Resp::json(
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [as_base]}),
            )
        });
        let server = start_resource_gated(prm, true);
        let dir = tempfile::tempdir().unwrap();
        let r = elicit_call(
            &dir.path().join("t"),
            &["--browser", &curl_browser()],
            &[],
            &format!("{}/mcp", server.base),
        );
        if resets == 1 {
            assert_eq!(r.code, Some(0), "{}", r.stderr);
        } else {
            assert_eq!(r.code, Some(1), "{}", r.stderr);
            assert!(r.stderr.contains("reset"), "{}", r.stderr);
        }
    }
}
