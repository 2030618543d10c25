//! Judging a URL from a URL-mode elicitation before asking the user to open it.
//!
//! The MCP spec (2025-11-25 and later, "URL mode") requires the client to
//! show the **full** URL before consent, never open it without consent, open
//! it only in the system browser, and SHOULD highlight the domain and warn
//! about suspicious URLs such as Punycode. [`assess_url`] does the judging;
//! it never touches the network.
//!
//! Two strings matter and they can differ:
//!
//! * what the server sent ([`UrlAssessment::display`], sanitised so it cannot
//!   drive the terminal), which is what the user is asked to examine;
//! * what will actually be navigated to ([`UrlAssessment::normalized`], the
//!   WHATWG serialisation produced by the `url` crate, which is also how a
//!   browser reads the URL). Hand **this** one to the browser, so that the
//!   host we analysed and highlighted is the host the browser visits.
//!
//! The `url` crate silently repairs some input (it strips tabs and newlines
//! anywhere and C0/space at both ends, turns `\` into `/`, maps non-ASCII
//! hosts to Punycode), so the checks that are about what the user *sees* are
//! done on the raw string before parsing.

use std::fmt;

use url::{Host, Url};

use crate::text::sanitize::sanitize_line;

/// URLs longer than this many characters get [`UrlWarning::TooLong`].
///
/// The spec asks the user to examine the full URL; past roughly two thousand
/// characters nobody realistically can, and that is where long hidden
/// payloads live. 2048 is also the traditional practical URL limit (old
/// Internet Explorer, the sitemaps protocol), so ordinary OAuth authorisation
/// URLs with state, PKCE challenge and scopes (typically 300–1000
/// characters) stay well below it and do not train the user to ignore the
/// warning. The warning is informative only: a long URL is still openable.
pub const MAX_READABLE_URL_CHARS: usize = 2048;

/// Hosts longer than this many characters get [`UrlWarning::LongHost`]:
/// 253 is the longest a DNS name can be (RFC 1035), so a longer host is no
/// real site's name, only a way to push the real one out of sight.
pub const MAX_HOST_CHARS: usize = 253;

/// The result of [`assess_url`]: everything the consent prompt needs.
///
/// Invariant: `openable == !warnings.iter().any(UrlWarning::is_blocking)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlAssessment {
    /// The URL exactly as the server sent it, sanitised for display with
    /// [`sanitize_line`] semantics. Show this one in full.
    pub display: String,
    /// The URL as it should be handed to the browser: the `url` crate's
    /// WHATWG serialisation (ASCII only, Punycode host, percent-encoded).
    /// `None` when the URL does not parse. Never open `display` or the raw
    /// string: the browser must navigate to what was analysed.
    pub normalized: Option<String>,
    /// Scheme in lower case; `None` when the URL does not parse.
    pub scheme: Option<String>,
    /// Host as it goes on the wire: Punycode for international names,
    /// brackets for IPv6. `None` when there is no host. This is the part to
    /// highlight (after any `user@`, which is *not* the host).
    pub host_ascii: Option<String>,
    /// Unicode form of the host, only when it differs from `host_ascii`
    /// (sanitised: it is derived from server input).
    pub host_unicode: Option<String>,
    /// Whether the URL may be handed to a browser at all: it parses, its
    /// scheme is http or https, it has a non-empty host, and the raw string
    /// has no control, whitespace or invisible characters.
    pub openable: bool,
    /// What to tell the user, most severe first.
    pub warnings: Vec<UrlWarning>,
}

