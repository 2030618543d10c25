//! Every example that `--help` prints with a bundled fixture is run, so the
//! help never names a file that does not exist or a command that fails; and
//! every man page that elicit(1) refers to can be produced.

use crate::common::Test;

fn help(sub: Option<&str>) -> String {
    let out = Test::new().args(sub).arg("--help").run();
    out.stdout().to_string()
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
            // 2: the example asks what --no-input cannot answer.
            let out = Test::new()
                .args(&words)
                .arg("--no-input")
                .status_in(&[0, 2])
                .run();
            let stderr = out.stderr();
            let prompts = stderr.contains("--no-input was given");
            assert!(
                out.code() == 0 || prompts,
                "help example `{example}` failed: {stderr}"
            );
            if out.code() == 0 {
                let v: serde_json::Value = serde_json::from_str(out.stdout())
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
    let out = Test::new().arg("man").run();
    let page = out.stdout();
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
        let out = Test::new().args(["man", &sub]).run();
        let text = out.stdout();
        assert!(text.contains(&format!(".TH elicit-{sub} 1")), "{sub}");
    }
}

#[test]
fn the_synopsis_shows_value_placeholders() {
    let out = Test::new().args(["man", "call"]).run();
    let page = out.stdout();
    let synopsis = page.split(".SH SYNOPSIS").nth(1).unwrap();
    let synopsis = synopsis.split(".SH").next().unwrap();
    assert!(synopsis.contains("[URL]"), "{synopsis}");
    assert!(synopsis.contains("<COMMAND>"), "{synopsis}");
}

#[test]
fn help_examples_do_not_wrap_mid_argument() {
    for sub in [None, Some("call"), Some("proxy")] {
        let out = Test::new()
            .args(sub)
            .arg("--help")
            .env("COLUMNS", "80")
            .run();
        let text = out.stdout();
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
