//! Sign-in extensions against a fake authorization server, identity
//! provider and protected MCP server, all on one 127.0.0.1 listener of
//! this file: DPoP (RFC 9449) with nonces at both sides and DPoP-bound
//! refresh, client credentials with a private-key JWT (RFC 7523 §2.2),
//! the JWT bearer grant for workload identity (RFC 7523 §2.1), and
//! enterprise-managed authorization (RFC 8693 token exchange for an
//! ID-JAG, then the JWT bearer grant).
//!
//! The fake checks what elicit sends with verifiers of its own: DPoP
//! proofs and ES256 assertions with the RustCrypto `p256` crate, RS256
//! assertions with `rsa` (elicit signs with `ring`), the JWK thumbprint
//! computed from the proof's `x` and `y` by hand, and `ath` recomputed.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
struct Req {
    path: String,
    query: HashMap<String, String>,
    form: HashMap<String, String>,
    json: Option<Value>,
    headers: HashMap<String, String>,
}

/// What the fake servers do.
#[derive(Clone)]
struct Cfg {
    grants: Vec<&'static str>,
    auth_methods: Vec<&'static str>,
    /// `dpop_signing_alg_values_supported` (None: not advertised).
    dpop_algs: Option<Vec<&'static str>>,
    /// The resource's 401 uses the DPoP scheme (else Bearer).
    dpop_challenge: bool,
    /// The token endpoint and the resource require a DPoP nonce.
    nonce: bool,
    /// The token endpoint refuses every grant with this error.
    refuse: Option<&'static str>,
    /// The IdP refuses the token exchange with this error.
    idp_refuse: Option<&'static str>,
    expires_in: u64,
    /// The Basic client credentials the token endpoint expects.
    basic: Option<(&'static str, &'static str)>,
    /// A `token_type` to answer instead of Bearer / DPoP.
    token_type: Option<&'static str>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            grants: vec!["authorization_code", "refresh_token"],
            auth_methods: vec!["none"],
            dpop_algs: None,
            dpop_challenge: false,
            nonce: false,
            refuse: None,
            idp_refuse: None,
            expires_in: 3600,
            basic: None,
            token_type: None,
        }
    }
}

const AS_NONCE: &str = "as-nonce-1";
const RS_NONCE: &str = "rs-nonce-1";
const ID_JAG: &str = "SECRET-IDJAG.eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.sig";

#[derive(Default)]
struct State {
    /// Issued access token -> the jkt it is bound to.
    tokens: HashMap<String, Option<String>>,
    /// refresh token -> jkt.
    refresh: HashMap<String, Option<String>>,
    n: u32,
    jtis: HashSet<String>,
    /// Everything the verifier found wrong.
    failures: Vec<String>,
    as_nonce_challenges: u32,
    as_nonce_honored: u32,
    rs_nonce_challenges: u32,
    rs_nonce_honored: u32,
    /// Verified DPoP proofs on MCP requests.
    mcp_proofs: u32,
    /// The jkt of each verified token-endpoint proof, in order.
    token_jkts: Vec<String>,
}

struct Fake {
    base: String,
    log: Arc<Mutex<Vec<Req>>>,
    state: Arc<Mutex<State>>,
}

impl Fake {
    fn start(cfg: Cfg) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(Mutex::new(State::default()));
        {
            let (base, log, state) = (base.clone(), log.clone(), state.clone());
            std::thread::spawn(move || {
                for s in listener.incoming().flatten() {
                    let (cfg, base, log, state) =
                        (cfg.clone(), base.clone(), log.clone(), state.clone());
                    std::thread::spawn(move || serve(s, &cfg, &base, &log, &state));
                }
            });
        }
        Fake { base, log, state }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn find(&self, path: &str) -> Vec<Req> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    fn failures(&self) -> Vec<String> {
        self.state.lock().unwrap().failures.clone()
    }
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
    let _method = first.next()?;
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
        path: url.path().to_string(),
        query: url.query_pairs().into_owned().collect(),
        form: url::form_urlencoded::parse(&body).into_owned().collect(),
        json: serde_json::from_slice(&body).ok(),
        headers,
    })
}

