//! Replays every saved fuzz input (`fuzz/regressions/<target>/*`) through
//! the same check the fuzz target runs (`fuzz/src/checks.rs`, included here
//! by path), so a crash found once by `fuzz/run.sh` stays fixed.
//!
//! To add one: copy the crash file from `fuzz/artifacts/<target>/` to
//! `fuzz/regressions/<target>/`, with a name that says what it is.

#[path = "../../fuzz/src/checks.rs"]
#[allow(dead_code)]
mod checks;

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    // A missing or empty folder is a failure, not a pass: a renamed target
    // or a lost folder would otherwise turn this test into one that cannot
    // fail. Every target keeps at least one input (a crash found once, or a
    // hand-made case of what its check guards).
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fuzz regressions {}: {e}", dir.display()));
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no fuzz regressions in {}",
        dir.display()
    );
    for path in &files {
        let data = std::fs::read(path).unwrap();
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!("fuzz regression {} fails", path.display());
        }
    }
}

#[test]
fn input_regressions() {
    replay("input", checks::input);
}

#[test]
fn proxy_classifier_regressions() {
    replay("proxy_classifier", checks::proxy_classifier);
}

#[test]
fn schema_regressions() {
    replay("schema", checks::schema);
}

#[test]
fn answers_regressions() {
    replay("answers", checks::answers);
}

#[test]
fn sanitize_regressions() {
    replay("sanitize", checks::sanitize);
}

#[test]
fn url_regressions() {
    replay("url", checks::url);
}

#[test]
fn hook_regressions() {
    replay("hook", checks::hook);
}

#[test]
fn cassette_regressions() {
    replay("cassette", checks::cassette);
}

#[test]
fn answers_file_regressions() {
    replay("answers_file", checks::answers_file);
}

#[test]
fn page_form_regressions() {
    replay("page_form", checks::page_form);
}

#[test]
fn sse_regressions() {
    replay("sse", checks::sse);
}

/// The fixtures themselves, through every check (the fuzz seed corpus).
#[test]
fn fixtures_pass_every_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let data = std::fs::read(&path).unwrap();
                for check in [
                    checks::input,
                    checks::schema,
                    checks::answers,
                    checks::sanitize,
                    checks::url,
                    checks::proxy_classifier,
                    checks::hook,
                    checks::cassette,
                    checks::answers_file,
                    checks::sse,
                    checks::page_form,
                ] {
                    check(&data);
                }
            }
        }
    }
}
