//! `linkdeck links qr LINK`: the short link's QR code in the terminal, or written as PNG or SVG.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::lookup::link_id;
use super::output::{print, print_json};
use crate::backend::Backend;
use crate::domain::Shown;
use crate::qr::{Qr, SIZE_DEFAULT, parse_size};

#[derive(Debug, Args)]
pub struct QrArgs {
    /// The link's id or alias.
    pub link: String,
    /// Write the code as a PNG image to FILE instead of drawing it.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Write the code as an SVG image to FILE instead of drawing it.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Width and height of the image in pixels (64 to 2048).
    #[arg(long, value_name = "PIXELS", value_parser = parse_size, default_value_t = SIZE_DEFAULT)]
    pub size: u32,
}

pub async fn run(ctx: &Context, backend: &dyn Backend, args: QrArgs) -> CliResult {
    let link = backend
        .show_link(link_id(backend, &args.link).await?)
        .await?;
    let qr = Qr::new(&link.short_url).map_err(CliError::failure)?;
    let mut written = Vec::new();
    if let Some(path) = &args.png {
        write(path, &qr.png(args.size).map_err(CliError::failure)?)?;
        written.push(("png", path));
    }
    if let Some(path) = &args.svg {
        write(path, qr.svg(args.size).as_bytes())?;
        written.push(("svg", path));
    }
    if ctx.json {
        let mut out = json!({"id": link.id, "short_url": link.short_url});
        for (kind, path) in &written {
            out[kind] = json!(path.display().to_string());
        }
        if written.is_empty() {
            out["text"] = json!(qr.terminal(false));
        }
        return Ok(print_json(&out)?);
    }
    if written.is_empty() {
        // Colours are set only for a terminal (and never under NO_COLOR): in a file the code
        // stays plain characters.
        let ansi = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        return Ok(print(&format!(
            "{}{}",
            qr.terminal(ansi),
            Shown(&link.short_url)
        ))?);
    }
    for (kind, path) in written {
        print(&format!(
            "wrote the QR code of {} to {} ({kind})",
            Shown(&link.short_url),
            path.display()
        ))?;
    }
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> CliResult {
    std::fs::write(path, bytes)
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use clap::{Args, Command};

    use super::QrArgs;
    use crate::qr::{SIZE_MAX, SIZE_MIN};

    #[test]
    fn the_help_names_the_sizes_parse_size_allows() {
        let command = QrArgs::augment_args(Command::new("qr"));
        let size = command
            .get_arguments()
            .find(|a| a.get_id() == "size")
            .unwrap();
        let help = size.get_help().unwrap().to_string();
        assert!(
            help.contains(&format!("({SIZE_MIN} to {SIZE_MAX})")),
            "{help}"
        );
    }
}
