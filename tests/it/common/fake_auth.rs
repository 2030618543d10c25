//! The one fake OAuth world of the sign-in tests (`auth`, `signin_hostile`,
//! `auth_extensions`): an authorization server, an enterprise IdP and a
//! protected MCP server (the resource, with its RFC 9728 metadata), served
//! by std `TcpListener` threads on 127.0.0.1.
//!
//! What belongs here: the HTTP plumbing ([`Http`], [`Req`], [`Resp`]), the
//! fake itself ([`FakeAuth`], shaped by a [`Config`] of defaults, per-
//! scenario knobs and hooks that replace one endpoint's answer), the
//! verifiers it checks elicit's requests with (PKCE S256, client
//! authentication, DPoP proofs), and the runner of `elicit call` against it.
//! What does not: a scenario's own answers (a hostile metadata document, a
//! token endpoint that lies): those stay in the test as hooks, so each test
//! file shows what it varies.
//!
//! Every request is recorded, so a test asserts on what elicit really sent
//! (and what it did not send, and to whom).

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

// ---- HTTP plumbing ------------------------------------------------------

/// One request as the fake read it.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub form: HashMap<String, String>,
    /// The body, when it is JSON.
    pub json: Option<Value>,
    /// Names in lower case.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

/// Writes an answer's body itself, after its head: an event stream.
pub type BodyWriter = Box<dyn FnOnce(&mut TcpStream) + Send>;

/// One answer; status 0 closes the connection with a TCP reset instead.
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Writes the body itself after the head (no Content-Length; the
    /// connection closes when it returns): an event stream.
    pub stream: Option<BodyWriter>,
}

