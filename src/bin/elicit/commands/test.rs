//! `elicit test`: replays cassettes against their servers, in parallel;
//! one line per test on stderr and a summary, and a TAP, JUnit or JSON
//! report on stdout.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use elicit::cassette::replay::{replay, Outcome, ReplayOptions, Verdict};
use elicit::cassette::{Cassette, LoadError, ServerSpec};
use elicit::text::sanitize::sanitize_line;
use serde_json::{json, Value};

use super::parse_headers;
use crate::cli::{TestArgs, TestFormat};

/// What became of one cassette.
enum Report {
    /// It could not be read (exit 2).
    Unreadable(LoadError),
    Ran(Outcome),
    /// `--update` could not write it back.
    NotWritten(Outcome, String),
}

struct Test {
    name: String,
    report: Report,
}

pub fn run(args: &TestArgs) -> i32 {
    elicit::signals::install_interrupt_handler();
    elicit::transport::process_group::exit_on_signals();
    let code = test(args);
    elicit::transport::process_group::defer_to_signal();
    code
}

pub(super) fn usage(message: &str) -> i32 {
    eprintln!("elicit: {}", sanitize_line(message));
    2
}

fn test(args: &TestArgs) -> i32 {
    let server = match args.server.as_deref().map(ServerSpec::parse).transpose() {
        Ok(s) => s,
        Err(e) => return super::report(&e),
    };
    let headers = match parse_headers(&args.headers) {
        Ok(h) => h,
        Err(e) => return super::report(&e),
    };
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("elicit-tests")]
    } else {
        args.paths.clone()
    };
    if args.paths.is_empty() && !paths[0].exists() {
        return usage(
            "no ./elicit-tests folder here: name the cassettes to replay, or record one with `elicit call --record elicit-tests/NAME.cassette.json …`",
        );
    }
    let files = match cassette_files(&paths) {
        Ok(f) => f,
        Err(e) => return usage(&e),
    };
    if files.is_empty() {
        return usage(&format!(
            "no cassettes (*.cassette.json) found in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let strict = if args.checks.strict {
        match elicit::lint::Levels::new(&args.checks.allow, &args.checks.deny) {
            Ok(levels) => Some(levels),
            Err(message) => return usage(&message),
        }
    } else {
        None
    };
    let rules = match args
        .answers_file
        .as_deref()
        .map(elicit::cassette::rules::AnswerRules::load)
        .transpose()
    {
        Ok(rules) => rules.map(std::sync::Arc::new),
        Err(e) => return usage(&format!("--answers {e}")),
    };
    let mut options = ReplayOptions {
        server,
        headers,
        update: args.update,
        timeout: Some(args.timeout),
        verbose: args.verbose,
        modes: args.checks.modes,
        strict,
        answers: args.answers.clone(),
        rules,
        local_port: None,
    };
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(1)
        })
        .min(files.len());
    let allowed = match allowed_servers(&args.allow_servers) {
        Ok(a) => a,
        Err(e) => return super::report(&e),
    };
    if args.since.starts_with('-') {
        return usage(&format!(
            "--since {:?}: a commit, not an option",
            args.since
        ));
    }
    if options.server.is_none() {
        announce_commands(&files, &args.since);
    }
    // Ended (with all it started) when this goes, however the run ends.
    let _started_server = match &args.start_server {
        Some(command) => match start_server(command, &files, args.start_timeout) {
            Ok(server) => {
                options.local_port = Some(server.port);
                Some(server)
            }
            Err(e) => return super::report(&e),
        },
        None => None,
    };
    if args.explore {
        return super::explore::run(args, &files, &options, &allowed);
    }
    let started = Instant::now();
    let tests = run_all(&files, &options, &allowed, jobs);
    let elapsed = started.elapsed();
    let count = |f: &dyn Fn(&Report) -> bool| tests.iter().filter(|t| f(&t.report)).count();
    let passed = count(&|r| matches!(r, Report::Ran(o) if o.verdict == Verdict::Pass));
    let updated = count(&|r| matches!(r, Report::Ran(o) if o.verdict == Verdict::Updated));
    let unreadable = count(&|r| matches!(r, Report::Unreadable(_)));
    let failed = tests.len() - passed - updated - unreadable;
    let mut summary = format!(
        "elicit test: {} test{}, {passed} passed",
        tests.len(),
        if tests.len() == 1 { "" } else { "s" }
    );
    if updated > 0 {
        summary.push_str(&format!(", {updated} updated"));
    }
    summary.push_str(&format!(", {failed} failed"));
    if unreadable > 0 {
        summary.push_str(&format!(", {unreadable} unreadable"));
    }
    summary.push_str(&format!(" ({})", millis(elapsed)));
    eprintln!("{summary}");
    let code = if unreadable > 0 {
        2
    } else if failed > 0 {
        1
    } else {
        0
    };
    if let Some(format) = args.format {
        let text = match format {
            TestFormat::Tap => tap(&tests),
            TestFormat::Junit => junit(&tests, elapsed),
            TestFormat::Json => json_report(&tests, elapsed, jobs),
        };
        let out = super::print_line(text.trim_end());
        if out != 0 {
            return out.max(code);
        }
    }
    code
}