/// One reason for caution about a URL. Strings inside come from the server
/// but are already safe to print: ASCII from the `url` crate, or sanitised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlWarning {
    /// Plain http to a host that is not this machine.
    NotHttps { scheme: String },
    /// Plain http to `localhost`, `*.localhost`, 127.0.0.0/8 or `[::1]`: the
    /// traffic never leaves the machine (typical for local OAuth callbacks).
    /// A note, not a problem.
    LoopbackHttp,
    /// A host label starts with `xn--`: the name is displayed by browsers in
    /// Unicode and may imitate another (`xn--pple-43d.com` is `аpple.com` with
    /// a Cyrillic `а`). Not raised when [`UrlWarning::NonAsciiHost`] is.
    Punycode { ascii: String, unicode: String },
    /// The server wrote the host with non-ASCII characters (or
    /// percent-escapes); `ascii` is where it really goes.
    NonAsciiHost { ascii: String, unicode: String },
    /// The host is a bare IP address rather than a name (not raised for
    /// loopback addresses).
    IpLiteral { host: String },
    /// `user[:password]@` before the host: `https://accounts.google.com@evil.example/`
    /// goes to `evil.example`.
    UserInfo { userinfo: String },
    /// Longer than [`MAX_READABLE_URL_CHARS`] characters.
    TooLong { chars: usize },
    /// A host longer than [`MAX_HOST_CHARS`]: no real domain name is, and a
    /// host that long hides the part that matters (its end) from a reader,
    /// even when the whole URL is under [`MAX_READABLE_URL_CHARS`].
    LongHost { chars: usize },
    /// Not http or https (`javascript:`, `file:`, `data:`, `vbscript:`, ...).
    /// Blocking: such URLs are never opened.
    ForbiddenScheme { scheme: String },
    /// Not a valid absolute URL. Blocking.
    Unparseable { reason: String },
    /// The raw URL contains whitespace, control characters, escape sequences
    /// or bidi/invisible characters. The `url` crate would silently drop or
    /// encode some of them, so what the user reads is not what would be
    /// opened. Blocking.
    ControlCharacters,
}

impl UrlWarning {
    /// Whether this warning alone means the URL must not be opened.
    ///
    /// `ForbiddenScheme`, `Unparseable` and `ControlCharacters` block; the
    /// others are shown to the user, who decides.
    pub fn is_blocking(&self) -> bool {
        matches!(
            self,
            UrlWarning::ForbiddenScheme { .. }
                | UrlWarning::Unparseable { .. }
                | UrlWarning::ControlCharacters
        )
    }
}

impl fmt::Display for UrlWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlWarning::NotHttps { scheme } => write!(
                f,
                "not https ({scheme}): the page and what you type can be read or changed on the network"
            ),
            UrlWarning::LoopbackHttp => write!(
                f,
                "plain http to this computer (loopback): traffic does not leave the machine"
            ),
            UrlWarning::Punycode { ascii, unicode } => write!(
                f,
                "the host {ascii} is Punycode for \"{unicode}\": it may imitate a different name"
            ),
            UrlWarning::NonAsciiHost { ascii, unicode } => write!(
                f,
                "the host \"{unicode}\" is written with non-ASCII characters: it really goes to {ascii}"
            ),
            UrlWarning::IpLiteral { host } => {
                write!(f, "the host is a bare IP address ({host}), not a name")
            }
            UrlWarning::UserInfo { userinfo } => write!(
                f,
                "\"{userinfo}@\" before the host is a user name, not the site: the real host comes after the @"
            ),
            UrlWarning::TooLong { chars } => write!(
                f,
                "the URL is {chars} characters long, too long to read in full"
            ),
            UrlWarning::LongHost { chars } => write!(
                f,
                "the host is {chars} characters long, longer than any real domain name ({MAX_HOST_CHARS}): read its end carefully"
            ),
            UrlWarning::ForbiddenScheme { scheme } => write!(
                f,
                "\"{scheme}:\" URLs are never opened: only http and https are allowed"
            ),
            UrlWarning::Unparseable { reason } => {
                write!(f, "not a valid URL ({reason}): it will not be opened")
            }
            UrlWarning::ControlCharacters => write!(
                f,
                "the URL contains spaces, control or invisible characters: it will not be opened"
            ),
        }
    }
}

/// Assesses a URL sent by a server in a URL-mode elicitation.
///
/// Pure and offline: parses the string, never resolves or fetches anything.
/// Never panics, whatever the input.
pub fn assess_url(raw: &str) -> UrlAssessment {
    let display = sanitize_line(raw);
    let mut warnings = Vec::new();

    // Checked on the raw string: the parser would drop tabs/newlines and
    // leading/trailing spaces, and percent-encode the rest, so afterwards
    // there is no trace of them. `sanitize_line` changes a string exactly
    // when it has escape sequences, control, bidi or invisible characters.
    let has_controls = display != raw || raw.chars().any(char::is_whitespace);

    let parsed = Url::parse(raw);
    let mut assessment = UrlAssessment {
        display,
        normalized: None,
        scheme: None,
        host_ascii: None,
        host_unicode: None,
        openable: false,
        warnings: Vec::new(),
    };

    match parsed {
        Err(e) => warnings.push(UrlWarning::Unparseable {
            reason: e.to_string(),
        }),
        Ok(url) => {
            let scheme = url.scheme().to_ascii_lowercase();
            assessment.normalized = Some(url.as_str().to_owned());
            assessment.host_ascii = url.host_str().filter(|h| !h.is_empty()).map(str::to_owned);
            assessment.scheme = Some(scheme.clone());
            if scheme == "http" || scheme == "https" {
                assess_web_url(raw, &url, &scheme, &mut assessment, &mut warnings);
            } else {
                warnings.push(UrlWarning::ForbiddenScheme { scheme });
            }
        }
    }

    if has_controls {
        // Right after the blocking parse/scheme warnings.
        let at = warnings.iter().take_while(|w| w.is_blocking()).count();
        warnings.insert(at, UrlWarning::ControlCharacters);
    }

    if let Some(host) = &assessment.host_ascii {
        let chars = host.chars().count();
        if chars > MAX_HOST_CHARS {
            warnings.push(UrlWarning::LongHost { chars });
        }
    }
    let chars = raw.chars().count();
    if chars > MAX_READABLE_URL_CHARS {
        warnings.push(UrlWarning::TooLong { chars });
    }

    assessment.openable = assessment.scheme.is_some()
        && assessment.host_ascii.is_some()
        && !warnings.iter().any(UrlWarning::is_blocking);
    assessment.warnings = warnings;
    assessment
}

