//! Handing a URL to a browser, for every flow that opens one (the terminal's
//! URL flow, the browser page, sign-in): `--browser COMMAND`, else
//! `ELICIT_BROWSER`, else `BROWSER`, else the system opener. Always
//! detached with null stdio, never through a shell, and watched long enough
//! to report a program that fails at once. Deciding *whether* a URL may be
//! opened is `elicit_core::text::url_safety`'s; this only opens.

use std::io;
use std::time::{Duration, Instant};

/// How to launch the browser.
#[derive(Debug, Clone, Default)]
pub struct Opener {
    /// `--browser` / `ELICIT_BROWSER`: a command line (split like a shell:
    /// `'firefox --new-window'`) run with the URL.
    pub program: Option<String>,
    /// `--no-open`: never launch anything.
    pub never: bool,
}

impl Opener {
    /// The command line to run, by precedence: `--browser`,
    /// `ELICIT_BROWSER` (both arrive in `program`), then `$BROWSER` (the
    /// first entry of its `:`-separated list), else `None`: the system
    /// opener.
    pub fn command_line(&self) -> Option<String> {
        self.program.clone().or_else(|| {
            std::env::var("BROWSER").ok().and_then(|b| {
                b.split(':')
                    .map(str::trim)
                    .find(|s| !s.is_empty())
                    .map(String::from)
            })
        })
    }

    /// The program name, for "opened in …".
    pub fn name(&self) -> Option<String> {
        let line = self.command_line()?;
        let argv = shell_words::split(&line).ok()?;
        argv.first().cloned()
    }

    /// Launches the browser detached: elicit never waits on it, and the
    /// launcher's stdio is null so it cannot write into our stdout.
    pub fn launch(&self, url: &str) -> io::Result<()> {
        match self.command_line() {
            Some(line) => launch_program(url, &line),
            None => launch_system_opener(url),
        }
    }
}

/// A browser command line as argv, the URL added: in place of a `%s` if
/// one is there (the `$BROWSER` convention), else as the last argument.
/// Split like a shell (quotes, backslashes) by `shell-words`, never run
/// through a shell, so the URL is always one argument.
pub(crate) fn browser_argv(line: &str, url: &str) -> io::Result<Vec<String>> {
    let mut argv = shell_words::split(line).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the browser command {line:?} does not parse ({e})"),
        )
    })?;
    if argv.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the browser command is empty",
        ));
    }
    if argv.iter().any(|a| a.contains("%s")) {
        for a in argv.iter_mut().skip(1) {
            *a = a.replace("%s", url);
        }
    } else {
        argv.push(url.to_string());
    }
    Ok(argv)
}

/// How long a launched program is watched for an early failure (the same
/// window `open` gives the system launchers).
const LAUNCH_CHECK: Duration = Duration::from_millis(250);

/// Runs the browser command line with the URL in its own session with null
/// stdio, like `open::with_detached`, but watches it for `LAUNCH_CHECK`:
/// a program that fails at once is reported, by name, instead of announced
/// as opened.
pub fn launch_program(url: &str, line: &str) -> io::Result<()> {
    launch_argv(browser_argv(line, url)?)
}

/// The system opener: the launchers the `open` crate knows for this
/// platform (`xdg-open`, `gio`, … on Linux), each tried in turn as
/// [`launch_argv`] runs a program, so a failure names the program and its
/// exit status (`xdg-open failed with exit status: 4`) rather than "the
/// system opener failed". A launcher that is not installed is skipped;
/// the first real failure is the one reported.
fn launch_system_opener(url: &str) -> io::Result<()> {
    let mut failed: Option<io::Error> = None;
    let mut missing: Option<io::Error> = None;
    for cmd in open::commands(url) {
        // The command as the crate made it: on Windows it may carry the URL
        // in its environment (PowerShell) rather than in its arguments.
        let program = cmd.get_program().to_string_lossy().into_owned();
        match launch(cmd, program) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing = Some(e),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    Err(failed
        .or(missing)
        .unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no opener for this system")))
}

/// Runs `argv` detached (see [`launch_program`]).
fn launch_argv(argv: Vec<String>) -> io::Result<()> {
    let program = argv[0].clone();
    let mut cmd = std::process::Command::new(&program);
    cmd.args(&argv[1..]);
    launch(cmd, program)
}

/// Runs `cmd` (`program`, for messages) detached, watched for
/// [`LAUNCH_CHECK`].
fn launch(mut cmd: std::process::Command, program: String) -> io::Result<()> {
    use std::process::Stdio;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Detached from our terminal, so Ctrl-C or closing it does not reach
    // the browser.
    crate::process::detach(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| {
        let why = match e.kind() {
            io::ErrorKind::NotFound => "not found".to_string(),
            io::ErrorKind::PermissionDenied => "not executable".to_string(),
            _ => e.to_string(),
        };
        io::Error::new(e.kind(), format!("cannot run {program}: {why}"))
    })?;
    let started = Instant::now();
    loop {
        match child.try_wait()? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => {
                return Err(io::Error::other(format!("{program} failed with {status}")))
            }
            None if started.elapsed() >= LAUNCH_CHECK => {
                // Still running: a browser that stays in the foreground.
                // Reap it whenever it ends, without waiting here.
                std::thread::spawn(move || {
                    let _ = child.wait();
                });
                return Ok(());
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::browser_argv;

    #[test]
    fn browser_command_lines_split_like_a_shell() {
        let u = "https://example.com/?a=1&b=2";
        assert_eq!(
            browser_argv("firefox --new-window", u).unwrap(),
            ["firefox", "--new-window", u]
        );
        assert_eq!(
            browser_argv("'/opt/My Browser/run' -x", u).unwrap(),
            ["/opt/My Browser/run", "-x", u]
        );
        assert_eq!(
            browser_argv("lynx %s -dump", u).unwrap(),
            ["lynx", u, "-dump"]
        );
        assert!(browser_argv("  ", u).is_err());
        let err = browser_argv("firefox 'unclosed", u).unwrap_err();
        assert!(err.to_string().contains("does not parse"), "{err}");
    }
}
