//! Unit tests of [`super`].

use super::*;

fn assess(raw: &str) -> UrlAssessment {
    let a = assess_url(raw);
    // Invariants that hold for every input.
    assert_eq!(
        a.openable,
        !a.warnings.iter().any(UrlWarning::is_blocking),
        "{raw:?}: {a:?}"
    );
    if a.openable {
        assert!(matches!(a.scheme.as_deref(), Some("http" | "https")));
        assert!(a.host_ascii.as_deref().is_some_and(|h| !h.is_empty()));
        assert!(a.normalized.is_some());
    }
    for text in std::iter::once(a.display.clone())
        .chain(a.warnings.iter().map(|w| w.to_string()))
        .chain(a.host_unicode.clone())
        .chain(a.host_ascii.clone())
        .chain(a.normalized.clone())
    {
        assert_eq!(sanitize_line(&text), text, "unsafe output {text:?}");
        assert!(!text.contains('\n'));
    }
    a
}

fn not_openable(raw: &str) -> UrlAssessment {
    let a = assess(raw);
    assert!(!a.openable, "{raw:?} must not be openable: {a:?}");
    a
}

#[test]
fn plain_https_no_warnings() {
    let a = assess("https://example.com/a?b=c");
    assert!(a.openable);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert_eq!(a.scheme.as_deref(), Some("https"));
    assert_eq!(a.host_ascii.as_deref(), Some("example.com"));
    assert_eq!(a.host_unicode, None);
    assert_eq!(a.display, "https://example.com/a?b=c");
    assert_eq!(a.normalized.as_deref(), Some("https://example.com/a?b=c"));
}

#[test]
fn scheme_and_host_lowercased() {
    let a = assess("HTTPS://EXAMPLE.com/Path");
    assert!(a.openable);
    assert!(a.warnings.is_empty());
    assert_eq!(a.scheme.as_deref(), Some("https"));
    assert_eq!(a.host_ascii.as_deref(), Some("example.com"));
    assert_eq!(a.display, "HTTPS://EXAMPLE.com/Path");
}

#[test]
fn plain_http_warns() {
    let a = assess("http://example.com");
    assert!(a.openable);
    assert_eq!(
        a.warnings,
        [UrlWarning::NotHttps {
            scheme: "http".into()
        }]
    );
    assert!(!a.warnings[0].is_blocking());
}

#[test]
fn loopback_http_is_a_note_only() {
    for raw in [
        "http://localhost:8080/cb",
        "http://127.0.0.1/",
        "http://127.8.9.10/",
        "http://[::1]/",
        "http://[::1]:3000/callback",
        "http://LOCALHOST/",
        "http://localhost./",
        "http://app.localhost/",
        "http://[::ffff:127.0.0.1]/",
    ] {
        let a = assess(raw);
        assert!(a.openable, "{raw}");
        assert_eq!(a.warnings, [UrlWarning::LoopbackHttp], "{raw}");
    }
    // https to loopback: nothing to say.
    assert!(assess("https://127.0.0.1/").warnings.is_empty());
    // Names that merely contain localhost are not loopback.
    for raw in ["http://localhost.evil.example/", "http://notlocalhost/"] {
        assert_eq!(
            assess(raw).warnings,
            [UrlWarning::NotHttps {
                scheme: "http".into()
            }],
            "{raw}"
        );
    }
}

#[test]
fn punycode_host() {
    let a = assess("https://xn--pple-43d.com");
    assert!(a.openable);
    assert_eq!(
        a.warnings,
        [UrlWarning::Punycode {
            ascii: "xn--pple-43d.com".into(),
            unicode: "аpple.com".into()
        }]
    );
    assert_eq!(a.host_ascii.as_deref(), Some("xn--pple-43d.com"));
    assert_eq!(a.host_unicode.as_deref(), Some("аpple.com"));
    // Any label, any case.
    let a = assess("https://login.XN--pple-43d.com/");
    assert!(matches!(a.warnings[..], [UrlWarning::Punycode { .. }]));
}

