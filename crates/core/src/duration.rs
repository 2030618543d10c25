//! Durations as people type them, for every flag and variable that takes
//! one (the command's `--timeout`, `--prompt-timeout`, …, and
//! `elicit-rmcp`'s `ELICIT_PROMPT_TIMEOUT`): one parser, so the same text
//! means the same time everywhere.

use std::time::Duration;

/// The longest duration accepted. A larger one would overflow the clock
/// arithmetic (`Instant + Duration` panics), and no prompt, call or shutdown
/// sensibly waits longer than a year.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Whole seconds (`90`) or a humantime duration (`90s`, `5m`, `1h30m`), at
/// most [`MAX_DURATION`]; the error says what was wrong, with examples.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let too_long = || format!("{s:?} is too long: at most 365 days (1 year)");
    let parsed = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        Duration::from_secs(s.parse::<u64>().map_err(|_| too_long())?)
    } else {
        match humantime::parse_duration(s) {
            Ok(d) => d,
            Err(humantime::DurationError::NumberOverflow) => return Err(too_long()),
            Err(e) => return Err(format!("{e} (examples: 30s, 5m, 1h30m)")),
        }
    };
    if parsed > MAX_DURATION {
        return Err(too_long());
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_humantime_are_read() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    }

    #[test]
    fn too_long_and_malformed_say_why() {
        for s in ["366days", "99999999999999999999", "999999999999999999999s"] {
            let e = parse_duration(s).unwrap_err();
            assert!(e.contains("too long"), "{s}: {e}");
        }
        for s in ["", "soon", "5 parsecs", "-1s"] {
            let e = parse_duration(s).unwrap_err();
            assert!(e.contains("examples: 30s, 5m, 1h30m"), "{s}: {e}");
        }
        assert_eq!(parse_duration("365days"), Ok(MAX_DURATION));
    }
}