fn reply(s: &mut TcpStream, status: u16, extra: &str, body: &str) {
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn b64d(s: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(s).expect("base64url")
}

fn part_json(s: &str) -> Value {
    serde_json::from_slice(&b64d(s)).expect("JSON part")
}

/// Verifies a JWS signature with the RustCrypto `p256` crate, from the
/// public key's coordinates.
fn verify_es256(jws: &str, x: &[u8], y: &[u8]) -> Result<(), String> {
    use p256::ecdsa::signature::Verifier;
    let parts: Vec<&str> = jws.split('.').collect();
    if parts.len() != 3 {
        return Err("not three parts".into());
    }
    let point = p256::EncodedPoint::from_affine_coordinates(x.into(), y.into(), false);
    let key = p256::ecdsa::VerifyingKey::from_encoded_point(&point).map_err(|e| e.to_string())?;
    let sig = p256::ecdsa::Signature::from_slice(&b64d(parts[2])).map_err(|e| e.to_string())?;
    key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
        .map_err(|e| format!("signature: {e}"))
}

/// Checks one DPoP proof the way RFC 9449 §4.3 says a server does; returns
/// the key's thumbprint (computed here from `x` and `y`) and the claims.
fn check_proof(
    proof: Option<&String>,
    method: &str,
    url: &str,
    access_token: Option<&str>,
    jtis: &mut HashSet<String>,
) -> Result<(String, Value), String> {
    let proof = proof.ok_or("no DPoP header")?;
    let parts: Vec<&str> = proof.split('.').collect();
    if parts.len() != 3 {
        return Err("the proof is not a JWS".into());
    }
    let header = part_json(parts[0]);
    let claims = part_json(parts[1]);
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
        return Err(format!("header {header}"));
    }
    let jwk = &header["jwk"];
    if jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk.get("d").is_some() {
        return Err(format!("jwk {jwk}"));
    }
    let (x, y) = (
        jwk["x"].as_str().unwrap_or(""),
        jwk["y"].as_str().unwrap_or(""),
    );
    verify_es256(proof, &b64d(x), &b64d(y))?;
    let jti = claims["jti"].as_str().ok_or("no jti")?.to_string();
    if !jtis.insert(jti) {
        return Err("a jti was used twice".into());
    }
    if claims["htm"] != method {
        return Err(format!("htm {} for {method}", claims["htm"]));
    }
    if claims["htu"] != url {
        return Err(format!("htu {} for {url}", claims["htu"]));
    }
    let iat = claims["iat"].as_u64().ok_or("no iat")?;
    if iat.abs_diff(now()) > 300 {
        return Err("iat is off".into());
    }
    match access_token {
        Some(t) => {
            let want = URL_SAFE_NO_PAD.encode(Sha256::digest(t.as_bytes()));
            if claims["ath"] != want.as_str() {
                return Err(format!("ath {} is not the token's hash", claims["ath"]));
            }
        }
        None => {
            if claims.get("ath").is_some() {
                return Err("ath on a token request".into());
            }
        }
    }
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    Ok((
        URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())),
        claims,
    ))
}

fn serve(mut s: TcpStream, cfg: &Cfg, base: &str, log: &Mutex<Vec<Req>>, st: &Mutex<State>) {
    let Some(req) = read_req(&mut s) else { return };
    log.lock().unwrap().push(req.clone());
    let path = req.path.as_str();
    match path {
        "/.well-known/oauth-protected-resource/mcp" => {
            let doc = json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]});
            reply(&mut s, 200, "", &doc.to_string())
        }
        "/.well-known/oauth-authorization-server" => {
            let mut doc = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": cfg.grants,
                "token_endpoint_auth_methods_supported": cfg.auth_methods,
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
            });
            if let Some(a) = &cfg.dpop_algs {
                doc["dpop_signing_alg_values_supported"] = json!(a);
            }
            reply(&mut s, 200, "", &doc.to_string())
        }
        // The person signs in at once: back to elicit with a code.
        "/authorize" => {
            let mut to = url::Url::parse(&req.query["redirect_uri"]).unwrap();
            to.query_pairs_mut()
                .append_pair("code", "the-code")
                .append_pair("state", &req.query["state"]);
            reply(&mut s, 302, &format!("Location: {to}\r\n"), "")
        }
        "/token" => serve_token(&mut s, cfg, base, &req, st),
        "/idp/token" => serve_idp(&mut s, cfg, base, &req),
        "/idp/.well-known/openid-configuration" => {
            let doc = json!({
                "issuer": format!("{base}/idp"),
                "authorization_endpoint": format!("{base}/idp/authorize"),
                "token_endpoint": format!("{base}/idp/token"),
            });
            reply(&mut s, 200, "", &doc.to_string())
        }
        "/mcp" => serve_mcp(&mut s, cfg, base, &req, st),
        _ => reply(&mut s, 404, "", "{}"),
    }
}

