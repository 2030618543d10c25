//! Sign-in extensions against the shared fake authorization server,
//! identity provider and protected MCP server (`common::fake_auth`, one
//! 127.0.0.1 listener): DPoP (RFC 9449) with nonces at both sides and DPoP-bound
//! refresh, client credentials with a private-key JWT (RFC 7523 §2.2),
//! the JWT bearer grant for workload identity (RFC 7523 §2.1), and
//! enterprise-managed authorization (RFC 8693 token exchange for an
//! ID-JAG, then the JWT bearer grant).
//!
//! The fake checks what elicit sends with verifiers of its own: DPoP
//! proofs and ES256 assertions with the RustCrypto `p256` crate, RS256
//! assertions with `rsa` (elicit signs with `ring`), the JWK thumbprint
//! computed from the proof's `x` and `y` by hand, and `ath` recomputed.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use crate::common::fake_auth::{
    b64d, call_echo, curl_browser, jwt, now, part_json, verify_es256, Config, FakeAuth, Iss, Req,
    ECHOED, ID_JAG, ID_TOKEN, ID_TOKEN_MARK,
};
use crate::common::Test;

/// The fake as these tests want it: no registration endpoint, no `iss`
/// in the authorization response (nor advertised).
fn ext() -> Config {
    Config {
        registration: false,
        iss_supported: false,
        iss: Iss::Omit,
        ..Default::default()
    }
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

/// DPoP, chosen by elicit itself (the server supports ES256 and the
/// resource sends a DPoP challenge), with nonces at both sides: every
/// proof verifies (signature with `p256`, claims, `ath`, the token's key),
/// each nonce challenge is retried once with the nonce, the key is kept
/// with the token (0600) and the sign-in is listed as DPoP-bound; a later
/// run refreshes the expired token with a proof of the same key; logout
/// removes it all.
#[test]
fn dpop_with_nonces_at_both_sides_and_a_bound_refresh() {
    let fake = FakeAuth::start(Config {
        dpop_algs: Some(vec!["ES256"]),
        dpop_challenge: true,
        nonce: true,
        ..ext()
    });
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let browser = curl_browser();
    let r = call_echo(
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
        &[],
        &fake.url(),
    )
    .run();
    assert!(r.stdout().contains("echo: hi"), "{}", r.stdout());
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
    assert_no_secret("stdout", r.stdout(), &[]);
    assert_no_secret("stderr", r.stderr(), &[]);
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
    let list = Test::new()
        .args(["auth", "list"])
        .data_dir(dir.path())
        .run();
    assert!(list.stdout().contains("DPoP-bound"), "{}", list.stdout());
    assert_no_secret("auth list", list.stdout(), &[]);

    // A second run after the token expired: it is refreshed first, with a
    // proof of the same key (the fake checks the binding).
    entry["token"]["expires_at"] = json!(now() - 10);
    std::fs::write(files[0].path(), entry.to_string()).unwrap();
    let first_jkt = fake.state.lock().unwrap().token_jkts[0].clone();
    call_echo(
        dir.path(),
        &["--client-id", "public-client"],
        &[],
        &fake.url(),
    )
    .stdout(ECHOED)
    .run();
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

    Test::new()
        .args(["auth", "logout", &fake.url()])
        .data_dir(dir.path())
        .stdout(format!("signed out of {}\n", fake.url()))
        .run();
    assert!(!std::fs::read_dir(&tokens)
        .unwrap()
        .flatten()
        .any(|f| f.path().extension().is_some_and(|e| e == "json")));
}

/// `--dpop` asks for a bound token where the resource does not ask; a
/// server that answers `token_type: Bearer` to it gets Bearer, not DPoP.
#[test]
fn dpop_flag_and_a_bearer_answer() {
    let fake = FakeAuth::start(Config {
        dpop_algs: Some(vec!["ES256"]),
        ..ext()
    });
    let dir = tempfile::tempdir().unwrap();
    let browser = curl_browser();
    call_echo(
        dir.path(),
        &[
            "--client-id",
            "public-client",
            "--browser",
            &browser,
            "--dpop",
        ],
        &[],
        &fake.url(),
    )
    .stdout(ECHOED)
    .run()
    .stderr_has("the client public-client is now bound to the authorization server");
    assert_eq!(fake.failures(), Vec::<String>::new());
    assert!(fake.state.lock().unwrap().mcp_proofs >= 2);
    assert!(fake.find("/token")[0].headers.contains_key("dpop"));

    // Without the flag, and no DPoP challenge: no proof at all.
    let plain = FakeAuth::start(Config {
        dpop_algs: Some(vec!["ES256"]),
        ..ext()
    });
    let dir = tempfile::tempdir().unwrap();
    call_echo(
        dir.path(),
        &["--client-id", "public-client", "--browser", &browser],
        &[],
        &plain.url(),
    )
    .stdout(ECHOED)
    .run()
    .stderr_has("the client public-client is now bound to the authorization server");
    assert!(!plain.find("/token")[0].headers.contains_key("dpop"));
    let mcp = plain.find("/mcp");
    assert!(mcp.iter().any(|m| m
        .headers
        .get("authorization")
        .is_some_and(|a| a.starts_with("Bearer SECRET-ACCESS-"))));
    assert!(mcp.iter().all(|m| !m.headers.contains_key("dpop")));

    // --dpop against a server taking other proof algorithms only.
    let other = FakeAuth::start(Config {
        dpop_algs: Some(vec!["PS256"]),
        ..ext()
    });
    let r = call_echo(
        tempfile::tempdir().unwrap().path(),
        &[
            "--client-id",
            "public-client",
            "--browser",
            &browser,
            "--dpop",
        ],
        &[],
        &other.url(),
    )
    .status(1)
    .run();
    assert!(
        r.stderr().contains("PS256") && r.stderr().contains("ES256"),
        "{}",
        r.stderr()
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
    let cfg = Config {
        grants: vec!["client_credentials"],
        auth_methods: vec!["private_key_jwt"],
        ..ext()
    };
    // ES256: a key made by rcgen, verified with p256 from its public point.
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("client.pem");
    std::fs::write(&pem, key.serialize_pem()).unwrap();
    let fake = FakeAuth::start(cfg.clone());
    let r = call_echo(
        dir.path(),
        &[
            "--client-id",
            "machine",
            "--client-assertion-key",
            pem.to_str().unwrap(),
        ],
        &[],
        &fake.url(),
    )
    .run();
    assert!(r.stdout().contains("echo: hi"));
    let point = key.public_key_raw().to_vec();
    let verify = |jws: &str| {
        let header = part_json(jws.split('.').next().unwrap());
        assert_eq!(header["alg"], "ES256");
        verify_es256(jws, &point[1..33], &point[33..65])
    };
    check_assertion(&fake.find("/token")[0], &fake.base, &verify);
    assert!(fake.find("/authorize").is_empty() && fake.find("/register").is_empty());
    assert_no_secret("stderr", r.stderr(), &[]);

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
        let fake = FakeAuth::start(cfg.clone());
        let dir = tempfile::tempdir().unwrap();
        call_echo(
            dir.path(),
            &["--client-id", "machine", "--client-assertion-key", &path],
            &[],
            &fake.url(),
        )
        .stdout(ECHOED)
        .run()
        .stderr_has("the client machine is now bound to the authorization server");
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
    let fake = FakeAuth::start(cfg);
    let sec1 = format!(
        "{}/fixtures/auth/ec-test-key-sec1.pem",
        env!("CARGO_MANIFEST_DIR")
    );
    call_echo(
        tempfile::tempdir().unwrap().path(),
        &["--client-id", "machine", "--client-assertion-key", &sec1],
        &[],
        &fake.url(),
    )
    .stdout(ECHOED)
    .run()
    .stderr_has("the client machine is now bound to the authorization server");
}

/// A bad key file is a clear error naming the file, with nothing sent.
#[test]
fn bad_key_files_are_clear_errors() {
    let fake = FakeAuth::start(Config {
        grants: vec!["client_credentials"],
        auth_methods: vec!["private_key_jwt"],
        ..ext()
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
        let r = call_echo(
            dir.path(),
            &["--client-id", "machine", "--client-assertion-key", p],
            &[],
            &fake.url(),
        )
        .status(1)
        .run();
        assert!(
            r.stderr().contains(p) && r.stderr().contains(says),
            "{}",
            r.stderr()
        );
        assert!(
            r.stderr().contains("--client-assertion-key"),
            "{}",
            r.stderr()
        );
        assert!(!r.stderr().contains("AAAA"), "{}", r.stderr());
    }
    // Without --client-id.
    let rsa = format!(
        "{}/fixtures/auth/rsa-test-key.pem",
        env!("CARGO_MANIFEST_DIR")
    );
    let r = call_echo(
        dir.path(),
        &["--client-assertion-key", &rsa],
        &[],
        &fake.url(),
    )
    .status(1)
    .run();
    assert!(r.stderr().contains("needs --client-id"), "{}", r.stderr());
    assert!(fake.find("/token").is_empty());
}

/// Workload identity: the assertion goes as the JWT bearer grant, with no
/// registration, no browser and no client authentication.
#[test]
fn jwt_bearer_grant_with_an_assertion() {
    let fake = FakeAuth::start(Config {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        ..ext()
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("workload.jwt");
    let assertion = jwt("workload-one", 300);
    std::fs::write(&file, format!("{assertion}\n")).unwrap();
    let r = call_echo(
        dir.path(),
        &["--assertion", file.to_str().unwrap(), "--verbose"],
        &[],
        &fake.url(),
    )
    .run();
    assert!(r.stdout().contains("echo: hi"));
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
    assert_no_secret("stderr", r.stderr(), &[&assertion]);
    assert_no_secret("stdout", r.stdout(), &[&assertion]);
}

/// A refused assertion ends the run with the server's error, after one
/// token request: never retried, never another grant. An expired one is
/// refused before anything is sent.
#[test]
fn refused_and_expired_assertions() {
    let fake = FakeAuth::start(Config {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        refuse: Some("invalid_grant"),
        ..ext()
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("workload.jwt");
    let assertion = jwt("workload-two", 300);
    std::fs::write(&file, &assertion).unwrap();
    let r = call_echo(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &[],
        &fake.url(),
    )
    .status(1)
    .run();
    assert!(r.stderr().contains("invalid_grant"), "{}", r.stderr());
    // The fake echoes the assertion in its description: cut out.
    assert!(!r.stderr().contains(&assertion), "{}", r.stderr());
    assert_eq!(fake.find("/token").len(), 1, "retried");
    assert!(fake.find("/authorize").is_empty() && fake.find("/register").is_empty());

    let fresh = FakeAuth::start(Config {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        ..ext()
    });
    std::fs::write(&file, jwt("workload-three", -120)).unwrap();
    let r = call_echo(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &[],
        &fresh.url(),
    )
    .status(1)
    .run();
    assert!(
        r.stderr().contains("expired") && r.stderr().contains("--assertion"),
        "{}",
        r.stderr()
    );
    assert!(fresh.find("/token").is_empty());
    std::fs::write(&file, "not a jwt").unwrap();
    let r = call_echo(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &[],
        &fresh.url(),
    )
    .status(1)
    .run();
    assert!(r.stderr().contains("does not hold a JWT"), "{}", r.stderr());
    // A server without the grant.
    let no_grant = FakeAuth::start(ext());
    std::fs::write(&file, jwt("workload-four", 300)).unwrap();
    let r = call_echo(
        dir.path(),
        &["--assertion", file.to_str().unwrap()],
        &[],
        &no_grant.url(),
    )
    .status(1)
    .run();
    assert!(r.stderr().contains("does not offer"), "{}", r.stderr());
    assert!(no_grant.find("/token").is_empty());
}

/// Enterprise-managed authorization: the ID token is exchanged at the IdP
/// (RFC 8693: ID-JAG, audience the issuer, resource as the metadata says)
/// and the ID-JAG goes to the authorization server as the JWT bearer grant
/// with the client's Basic authentication.
#[test]
fn enterprise_token_exchange_then_jwt_bearer() {
    let fake = FakeAuth::start(Config {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        auth_methods: vec!["client_secret_basic"],
        client: Some(("ent-client", "SECRET-CLIENT")),
        ..ext()
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
    let r = call_echo(dir.path(), &args, &[], &fake.url()).run();
    assert!(r.stdout().contains("echo: hi"));
    assert_eq!(fake.find("/idp/token").len(), 1);
    let t = fake.find("/token");
    assert_eq!(t.len(), 1);
    assert_eq!(
        t[0].form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(t[0].form["assertion"], ID_JAG);
    for (what, text) in [
        ("stdout", r.stdout()),
        ("stderr", r.stderr()),
        ("--log", std::fs::read_to_string(&log).unwrap().as_str()),
    ] {
        assert_no_secret(what, text, &[ID_JAG, ID_TOKEN.as_str()]);
    }

    // The IdP by its issuer: its metadata names the token endpoint.
    let by_issuer = FakeAuth::start(Config {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        ..ext()
    });
    let issuer = format!("{}/idp", by_issuer.base);
    call_echo(
        dir.path(),
        &[
            "--idp-issuer",
            &issuer,
            "--idp-id-token",
            id_token.to_str().unwrap(),
            "--idp-client-id",
            "idp-client",
        ],
        &[],
        &by_issuer.url(),
    )
    .stdout(ECHOED)
    .run();
    assert_eq!(by_issuer.find("/idp/token").len(), 1);
    // Never an ID token over plain http to another machine.
    let r = call_echo(
        tempfile::tempdir().unwrap().path(),
        &[
            "--idp-token-endpoint",
            "http://idp.example/token",
            "--idp-id-token",
            id_token.to_str().unwrap(),
        ],
        &[],
        &by_issuer.url(),
    )
    .status(1)
    .run();
    assert!(r.stderr().contains("not https"), "{}", r.stderr());

    // The IdP refuses: a clear error naming it, and no grant at the AS.
    let refusing = FakeAuth::start(Config {
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        idp_refuse: Some("access_denied"),
        ..ext()
    });
    let idp = format!("{}/idp/token", refusing.base);
    let r = call_echo(
        dir.path(),
        &[
            "--idp-token-endpoint",
            &idp,
            "--idp-id-token",
            id_token.to_str().unwrap(),
            "--idp-client-id",
            "idp-client",
        ],
        &[],
        &refusing.url(),
    )
    .status(1)
    .run();
    assert!(
        r.stderr().contains("access_denied") && r.stderr().contains("/idp/token"),
        "{}",
        r.stderr()
    );
    assert!(refusing.find("/token").is_empty());
    assert_no_secret("stderr", r.stderr(), &[ID_TOKEN.as_str()]);
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
    let r = Test::new()
        .args(["proxy", "--assertion", "-", "http://127.0.0.1:9/mcp"])
        .data_dir(dir.path())
        .failure()
        .run();
    assert!(
        r.stderr().contains("--assertion -") && r.stderr().contains("pass a file"),
        "{}",
        r.stderr()
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
        let fake = FakeAuth::start(Config {
            grants: vec!["client_credentials"],
            auth_methods: vec!["private_key_jwt"],
            token_type: Some(token_type),
            ..ext()
        });
        let dir = tempfile::tempdir().unwrap();
        let r = call_echo(
            dir.path(),
            &["--client-id", "machine", "--client-assertion-key", &rsa],
            &[],
            &fake.url(),
        )
        .status(1)
        .run();
        assert!(
            r.stderr().contains(token_type) && r.stderr().contains("refused"),
            "{}",
            r.stderr()
        );
        assert!(fake
            .find("/mcp")
            .iter()
            .all(|m| !m.headers.contains_key("authorization")));
    }
}
