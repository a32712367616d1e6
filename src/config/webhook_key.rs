//! The key webhook secrets are derived from (see the service's `webhooks` module): from
//! `LINKDECK_WEBHOOK_KEY`, else from `[serve] webhook_key_file`, else from `webhook.key` in the
//! data folder, which is made (readable by its owner only) the first time a key is needed.
//! Every server sharing a database must have the same key.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Paths, ServeConfig};
use crate::backend::local::webhooks::WebhookKey;

/// The environment variable that holds the key itself.
pub const KEY_VAR: &str = "LINKDECK_WEBHOOK_KEY";

/// Where the key file is, when the environment gives no key.
pub fn key_file(serve: &ServeConfig, paths: &Paths) -> PathBuf {
    serve
        .webhook_key_file
        .clone()
        .unwrap_or_else(|| paths.default_db().with_file_name("webhook.key"))
}

/// The webhook key; a new key file is written when there is none. The error names the file or
/// the variable, never the key.
pub fn webhook_key(serve: &ServeConfig, paths: &Paths) -> Result<WebhookKey, String> {
    if let Some(text) = std::env::var_os(KEY_VAR) {
        let text = text
            .into_string()
            .map_err(|_| format!("{KEY_VAR} is not UTF-8"))?;
        return WebhookKey::from_text(&text).map_err(|e| format!("{KEY_VAR}: {e}"));
    }
    let path = key_file(serve, paths);
    match std::fs::read_to_string(&path) {
        Ok(text) => WebhookKey::from_text(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let text = WebhookKey::generate_text();
            write_private(&path, &text)
                .map_err(|e| format!("cannot write the webhook key {}: {e}", path.display()))?;
            // Two processes making it at once: the file that won is the key.
            let text = std::fs::read_to_string(&path).unwrap_or(text);
            WebhookKey::from_text(&text).map_err(|e| format!("{}: {e}", path.display()))
        }
        Err(e) => Err(format!(
            "cannot read the webhook key {}: {e}",
            path.display()
        )),
    }
}

/// Writes `text` to a new file at `path` that only its owner can read; an existing file is
/// left as it is.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(text.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_is_made_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("webhook.key");
        write_private(&path, "first").unwrap();
        write_private(&path, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