fn serve_token(s: &mut TcpStream, cfg: &Cfg, base: &str, req: &Req, st: &Mutex<State>) {
    let f = &req.form;
    let grant = f.get("grant_type").cloned().unwrap_or_default();
    let mut g = st.lock().unwrap();
    let mut jkt = None;
    if cfg.dpop_algs.is_some() {
        let State { jtis, .. } = &mut *g;
        match check_proof(
            req.headers.get("dpop"),
            "POST",
            &format!("{base}/token"),
            None,
            jtis,
        ) {
            Ok((k, claims)) => {
                if cfg.nonce && claims["nonce"] != AS_NONCE {
                    g.as_nonce_challenges += 1;
                    drop(g);
                    return reply(
                        s,
                        400,
                        &format!("DPoP-Nonce: {AS_NONCE}\r\n"),
                        r#"{"error":"use_dpop_nonce"}"#,
                    );
                }
                if cfg.nonce {
                    g.as_nonce_honored += 1;
                }
                g.token_jkts.push(k.clone());
                jkt = Some(k);
            }
            Err(e) => g.failures.push(format!("token request proof: {e}")),
        }
    }
    if let Some(error) = cfg.refuse {
        drop(g);
        return reply(
            s,
            400,
            "",
            &json!({"error": error, "error_description": format!("refused; you sent {}", f.get("assertion").cloned().unwrap_or_default())}).to_string(),
        );
    }
    if let Some((id, secret)) = cfg.basic {
        let want = format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")));
        if req.headers.get("authorization") != Some(&want) {
            drop(g);
            return reply(s, 401, "", r#"{"error":"invalid_client"}"#);
        }
    }
    if grant == "refresh_token" {
        let bound = f
            .get("refresh_token")
            .and_then(|r| g.refresh.get(r).cloned());
        match bound {
            None => {
                drop(g);
                return reply(s, 400, "", r#"{"error":"invalid_grant"}"#);
            }
            Some(was) if was != jkt => g
                .failures
                .push("the refresh proof is not from the key the refresh token is bound to".into()),
            Some(_) => {}
        }
    }
    g.n += 1;
    let n = g.n;
    let (access, kind) = match &jkt {
        Some(_) => (format!("SECRET-DPOP-ACCESS-{n}"), "DPoP"),
        None => (format!("SECRET-ACCESS-{n}"), "Bearer"),
    };
    let refresh = format!("SECRET-REFRESH-{n}");
    g.tokens.insert(access.clone(), jkt.clone());
    g.refresh.insert(refresh.clone(), jkt);
    drop(g);
    let body = json!({
        "access_token": access,
        "refresh_token": refresh,
        "token_type": cfg.token_type.unwrap_or(kind),
        "expires_in": cfg.expires_in,
    });
    reply(s, 200, "", &body.to_string())
}

/// The enterprise IdP's token endpoint: an RFC 8693 exchange of the ID
/// token for an ID-JAG.
fn serve_idp(s: &mut TcpStream, cfg: &Cfg, base: &str, req: &Req) {
    let f = &req.form;
    let want = [
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag",
        ),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
        ("audience", base),
        ("client_id", "idp-client"),
    ];
    for (k, v) in want {
        if f.get(k).map(String::as_str) != Some(v) {
            return reply(
                s,
                400,
                "",
                &json!({"error": "invalid_request", "error_description": format!("{k}")})
                    .to_string(),
            );
        }
    }
    if f.get("resource") != Some(&format!("{base}/mcp"))
        || f.get("subject_token").map(String::as_str) != Some(ID_TOKEN.as_str())
    {
        return reply(s, 400, "", r#"{"error":"invalid_request"}"#);
    }
    if let Some(e) = cfg.idp_refuse {
        return reply(s, 400, "", &json!({"error": e}).to_string());
    }
    let body = json!({
        "access_token": ID_JAG,
        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "token_type": "N_A",
    });
    reply(s, 200, "", &body.to_string())
}

/// A protected MCP server (2025-11-25, JSON replies): `initialize` needs
/// no token, every other request one the token endpoint issued, sent with
/// the scheme it was issued for and, when DPoP-bound, a valid proof of
/// its key.
fn serve_mcp(s: &mut TcpStream, cfg: &Cfg, base: &str, req: &Req, st: &Mutex<State>) {
    let Some(msg) = req.json.clone() else {
        return reply(s, 400, "", "{}");
    };
    let method = msg["method"].as_str().unwrap_or("");
    let Some(id) = msg.get("id").cloned() else {
        return reply(s, 202, "", "");
    };
    let scheme = if cfg.dpop_challenge { "DPoP" } else { "Bearer" };
    let challenge = format!(
        "WWW-Authenticate: {scheme} resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n"
    );
    if method != "initialize" {
        let mut g = st.lock().unwrap();
        let presented = req
            .headers
            .get("authorization")
            .cloned()
            .unwrap_or_default();
        let (given_scheme, token) = presented.split_once(' ').unwrap_or(("", ""));
        let Some(bound) = g.tokens.get(token).cloned() else {
            drop(g);
            return reply(s, 401, &challenge, r#"{"error":"invalid_token"}"#);
        };
        match bound {
            Some(jkt) => {
                if given_scheme != "DPoP" {
                    g.failures
                        .push(format!("a DPoP-bound token sent as {given_scheme}"));
                }
                let State { jtis, .. } = &mut *g;
                match check_proof(
                    req.headers.get("dpop"),
                    "POST",
                    &format!("{base}/mcp"),
                    Some(token),
                    jtis,
                ) {
                    Ok((k, claims)) => {
                        if k != jkt {
                            g.failures.push("the proof's key is not the token's".into());
                        }
                        g.mcp_proofs += 1;
                        if cfg.nonce && claims["nonce"] != RS_NONCE {
                            g.rs_nonce_challenges += 1;
                            drop(g);
                            return reply(
                                s,
                                401,
                                &format!("WWW-Authenticate: DPoP error=\"use_dpop_nonce\"\r\nDPoP-Nonce: {RS_NONCE}\r\n"),
                                r#"{"error":"use_dpop_nonce"}"#,
                            );
                        }
                        if cfg.nonce {
                            g.rs_nonce_honored += 1;
                        }
                    }
                    Err(e) => g.failures.push(format!("MCP request proof: {e}")),
                }
            }
            None => {
                if given_scheme != "Bearer" {
                    g.failures
                        .push(format!("a Bearer token sent as {given_scheme}"));
                }
            }
        }
    }
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected", "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "echo",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        }]}),
        "tools/call" => json!({"content": [{"type": "text",
            "text": format!("echo: {}", msg["params"]["arguments"]["text"].as_str().unwrap_or(""))}]}),
        _ => json!({}),
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result});
    reply(s, 200, "", &body.to_string())
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn elicit(data: &Path, args: &[&str]) -> Run {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_elicit"))
        .args(args)
        .env("ELICIT_DATA_DIR", data)
        .env_remove("ELICIT_BROWSER")
        .env_remove("ELICIT_CLIENT_ID")
        .env_remove("ELICIT_CLIENT_SECRET")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn call(data: &Path, extra: &[&str], url: &str) -> Run {
    let mut args = vec![
        "call",
        "--no-input",
        "--protocol",
        "2025-11-25",
        "--timeout",
        "20s",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--tool", "echo", "--arg", "text=hi", url]);
    elicit(data, &args)
}

fn curl_browser() -> String {
    format!("{}/scripts/conformance-browser", env!("CARGO_MANIFEST_DIR"))
}

/// No secret of any kind in `text`.
fn assert_no_secret(what: &str, text: &str, extra: &[&str]) {
    for s in [
        "SECRET-",
        "the-code",
        ID_TOKEN_MARK,
        "-----BEGIN",
        "dpop_key",
    ]
    .iter()
    .chain(extra)
    {
        assert!(!text.contains(s), "{what} shows {s}:\n{text}");
    }
}

/// A JWT-shaped assertion with `exp` `from_now` seconds away.
fn jwt(mark: &str, exp_from_now: i64) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"ES256","typ":"JWT"}"#);
    let exp = now() as i64 + exp_from_now;
    let claims =
        URL_SAFE_NO_PAD.encode(json!({"iss": "https://idp", "sub": mark, "exp": exp}).to_string());
    format!("{header}.{claims}.c2lnbmF0dXJl")
}