/// Starts `--start-server`'s command and waits for its port: `{port}` in
/// the command is a free port chosen here, else the port of the first
/// HTTP cassette's URL.
fn start_server(
    command: &str,
    files: &[PathBuf],
    limit: Duration,
) -> Result<elicit::transport::local_server::LocalServer, elicit::ElicitError> {
    let usage = |m: String| elicit::ElicitError::Usage(format!("--start-server: {m}"));
    let words = shell_words::split(command).map_err(|e| usage(e.to_string()))?;
    if words.is_empty() {
        return Err(usage("no command given".into()));
    }
    let port = if words.iter().any(|w| w.contains("{port}")) {
        elicit::transport::local_server::free_port()
            .map_err(|e| elicit::ElicitError::io("--start-server: no free port on 127.0.0.1", e))?
    } else {
        files
            .iter()
            .filter_map(|f| Cassette::load(f).ok())
            .find_map(|c| match c.server {
                ServerSpec::Url { url, .. } => url::Url::parse(&url)
                    .ok()
                    .and_then(|u| u.port_or_known_default()),
                ServerSpec::Command(_) => None,
            })
            .ok_or_else(|| {
                usage("no HTTP cassette names a port: put {port} in the command".into())
            })?
    };
    let words: Vec<String> = words
        .iter()
        .map(|w| w.replace("{port}", &port.to_string()))
        .collect();
    eprintln!(
        "elicit test: starting {} (port {port})",
        sanitize_line(&shell_words::join(&words))
    );
    elicit::transport::local_server::LocalServer::start(&words, port, limit)
}

/// Every cassette under `paths`: files as given, folders searched (depth
/// first, sorted) for `*.cassette.json`. Links to folders are followed,
/// each folder once (by device and inode), so links that loop (`a -> .`)
/// end the search instead of walking forever; hidden folders are skipped.
pub(super) fn cassette_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut out, &mut seen, 0).map_err(|e| format!("{}: {e}", p.display()))?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Most folders searched, and the deepest: a tree past them is cut short.
const MAX_FOLDERS: usize = 10_000;
const MAX_DEPTH: usize = 32;

fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<elicit::platform::fs::FolderId>,
    depth: usize,
) -> std::io::Result<()> {
    if depth > MAX_DEPTH || seen.len() >= MAX_FOLDERS {
        return Ok(());
    }
    if !seen.insert(elicit::platform::fs::folder_identity(dir)?) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if path.is_dir() {
            if !name.as_deref().is_some_and(|n| n.starts_with('.')) {
                walk(&path, out, seen, depth + 1)?;
            }
        } else if name
            .as_deref()
            .is_some_and(|n| n.ends_with(".cassette.json"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether an `--allow-server` entry allows a cassette's server: the same
/// command, word for word, or the same URL (without credentials; any
/// transport).
pub(super) fn same_server(allowed: &ServerSpec, server: &ServerSpec) -> bool {
    match (allowed, server) {
        (ServerSpec::Command(a), ServerSpec::Command(b)) => a == b,
        (ServerSpec::Url { url: a, .. }, ServerSpec::Url { url: b, .. }) => {
            *a == elicit::cassette::without_credentials(b)
        }
        _ => false,
    }
}

/// The `--allow-server` entries, parsed as `--server` is.
fn allowed_servers(given: &[String]) -> Result<Vec<ServerSpec>, elicit::ElicitError> {
    given
        .iter()
        .map(|a| {
            ServerSpec::parse(a).map(|s| match s {
                // A URL is compared as a cassette holds it.
                ServerSpec::Url { url, .. } => ServerSpec::Url {
                    url: elicit::cassette::without_credentials(&url),
                    transport: String::new(),
                },
                command => command,
            })
        })
        .collect()
}

/// Says on stderr, before anything runs, which server each cassette
/// changed since `since` (or not committed, or outside git) will run: a
/// cassette names the command `elicit test` runs, so a change to one is a
/// change to what runs. Unreadable cassettes are left to their report.
fn announce_commands(files: &[PathBuf], since: &str) {
    for path in files {
        let Ok(cassette) = Cassette::load(path) else {
            continue;
        };
        if let Some(why) = changed_since(path, since) {
            eprintln!(
                "elicit test: {} runs {} ({why})",
                sanitize_line(&path.display().to_string()),
                sanitize_line(&cassette.server.describe())
            );
        }
    }
}

/// Why a cassette's command is shown: None when git says the file is
/// committed and the same as at `since`. git runs without a shell, with
/// the repository's fsmonitor, external diff and textconv programs off,
/// for at most 5 seconds.
fn changed_since(path: &Path, since: &str) -> Option<String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name()?;
    let git = |args: &[&std::ffi::OsStr]| -> Option<i32> {
        let mut child = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "core.fsmonitor=false"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return status.code(),
                Ok(None) if start.elapsed() < Duration::from_secs(5) => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return None;
                }
            }
        }
    };
    let os = std::ffi::OsStr::new;
    match git(&[os("ls-files"), os("--error-unmatch"), os("--"), name]) {
        Some(0) => {}
        Some(_) => return Some("not committed, or not in a git work tree".into()),
        None => return Some("git could not say whether it changed".into()),
    }
    match git(&[
        os("diff"),
        os("--quiet"),
        os("--no-ext-diff"),
        os("--no-textconv"),
        os(since),
        os("--"),
        name,
    ]) {
        Some(0) => None,
        Some(1) => Some(format!("changed since {}", sanitize_line(since))),
        _ => Some(format!(
            "git could not compare it with {}",
            sanitize_line(since)
        )),
    }
}

