//! The npm package's `elicit` command (issue 41, item 7): a node_modules
//! tree laid out as npm installs it (npm/elicit-mcp as the main package, a
//! platform package holding the built binary, `.bin/elicit` linked to the
//! main package's `bin` file), then the package's own `postinstall` run as
//! npm runs it. Where it may, the step puts the binary in the launcher's
//! place, so `.bin/elicit` starts no Node; wherever it must not (another
//! package manager, `ELICIT_BINARY`, a binary of another version) or never
//! ran (scripts ignored), the JS launcher stays and still runs the binary.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::BIN;

/// Node starting, plus the binary's `--version`, under load.
const NODE_LIMIT: Duration = Duration::from_secs(60);

const NPM_AGENT: &str = "npm/11.19.1 node/v20.20.2 linux x64 workspaces/false";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Node's names for this machine, as the platform packages use them.
fn node_os_cpu() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, cpu)
}

/// A project's node_modules with elicit-mcp at `version` and the built
/// binary in every platform package that fits this machine.
struct Installed {
    dir: tempfile::TempDir,
}

impl Installed {
    fn new(version: &str) -> Installed {
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("node_modules");
        let main = modules.join("elicit-mcp");
        copy_tree(&root().join("npm/elicit-mcp"), &main);
        std::fs::copy(
            root().join("npm/platforms.json"),
            main.join("platforms.json"),
        )
        .unwrap();
        let mut pkg = read_json(&main.join("package.json"));
        pkg["version"] = version.into();
        std::fs::write(main.join("package.json"), pkg.to_string()).unwrap();

        let (os, cpu) = node_os_cpu();
        let platforms = read_json(&root().join("npm/platforms.json"));
        for p in platforms
            .as_object()
            .unwrap()
            .values()
            .filter(|p| p.is_object())
        {
            if p["os"] != os || p["cpu"] != cpu {
                continue;
            }
            let pdir = modules.join(p["package"].as_str().unwrap());
            std::fs::create_dir_all(pdir.join("bin")).unwrap();
            let manifest = serde_json::json!({"name": p["package"], "version": version});
            std::fs::write(pdir.join("package.json"), manifest.to_string()).unwrap();
            link_or_copy(Path::new(BIN), &pdir.join("bin/elicit"));
        }

        // npm links .bin/elicit to the file the package's `bin` names, and
        // makes that file executable.
        let bin_file = pkg["bin"]["elicit"].as_str().unwrap().to_string();
        let launcher = main.join(&bin_file);
        let mut mode = std::fs::metadata(&launcher).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
        std::fs::set_permissions(&launcher, mode).unwrap();
        std::fs::create_dir_all(modules.join(".bin")).unwrap();
        std::os::unix::fs::symlink(
            format!("../elicit-mcp/{bin_file}"),
            modules.join(".bin/elicit"),
        )
        .unwrap();
        Installed { dir }
    }

    fn main_package(&self) -> PathBuf {
        self.dir.path().join("node_modules/elicit-mcp")
    }

    fn command(&self) -> PathBuf {
        self.dir.path().join("node_modules/.bin/elicit")
    }

    /// The package's `postinstall`, as npm runs it: in the package's folder,
    /// with the installing manager's user agent. Returns its stderr.
    fn postinstall(&self, agent: &str, env: &[(&str, &str)]) -> String {
        let pkg = read_json(&self.main_package().join("package.json"));
        let script = pkg["scripts"]["postinstall"]
            .as_str()
            .expect("elicit-mcp has no postinstall script")
            .to_string();
        let mut cmd = assert_cmd::Command::new("sh");
        cmd.args(["-c", &script])
            .current_dir(self.main_package())
            .env_remove("ELICIT_BINARY")
            .env("npm_config_user_agent", agent)
            .timeout(NODE_LIMIT);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "the install step must never fail an install: {out:?}"
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// `.bin/elicit --version`, with no ELICIT_BINARY.
    fn version_output(&self) -> String {
        let out = assert_cmd::Command::new(self.command())
            .arg("--version")
            .env_remove("ELICIT_BINARY")
            .timeout(NODE_LIMIT)
            .output()
            .unwrap();
        assert!(out.status.success(), ".bin/elicit --version: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn command_is_native(&self) -> bool {
        std::fs::read(self.command()).unwrap() == std::fs::read(BIN).unwrap()
    }

    fn command_is_launcher(&self) -> bool {
        std::fs::read(self.command())
            .unwrap()
            .starts_with(b"#!/usr/bin/env node")
    }

    /// Nothing but the command itself in bin/ (no staged file left behind).
    fn bin_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.main_package().join("bin"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn link_or_copy(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[test]
fn npm_install_puts_the_binary_in_the_launchers_place() {
    let npm = Installed::new(version());
    assert!(npm.command_is_launcher(), "before the install step");
    let note = npm.postinstall(NPM_AGENT, &[]);
    assert!(
        npm.command_is_native(),
        ".bin/elicit is not the binary after npm's install step; it said: {note}"
    );
    assert_eq!(npm.version_output().trim(), format!("elicit {}", version()));
    assert_eq!(npm.bin_entries(), ["elicit"]);
}

#[test]
fn with_install_scripts_skipped_the_js_launcher_runs_the_binary() {
    let npm = Installed::new(version());
    assert!(npm.command_is_launcher());
    assert_eq!(npm.version_output().trim(), format!("elicit {}", version()));
}

#[test]
fn the_launcher_stays_where_the_binary_must_not_replace_it() {
    // Node as it runs on Windows, where npm's shims run the bin file with node.
    let preload = tempfile::tempdir().unwrap();
    let as_windows = preload.path().join("as-windows.js");
    std::fs::write(
        &as_windows,
        "Object.defineProperty(process, 'platform', { value: 'win32' });\n",
    )
    .unwrap();
    let node_options = format!("--require {}", as_windows.display());
    for (agent, env, why) in [
        (
            NPM_AGENT,
            vec![("NODE_OPTIONS", node_options.as_str())],
            "on Windows",
        ),
        (
            "pnpm/9.0.0 npm/? node/v20.20.2 linux x64",
            vec![],
            "not installed by npm",
        ),
        (
            "yarn/1.22.0 npm/? node/v20.20.2 linux x64",
            vec![],
            "not installed by npm",
        ),
        ("", vec![], "no user agent"),
        (
            NPM_AGENT,
            vec![("ELICIT_BINARY", BIN)],
            "ELICIT_BINARY is set",
        ),
    ] {
        let npm = Installed::new(version());
        let note = npm.postinstall(agent, &env);
        assert!(npm.command_is_launcher(), "{agent:?} {env:?}: replaced");
        assert!(note.contains(why), "{agent:?} {env:?}: said {note:?}");
        assert_eq!(npm.version_output().trim(), format!("elicit {}", version()));
        assert_eq!(npm.bin_entries(), ["elicit"]);
    }
}

/// A platform binary of another version (a stale or mixed install) is not
/// put in place: the launcher stays, and the install still succeeds.
#[test]
fn a_binary_of_another_version_is_not_put_in_place() {
    let npm = Installed::new("0.0.1-other");
    let note = npm.postinstall(NPM_AGENT, &[]);
    assert!(npm.command_is_launcher());
    assert!(note.contains("is not elicit 0.0.1-other"), "said {note:?}");
}
