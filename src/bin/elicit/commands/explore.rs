//! `elicit test --explore`: the variants of each cassette (the library's
//! `cassette::explore`), run in parallel, bounded in count (`--max`) and
//! time (`--max-time`); one line per variant on stderr, a summary, a TAP,
//! JUnit or JSON report on stdout, and `--save DIR`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use elicit::cassette::explore::{self, Explored, Variant};
use elicit::cassette::replay::ReplayOptions;
use elicit::cassette::suite;
use elicit::cassette::{Cassette, ServerSpec};
use elicit::text::sanitize::sanitize_line;
use serde_json::{json, Value};

use super::test::{millis, usage, xml};
use crate::cli::{TestArgs, TestFormat};

/// One variant to run: its cassette's file and the variant.
struct Job<'a> {
    file: &'a Path,
    cassette: &'a Cassette,
    variant: Variant,
}

/// What became of one variant.
struct Done {
    name: String,
    invalid: bool,
    /// `None`: skipped (`--max-time` passed before it started).
    explored: Option<Explored>,
    saved: Option<String>,
}

pub fn run(
    args: &TestArgs,
    files: &[PathBuf],
    options: &ReplayOptions,
    allowed: &[ServerSpec],
) -> i32 {
    let mut cassettes = Vec::new();
    for path in files {
        match Cassette::load(path) {
            Ok(c) if suite::refused(&c.server, options, allowed) => {
                return usage(&format!(
                    "{}: /server: the server {} is not one --allow-server allows: not run",
                    path.display(),
                    c.server.describe()
                ))
            }
            Ok(c) => cassettes.push((path.clone(), c)),
            Err(e) => return usage(&e.to_string()),
        }
    }
    if let Some(dir) = &args.save {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return usage(&format!("--save {}: {e}", dir.display()));
        }
    }
    let mut jobs: Vec<Job> = cassettes
        .iter()
        .flat_map(|(file, c)| {
            explore::variants(c, args.invalid)
                .into_iter()
                .map(move |variant| Job {
                    file,
                    cassette: c,
                    variant,
                })
        })
        .collect();
    let total = jobs.len();
    jobs.truncate(args.max);
    let over_max = total - jobs.len();
    let threads = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, jobs.len().max(1));
    let started = Instant::now();
    let done = run_jobs(&jobs, options, args, threads);
    let elapsed = started.elapsed();
    let code = summary(&done, cassettes.len(), over_max, args, elapsed);
    if let Some(format) = args.format {
        let text = match format {
            TestFormat::Tap => tap(&done),
            TestFormat::Junit => junit(&done, elapsed),
            TestFormat::Json => json_report(&done, elapsed, over_max),
        };
        let out = super::print_line(text.trim_end());
        if out != 0 {
            return out.max(code);
        }
    }
    code
}

