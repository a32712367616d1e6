//! Secrets a profile names by a command rather than writing them down: an API key
//! (`api_key_command`), a database password (`db_password_command`). The command is run with
//! `sh -c`; its first non-empty line is the secret (`pass show …` prints the secret first, then
//! any notes). Every failure is one line saying what to fix, never containing the secret.

use std::process::{Command, Stdio};

use linkdeck_domain::{Error, Result};

/// Runs `command` (the profile's `setting`, named in messages) and returns its first non-empty
/// line, trimmed. `fail` makes the error of the caller's kind.
pub fn from_command(command: &str, setting: &str, fail: fn(String) -> Error) -> Result<String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| fail(format!("cannot run the {setting} with sh: {e}")))?;
    if !output.status.success() {
        // The first line of stderr usually says why (a locked password store, a missing entry);
        // it is the command's own message, not the secret.
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let reason: String = reason.trim().chars().take(200).collect();
        let status = match output.status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_owned(),
        };
        return Err(fail(if reason.is_empty() {
            format!("the {setting} failed ({status})")
        } else {
            format!("the {setting} failed ({status}): {reason}")
        }));
    }
    let stdout = String::from_utf8(output.stdout)
        .map_err(|_| fail(format!("the {setting} printed something that is not UTF-8")))?;
    stdout
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| fail(format!("the {setting} printed nothing")))
}