#[test]
fn non_ascii_host() {
    let a = assess("https://аpple.com"); // Cyrillic а
    assert!(a.openable);
    assert_eq!(
        a.warnings,
        [UrlWarning::NonAsciiHost {
            ascii: "xn--pple-43d.com".into(),
            unicode: "аpple.com".into()
        }]
    );
    assert_eq!(a.host_ascii.as_deref(), Some("xn--pple-43d.com"));
    assert_eq!(a.host_unicode.as_deref(), Some("аpple.com"));
    assert_eq!(a.display, "https://аpple.com");

    // Full-width letters map to plain ASCII: still reported, since the
    // server wrote something other than what is visited.
    let a = assess("https://ｅｘａｍｐｌｅ.com/");
    assert_eq!(a.host_ascii.as_deref(), Some("example.com"));
    assert_eq!(a.host_unicode, None);
    assert!(matches!(a.warnings[..], [UrlWarning::NonAsciiHost { .. }]));

    // Percent-encoded host.
    let a = assess("https://%D0%B0pple.com/");
    assert_eq!(a.host_ascii.as_deref(), Some("xn--pple-43d.com"));
    assert!(matches!(a.warnings[..], [UrlWarning::NonAsciiHost { .. }]));

    // Non-ASCII only in the path is not a host problem.
    assert!(assess("https://example.com/日本").warnings.is_empty());
}

#[test]
fn ip_literals() {
    let a = assess("https://192.168.0.1/");
    assert!(a.openable);
    assert_eq!(
        a.warnings,
        [UrlWarning::IpLiteral {
            host: "192.168.0.1".into()
        }]
    );
    let a = assess("https://[2001:db8::1]/");
    assert!(a.openable);
    assert_eq!(
        a.warnings,
        [UrlWarning::IpLiteral {
            host: "[2001:db8::1]".into()
        }]
    );
    assert_eq!(a.host_ascii.as_deref(), Some("[2001:db8::1]"));
    // Obfuscated IPv4 forms are normalised by the parser.
    let a = assess("https://0xC0.0xA8.0.1/");
    assert_eq!(a.host_ascii.as_deref(), Some("192.168.0.1"));
    assert!(matches!(a.warnings[..], [UrlWarning::IpLiteral { .. }]));
    let a = assess("http://2130706433/");
    assert_eq!(a.host_ascii.as_deref(), Some("127.0.0.1"));
    assert_eq!(a.warnings, [UrlWarning::LoopbackHttp]);
    // http + public IP: both.
    assert_eq!(assess("http://8.8.8.8/").warnings.len(), 2);
}

#[test]
fn userinfo_warns_and_real_host_is_after_at() {
    let a = assess("https://accounts.google.com@evil.example/");
    assert!(a.openable);
    assert_eq!(a.host_ascii.as_deref(), Some("evil.example"));
    assert_eq!(
        a.warnings,
        [UrlWarning::UserInfo {
            userinfo: "accounts.google.com".into()
        }]
    );
    let a = assess("https://user:pass@example.com/");
    assert_eq!(
        a.warnings,
        [UrlWarning::UserInfo {
            userinfo: "user:pass".into()
        }]
    );
    // The last @ is the separator.
    let a = assess("https://a@b.example@evil.example/");
    assert_eq!(a.host_ascii.as_deref(), Some("evil.example"));
    assert_eq!(
        a.warnings,
        [UrlWarning::UserInfo {
            userinfo: "a@b.example".into()
        }]
    );
    // An empty userinfo is dropped by the parser but still reported.
    let a = assess("https://@evil.example/");
    assert_eq!(a.host_ascii.as_deref(), Some("evil.example"));
    assert!(matches!(a.warnings[..], [UrlWarning::UserInfo { .. }]));
    // An @ in the path or query is not userinfo.
    assert!(assess("https://example.com/@user?x=a@b")
        .warnings
        .is_empty());
    // Backslash ends the authority for http(s), as in browsers.
    let a = assess("https://good.example\\@evil.example/");
    assert_eq!(a.host_ascii.as_deref(), Some("good.example"));
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
}

#[test]
fn forbidden_schemes() {
    for (raw, scheme) in [
        ("javascript:alert(1)", "javascript"),
        ("JAVASCRIPT:alert(1)", "javascript"),
        ("JaVaScRiPt:alert(1)", "javascript"),
        ("file:///etc/passwd", "file"),
        ("data:text/html,<script>alert(1)</script>", "data"),
        ("vbscript:", "vbscript"),
        ("vbscript:msgbox(1)", "vbscript"),
        ("ftp://example.com/", "ftp"),
        ("mailto:a@example.com", "mailto"),
        ("blob:https://example.com/uuid", "blob"),
        ("intent://x#Intent;end", "intent"),
    ] {
        let a = not_openable(raw);
        assert_eq!(a.scheme.as_deref(), Some(scheme), "{raw}");
        assert_eq!(
            a.warnings,
            [UrlWarning::ForbiddenScheme {
                scheme: scheme.into()
            }],
            "{raw}"
        );
        assert!(a.warnings[0].is_blocking());
    }
}

