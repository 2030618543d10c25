//! A warning about sign-in, on stderr: below every file that warns.

/// A warning about sign-in on stderr, on one line.
pub(crate) fn warn(text: &str) {
    eprintln!(
        "elicit: warning: {}",
        elicit_core::text::sanitize::sanitize_line(text)
    );
}
