//! `elicit test` over many cassettes: finding them (files as given,
//! folders searched), which servers may run (`--allow-server`), the server
//! `--start-server` starts and its port, which cassettes changed since a
//! commit (their commands are shown before anything runs), and the replays
//! themselves on a number of threads ([`run_all`]), each written back with
//! `--update`. How each test and the run are shown is the caller's.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::replay::{replay, Outcome, ReplayOptions, Verdict};
use super::{without_credentials, Cassette, LoadError, ServerSpec};
use elicit_core::error::ElicitError;
use elicit_core::text::sanitize::sanitize_line;
use elicit_platform::fs::FolderId;

/// What became of one cassette.
#[derive(Debug)]
pub enum Report {
    /// It could not be read, or its server is not allowed (exit 2).
    Unreadable(LoadError),
    /// It ran.
    Ran(Outcome),
    /// `--update` could not write it back: the run, and why.
    NotWritten(Outcome, String),
}

/// One cassette's test.
#[derive(Debug)]
pub struct Test {
    /// The cassette's path, as shown.
    pub name: String,
    /// What became of it.
    pub report: Report,
}

/// Every cassette under `paths`: files as given, folders searched (depth
/// first, sorted) for `*.cassette.json`. Links to folders are followed,
/// each folder once (by device and inode), so links that loop (`a -> .`)
/// end the search instead of walking forever; hidden folders are skipped.
pub fn cassette_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
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
    seen: &mut HashSet<FolderId>,
    depth: usize,
) -> std::io::Result<()> {
    if depth > MAX_DEPTH || seen.len() >= MAX_FOLDERS {
        return Ok(());
    }
    if !seen.insert(elicit_platform::fs::folder_identity(dir)?) {
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
pub fn same_server(allowed: &ServerSpec, server: &ServerSpec) -> bool {
    match (allowed, server) {
        (ServerSpec::Command(a), ServerSpec::Command(b)) => a == b,
        (ServerSpec::Url { url: a, .. }, ServerSpec::Url { url: b, .. }) => {
            *a == without_credentials(b)
        }
        _ => false,
    }
}

/// Whether a cassette's server may not run: `--allow-server` names others
/// (and no `--server` replaces it).
pub fn refused(server: &ServerSpec, options: &ReplayOptions, allowed: &[ServerSpec]) -> bool {
    options.server.is_none()
        && !allowed.is_empty()
        && !allowed.iter().any(|a| same_server(a, server))
}

/// The `--allow-server` entries, parsed as `--server` is.
pub fn allowed_servers(given: &[String]) -> Result<Vec<ServerSpec>, ElicitError> {
    given
        .iter()
        .map(|a| {
            ServerSpec::parse(a).map(|s| match s {
                // A URL is compared as a cassette holds it.
                ServerSpec::Url { url, .. } => ServerSpec::Url {
                    url: without_credentials(&url),
                    transport: String::new(),
                },
                command => command,
            })
        })
        .collect()
}

/// `--start-server`'s command line, split like a shell, and the port it
/// serves on: `{port}` in it is a free port chosen here (and replaced in
/// the words), else the port of the first HTTP cassette's URL.
pub fn local_server_command(
    command: &str,
    files: &[PathBuf],
) -> Result<(Vec<String>, u16), ElicitError> {
    let usage = |m: String| ElicitError::Usage(format!("--start-server: {m}"));
    let words = shell_words::split(command).map_err(|e| usage(e.to_string()))?;
    if words.is_empty() {
        return Err(usage("no command given".into()));
    }
    let port = if words.iter().any(|w| w.contains("{port}")) {
        elicit_session::transport::local_server::free_port()
            .map_err(|e| ElicitError::io("--start-server: no free port on 127.0.0.1", e))?
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
    let words = words
        .iter()
        .map(|w| w.replace("{port}", &port.to_string()))
        .collect();
    Ok((words, port))
}

/// Why a cassette's command is shown before it runs: None when git says
/// the file is committed and the same as at `since`. git runs without a
/// shell, with the repository's fsmonitor, external diff and textconv
/// programs off, for at most 5 seconds.
pub fn changed_since(path: &Path, since: &str) -> Option<String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name()?;
    let git = |args: &[&std::ffi::OsStr]| git_status(dir, args);
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
        _ if before_the_first_commit(dir, since) => Some(format!(
            "new: {} is before the repository's first commit",
            sanitize_line(since)
        )),
        _ => Some(format!(
            "git could not compare it with {}",
            sanitize_line(since)
        )),
    }
}

/// Whether `since` names no commit while HEAD is a first commit (a
/// repository with one commit and the default `HEAD~1`): every committed
/// file is new then, which is no failure of git's.
fn before_the_first_commit(dir: &Path, since: &str) -> bool {
    let os = std::ffi::OsStr::new;
    let names_a_commit = |rev: &str| {
        git_status(
            dir,
            &[
                os("rev-parse"),
                os("--verify"),
                os("--quiet"),
                os("--end-of-options"),
                os(&format!("{rev}^{{commit}}")),
            ],
        ) == Some(0)
    };
    !names_a_commit(since) && names_a_commit("HEAD") && !names_a_commit("HEAD^")
}

/// `git -C dir -c core.fsmonitor=false ARGS`'s exit status, with nothing
/// in or out; None when it cannot run, or runs past 5 seconds (then it is
/// ended).
fn git_status(dir: &Path, args: &[&std::ffi::OsStr]) -> Option<i32> {
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
}

/// Who watches the tests run (a status line, a line per test).
pub trait SuiteWatcher: Sync {
    /// A test started.
    fn started(&self, name: &str);
    /// A test ended.
    fn finished(&self, test: &Test);
}

/// Runs every cassette on `jobs` threads (at least one); `watcher` is told
/// as each starts and ends. The tests keep the files' order; after an
/// interrupt (Ctrl-C) no more start.
pub fn run_all(
    files: &[PathBuf],
    options: &ReplayOptions,
    allowed: &[ServerSpec],
    jobs: usize,
    watcher: &dyn SuiteWatcher,
) -> Vec<Test> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Test>>> = Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.max(1))
            .map(|_| {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(path) = files.get(i) else { break };
                    if elicit_platform::handlers::interrupted() {
                        break;
                    }
                    let name = path.display().to_string();
                    watcher.started(&name);
                    let test = run_one(path, options, allowed);
                    watcher.finished(&test);
                    done.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(test);
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
    });
    done.into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

