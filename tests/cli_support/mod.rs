//! Runs the real `linkdeck` binary in a sandbox: a temporary database, config file and XDG
//! directories, so the user's own files are never read or touched.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

pub struct Env {
    pub dir: TempDir,
    /// The sandbox's SQLite file, which [`Env::cmd`] names unless the sandbox is on PostgreSQL.
    pub db: PathBuf,
    pub config: PathBuf,
    /// A `postgres://` URL [`Env::cmd`] names instead of `db`, with the password it needs.
    pub postgres: Option<(String, String)>,
}

/// What one run printed and how it ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    pub fn error_json(&self) -> Value {
        serde_json::from_str(self.stderr.trim())
            .unwrap_or_else(|e| panic!("stderr is not JSON ({e}):\n{}", self.stderr))
    }

    /// Asserts success and returns the run.
    pub fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    pub fn fails_with(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("RUST_BACKTRACE"),
            "a panic escaped:\n{}",
            self.stderr
        );
        self
    }
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "").expect("write config");
        Env {
            db: dir.path().join("links.db"),
            config,
            dir,
            postgres: None,
        }
    }

    /// A sandbox whose commands run on the PostgreSQL database at `url` (its password given to
    /// each run in its environment only) rather than on a SQLite file.
    pub fn on_postgres(url: String, password: &str) -> Env {
        Env {
            postgres: Some((url, password.to_owned())),
            ..Env::new()
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// The binary with the sandbox's environment but no `--db`/`--config` flags.
    pub fn bare(&self) -> Command {
        Command::from_std(self.std_bare())
    }

    /// [`Env::bare`] as a plain `std` command, for tests that manage the process themselves.
    pub fn std_bare(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("linkdeck"));
        let root = self.dir.path();
        cmd.env("XDG_CONFIG_HOME", root.join("xdg-config"))
            .env("XDG_DATA_HOME", root.join("xdg-data"))
            .env("XDG_STATE_HOME", root.join("xdg-state"))
            .env("HOME", root.join("home"))
            .env("TZ", "UTC")
            .env_remove("LINKDECK_LOG")
            .env_remove("NO_COLOR");
        cmd
    }

    /// [`Env::std_bare`] on the sandbox's SQLite file and config, for a process the test
    /// manages itself (a server it stops).
    pub fn std_cmd(&self) -> std::process::Command {
        let mut cmd = self.std_bare();
        cmd.arg("--db")
            .arg(&self.db)
            .arg("--config")
            .arg(&self.config);
        cmd
    }

    /// The binary on the sandbox's database and config.
    pub fn cmd(&self) -> Command {
        let mut cmd = self.bare();
        match &self.postgres {
            Some((url, password)) => cmd
                .arg("--db")
                .arg(url)
                .env("LINKDECK_DB_PASSWORD", password),
            None => cmd.arg("--db").arg(&self.db),
        };
        cmd.arg("--config").arg(&self.config);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        run(self.cmd().args(args))
    }

    pub fn run_on(&self, db: &Path, args: &[&str]) -> Run {
        let mut cmd = self.bare();
        cmd.arg("--db").arg(db).arg("--config").arg(&self.config);
        run(cmd.args(args))
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> Run {
        run(self.cmd().args(args).write_stdin(stdin))
    }

    /// Runs with `--json` and returns the parsed stdout, asserting success.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(&all).ok().json()
    }
}

pub fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("run linkdeck");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
