//! The four string formats MCP defines (`date`, `date-time`, `email`,
//! `uri`), checked exactly as the `jsonschema` crate checks them.
//!
//! Why by hand: `jsonschema` keeps its format checkers private, and the only
//! way to reach them is to compile a schema, which first builds the crate's
//! meta-validator: about 1.2M of the 3.1M instructions of a whole scripted
//! run (callgrind). These follow its rules line for line (RFC 3339 dates and
//! times with its leap-second rule; RFC 5321 addresses through the same
//! `email_address` crate and the same hostname rules; URIs through the same
//! `fluent_uri` parser), and `tests/it/properties.rs` holds them to the crate on
//! random and hand-picked text. What they cannot decide cheaply (an
//! internationalised `xn--` domain, which needs Punycode and IDNA tables)
//! they leave to `jsonschema` by answering `None`.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A `format` MCP defines, which the schema model checks itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum McpFormat {
    Date,
    DateTime,
    Email,
    Uri,
}

impl McpFormat {
    pub(super) fn parse(name: &str) -> Option<Self> {
        match name {
            "date" => Some(McpFormat::Date),
            "date-time" => Some(McpFormat::DateTime),
            "email" => Some(McpFormat::Email),
            "uri" => Some(McpFormat::Uri),
            _ => None,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            McpFormat::Date => "date",
            McpFormat::DateTime => "date-time",
            McpFormat::Email => "email",
            McpFormat::Uri => "uri",
        }
    }

    /// Whether `text` is in the format; `None` when only `jsonschema` can
    /// say (see the module comment).
    pub(super) fn accepts(self, text: &str) -> Option<bool> {
        match self {
            McpFormat::Date => Some(is_date(text)),
            McpFormat::DateTime => Some(is_date_time(text)),
            McpFormat::Email => email(text),
            McpFormat::Uri => Some(jsonschema::Uri::parse(text).is_ok()),
        }
    }
}

/// Exactly `n` ASCII digits, as a number.
fn digits(bytes: &[u8]) -> Option<u16> {
    bytes.iter().try_fold(0u16, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u16::from(b - b'0'))
    })
}

/// RFC 3339 `full-date`: `YYYY-MM-DD`, a real day of the Gregorian calendar.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(&b[..4]), digits(&b[5..7]), digits(&b[8..]))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let last = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=last).contains(&day)
}

/// RFC 3339 `full-time`: `HH:MM:SS(.fraction)?` then `Z` or `±HH:MM`. A
/// leap second (`:60`) is allowed only at 23:59 UTC, after the offset.
fn is_time(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) =
        (digits(&b[..2]), digits(&b[3..5]), digits(&b[6..8]))
    else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 8;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    let Some(&zone) = b.get(i) else {
        return false;
    };
    let leap_ok = |utc_hour: i16, utc_minute: i16| utc_hour == 23 && utc_minute == 59;
    match zone {
        b'Z' | b'z' => i == b.len() - 1 && (second != 60 || leap_ok(hour as i16, minute as i16)),
        b'+' | b'-' => {
            let offset = &b[i + 1..];
            if offset.len() != 5 || offset[2] != b':' {
                return false;
            }
            let (Some(off_hour), Some(off_minute)) = (digits(&offset[..2]), digits(&offset[3..]))
            else {
                return false;
            };
            if off_hour > 23 || off_minute > 59 {
                return false;
            }
            if second != 60 {
                return true;
            }
            // The local time minus the offset is UTC.
            let sign: i16 = if zone == b'+' { -1 } else { 1 };
            let mut utc_hour = hour as i16 + sign * off_hour as i16;
            let mut utc_minute = minute as i16 + sign * off_minute as i16;
            utc_hour += utc_minute / 60;
            utc_minute %= 60;
            if utc_minute < 0 {
                utc_minute += 60;
                utc_hour -= 1;
            }
            leap_ok((utc_hour + 24) % 24, utc_minute)
        }
        _ => false,
    }
}

/// RFC 3339 `date-time`: a full-date, `T` (or `t`), a full-time.
fn is_date_time(text: &str) -> bool {
    match text.bytes().position(|b| b == b'T' || b == b't') {
        Some(t) => is_date(&text[..t]) && is_time(&text[t + 1..]),
        None => false,
    }
}

/// An RFC 5321 address with an ASCII local part and a hostname or an IP
/// literal for a domain.
fn email(text: &str) -> Option<bool> {
    // `email_address` rejects an empty quoted local part, which RFC 5321
    // allows (and `jsonschema` accepts).
    if let Some(domain) = text.strip_prefix("\"\"@") {
        return email(&format!("\"a\"@{domain}"));
    }
    let Ok(parsed) = email_address::EmailAddress::from_str(text) else {
        return Some(false);
    };
    if !parsed.local_part().is_ascii() {
        return Some(false);
    }
    let domain = parsed.domain();
    if let Some(literal) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        let tag = "IPv6:";
        return Some(match literal.get(..tag.len()) {
            Some(t) if t.eq_ignore_ascii_case(tag) => {
                literal[tag.len()..].parse::<Ipv6Addr>().is_ok()
            }
            _ => literal.parse::<Ipv4Addr>().is_ok(),
        });
    }
    hostname(domain)
}

/// An RFC 1123 hostname; `None` for one with an A-label (`xn--…`), whose
/// check needs Punycode decoding and the IDNA rules.
fn hostname(host: &str) -> Option<bool> {
    let b = host.as_bytes();
    if b.is_empty() || b.len() > 253 || b.ends_with(b".") {
        return Some(false);
    }
    for label in b.split(|&c| c == b'.') {
        let shaped = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with(b"-")
            && !label.ends_with(b"-")
            && label
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || *c == b'-');
        if !shaped {
            return Some(false);
        }
    }
    for label in b.split(|&c| c == b'.') {
        if label.starts_with(b"xn--") {
            return None;
        }
        // RFC 5891: `--` in the 3rd and 4th places is reserved for A-labels.
        if label.len() >= 4 && &label[2..4] == b"--" {
            return Some(false);
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_follow_the_calendar() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(is_date("2000-02-29"));
        assert!(!is_date("1900-02-29"));
        assert!(!is_date("2025-04-31"));
        assert!(!is_date("2025-00-10"));
        assert!(!is_date("2025-1-010"));
        assert!(!is_date("２０２５-01-01"));
    }

    #[test]
    fn leap_seconds_only_at_23_59_utc() {
        assert!(is_date_time("2016-12-31T23:59:60Z"));
        assert!(!is_date_time("2016-12-31T22:59:60Z"));
        assert!(is_date_time("2016-12-31T15:59:60-08:00"));
        assert!(is_date_time("2017-01-01T00:29:60+00:30"));
        assert!(!is_date_time("2016-12-31T23:59:60+01:00"));
        assert!(is_date_time("2025-11-25t10:00:00.123z"));
        assert!(!is_date_time("2025-11-25T10:00:00.Z"));
        assert!(!is_date_time("2025-11-25T10:00:00+0100"));
    }

    #[test]
    fn emails_and_their_domains() {
        assert_eq!(email("ada@example.com"), Some(true));
        assert_eq!(email("\"\"@example.com"), Some(true));
        assert_eq!(email("ada@[127.0.0.1]"), Some(true));
        assert_eq!(email("ada@[ipv6:::1]"), Some(true));
        assert_eq!(email("ada@-example.com"), Some(false));
        assert_eq!(email("ada@ab--c.com"), Some(false));
        assert_eq!(email("ada@xn--bcher-kva.example"), None);
        assert_eq!(email("ada"), Some(false));
    }
}