impl Resp {
    /// `body` with the status; JSON if it looks like JSON, else plain text.
    pub fn status(status: u16, body: &str) -> Resp {
        let ctype = if body.starts_with('{') {
            "application/json"
        } else {
            "text/plain"
        };
        Resp {
            status,
            headers: vec![("Content-Type".into(), ctype.into())],
            body: body.into(),
            stream: None,
        }
    }
    pub fn json(v: Value) -> Resp {
        Resp::status(200, &v.to_string())
    }
    pub fn redirect(to: &str) -> Resp {
        Resp {
            status: 302,
            headers: vec![("Location".into(), to.into())],
            body: String::new(),
            stream: None,
        }
    }
    /// The connection is reset under the request.
    pub fn reset() -> Resp {
        Resp::status(0, "")
    }
    pub fn header(mut self, name: &str, value: &str) -> Resp {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// A whole server's answer: `handler(base, request)`.
pub type Handler = Arc<dyn Fn(&str, &Req) -> Resp + Send + Sync>;
/// One endpoint's answer.
pub type Answer = Arc<dyn Fn(&Req) -> Resp + Send + Sync>;
/// An edit of a metadata document: `edit(base, doc)`.
pub type EditMeta = Arc<dyn Fn(&str, &mut Value) + Send + Sync>;

/// One HTTP server on 127.0.0.1: `handler(base, request)` answers, every
/// request is logged.
pub struct Http {
    pub base: String,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Http {
    pub fn start(handler: Handler) -> Http {
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

    pub fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }

    /// "METHOD /path" of every request, in order.
    pub fn paths(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    /// The requests to exactly `path`.
    pub fn find(&self, path: &str) -> Vec<Req> {
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
        json: serde_json::from_slice(&body).ok(),
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
        return super::close_with_reset(s);
    }
    let mut head = format!("HTTP/1.1 {} X\r\n", r.status);
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(stream) = r.stream {
        head.push_str("Connection: close\r\n\r\n");
        let _ = s.write_all(head.as_bytes());
        return stream(&mut s);
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        r.body.len()
    ));
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(r.body.as_bytes());
}

// ---- The fake -----------------------------------------------------------

/// The `iss` the authorization endpoint sends back (RFC 9207).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Iss {
    /// The issuer of the metadata.
    Correct,
    /// Another one.
    Wrong,
    /// None at all.
    Omit,
}

/// What the fake does. Paths are on one listener: the resource at `/mcp`
/// (its metadata at `prm_path`), the authorization server under
/// `as_prefix`, the IdP under `/idp`.
#[derive(Clone)]
pub struct Config {
    // -- the resource
    /// Where protected resource metadata is served (None: nowhere).
    pub prm_path: Option<&'static str>,
    /// Its `resource` (None: this fake's `/mcp`).
    pub prm_resource: Option<String>,
    pub prm_scopes: Option<Vec<&'static str>>,
    /// The authorization server at this base, on another fake, protects
    /// the resource; this fake then serves no authorization server or IdP.
    pub authorization_server: Option<String>,
    /// Replaces the answer at `prm_path`: `prm(base, request)`.
    pub prm: Option<Handler>,
    /// `initialize` needs a token too (as on most real servers), so
    /// sign-in happens while connecting.
    pub initialize_needs_token: bool,
    /// The MCP endpoint answers 401 even to issued tokens.
    pub reject_tokens: bool,
    /// Bearer tokens starting with this are taken as issued by the other
    /// fake named in `authorization_server`.
    pub foreign_tokens: Option<&'static str>,
    /// The resource's 401 uses the DPoP scheme (else Bearer).
    pub dpop_challenge: bool,

    // -- the authorization server's metadata
    pub as_prefix: &'static str,
    /// Where the authorization server metadata is served (None: nowhere).
    pub as_metadata_path: Option<String>,
    /// Its `issuer` (None: this fake's base and `as_prefix`).
    pub metadata_issuer: Option<String>,
    pub auth_methods: Vec<&'static str>,
    pub pkce_methods: Option<Vec<&'static str>>,
    pub iss_supported: bool,
    pub registration: bool,
    pub cimd: bool,
    pub as_scopes: Option<Vec<&'static str>>,
    /// `grant_types_supported`.
    pub grants: Vec<&'static str>,
    /// `dpop_signing_alg_values_supported` (None: not advertised, and the
    /// token endpoint checks no proof).
    pub dpop_algs: Option<Vec<&'static str>>,
    /// Edits the metadata document after it is built: `meta(base, doc)`.
    pub meta: Option<EditMeta>,

    // -- the authorization server's endpoints
    pub iss: Iss,
    /// Replaces the authorization endpoint: `authorize(issuer, request)`.
    pub authorize: Option<Handler>,
    /// Replaces the registration endpoint.
    pub register: Option<Answer>,
    /// Replaces the token endpoint.
    pub token: Option<Answer>,
    /// Pre-registered client expected at the token endpoint, by HTTP Basic
    /// when `auth_methods[0]` is `client_secret_basic`, else in the form.
    pub client: Option<(&'static str, &'static str)>,
    pub expires_in: u64,
    /// The token endpoint and the resource require a DPoP nonce.
    pub nonce: bool,
    /// The token endpoint refuses every grant with this error.
    pub refuse: Option<&'static str>,
    /// A `token_type` to answer instead of Bearer / DPoP.
    pub token_type: Option<&'static str>,
    /// The IdP refuses the token exchange with this error.
    pub idp_refuse: Option<&'static str>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            prm_path: Some("/.well-known/oauth-protected-resource/mcp"),
            prm_resource: None,
            prm_scopes: None,
            authorization_server: None,
            prm: None,
            initialize_needs_token: false,
            reject_tokens: false,
            foreign_tokens: None,
            dpop_challenge: false,
            as_prefix: "",
            as_metadata_path: Some("/.well-known/oauth-authorization-server".into()),
            metadata_issuer: None,
            auth_methods: vec!["none"],
            pkce_methods: Some(vec!["S256"]),
            iss_supported: true,
            registration: true,
            cimd: false,
            as_scopes: None,
            grants: vec!["authorization_code", "refresh_token"],
            dpop_algs: None,
            meta: None,
            iss: Iss::Correct,
            authorize: None,
            register: None,
            token: None,
            client: None,
            expires_in: 3600,
            nonce: false,
            refuse: None,
            token_type: None,
            idp_refuse: None,
        }
    }
}

pub const AS_NONCE: &str = "as-nonce-1";
pub const RS_NONCE: &str = "rs-nonce-1";
pub const ID_JAG: &str = "SECRET-IDJAG.eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.sig";
/// The subject of [`ID_TOKEN`], the one ID token the IdP exchanges.
pub const ID_TOKEN_MARK: &str = "person-at-idp";
pub static ID_TOKEN: LazyLock<String> = LazyLock::new(|| jwt(ID_TOKEN_MARK, 3600));

