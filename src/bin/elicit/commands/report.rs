//! What `elicit test` and `elicit test --explore` both report with: the
//! usage error, times in words, and XML text for JUnit (its own file, below
//! both, so that neither reaches into the other).

use std::time::Duration;

use elicit::text::sanitize::sanitize_line;

/// A bad use of the flags: said, exit status 2.
pub fn usage(message: &str) -> i32 {
    eprintln!("elicit: {}", sanitize_line(message));
    2
}

/// A duration as a person reads it: milliseconds, or seconds past one.
pub fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// XML text with the five special characters escaped, and the characters
/// XML 1.0 cannot hold at all dropped.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}