#[test]
fn unparseable_or_hostless() {
    for raw in [
        "not a url",
        "",
        "https://",
        "http://",
        "//example.com",
        "/relative",
        "https://exa mple.com/",
        "https://example.com:99999/",
        "https://[::1/",
    ] {
        let a = not_openable(raw);
        assert!(
            a.warnings.iter().any(UrlWarning::is_blocking),
            "{raw}: {a:?}"
        );
    }
    let a = not_openable("not a url");
    assert_eq!(a.scheme, None);
    assert_eq!(a.host_ascii, None);
    assert_eq!(a.normalized, None);
    assert!(matches!(a.warnings[0], UrlWarning::Unparseable { .. }));
    let a = not_openable("");
    assert_eq!(a.display, "");
    assert!(matches!(a.warnings[..], [UrlWarning::Unparseable { .. }]));
    let a = not_openable("https://");
    assert!(matches!(a.warnings[..], [UrlWarning::Unparseable { .. }]));
    // Browsers (WHATWG) skip any number of slashes: this is host `path`.
    let a = assess("https:///path");
    assert_eq!(a.host_ascii.as_deref(), Some("path"));
}

#[test]
fn a_long_host_is_warned_about_even_in_a_short_enough_url() {
    let host = format!("{}.evil.example", "a".repeat(1900));
    let raw = format!("https://{host}/");
    assert!(raw.chars().count() < MAX_READABLE_URL_CHARS);
    let a = assess(&raw);
    assert!(a.openable);
    assert_eq!(a.warnings, [UrlWarning::LongHost { chars: host.len() }]);
    assert!(a.warnings[0].to_string().contains("1913 characters long"));
    // A host at the DNS limit is fine.
    let label = "a".repeat(63);
    let host = format!("{label}.{label}.{label}.{}", "b".repeat(61));
    assert_eq!(host.len(), MAX_HOST_CHARS);
    assert!(assess(&format!("https://{host}/")).warnings.is_empty());
}

#[test]
fn too_long_but_openable() {
    let raw = format!("https://example.com/{}", "a".repeat(5000));
    let a = assess(&raw);
    assert!(a.openable);
    assert_eq!(
        a.warnings,
        [UrlWarning::TooLong {
            chars: raw.chars().count()
        }]
    );
    let at_limit = format!(
        "https://example.com/{}",
        "a".repeat(MAX_READABLE_URL_CHARS - 20)
    );
    assert_eq!(at_limit.len(), MAX_READABLE_URL_CHARS);
    assert!(assess(&at_limit).warnings.is_empty());
    // Counted in characters, not bytes.
    let cjk = format!("https://example.com/{}", "日".repeat(1000));
    assert!(assess(&cjk).warnings.is_empty());
}

#[test]
fn control_characters_block() {
    for raw in [
        "https://exa\u{202E}mple.com",
        "https://example.com/\x1b[2J",
        "https://example.com/\x1b]8;;https://evil\x1b\\x",
        "https://exa\nmple.com/",
        "https://exa\tmple.com/",
        "https://example.com/\r",
        " https://example.com/",
        "https://example.com/ ",
        "https://example.com/a b",
        "https://example.com/\u{a0}",
        "https://example.com/\u{200b}",
        "https://pay\u{200b}pal.com/",
        "https://example.com/\0",
        "https://example.com/\u{85}",
        "https://example.com/\u{7f}",
        "https://example.com/\u{2028}",
        "https://example.com/\u{e0061}",
        "\u{feff}https://example.com/",
    ] {
        let a = not_openable(raw);
        assert!(
            a.warnings.contains(&UrlWarning::ControlCharacters),
            "{raw:?}: {a:?}"
        );
    }
    let a = not_openable("https://exa\u{202E}mple.com");
    assert_eq!(a.display, "https://exa<U+202E>mple.com");
    let a = not_openable("https://example.com/\x1b[2J");
    assert_eq!(a.display, "https://example.com/");
    assert_eq!(a.warnings, [UrlWarning::ControlCharacters]);
    // The parser would have accepted it: that is the point.
    assert!(a.normalized.is_some());
    let a = not_openable("https://exa\nmple.com/");
    assert_eq!(a.display, "https://exa mple.com/");
    assert_eq!(a.host_ascii.as_deref(), Some("example.com"));
}