/// Runs every cassette on `jobs` threads; each result line is printed as
/// its test ends. The report keeps the files' order.
fn run_all(
    files: &[PathBuf],
    options: &ReplayOptions,
    allowed: &[ServerSpec],
    jobs: usize,
) -> Vec<Test> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Test>>> = Mutex::new((0..files.len()).map(|_| None).collect());
    let progress = super::progress::Progress::new();
    std::thread::scope(|scope| {
        scope.spawn(|| progress.tick());
        let workers: Vec<_> = (0..jobs.max(1))
            .map(|_| {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(path) = files.get(i) else { break };
                    if elicit::signals::interrupted() {
                        break;
                    }
                    let name = path.display().to_string();
                    progress.start(&name);
                    let test = run_one(path, options, allowed);
                    progress.finish(&name, &line_for(&test));
                    done.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(test);
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        progress.stop();
    });
    done.into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

fn run_one(path: &Path, options: &ReplayOptions, allowed: &[ServerSpec]) -> Test {
    let name = path.display().to_string();
    let cassette = match Cassette::load(path) {
        Ok(c) => c,
        Err(e) => {
            return Test {
                name,
                report: Report::Unreadable(e),
            }
        }
    };
    if options.server.is_none()
        && !allowed.is_empty()
        && !allowed.iter().any(|a| same_server(a, &cassette.server))
    {
        return Test {
            name,
            report: Report::Unreadable(LoadError {
                path: path.to_path_buf(),
                pointer: Some("/server".into()),
                message: format!(
                    "the server {} is not one --allow-server allows ({}): not run",
                    sanitize_line(&cassette.server.describe()),
                    allowed
                        .iter()
                        .map(|a| sanitize_line(&a.describe()))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }),
        };
    }
    let outcome = replay(&cassette, options);
    let report = match &outcome.updated {
        Some(new) if outcome.verdict == Verdict::Updated => match new.write(path) {
            Ok(()) => Report::Ran(outcome),
            Err(e) => {
                let message = e.to_string();
                Report::NotWritten(outcome, message)
            }
        },
        _ => Report::Ran(outcome),
    };
    Test { name, report }
}

pub(super) fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// The status word and the detail lines of a test.
fn status(test: &Test) -> (&'static str, Vec<String>, Option<Duration>) {
    match &test.report {
        Report::Unreadable(e) => ("ERROR", vec![e.to_string()], None),
        Report::Ran(o) => match &o.verdict {
            // `--strict` warnings and infos are shown as `call --strict`
            // shows them, under the test they belong to.
            Verdict::Pass => ("ok", o.notes.clone(), Some(o.elapsed)),
            Verdict::Updated => ("updated", o.notes.clone(), Some(o.elapsed)),
            Verdict::Fail(lines) => {
                let all = lines.iter().chain(&o.notes).cloned().collect();
                ("FAIL", all, Some(o.elapsed))
            }
            Verdict::Error(lines) => {
                let all = lines.iter().chain(&o.notes).cloned().collect();
                ("ERROR", all, Some(o.elapsed))
            }
        },
        Report::NotWritten(o, e) => (
            "FAIL",
            vec![format!("the updated cassette could not be written: {e}")],
            Some(o.elapsed),
        ),
    }
}

/// The server's last words when the test failed (kept out of the
/// failure's own lines).
fn server_stderr(test: &Test) -> &[String] {
    match &test.report {
        Report::Ran(o) | Report::NotWritten(o, _) => &o.server_stderr,
        Report::Unreadable(_) => &[],
    }
}

/// A finished test's line for stderr, with its details under it.
fn line_for(test: &Test) -> String {
    let (word, lines, elapsed) = status(test);
    let mut text = format!("{word:<7} {}", sanitize_line(&test.name));
    if let Some(d) = elapsed {
        text.push_str(&format!(" ({})", millis(d)));
    }
    for l in &lines {
        text.push_str("\n        ");
        text.push_str(&sanitize_line(l));
    }
    for l in server_stderr(test) {
        text.push_str("\n        server: ");
        text.push_str(&sanitize_line(l));
    }
    text
}

fn tap(tests: &[Test]) -> String {
    let mut out = format!("TAP version 13\n1..{}\n", tests.len());
    for (i, t) in tests.iter().enumerate() {
        let (word, lines, elapsed) = status(t);
        let ok = matches!(word, "ok" | "updated");
        let name = sanitize_line(&t.name).replace('#', "\\#");
        out.push_str(&format!(
            "{} {} - {name}{}\n",
            if ok { "ok" } else { "not ok" },
            i + 1,
            if word == "updated" { " # updated" } else { "" }
        ));
        if !lines.is_empty() || elapsed.is_some() {
            out.push_str("  ---\n");
            if let Some(d) = elapsed {
                out.push_str(&format!("  duration_ms: {:.1}\n", d.as_secs_f64() * 1000.0));
            }
            if !lines.is_empty() {
                out.push_str(&format!(
                    "  message: {}\n",
                    serde_json::to_string(&sanitize_line(&lines[0])).unwrap_or_default()
                ));
                out.push_str("  diff: |\n");
                for l in &lines {
                    out.push_str(&format!("    {}\n", sanitize_line(l)));
                }
            }
            let stderr = server_stderr(t);
            if !stderr.is_empty() {
                out.push_str("  server_stderr: |\n");
                for l in stderr {
                    out.push_str(&format!("    {}\n", sanitize_line(l)));
                }
            }
            out.push_str("  ...\n");
        }
    }
    out
}

/// XML text with the five special characters escaped, and the characters
/// XML 1.0 cannot hold at all dropped.
pub(super) fn xml(text: &str) -> String {
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

/// The JUnit XML that CI systems read: one `<testsuite>` in
/// `<testsuites>`, one `<testcase>` per cassette, `<failure>` for a failed
/// test and `<error>` for an unreadable cassette.
fn junit(tests: &[Test], elapsed: Duration) -> String {
    let mut failures = 0;
    let mut errors = 0;
    let mut cases = String::new();
    for t in tests {
        let (word, lines, took) = status(t);
        let secs = took.map_or(0.0, |d| d.as_secs_f64());
        cases.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"elicit.cassette\" time=\"{secs:.3}\"",
            xml(&t.name)
        ));
        match word {
            "FAIL" | "ERROR" => {
                let tag = if word == "FAIL" {
                    failures += 1;
                    "failure"
                } else {
                    errors += 1;
                    "error"
                };
                let body: Vec<String> = lines.iter().map(|l| sanitize_line(l)).collect();
                let kind = match (tag, &t.report) {
                    ("failure", _) => "mismatch",
                    (_, Report::Unreadable(_)) => "unreadable",
                    _ => "not-run",
                };
                let stderr = server_stderr(t);
                let system_err = if stderr.is_empty() {
                    String::new()
                } else {
                    let text: Vec<String> = stderr.iter().map(|l| sanitize_line(l)).collect();
                    format!("\n      <system-err>{}</system-err>", xml(&text.join("\n")))
                };
                cases.push_str(&format!(
                    ">\n      <{tag} message=\"{}\" type=\"{kind}\">{}</{tag}>{system_err}\n    </testcase>\n",
                    xml(body.first().map(String::as_str).unwrap_or("")),
                    xml(&body.join("\n"))
                ));
            }
            _ => cases.push_str("/>\n"),
        }
    }
    let secs = elapsed.as_secs_f64();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"elicit test\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{secs:.3}\">\n  <testsuite name=\"elicit\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{secs:.3}\">\n{cases}  </testsuite>\n</testsuites>\n",
        n = tests.len()
    )
}

/// elicit's own processor time so far (user and system, its threads, not
/// the servers it started): what `bench/replay.sh` reports per test.
fn own_cpu() -> Duration {
    elicit::platform::process::cpu_time()
}

fn json_report(tests: &[Test], elapsed: Duration, jobs: usize) -> String {
    let list: Vec<Value> = tests
        .iter()
        .map(|t| {
            let (word, lines, took) = status(t);
            let status = match word {
                "ok" => "pass",
                "updated" => "updated",
                "FAIL" => "fail",
                _ => "error",
            };
            json!({
                "file": t.name,
                "status": status,
                "time_ms": took.map(|d| (d.as_secs_f64() * 1000.0 * 10.0).round() / 10.0),
                "details": lines,
                "server_stderr": server_stderr(t),
            })
        })
        .collect();
    let count = |s: &str| list.iter().filter(|t| t["status"] == s).count();
    let report = json!({
        "tests": list,
        "summary": {
            "total": tests.len(),
            "passed": count("pass"),
            "updated": count("updated"),
            "failed": count("fail"),
            "errors": count("error"),
            "jobs": jobs,
            "time_ms": (elapsed.as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
            "elicit_cpu_ms": (own_cpu().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        }
    });
    serde_json::to_string_pretty(&report).expect("the report serialises")
}