fn run_jobs(jobs: &[Job], options: &ReplayOptions, args: &TestArgs, threads: usize) -> Vec<Done> {
    let deadline = Instant::now() + args.max_time;
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Done>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let progress = super::progress::Progress::new();
    std::thread::scope(|scope| {
        scope.spawn(|| progress.tick());
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let name = format!("{} {}", job.file.display(), job.variant.slug);
                    let skip = Instant::now() >= deadline || elicit::signals::interrupted();
                    let d = if skip {
                        Done {
                            name,
                            invalid: job.variant.invalid,
                            explored: None,
                            saved: None,
                        }
                    } else {
                        progress.start(&name);
                        let d = run_one(job, options, args.save.as_deref(), name.clone());
                        progress.finish(&name, &line_for(&d));
                        d
                    };
                    done.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(d);
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

fn run_one(job: &Job, options: &ReplayOptions, save: Option<&Path>, name: String) -> Done {
    let explored = explore::run_variant(job.cassette, &job.variant, options);
    let saved = match (save, &explored.cassette) {
        (Some(dir), Some(c)) => {
            let path = dir.join(explore::file_name(job.file, &job.variant));
            Some(match c.write(&path) {
                Ok(()) => format!("saved as {}", path.display()),
                Err(e) => format!("not saved: {e}"),
            })
        }
        _ => None,
    };
    Done {
        name,
        invalid: job.variant.invalid,
        explored: Some(explored),
        saved,
    }
}

/// The status word of a variant: `FAIL` for a failure, else its class.
fn word(d: &Done) -> &'static str {
    match &d.explored {
        None => "skipped",
        Some(e) if e.failure.is_some() => "FAIL",
        Some(e) => e.class.word(),
    }
}

/// The lines under a variant: why it failed, its class, what happened.
fn details(d: &Done) -> Vec<String> {
    let Some(e) = &d.explored else {
        return vec!["--max-time passed before it started".into()];
    };
    let mut lines = Vec::new();
    if let Some(f) = &e.failure {
        lines.push(format!("{}: {f}", e.class.word()));
    }
    if d.invalid {
        lines.push("invalid content, sent on purpose (--invalid)".into());
    }
    lines.extend(e.detail.iter().cloned());
    lines.extend(d.saved.iter().cloned());
    lines
}

fn line_for(d: &Done) -> String {
    let mut text = format!("{:<16} {}", word(d), sanitize_line(&d.name));
    if let Some(e) = &d.explored {
        text.push_str(&format!(" ({})", millis(e.elapsed)));
        for l in details(d) {
            text.push_str("\n        ");
            text.push_str(&sanitize_line(&l));
        }
        for l in &e.server_stderr {
            text.push_str("\n        server: ");
            text.push_str(&sanitize_line(l));
        }
    }
    text
}

fn summary(done: &[Done], files: usize, over_max: usize, args: &TestArgs, took: Duration) -> i32 {
    let failed = done.iter().filter(|d| word(d) == "FAIL").count();
    let skipped = done.iter().filter(|d| d.explored.is_none()).count();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for d in done.iter().filter_map(|d| d.explored.as_ref()) {
        let w = d.class.word();
        match counts.iter_mut().find(|(k, _)| *k == w) {
            Some((_, n)) => *n += 1,
            None => counts.push((w, 1)),
        }
    }
    let classes: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let mut line = format!(
        "elicit test --explore: {} variant{} of {files} cassette{} run ({}), {failed} failed",
        done.len() - skipped,
        if done.len() - skipped == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" },
        if classes.is_empty() {
            "none".into()
        } else {
            classes.join(", ")
        },
    );
    if over_max > 0 {
        line.push_str(&format!(", {over_max} skipped by --max {}", args.max));
    }
    if skipped > 0 {
        line.push_str(&format!(", {skipped} skipped by --max-time"));
    }
    line.push_str(&format!(" ({})", millis(took)));
    eprintln!("{line}");
    i32::from(failed > 0)
}

fn tap(done: &[Done]) -> String {
    let mut out = format!("TAP version 13\n1..{}\n", done.len());
    for (i, d) in done.iter().enumerate() {
        let w = word(d);
        let name = sanitize_line(&d.name).replace('#', "\\#");
        let directive = match w {
            "FAIL" => String::new(),
            "skipped" => " # SKIP --max-time".into(),
            other => format!(" # {other}"),
        };
        let ok = if w == "FAIL" { "not ok" } else { "ok" };
        out.push_str(&format!("{ok} {} - {name}{directive}\n", i + 1));
        let lines = details(d);
        if let Some(e) = &d.explored {
            out.push_str("  ---\n");
            out.push_str(&format!("  class: {}\n", e.class.word()));
            out.push_str(&format!("  invalid: {}\n", d.invalid));
            out.push_str(&format!(
                "  duration_ms: {:.1}\n",
                e.elapsed.as_secs_f64() * 1000.0
            ));
            out.push_str("  detail: |\n");
            for l in &lines {
                out.push_str(&format!("    {}\n", sanitize_line(l)));
            }
            out.push_str("  ...\n");
        }
    }
    out
}

fn junit(done: &[Done], elapsed: Duration) -> String {
    let failures = done.iter().filter(|d| word(d) == "FAIL").count();
    let skipped = done.iter().filter(|d| d.explored.is_none()).count();
    let mut cases = String::new();
    for d in done {
        let secs = d.explored.as_ref().map_or(0.0, |e| e.elapsed.as_secs_f64());
        let body: Vec<String> = details(d).iter().map(|l| sanitize_line(l)).collect();
        cases.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"elicit.explore\" time=\"{secs:.3}\">\n",
            xml(&d.name)
        ));
        match (word(d), &d.explored) {
            ("FAIL", Some(e)) => cases.push_str(&format!(
                "      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                xml(body.first().map(String::as_str).unwrap_or("")),
                e.class.word(),
                xml(&body.join("\n"))
            )),
            (_, None) => cases.push_str("      <skipped message=\"--max-time\"/>\n"),
            _ => cases.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                xml(&body.join("\n"))
            )),
        }
        cases.push_str("    </testcase>\n");
    }
    let secs = elapsed.as_secs_f64();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"elicit test --explore\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" time=\"{secs:.3}\">\n  <testsuite name=\"elicit-explore\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{secs:.3}\">\n{cases}  </testsuite>\n</testsuites>\n",
        n = done.len()
    )
}

fn json_report(done: &[Done], elapsed: Duration, over_max: usize) -> String {
    let list: Vec<Value> = done
        .iter()
        .map(|d| {
            let e = d.explored.as_ref();
            json!({
                "name": d.name,
                "class": e.map(|e| e.class.word()),
                "failed": word(d) == "FAIL",
                "failure": e.and_then(|e| e.failure.clone()),
                "invalid": d.invalid,
                "skipped": e.is_none(),
                "time_ms": e.map(|e| (e.elapsed.as_secs_f64() * 10_000.0).round() / 10.0),
                "details": e.map(|e| e.detail.clone()).unwrap_or_default(),
                "saved": d.saved,
                "server_stderr": e.map(|e| e.server_stderr.clone()).unwrap_or_default(),
            })
        })
        .collect();
    let report = json!({
        "variants": list,
        "summary": {
            "total": done.len(),
            "failed": done.iter().filter(|d| word(d) == "FAIL").count(),
            "skipped_by_max_time": done.iter().filter(|d| d.explored.is_none()).count(),
            "skipped_by_max": over_max,
            "time_ms": (elapsed.as_secs_f64() * 10_000.0).round() / 10.0,
        }
    });
    serde_json::to_string_pretty(&report).expect("the report serialises")
}