#[test]
fn warnings_are_ordered_most_severe_first() {
    let raw = format!("javascript:alert(1)\n{}", "x".repeat(3000));
    let a = not_openable(&raw);
    assert!(matches!(
        a.warnings[..],
        [
            UrlWarning::ForbiddenScheme { .. },
            UrlWarning::ControlCharacters,
            UrlWarning::TooLong { .. }
        ]
    ));
    let a = assess("http://user@8.8.8.8/");
    assert!(matches!(
        a.warnings[..],
        [
            UrlWarning::UserInfo { .. },
            UrlWarning::IpLiteral { .. },
            UrlWarning::NotHttps { .. }
        ]
    ));
}

#[test]
fn warning_text_is_sanitised() {
    let a = assess("https://\u{202e}evil\x1b[2J@example.com/");
    assert!(!a.openable);
    let text: Vec<String> = a.warnings.iter().map(ToString::to_string).collect();
    assert!(text.iter().any(|t| t.contains("<U+202E>evil@")), "{text:?}");
}

#[test]
fn display_strings() {
    let all = [
        UrlWarning::NotHttps {
            scheme: "http".into(),
        },
        UrlWarning::LoopbackHttp,
        UrlWarning::Punycode {
            ascii: "xn--pple-43d.com".into(),
            unicode: "аpple.com".into(),
        },
        UrlWarning::NonAsciiHost {
            ascii: "xn--pple-43d.com".into(),
            unicode: "аpple.com".into(),
        },
        UrlWarning::IpLiteral {
            host: "1.2.3.4".into(),
        },
        UrlWarning::UserInfo {
            userinfo: "u".into(),
        },
        UrlWarning::TooLong { chars: 5000 },
        UrlWarning::ForbiddenScheme {
            scheme: "javascript".into(),
        },
        UrlWarning::Unparseable {
            reason: "empty host".into(),
        },
        UrlWarning::ControlCharacters,
    ];
    for w in &all {
        let s = w.to_string();
        assert!(!s.is_empty() && !s.contains('\n'), "{s}");
    }
    assert!(all[0].to_string().starts_with("not https"));
    assert!(all[2].to_string().contains("xn--pple-43d.com"));
    assert!(all[6].to_string().contains("5000"));
    let blocking: Vec<bool> = all.iter().map(UrlWarning::is_blocking).collect();
    assert_eq!(
        blocking,
        [false, false, false, false, false, false, false, true, true, true]
    );
}

#[test]
fn random_inputs_keep_invariants() {
    // Deterministic xorshift, no extra dependency.
    let alphabet: Vec<char> = "hHtps:/\\@.%[]:1x-n?#a \t\n\u{1b}\u{202e}аｅ日"
        .chars()
        .collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..5_000 {
        let len = (next() % 24) as usize;
        let mut raw: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        if next() % 2 == 0 {
            raw.insert_str(0, "https://");
        }
        assess(&raw);
    }
}

#[test]
fn weird_inputs_never_panic() {
    let mb = "a".repeat(1 << 20);
    for raw in [
        "\x1b".to_string(),
        "\x1b[".to_string(),
        ":".to_string(),
        "https:".to_string(),
        "https:@".to_string(),
        "https://@".to_string(),
        "https://@@@/".to_string(),
        "https://:@/".to_string(),
        "https://xn--/".to_string(),
        "https://xn--a.com/".to_string(),
        "https://xn--zz-zzzzzzzzz.com/".to_string(),
        "https://[::ffff:1.2.3.4]/".to_string(),
        "http:\\\\example.com".to_string(),
        "https:example.com".to_string(),
        "\u{1f3f4}://x".to_string(),
        "é:é".to_string(),
        format!("https://{mb}.com/"),
        format!("https://example.com/{mb}"),
        format!("https://{}example.com/", "a@".repeat(100_000)),
        format!("\x1b]{mb}"),
        mb.clone(),
    ] {
        let a = assess(&raw);
        let _ = a.warnings.iter().map(ToString::to_string).count();
    }
    // Scheme-relative oddities resolve like a browser would.
    let a = assess("https:example.com");
    assert_eq!(a.host_ascii.as_deref(), Some("example.com"));
    let a = assess("http:\\\\example.com");
    assert_eq!(a.host_ascii.as_deref(), Some("example.com"));
}
