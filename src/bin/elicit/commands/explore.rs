//! `elicit test --explore`: the variants of each cassette (the library's
//! `cassette::explore`), run in parallel, bounded in count (`--max`) and
//! time (`--max-time`); one line per variant on stderr, a summary, a TAP,
//! JUnit or JSON report on stdout, and `--save DIR`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use elicit::cassette::explore::save::Saver;
use elicit::cassette::explore::{self, Explored, Variant};
use elicit::cassette::replay::ReplayOptions;
use elicit::cassette::suite;
use elicit::cassette::{Cassette, ServerSpec};
use elicit::text::sanitize::sanitize_line;
use serde_json::{json, Value};

use super::report::{millis, usage, xml};
use crate::cli::{TestArgs, TestFormat};

/// One variant to run: its cassette's file, the variant, and the file it
/// is saved as under `--save`.
struct Job<'a> {
    file: &'a Path,
    cassette: &'a Cassette,
    variant: Variant,
    save_as: Option<PathBuf>,
}

/// The variants of every cassette, made as they are taken: at most `max`
/// are made, the rest only counted.
struct Jobs<'a> {
    cassettes: &'a [(PathBuf, Cassette)],
    invalid: bool,
    current: usize,
    variants: Option<explore::Variants<'a>>,
    taken: usize,
    max: usize,
    saver: Option<&'a Saver>,
}

impl<'a> Jobs<'a> {
    /// The next job and its index, until `max` were taken.
    fn next(&mut self) -> Option<(usize, Job<'a>)> {
        if self.taken >= self.max {
            return None;
        }
        loop {
            let (file, cassette) = self.cassettes.get(self.current)?;
            let variants = self
                .variants
                .get_or_insert_with(|| explore::variants(cassette, self.invalid));
            let Some(variant) = variants.next() else {
                self.variants = None;
                self.current += 1;
                continue;
            };
            let save_as = self.saver.map(|s| s.claim(file, &variant));
            self.taken += 1;
            let job = Job {
                file,
                cassette,
                variant,
                save_as,
            };
            return Some((self.taken - 1, job));
        }
    }

    /// The variants not taken, counted without making them.
    fn count_rest(self) -> usize {
        let later = self.cassettes.iter().skip(self.current + 1);
        let rest_of_current = match (self.variants, self.cassettes.get(self.current)) {
            (Some(v), _) => v.count_rest(),
            (None, Some((_, c))) => explore::variants(c, self.invalid).count_rest(),
            (None, None) => 0,
        };
        rest_of_current
            + later
                .map(|(_, c)| explore::variants(c, self.invalid).count_rest())
                .sum::<usize>()
    }
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
    let saver = args.save.as_deref().map(|dir| Saver::new(dir, files));
    let jobs = Mutex::new(Jobs {
        cassettes: &cassettes,
        invalid: args.invalid,
        current: 0,
        variants: None,
        taken: 0,
        max: args.max,
        saver: saver.as_ref(),
    });
    let threads = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, args.max.max(1));
    let started = Instant::now();
    let done = run_jobs(&jobs, options, args, threads, saver.as_ref());
    let elapsed = started.elapsed();
    let over_max = jobs
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .count_rest();
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

/// Runs the jobs on `threads` workers, each taking the next variant as it
/// is free; the outcomes in the variants' order.
fn run_jobs(
    jobs: &Mutex<Jobs>,
    options: &ReplayOptions,
    args: &TestArgs,
    threads: usize,
    saver: Option<&Saver>,
) -> Vec<Done> {
    let deadline = Instant::now() + args.max_time;
    let done: Mutex<Vec<(usize, Done)>> = Mutex::new(Vec::new());
    let progress = super::progress::Progress::new();
    std::thread::scope(|scope| {
        scope.spawn(|| progress.tick());
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| loop {
                    let next = jobs.lock().unwrap_or_else(|p| p.into_inner()).next();
                    let Some((i, job)) = next else { break };
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
                        let d = run_one(job, options, saver, name.clone());
                        progress.finish(&name, &line_for(&d));
                        d
                    };
                    done.lock().unwrap_or_else(|p| p.into_inner()).push((i, d));
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        progress.stop();
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, d)| d).collect()
}

/// Runs one variant and saves it: its saved cassette is written and let
/// go here, so outcomes kept for the report hold no results.
fn run_one(job: Job, options: &ReplayOptions, saver: Option<&Saver>, name: String) -> Done {
    let mut explored = explore::run_variant(job.cassette, &job.variant, options);
    let saved = match (saver, &job.save_as, explored.cassette.take()) {
        (Some(saver), Some(path), Some(c)) => Some(saver.save(path, c)),
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
