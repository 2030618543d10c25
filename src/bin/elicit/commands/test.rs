//! `elicit test`: replays cassettes against their servers, in parallel;
//! one line per test on stderr and a summary, and a TAP, JUnit or JSON
//! report on stdout.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use elicit::cassette::replay::{ReplayOptions, Verdict};
use elicit::cassette::suite::{self, Report, SuiteWatcher, Summary, Test};
use elicit::cassette::{Cassette, ServerSpec};
use elicit::text::sanitize::sanitize_line;
use serde_json::{json, Value};

use super::parse_headers;
use super::progress::Progress;
use super::report::{millis, usage, xml};
use crate::cli::{TestArgs, TestFormat};

pub fn run(args: &TestArgs) -> i32 {
    elicit::signals::install_interrupt_handler();
    elicit::transport::process_group::exit_on_signals();
    let code = test(args);
    elicit::transport::process_group::defer_to_signal();
    code
}

/// What the flags ask to run: the replays' options, the cassettes, the
/// servers allowed, and on how many threads.
struct Plan {
    options: ReplayOptions,
    files: Vec<PathBuf>,
    allowed: Vec<ServerSpec>,
    jobs: usize,
}

/// The flags as a [`Plan`], or the exit status of a bad one (reported).
fn plan(args: &TestArgs) -> Result<Plan, i32> {
    let report = |e: elicit::ElicitError| super::report(&e);
    let server = args.server.as_deref().map(ServerSpec::parse).transpose();
    let server = server.map_err(report)?;
    let headers = parse_headers(&args.headers).map_err(report)?;
    let files = cassettes(&args.paths)?;
    let strict = if args.checks.strict {
        let levels = elicit::lint::Levels::new(&args.checks.allow, &args.checks.deny);
        Some(levels.map_err(|message| usage(&message))?)
    } else {
        None
    };
    let rules = args.answers_file.as_deref();
    let rules = rules.map(elicit::answers::AnswerRules::load).transpose();
    let rules = rules.map_err(|e| usage(&format!("--answers {e}")))?;
    let options = ReplayOptions {
        server,
        headers,
        update: args.update,
        timeout: Some(args.timeout),
        verbose: args.verbose,
        modes: args.checks.modes,
        strict,
        answers: args.answers.clone(),
        rules: rules.map(std::sync::Arc::new),
        local_port: None,
    };
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .min(files.len());
    let allowed = suite::allowed_servers(&args.allow_servers).map_err(report)?;
    if args.since.starts_with('-') {
        return Err(usage(&format!(
            "--since {:?}: a commit, not an option",
            args.since
        )));
    }
    Ok(Plan {
        options,
        files,
        allowed,
        jobs,
    })
}

/// The cassettes under the paths given (default: ./elicit-tests), or the
/// exit status of none (reported).
fn cassettes(given: &[PathBuf]) -> Result<Vec<PathBuf>, i32> {
    let paths = if given.is_empty() {
        vec![PathBuf::from("elicit-tests")]
    } else {
        given.to_vec()
    };
    if given.is_empty() && !paths[0].exists() {
        return Err(usage(
            "no ./elicit-tests folder here: name the cassettes to replay, or record one with `elicit call --record elicit-tests/NAME.cassette.json …`",
        ));
    }
    let files = suite::cassette_files(&paths).map_err(|e| usage(&e))?;
    if files.is_empty() {
        return Err(usage(&format!(
            "no cassettes (*.cassette.json) found in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(files)
}

fn test(args: &TestArgs) -> i32 {
    let mut plan = match plan(args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    if plan.options.server.is_none() {
        announce_commands(&plan.files, &args.since);
    }
    // Ended (with all it started) when this goes, however the run ends.
    let _started_server = match &args.start_server {
        Some(command) => match start_server(command, &plan.files, args.start_timeout) {
            Ok(server) => {
                plan.options.local_port = Some(server.port);
                Some(server)
            }
            Err(e) => return super::report(&e),
        },
        None => None,
    };
    if args.explore {
        return super::explore::run(args, &plan.files, &plan.options, &plan.allowed);
    }
    let started = Instant::now();
    let tests = run_all(&plan);
    let elapsed = started.elapsed();
    let summary = Summary::of(&tests);
    eprintln!("{}", summary_line(&summary, elapsed));
    let code = summary.exit_code();
    if let Some(format) = args.format {
        let text = match format {
            TestFormat::Tap => tap(&tests),
            TestFormat::Junit => junit(&tests, elapsed),
            TestFormat::Json => json_report(&tests, elapsed, plan.jobs),
        };
        let out = super::print_line(text.trim_end());
        if out != 0 {
            return out.max(code);
        }
    }
    code
}

/// `elicit test: 3 tests, 2 passed, 1 failed (1.20 s)`.
fn summary_line(s: &Summary, elapsed: Duration) -> String {
    let mut summary = format!(
        "elicit test: {} test{}, {} passed",
        s.total,
        if s.total == 1 { "" } else { "s" },
        s.passed
    );
    if s.updated > 0 {
        summary.push_str(&format!(", {} updated", s.updated));
    }
    summary.push_str(&format!(", {} failed", s.failed));
    if s.unreadable > 0 {
        summary.push_str(&format!(", {} unreadable", s.unreadable));
    }
    summary.push_str(&format!(" ({})", millis(elapsed)));
    summary
}

/// Starts `--start-server`'s command and waits for its port (the
/// library's [`suite::local_server_command`]).
fn start_server(
    command: &str,
    files: &[PathBuf],
    limit: Duration,
) -> Result<elicit::transport::local_server::LocalServer, elicit::ElicitError> {
    let (words, port) = suite::local_server_command(command, files)?;
    eprintln!(
        "elicit test: starting {} (port {port})",
        sanitize_line(&shell_words::join(&words))
    );
    elicit::transport::local_server::LocalServer::start(&words, port, limit)
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
        if let Some(why) = suite::changed_since(path, since) {
            eprintln!(
                "elicit test: {} runs {} ({why})",
                sanitize_line(&path.display().to_string()),
                sanitize_line(&cassette.server.describe())
            );
        }
    }
}

/// The status line, and each finished test's line.
impl SuiteWatcher for Progress {
    fn started(&self, name: &str) {
        self.start(name);
    }

    fn finished(&self, test: &Test) {
        self.finish(&test.name, &line_for(test));
    }
}

/// Runs every cassette of the plan, with a status line; each result line
/// is printed as its test ends.
fn run_all(plan: &Plan) -> Vec<Test> {
    let progress = Progress::new();
    std::thread::scope(|scope| {
        scope.spawn(|| progress.tick());
        let tests = suite::run_all(
            &plan.files,
            &plan.options,
            &plan.allowed,
            plan.jobs,
            &progress,
        );
        progress.stop();
        tests
    })
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
