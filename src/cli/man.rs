//! Man pages, made from the same clap definitions as `--help`, so they cannot drift from it.

use std::path::Path;

use clap::CommandFactory;

use super::Cli;
use super::error::{CliError, CliResult};

/// Prints linkdeck's own page, or writes a page for every command into `out` (what packages
/// install under `man1`).
pub fn write(out: Option<&Path>) -> CliResult {
    let Some(dir) = out else {
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut page)
            .map_err(|e| CliError::failure(format!("cannot render the man page: {e}")))?;
        return Ok(super::output::print(&String::from_utf8_lossy(&page))?);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::failure(format!("--out: cannot create {}: {e}", dir.display())))?;
    clap_mangen::generate_to(Cli::command(), dir).map_err(|e| {
        CliError::failure(format!("--out: cannot write into {}: {e}", dir.display()))
    })?;
    Ok(())
}