const ID_TOKEN_MARK: &str = "person-at-idp";
static ID_TOKEN: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| jwt(ID_TOKEN_MARK, 3600));

/// DPoP, chosen by elicit itself (the server supports ES256 and the
/// resource sends a DPoP challenge), with nonces at both sides: every
/// proof verifies (signature with `p256`, claims, `ath`, the token's key),
/// each nonce challenge is retried once with the nonce, the key is kept
/// with the token (0600) and the sign-in is listed as DPoP-bound; a later
/// run refreshes the expired token with a proof of the same key; logout
/// removes it all.
#[test]
fn dpop_with_nonces_at_both_sides_and_a_bound_refresh() {
    let fake = Fake::start(Cfg {
        dpop_algs: Some(vec!["ES256"]),
        dpop_challenge: true,
        nonce: true,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let browser = curl_browser();
    let r = call(
        dir.path(),
        &[
            "--client-id",
            "public-client",
            "--browser",
            &browser,
            "--log",
            log.to_str().unwrap(),
            "--verbose",
        ],
        &fake.url(),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("echo: hi"), "{}", r.stdout);
    assert_eq!(fake.failures(), Vec::<String>::new());
    {
        let g = fake.state.lock().unwrap();
        assert_eq!((g.as_nonce_challenges, g.as_nonce_honored), (1, 1));
        assert_eq!(
            g.rs_nonce_challenges, 1,
            "one RS challenge, then the nonce is kept"
        );
        assert!(
            g.rs_nonce_honored >= 2,
            "tools/list and tools/call carried the nonce"
        );
        assert!(g.mcp_proofs >= 3);
    }
    assert_no_secret("stdout", &r.stdout, &[]);
    assert_no_secret("stderr", &r.stderr, &[]);
    assert_no_secret("--log", &std::fs::read_to_string(&log).unwrap(), &[]);
    // The key is in the 0600 entry, with the token.
    let tokens = dir.path().join("tokens");
    let files: Vec<_> = std::fs::read_dir(&tokens)
        .unwrap()
        .flatten()
        .filter(|f| f.path().extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1);
    let mode = files[0].metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let mut entry: Value =
        serde_json::from_str(&std::fs::read_to_string(files[0].path()).unwrap()).unwrap();
    assert!(entry["token"]["dpop_key"].is_string(), "{entry}");
    let list = elicit(dir.path(), &["auth", "list"]);
    assert!(list.stdout.contains("DPoP-bound"), "{}", list.stdout);
    assert_no_secret("auth list", &list.stdout, &[]);

    // A second run after the token expired: it is refreshed first, with a
    // proof of the same key (the fake checks the binding).
    entry["token"]["expires_at"] = json!(now() - 10);
    std::fs::write(files[0].path(), entry.to_string()).unwrap();
    let first_jkt = fake.state.lock().unwrap().token_jkts[0].clone();
    let r = call(dir.path(), &["--client-id", "public-client"], &fake.url());
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_eq!(fake.failures(), Vec::<String>::new());
    let refreshes: Vec<Req> = fake
        .find("/token")
        .into_iter()
        .filter(|t| t.form.get("grant_type").map(String::as_str) == Some("refresh_token"))
        .collect();
    assert!(!refreshes.is_empty(), "no refresh");
    let g = fake.state.lock().unwrap();
    assert!(
        g.token_jkts.iter().all(|k| *k == first_jkt),
        "{:?}",
        g.token_jkts
    );
    drop(g);
    assert_eq!(fake.find("/authorize").len(), 1, "signed in only once");

    let out = elicit(dir.path(), &["auth", "logout", &fake.url()]);
    assert_eq!(out.code, Some(0));
    assert!(!std::fs::read_dir(&tokens)
        .unwrap()
        .flatten()
        .any(|f| f.path().extension().is_some_and(|e| e == "json")));
}

/// `--dpop` asks for a bound token where the resource does not ask; a
/// server that answers `token_type: Bearer` to it gets Bearer, not DPoP.
#[test]
fn dpop_flag_and_a_bearer_answer() {
    let fake = Fake::start(Cfg {
        dpop_algs: Some(vec!["ES256"]),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let browser = curl_browser();
    let r = call(
        dir.path(),
        &[
            "--client-id",
            "public-client",
            "--browser",
            &browser,
            "--dpop",
        ],
        &fake.url(),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_eq!(fake.failures(), Vec::<String>::new());
    assert!(fake.state.lock().unwrap().mcp_proofs >= 2);
    assert!(fake.find("/token")[0].headers.contains_key("dpop"));

    // Without the flag, and no DPoP challenge: no proof at all.
    let plain = Fake::start(Cfg {
        dpop_algs: Some(vec!["ES256"]),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let r = call(
        dir.path(),
        &["--client-id", "public-client", "--browser", &browser],
        &plain.url(),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(!plain.find("/token")[0].headers.contains_key("dpop"));
    let mcp = plain.find("/mcp");
    assert!(mcp.iter().any(|m| m
        .headers
        .get("authorization")
        .is_some_and(|a| a.starts_with("Bearer SECRET-ACCESS-"))));
    assert!(mcp.iter().all(|m| !m.headers.contains_key("dpop")));

    // --dpop against a server taking other proof algorithms only.
    let other = Fake::start(Cfg {
        dpop_algs: Some(vec!["PS256"]),
        ..Default::default()
    });
    let r = call(
        tempfile::tempdir().unwrap().path(),
        &[
            "--client-id",
            "public-client",
            "--browser",
            &browser,
            "--dpop",
        ],
        &other.url(),
    );
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("PS256") && r.stderr.contains("ES256"),
        "{}",
        r.stderr
    );
}

/// Checks a private-key JWT client assertion: signature with the given
/// verifier, `iss` = `sub` = the client, `aud` the issuer, a `jti`, a
/// short `exp`.
fn check_assertion(req: &Req, base: &str, verify: &dyn Fn(&str) -> Result<(), String>) {
    let f = &req.form;
    assert_eq!(f["grant_type"], "client_credentials");
    assert_eq!(
        f["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert!(!f.contains_key("client_secret"));
    let a = &f["client_assertion"];
    verify(a).unwrap();
    let claims = part_json(a.split('.').nth(1).unwrap());
    assert_eq!(claims["iss"], "machine");
    assert_eq!(claims["sub"], "machine");
    assert_eq!(claims["aud"], base);
    assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
    let (iat, exp) = (
        claims["iat"].as_u64().unwrap(),
        claims["exp"].as_u64().unwrap(),
    );
    assert!(exp > now() && exp - iat <= 300, "{claims}");
}

#[test]
fn client_credentials_with_a_private_key_jwt_es256_and_rs256() {
    let cfg = Cfg {
        grants: vec!["client_credentials"],
        auth_methods: vec!["private_key_jwt"],
        ..Default::default()
    };
    // ES256: a key made by rcgen, verified with p256 from its public point.
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("client.pem");
    std::fs::write(&pem, key.serialize_pem()).unwrap();
    let fake = Fake::start(cfg.clone());
    let r = call(
        dir.path(),
        &[
            "--client-id",
            "machine",
            "--client-assertion-key",
            pem.to_str().unwrap(),
        ],
        &fake.url(),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("echo: hi"));
    let point = key.public_key_raw().to_vec();
    let verify = |jws: &str| {
        let header = part_json(jws.split('.').next().unwrap());
        assert_eq!(header["alg"], "ES256");
        verify_es256(jws, &point[1..33], &point[33..65])
    };
    check_assertion(&fake.find("/token")[0], &fake.base, &verify);
    assert!(fake.find("/authorize").is_empty() && fake.find("/register").is_empty());
    assert_no_secret("stderr", &r.stderr, &[]);

    // RS256 (PKCS#8 and PKCS#1 files), verified with the `rsa` crate.
    for file in ["rsa-test-key.pem", "rsa-test-key-pkcs1.pem"] {
        use rsa::pkcs8::DecodePrivateKey;
        use rsa::signature::Verifier;
        let path = format!("{}/fixtures/auth/{file}", env!("CARGO_MANIFEST_DIR"));
        let private = rsa::RsaPrivateKey::from_pkcs8_pem(
            &std::fs::read_to_string(format!(
                "{}/fixtures/auth/rsa-test-key.pem",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        )
        .unwrap();
        let public = rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(private.to_public_key());
        let fake = Fake::start(cfg.clone());
        let dir = tempfile::tempdir().unwrap();
        let r = call(
            dir.path(),
            &["--client-id", "machine", "--client-assertion-key", &path],
            &fake.url(),
        );
        assert_eq!(r.code, Some(0), "{file}: {}", r.stderr);
        let verify = |jws: &str| {
            let parts: Vec<&str> = jws.split('.').collect();
            assert_eq!(part_json(parts[0])["alg"], "RS256");
            let sig = rsa::pkcs1v15::Signature::try_from(b64d(parts[2]).as_slice())
                .map_err(|e| e.to_string())?;
            public
                .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
                .map_err(|e| e.to_string())
        };
        check_assertion(&fake.find("/token")[0], &fake.base, &verify);
    }

    // SEC1 ("EC PRIVATE KEY") works too.
    let fake = Fake::start(cfg);
    let sec1 = format!(
        "{}/fixtures/auth/ec-test-key-sec1.pem",
        env!("CARGO_MANIFEST_DIR")
    );
    let r = call(
        tempfile::tempdir().unwrap().path(),
        &["--client-id", "machine", "--client-assertion-key", &sec1],
        &fake.url(),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

/// A bad key file is a clear error naming the file, with nothing sent.
#[test]
fn bad_key_files_are_clear_errors() {
    let fake = Fake::start(Cfg {
        grants: vec!["client_credentials"],
        auth_methods: vec!["private_key_jwt"],
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(
        &garbage,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let text = dir.path().join("text.pem");
    std::fs::write(&text, "hello").unwrap();
    let missing = dir.path().join("missing.pem");
    for (path, says) in [
        (&garbage, "neither an EC"),
        (&text, "not a PEM private key"),
        (&missing, "cannot read"),
    ] {
        let p = path.to_str().unwrap();
        let r = call(
            dir.path(),
            &["--client-id", "machine", "--client-assertion-key", p],
            &fake.url(),
        );
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(
            r.stderr.contains(p) && r.stderr.contains(says),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("--client-assertion-key"), "{}", r.stderr);
        assert!(!r.stderr.contains("AAAA"), "{}", r.stderr);
    }
    // Without --client-id.
    let rsa = format!(
        "{}/fixtures/auth/rsa-test-key.pem",
        env!("CARGO_MANIFEST_DIR")
    );
    let r = call(dir.path(), &["--client-assertion-key", &rsa], &fake.url());
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("needs --client-id"), "{}", r.stderr);
    assert!(fake.find("/token").is_empty());
}

/// Workload identity: the assertion goes as the JWT bearer grant, with no
/// registration, no browser and no client authentication.
#[test]
fn jwt_bearer_grant_with_an_assertion() {
    let fake = Fake::start(Cfg {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("workload.jwt");
    let assertion = jwt("workload-one", 300);
    std::fs::write(&file, format!("{assertion}\n")).unwrap();
    let r = call(
        dir.path(),
        &["--assertion", file.to_str().unwrap(), "--verbose"],
        &fake.url(),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("echo: hi"));
    let t = fake.find("/token");
    assert_eq!(t.len(), 1);
    assert_eq!(
        t[0].form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(t[0].form["assertion"], assertion);
    assert_eq!(t[0].form["resource"], fake.url());
    assert!(!t[0].headers.contains_key("authorization"));
    assert!(!t[0].form.contains_key("client_secret"));
    assert!(fake.find("/register").is_empty() && fake.find("/authorize").is_empty());
    assert_no_secret("stderr", &r.stderr, &[&assertion]);
    assert_no_secret("stdout", &r.stdout, &[&assertion]);
}

/// A refused assertion ends the run with the server's error, after one
/// token request: never retried, never another grant. An expired one is
/// refused before anything is sent.
#[test]
fn refused_and_expired_assertions() {
    let fake = Fake::start(Cfg {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        refuse: Some("invalid_grant"),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("workload.jwt");
    let assertion = jwt("workload-two", 300);
    std::fs::write(&file, &assertion).unwrap();
    let r = call(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &fake.url(),
    );
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("invalid_grant"), "{}", r.stderr);
    // The fake echoes the assertion in its description: cut out.
    assert!(!r.stderr.contains(&assertion), "{}", r.stderr);
    assert_eq!(fake.find("/token").len(), 1, "retried");
    assert!(fake.find("/authorize").is_empty() && fake.find("/register").is_empty());

    let fresh = Fake::start(Cfg {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        ..Default::default()
    });
    std::fs::write(&file, jwt("workload-three", -120)).unwrap();
    let r = call(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &fresh.url(),
    );
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("expired") && r.stderr.contains("--assertion"),
        "{}",
        r.stderr
    );
    assert!(fresh.find("/token").is_empty());
    std::fs::write(&file, "not a jwt").unwrap();
    let r = call(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &fresh.url(),
    );
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("does not hold a JWT"), "{}", r.stderr);
    // A server without the grant.
    let no_grant = Fake::start(Cfg::default());
    std::fs::write(&file, jwt("workload-four", 300)).unwrap();
    let r = call(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &no_grant.url(),
    );
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("does not offer"), "{}", r.stderr);
    assert!(no_grant.find("/token").is_empty());
}

/// Enterprise-managed authorization: the ID token is exchanged at the IdP
/// (RFC 8693: ID-JAG, audience the issuer, resource as the metadata says)
/// and the ID-JAG goes to the authorization server as the JWT bearer grant
/// with the client's Basic authentication.
#[test]
fn enterprise_token_exchange_then_jwt_bearer() {
    let fake = Fake::start(Cfg {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        auth_methods: vec!["client_secret_basic"],
        basic: Some(("ent-client", "SECRET-CLIENT")),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let id_token = dir.path().join("id.jwt");
    std::fs::write(&id_token, ID_TOKEN.as_str()).unwrap();
    let idp = format!("{}/idp/token", fake.base);
    let log = dir.path().join("log.jsonl");
    let args = [
        "--client-id",
        "ent-client",
        "--client-secret",
        "SECRET-CLIENT",
        "--idp-token-endpoint",
        &idp,
        "--idp-id-token",
        id_token.to_str().unwrap(),
        "--idp-client-id",
        "idp-client",
        "--log",
        log.to_str().unwrap(),
    ];
    let r = call(dir.path(), &args, &fake.url());
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(r.stdout.contains("echo: hi"));
    assert_eq!(fake.find("/idp/token").len(), 1);
    let t = fake.find("/token");
    assert_eq!(t.len(), 1);
    assert_eq!(
        t[0].form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(t[0].form["assertion"], ID_JAG);
    for (what, text) in [
        ("stdout", &r.stdout),
        ("stderr", &r.stderr),
        ("--log", &std::fs::read_to_string(&log).unwrap()),
    ] {
        assert_no_secret(what, text, &[ID_JAG, ID_TOKEN.as_str()]);
    }

    // The IdP by its issuer: its metadata names the token endpoint.
    let by_issuer = Fake::start(Cfg {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        ..Default::default()
    });
    let issuer = format!("{}/idp", by_issuer.base);
    let r = call(
        dir.path(),
        &[
            "--idp-issuer",
            &issuer,
            "--idp-id-token",
            id_token.to_str().unwrap(),
            "--idp-client-id",
            "idp-client",
        ],
        &by_issuer.url(),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(by_issuer.find("/idp/token").len(), 1);
    // Never an ID token over plain http to another machine.
    let r = call(
        tempfile::tempdir().unwrap().path(),
        &[
            "--idp-token-endpoint",
            "http://idp.example/token",
            "--idp-id-token",
            id_token.to_str().unwrap(),
        ],
        &by_issuer.url(),
    );
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("not https"), "{}", r.stderr);

    // The IdP refuses: a clear error naming it, and no grant at the AS.
    let refusing = Fake::start(Cfg {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        idp_refuse: Some("access_denied"),
        ..Default::default()
    });
    let idp = format!("{}/idp/token", refusing.base);
    let r = call(
        dir.path(),
        &[
            "--idp-token-endpoint",
            &idp,
            "--idp-id-token",
            id_token.to_str().unwrap(),
            "--idp-client-id",
            "idp-client",
        ],
        &refusing.url(),
    );
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("access_denied") && r.stderr.contains("/idp/token"),
        "{}",
        r.stderr
    );
    assert!(refusing.find("/token").is_empty());
    assert_no_secret("stderr", &r.stderr, &[ID_TOKEN.as_str()]);
}

/// Debug prints of the options hold no secret of the extensions.
#[test]
fn options_debug_redacts_extension_secrets() {
    let opts = elicit::auth::AuthOptions {
        extensions: elicit::auth::grants::ExtensionOptions {
            idp_client_secret: Some("SECRET-IDP".into()),
            assertion: Some("/path/to/assertion".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let text = format!("{opts:?}");
    assert!(
        !text.contains("SECRET-IDP") && text.contains("redacted"),
        "{text}"
    );
}

/// `proxy` reads the MCP client from standard input: `--assertion -`
/// there is refused before anything starts.
#[test]
fn proxy_refuses_an_assertion_on_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let r = elicit(
        dir.path(),
        &["proxy", "--assertion", "-", "http://127.0.0.1:9/mcp"],
    );
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr.contains("--assertion -") && r.stderr.contains("pass a file"),
        "{}",
        r.stderr
    );
}

/// A token of a type elicit cannot present (RFC 6749 §7.1) is refused,
/// not sent as Bearer; so is `DPoP` when no proof was sent.
#[test]
fn a_token_type_elicit_cannot_present_is_refused() {
    let rsa = format!(
        "{}/fixtures/auth/rsa-test-key.pem",
        env!("CARGO_MANIFEST_DIR")
    );
    for token_type in ["mac", "DPoP"] {
        let fake = Fake::start(Cfg {
            grants: vec!["client_credentials"],
            auth_methods: vec!["private_key_jwt"],
            token_type: Some(token_type),
            ..Default::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let r = call(
            dir.path(),
            &["--client-id", "machine", "--client-assertion-key", &rsa],
            &fake.url(),
        );
        assert_eq!(r.code, Some(1), "{token_type}: {}", r.stderr);
        assert!(
            r.stderr.contains(token_type) && r.stderr.contains("refused"),
            "{}",
            r.stderr
        );
        assert!(fake
            .find("/mcp")
            .iter()
            .all(|m| !m.headers.contains_key("authorization")));
    }
}