/// Replays one cassette (refused when its server is not allowed), and
/// writes it back when `--update` rebuilt it.
pub fn run_one(path: &Path, options: &ReplayOptions, allowed: &[ServerSpec]) -> Test {
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
    if refused(&cassette.server, options, allowed) {
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

/// How many tests passed, were updated, failed, or could not be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Every test.
    pub total: usize,
    /// Matched their cassette.
    pub passed: usize,
    /// Rewritten by `--update`.
    pub updated: usize,
    /// Failed, or could not run.
    pub failed: usize,
    /// Could not be read, or were refused.
    pub unreadable: usize,
}

impl Summary {
    /// Counts `tests`.
    pub fn of(tests: &[Test]) -> Summary {
        let count = |f: &dyn Fn(&Report) -> bool| tests.iter().filter(|t| f(&t.report)).count();
        let passed = count(&|r| matches!(r, Report::Ran(o) if o.verdict == Verdict::Pass));
        let updated = count(&|r| matches!(r, Report::Ran(o) if o.verdict == Verdict::Updated));
        let unreadable = count(&|r| matches!(r, Report::Unreadable(_)));
        Summary {
            total: tests.len(),
            passed,
            updated,
            failed: tests.len() - passed - updated - unreadable,
            unreadable,
        }
    }

    /// The exit status: 2 when a cassette could not be read, 1 when a test
    /// failed, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.unreadable > 0 {
            2
        } else if self.failed > 0 {
            1
        } else {
            0
        }
    }
}
