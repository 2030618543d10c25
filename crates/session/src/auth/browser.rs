//! Handing the sign-in page to a program with nobody asked (`--browser`
//! under `--no-input`): only a URL the terminal's URL flow would open
//! without a warning, and only as it was judged.

use super::AuthError;

/// Launches `--browser COMMAND` with the URL, detached with null stdio, the
/// same way the URL flow does (a command line split like a shell, `%s` or a
/// last argument for the URL); it plays the browser (the conformance
/// suite's runner is such a program).
///
/// The URL is judged first by the same checks as the terminal's URL flow
/// ([`unattended_url`]), and the program gets what was judged.
pub(super) fn launch(program: &str, url: &str) -> Result<(), AuthError> {
    let url = unattended_url(url)?;
    elicit_platform::opener::launch_program(&url, program).map_err(|e| AuthError::Browser {
        program: program.to_string(),
        detail: e.to_string(),
    })
}

/// The sign-in URL as it may be handed to a program with nobody asked:
/// the terminal flow's checks ([`elicit_core::text::url_safety::assess_url`]), where a
/// blocking warning (not http(s), unparseable, control characters) means
/// it is never opened, and any other warning (plain http off this machine,
/// Punycode, a bare IP address, user info, ...) means the terminal would
/// start on "Show only" and wait for a person's choice; without a person,
/// it is not opened either. `Ok` is the normalised URL, the one judged.
pub fn unattended_url(raw: &str) -> Result<String, AuthError> {
    use elicit_core::text::url_safety::{assess_url, UrlWarning};
    let a = assess_url(raw);
    let objections: Vec<String> = a
        .warnings
        .iter()
        .filter(|w| !matches!(w, UrlWarning::LoopbackHttp))
        .map(|w| w.to_string())
        .collect();
    match a.normalized {
        Some(url) if a.openable && objections.is_empty() => Ok(url),
        _ => Err(AuthError::BadUrl(format!(
            "the sign-in page {} is not opened without a person to judge it ({}): run the command on a terminal without --no-input to see it and choose",
            a.display,
            objections.join("; ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::unattended_url;

    /// Only a URL the terminal flow would open without a warning is
    /// launched with nobody asked, and it is launched as normalised.
    #[test]
    fn unattended_launch_takes_only_clean_http_urls() {
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "http://as.example.com/authorize",
            "https://xn--pple-43d.com/authorize",
            "https://203.0.113.9/authorize",
            "https://accounts.example.com@evil.example/authorize",
            "https://as.example.com/author\u{202e}ize",
            "https://as.example.com/a b",
            "not a url",
        ] {
            assert!(unattended_url(bad).is_err(), "{bad}");
        }
        assert_eq!(
            unattended_url("https://AS.example.com/authorize?x=1").unwrap(),
            "https://as.example.com/authorize?x=1"
        );
        assert!(unattended_url("http://127.0.0.1:9/authorize").is_ok());
    }
}