/// Host-related checks for a parsed http/https URL.
fn assess_web_url(
    raw: &str,
    url: &Url,
    scheme: &str,
    assessment: &mut UrlAssessment,
    warnings: &mut Vec<UrlWarning>,
) {
    let authority = raw_authority(raw);
    let (raw_userinfo, raw_host) = match authority.rfind('@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority.as_str()),
    };

    // The parser drops an empty `@` (`https://@evil.example`), so look at
    // the raw authority; fall back to the parsed parts just in case.
    if let Some(userinfo) = raw_userinfo {
        warnings.push(UrlWarning::UserInfo {
            userinfo: sanitize_line(userinfo),
        });
    } else if !url.username().is_empty() || url.password().is_some() {
        let mut userinfo = url.username().to_owned();
        if let Some(password) = url.password() {
            userinfo.push(':');
            userinfo.push_str(password);
        }
        warnings.push(UrlWarning::UserInfo { userinfo });
    }

    let loopback = match url.host() {
        Some(Host::Domain(domain)) => {
            let ascii = domain.to_owned();
            let (unicode, _errors) = idna::domain_to_unicode(&ascii);
            // Best effort on invalid Punycode; sanitised because it is
            // decoded from server input.
            let unicode = sanitize_line(&unicode);
            if unicode != ascii {
                assessment.host_unicode = Some(unicode.clone());
            }
            let written_non_ascii = raw_host.chars().any(|c| !c.is_ascii() || c == '%');
            if written_non_ascii {
                warnings.push(UrlWarning::NonAsciiHost { ascii, unicode });
            } else if domain.split('.').any(|label| {
                label
                    .get(..4)
                    .is_some_and(|p| p.eq_ignore_ascii_case("xn--"))
            }) {
                warnings.push(UrlWarning::Punycode { ascii, unicode });
            }
            let name = domain.trim_end_matches('.');
            name.eq_ignore_ascii_case("localhost")
                || name
                    .len()
                    .checked_sub(".localhost".len())
                    .and_then(|i| name.get(i..))
                    .is_some_and(|tail| tail.eq_ignore_ascii_case(".localhost"))
        }
        Some(Host::Ipv4(ip)) => {
            let loopback = ip.is_loopback();
            if !loopback {
                warnings.push(UrlWarning::IpLiteral {
                    host: ip.to_string(),
                });
            }
            loopback
        }
        Some(Host::Ipv6(ip)) => {
            let loopback =
                ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback());
            if !loopback {
                warnings.push(UrlWarning::IpLiteral {
                    host: format!("[{ip}]"),
                });
            }
            loopback
        }
        None => false,
    };

    if scheme == "http" {
        warnings.push(if loopback {
            UrlWarning::LoopbackHttp
        } else {
            UrlWarning::NotHttps {
                scheme: scheme.to_owned(),
            }
        });
    }
}

/// The authority (`userinfo@host:port`) of a raw http(s) URL, found the way
/// the WHATWG parser finds it for special schemes: tabs and newlines removed,
/// C0 controls and spaces trimmed from the ends, then after `scheme:` any
/// number of `/` or `\`, up to the next `/`, `\`, `?` or `#`.
fn raw_authority(raw: &str) -> String {
    let cleaned: String = raw
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let Some(colon) = cleaned.find(':') else {
        return String::new();
    };
    let rest = cleaned[colon + 1..].trim_start_matches(['/', '\\']);
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    rest[..end].to_owned()
}

#[cfg(test)]
mod tests {
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
}
