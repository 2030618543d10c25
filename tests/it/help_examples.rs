//! Every example that `--help` prints with a bundled fixture is run, so the
//! help never names a file that does not exist or a command that fails; and
//! every man page that elicit(1) refers to can be produced.

use crate::common::elicit_command as elicit;

fn help(sub: Option<&str>) -> String {
    let mut cmd = elicit();
    if let Some(s) = sub {
        cmd.arg(s);
    }
    let out = cmd.arg("--help").output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The example command lines of a help text (`\` continuations joined).
fn examples(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines().map(str::trim) {
        if !pending.is_empty() {
            pending.push(' ');
            pending.push_str(line.trim_end_matches('\\').trim());
            if !line.ends_with('\\') {
                out.push(std::mem::take(&mut pending));
            }
            continue;
        }
        if line.starts_with("elicit ") {
            if line.ends_with('\\') {
                pending = line.trim_end_matches('\\').trim().to_string();
            } else {
                out.push(line.to_string());
            }
        }
    }
    out
}

#[test]
fn every_help_example_with_a_fixture_runs() {
    let mut ran = 0;
    for sub in [
        None,
        Some("call"),
        Some("proxy"),
        Some("request"),
        Some("result"),
    ] {
        for example in examples(&help(sub)) {
            if !example.contains("fixtures/") {
                continue;
            }
            // Simple words only: the examples that name fixtures are plain.
            let words: Vec<&str> = example.split_whitespace().skip(1).collect();
            let out = elicit().args(&words).arg("--no-input").output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let prompts = stderr.contains("--no-input was given");
            assert!(
                out.status.success() || prompts,
                "help example `{example}` failed: {stderr}"
            );
            if out.status.success() {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                    .unwrap_or_else(|e| panic!("`{example}` printed no JSON: {e}"));
                assert!(v.is_object());
            }
            ran += 1;
        }
    }
    assert!(ran >= 3, "only {ran} help examples name a fixture");
}

#[test]
fn every_man_page_named_in_elicit_1_can_be_produced() {
    let out = elicit().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".nh"), "hyphenation is not turned off");
    assert!(page.contains("ELICIT_BROWSER"));
    let named: Vec<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix("elicit\\-"))
        .filter_map(|l| l.strip_suffix("(1)"))
        .map(str::to_string)
        .collect();
    assert!(named.len() >= 6, "{named:?}");
    for sub in named {
        let out = elicit().args(["man", &sub]).output().unwrap();
        assert!(out.status.success(), "elicit man {sub} failed");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(&format!(".TH elicit-{sub} 1")), "{sub}");
    }
}

#[test]
fn the_synopsis_shows_value_placeholders() {
    let out = elicit().args(["man", "call"]).output().unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    let synopsis = page.split(".SH SYNOPSIS").nth(1).unwrap();
    let synopsis = synopsis.split(".SH").next().unwrap();
    assert!(synopsis.contains("[URL]"), "{synopsis}");
    assert!(synopsis.contains("<COMMAND>"), "{synopsis}");
}

#[test]
fn help_examples_do_not_wrap_mid_argument() {
    for sub in [None, Some("call"), Some("proxy")] {
        let mut cmd = elicit();
        if let Some(s) = sub {
            cmd.arg(s);
        }
        let out = cmd.arg("--help").env("COLUMNS", "80").output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let examples = text.split("Examples:").nth(1).unwrap_or("");
        for line in examples.lines().take_while(|l| !l.is_empty()) {
            let t = line.trim_start();
            assert!(
                t.is_empty()
                    || t.starts_with("elicit")
                    || t.starts_with('#')
                    || t.starts_with("--")
                    || t.starts_with("my-mcp-client"),
                "a help example wrapped: {line:?}"
            );
        }
    }
}