/// What the fake learnt and issued.
#[derive(Default)]
pub struct State {
    /// The PKCE challenge of the last authorization request.
    pub challenge: Option<String>,
    /// Issued access token -> the jkt it is bound to.
    pub tokens: HashMap<String, Option<String>>,
    /// refresh token -> jkt.
    pub refresh: HashMap<String, Option<String>>,
    pub n: u32,
    pub jtis: HashSet<String>,
    /// Everything the verifiers found wrong.
    pub failures: Vec<String>,
    pub as_nonce_challenges: u32,
    pub as_nonce_honored: u32,
    pub rs_nonce_challenges: u32,
    pub rs_nonce_honored: u32,
    /// Verified DPoP proofs on MCP requests.
    pub mcp_proofs: u32,
    /// The jkt of each verified token-endpoint proof, in order.
    pub token_jkts: Vec<String>,
    /// The client's responses to the elicitations the `ask` tool sent.
    pub elicit_answers: Vec<Value>,
}

/// The fake on its listener.
pub struct FakeAuth {
    pub base: String,
    http: Http,
    pub state: Arc<Mutex<State>>,
}

impl FakeAuth {
    pub fn start(cfg: Config) -> FakeAuth {
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        let http = Http::start(Arc::new(move |base: &str, req: &Req| {
            answer(&cfg, base, req, &st)
        }));
        FakeAuth {
            base: http.base.clone(),
            http,
            state,
        }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn requests(&self) -> Vec<Req> {
        self.http.requests()
    }

    pub fn paths(&self) -> Vec<String> {
        self.http.paths()
    }

    pub fn find(&self, path: &str) -> Vec<Req> {
        self.http.find(path)
    }

    pub fn failures(&self) -> Vec<String> {
        self.state.lock().unwrap().failures.clone()
    }

    /// The resource's `WWW-Authenticate` challenge, with `scope`.
    pub fn challenge(&self, scope: Option<&str>) -> String {
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

fn answer(cfg: &Config, base: &str, req: &Req, st: &Arc<Mutex<State>>) -> Resp {
    let p = cfg.as_prefix;
    let path = req.path.as_str();
    if Some(path) == cfg.prm_path {
        if let Some(prm) = &cfg.prm {
            return prm(base, req);
        }
        let authz = cfg
            .authorization_server
            .clone()
            .unwrap_or_else(|| format!("{base}{p}"));
        let mut doc = json!({
            "resource": cfg.prm_resource.clone().unwrap_or_else(|| format!("{base}/mcp")),
            "authorization_servers": [authz],
        });
        if let Some(sc) = &cfg.prm_scopes {
            doc["scopes_supported"] = json!(sc);
        }
        return Resp::json(doc);
    }
    if path == "/mcp" {
        return mcp(cfg, base, req, st);
    }
    if cfg.authorization_server.is_some() {
        return Resp::status(404, "not found");
    }
    let meta = as_metadata(cfg, base);
    let post = req.method == "POST";
    if Some(path) == cfg.as_metadata_path.as_deref() {
        return Resp::json(meta);
    }
    if path == format!("{p}/register") && post {
        if let Some(register) = &cfg.register {
            return register(req);
        }
        let body = json!({
            "client_id": "dcr-client",
            "client_secret": "dcr-secret-XYZ",
            "token_endpoint_auth_method": cfg.auth_methods[0],
            "redirect_uris": req.json.as_ref().and_then(|j| j.get("redirect_uris")).cloned(),
        });
        return Resp::status(201, &body.to_string());
    }
    if path == format!("{p}/authorize") {
        let issuer = meta["issuer"].as_str().unwrap_or(base).to_string();
        if let Some(authorize) = &cfg.authorize {
            return authorize(&issuer, req);
        }
        st.lock().unwrap().challenge = req.query.get("code_challenge").cloned();
        let iss = match cfg.iss {
            Iss::Correct => Some(issuer.as_str()),
            Iss::Wrong => Some("https://evil.example.com"),
            Iss::Omit => None,
        };
        return redirect_with_code(req, iss);
    }
    if path == format!("{p}/token") && post {
        if let Some(token) = &cfg.token {
            return token(req);
        }
        return token_endpoint(cfg, &format!("{base}{p}/token"), req, st);
    }
    match path {
        "/idp/token" => idp_token(cfg, base, req),
        "/idp/.well-known/openid-configuration" => Resp::json(json!({
            "issuer": format!("{base}/idp"),
            "authorization_endpoint": format!("{base}/idp/authorize"),
            "token_endpoint": format!("{base}/idp/token"),
        })),
        _ => Resp::status(404, "not found"),
    }
}

/// The authorization server metadata `cfg` makes the fake at `base` serve.
pub fn as_metadata(cfg: &Config, base: &str) -> Value {
    let p = cfg.as_prefix;
    let mut doc = json!({
        "issuer": cfg.metadata_issuer.clone().unwrap_or_else(|| format!("{base}{p}")),
        "authorization_endpoint": format!("{base}{p}/authorize"),
        "token_endpoint": format!("{base}{p}/token"),
        "response_types_supported": ["code"],
        "grant_types_supported": cfg.grants,
        "token_endpoint_auth_methods_supported": cfg.auth_methods,
        "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
        "authorization_response_iss_parameter_supported": cfg.iss_supported,
        "client_id_metadata_document_supported": cfg.cimd,
    });
    if cfg.registration {
        doc["registration_endpoint"] = json!(format!("{base}{p}/register"));
    }
    if let Some(m) = &cfg.pkce_methods {
        doc["code_challenge_methods_supported"] = json!(m);
    }
    if let Some(sc) = &cfg.as_scopes {
        doc["scopes_supported"] = json!(sc);
    }
    if let Some(a) = &cfg.dpop_algs {
        doc["dpop_signing_alg_values_supported"] = json!(a);
    }
    if let Some(edit) = &cfg.meta {
        edit(base, &mut doc);
    }
    doc
}

/// The person signs in at once: back to elicit's loopback listener with a
/// code, the state it sent and `iss`.
pub fn redirect_with_code(req: &Req, iss: Option<&str>) -> Resp {
    let mut to = url::Url::parse(&req.query["redirect_uri"]).unwrap();
    to.query_pairs_mut()
        .append_pair("code", "the-code")
        .append_pair(
            "state",
            req.query.get("state").map(String::as_str).unwrap_or(""),
        );
    if let Some(iss) = iss {
        to.query_pairs_mut().append_pair("iss", iss);
    }
    Resp::redirect(to.as_str())
}

fn token_endpoint(cfg: &Config, token_url: &str, req: &Req, st: &Mutex<State>) -> Resp {
    let f = &req.form;
    let grant = f.get("grant_type").cloned().unwrap_or_default();
    let mut g = st.lock().unwrap();
    let mut jkt = None;
    if cfg.dpop_algs.is_some() {
        let State { jtis, .. } = &mut *g;
        match check_proof(req.headers.get("dpop"), "POST", token_url, None, jtis) {
            Ok((k, claims)) => {
                if cfg.nonce && claims["nonce"] != AS_NONCE {
                    g.as_nonce_challenges += 1;
                    return Resp::status(400, r#"{"error":"use_dpop_nonce"}"#)
                        .header("DPoP-Nonce", AS_NONCE);
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
        let sent = f.get("assertion").cloned().unwrap_or_default();
        return Resp::status(
            400,
            &json!({"error": error, "error_description": format!("refused; you sent {sent}")})
                .to_string(),
        );
    }
    if let Some((id, secret)) = cfg.client {
        let basic = format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")));
        let ok = match cfg.auth_methods[0] {
            "client_secret_basic" => req.headers.get("authorization") == Some(&basic),
            _ => {
                f.get("client_id").map(String::as_str) == Some(id)
                    && f.get("client_secret").map(String::as_str) == Some(secret)
            }
        };
        if !ok {
            return Resp::status(401, r#"{"error":"invalid_client"}"#);
        }
    }
    if grant == "authorization_code" {
        let verifier = f.get("code_verifier").cloned().unwrap_or_default();
        let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        if Some(computed) != g.challenge {
            return Resp::status(
                400,
                r#"{"error":"invalid_grant","error_description":"PKCE verification failed"}"#,
            );
        }
    }
    if grant == "refresh_token" {
        let bound = f
            .get("refresh_token")
            .and_then(|r| g.refresh.get(r).cloned());
        match bound {
            None => return Resp::status(400, r#"{"error":"invalid_grant"}"#),
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
    Resp::json(json!({
        "access_token": access,
        "refresh_token": refresh,
        "token_type": cfg.token_type.unwrap_or(kind),
        "expires_in": cfg.expires_in,
    }))
}

/// The enterprise IdP's token endpoint: an RFC 8693 exchange of
/// [`ID_TOKEN`] for [`ID_JAG`].
fn idp_token(cfg: &Config, base: &str, req: &Req) -> Resp {
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
            let body = json!({"error": "invalid_request", "error_description": k});
            return Resp::status(400, &body.to_string());
        }
    }
    if f.get("resource") != Some(&format!("{base}/mcp"))
        || f.get("subject_token").map(String::as_str) != Some(ID_TOKEN.as_str())
    {
        return Resp::status(400, r#"{"error":"invalid_request"}"#);
    }
    if let Some(e) = cfg.idp_refuse {
        return Resp::status(400, &json!({"error": e}).to_string());
    }
    Resp::json(json!({
        "access_token": ID_JAG,
        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "token_type": "N_A",
    }))
}

/// A protected MCP server (2025-11-25, JSON replies, no session): like the
/// conformance suite's, `initialize` (unless `initialize_needs_token`) and
/// notifications need no token; every other request one the token
/// endpoint issued, sent with the scheme it was issued for and, when
/// DPoP-bound, a valid proof of its key; else 401 with the challenge. One
/// tool, `echo`.
fn mcp(cfg: &Config, base: &str, req: &Req, st: &Arc<Mutex<State>>) -> Resp {
    if req.method != "POST" {
        return Resp::status(405, "");
    }
    let Some(msg) = req.json.clone() else {
        return Resp::status(400, "not json");
    };
    let method = msg["method"].as_str().unwrap_or("");
    let Some(id) = msg.get("id").cloned() else {
        return Resp::status(202, "");
    };
    if cfg.initialize_needs_token || method != "initialize" {
        let scheme = if cfg.dpop_challenge { "DPoP" } else { "Bearer" };
        let challenge = Resp::status(401, r#"{"error":"invalid_token"}"#).header(
            "WWW-Authenticate",
            &format!(
                "{scheme} resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
            ),
        );
        if cfg.reject_tokens {
            return challenge;
        }
        if let Err(refused) = check_token(cfg, base, req, st) {
            return refused.unwrap_or(challenge);
        }
    }
    if method.is_empty() && (msg.get("result").is_some() || msg.get("error").is_some()) {
        st.lock().unwrap().elicit_answers.push(msg);
        return Resp::status(202, "");
    }
    if method == "tools/call" && msg["params"]["name"] == "ask" {
        return ask_for_a_name(id, st.clone());
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
        }, {
            "name": "ask",
            "inputSchema": {"type": "object", "properties": {}}
        }]}),
        "tools/call" => json!({"content": [{"type": "text",
            "text": format!("echo: {}", msg["params"]["arguments"]["text"].as_str().unwrap_or(""))}]}),
        _ => json!({}),
    };
    Resp::json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// The `ask` tool: on the call's event stream, an elicitation of a name,
/// then (once the client's response arrived, in a POST of its own) the
/// result `hello NAME`, or `declined` for any other response.
fn ask_for_a_name(id: Value, st: Arc<Mutex<State>>) -> Resp {
    let stream = Box::new(move |s: &mut TcpStream| {
        let ask = json!({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
            "params": {"message": "Your name?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]}}});
        if write!(s, "event: message\ndata: {ask}\n\n").is_err() {
            return;
        }
        let _ = s.flush();
        // The response comes in another request, on another thread.
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let response = loop {
            if let Some(r) = st.lock().unwrap().elicit_answers.pop() {
                break r;
            }
            if std::time::Instant::now() > deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let text = match response["result"]["content"]["name"].as_str() {
            Some(name) if response["result"]["action"] == "accept" => format!("hello {name}"),
            _ => "declined".to_string(),
        };
        let result = json!({"jsonrpc": "2.0", "id": id,
            "result": {"content": [{"type": "text", "text": text}]}});
        let _ = write!(s, "event: message\ndata: {result}\n\n");
    });
    Resp {
        status: 200,
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        body: String::new(),
        stream: Some(stream),
    }
}

/// Whether the MCP request carries a token this resource takes: Err(None)
/// for the plain challenge, Err(Some(answer)) for another refusal.
fn check_token(cfg: &Config, base: &str, req: &Req, st: &Mutex<State>) -> Result<(), Option<Resp>> {
    let presented = req
        .headers
        .get("authorization")
        .cloned()
        .unwrap_or_default();
    if let Some(prefix) = cfg.foreign_tokens {
        if presented.starts_with(&format!("Bearer {prefix}")) {
            return Ok(());
        }
    }
    let (given_scheme, token) = presented.split_once(' ').unwrap_or(("", ""));
    let mut g = st.lock().unwrap();
    let Some(bound) = g.tokens.get(token).cloned() else {
        return Err(None);
    };
    let Some(jkt) = bound else {
        if given_scheme != "Bearer" {
            g.failures
                .push(format!("a Bearer token sent as {given_scheme}"));
            return Err(None);
        }
        return Ok(());
    };
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
                return Err(Some(
                    Resp::status(401, r#"{"error":"use_dpop_nonce"}"#)
                        .header("WWW-Authenticate", "DPoP error=\"use_dpop_nonce\"")
                        .header("DPoP-Nonce", RS_NONCE),
                ));
            }
            if cfg.nonce {
                g.rs_nonce_honored += 1;
            }
        }
        Err(e) => g.failures.push(format!("MCP request proof: {e}")),
    }
    Ok(())
}

// ---- Verifiers of the fake's own ----------------------------------------

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

pub fn b64d(s: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(s).expect("base64url")
}

/// One part of a JWS, as JSON.
pub fn part_json(s: &str) -> Value {
    serde_json::from_slice(&b64d(s)).expect("JSON part")
}

/// A JWT-shaped assertion for `sub` `mark`, with `exp` `exp_from_now`
/// seconds away (and a signature nobody checks).
pub fn jwt(mark: &str, exp_from_now: i64) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"ES256","typ":"JWT"}"#);
    let exp = now() as i64 + exp_from_now;
    let claims =
        URL_SAFE_NO_PAD.encode(json!({"iss": "https://idp", "sub": mark, "exp": exp}).to_string());
    format!("{header}.{claims}.c2lnbmF0dXJl")
}

/// Verifies a JWS signature with the RustCrypto `p256` crate (elicit signs
/// with `ring`), from the public key's coordinates.
pub fn verify_es256(jws: &str, x: &[u8], y: &[u8]) -> Result<(), String> {
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
/// the key's thumbprint (computed here from `x` and `y` by hand) and the
/// claims.
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

// ---- elicit against the fake ----------------------------------------------

pub use crate::common::Test;

/// `elicit call --no-input --tool echo --arg text=hi URL` (2025-11-25),
/// with `data` as its data directory, and `extra` flags (`--timeout 20s` unless they
/// hold one).
pub fn call_echo(data: &Path, extra: &[&str], env: &[(&str, &str)], url: &str) -> Test {
    let mut args = vec!["call", "--no-input", "--protocol", "2025-11-25"];
    args.extend_from_slice(extra);
    if !extra.contains(&"--timeout") {
        args.extend_from_slice(&["--timeout", "20s"]);
    }
    args.extend_from_slice(&["--tool", "echo", "--arg", "text=hi", url]);
    crate::common::Test::new()
        .args(&args)
        .data_dir(data)
        .envs(env)
}

/// What [`call_echo`] prints when the call goes through.
pub const ECHOED: &str = "{\"content\":[{\"type\":\"text\",\"text\":\"echo: hi\"}]}\n";

/// The conformance suite's "person with a browser": curl follows the
/// authorization redirect to elicit's loopback listener.
pub fn curl_browser() -> String {
    format!("{}/scripts/conformance-browser", env!("CARGO_MANIFEST_DIR"))
}
