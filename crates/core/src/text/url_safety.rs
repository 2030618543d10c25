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
    /// Not `https` (`scheme` as given).
    NotHttps {
        /// The URL's scheme.
        scheme: String,
    },
    /// Plain http to `localhost`, `*.localhost`, 127.0.0.0/8 or `[::1]`: the
    /// traffic never leaves the machine (typical for local OAuth callbacks).
    /// A note, not a problem.
    LoopbackHttp,
    /// A host label starts with `xn--`: the name is displayed by browsers in
    /// Unicode and may imitate another (`xn--pple-43d.com` is `аpple.com` with
    /// a Cyrillic `а`). Not raised when [`UrlWarning::NonAsciiHost`] is.
    /// A punycode host: as sent and as it reads.
    Punycode {
        /// The host as sent (ASCII).
        ascii: String,
        /// The host as it reads (Unicode).
        unicode: String,
    },
    /// The server wrote the host with non-ASCII characters (or
    /// percent-escapes); `ascii` is where it really goes.
    /// A host with non-ASCII characters: as sent and as it reads.
    NonAsciiHost {
        /// The host as sent (ASCII).
        ascii: String,
        /// The host as it reads (Unicode).
        unicode: String,
    },
    /// The host is a bare IP address rather than a name (not raised for
    /// loopback addresses).
    /// An IP address in place of a host name.
    IpLiteral {
        /// The host.
        host: String,
    },
    /// `user[:password]@` before the host: `https://accounts.google.com@evil.example/`
    /// goes to `evil.example`.
    /// A user name (and maybe password) before the host.
    UserInfo {
        /// The user information.
        userinfo: String,
    },
    /// Longer than [`MAX_READABLE_URL_CHARS`] characters.
    /// A URL too long to read whole.
    TooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// A host longer than [`MAX_HOST_CHARS`]: no real domain name is, and a
    /// host that long hides the part that matters (its end) from a reader,
    /// even when the whole URL is under [`MAX_READABLE_URL_CHARS`].
    /// A host name too long to read whole.
    LongHost {
        /// Its length in characters.
        chars: usize,
    },
    /// Not http or https (`javascript:`, `file:`, `data:`, `vbscript:`, ...).
    /// Blocking: such URLs are never opened.
    /// A scheme elicit never opens (`javascript:`, `file:`…).
    ForbiddenScheme {
        /// The URL's scheme.
        scheme: String,
    },
    /// Not a valid absolute URL. Blocking.
    /// Not a URL at all.
    Unparseable {
        /// Why, in words.
        reason: String,
    },
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
mod tests;
