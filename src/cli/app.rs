//! `linkdeck` without a command: the terminal app on the resolved profile.

use std::io::IsTerminal;

use super::context::Context;
use super::error::{CliError, CliResult};
use crate::tui::TuiOptions;

/// Opens the terminal app, or prints where things live when there is no terminal to draw on
/// (`linkdeck | less`, a script).
pub async fn run(ctx: &Context) -> CliResult {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return super::overview(ctx);
    }
    let backend = ctx.backend().await?;
    let opts = TuiOptions {
        // `--remote URL` is no profile: the header then names the kind and the server.
        profile: match ctx.profile.profile_name() {
            crate::config::REMOTE_FLAG => "remote".to_owned(),
            name => name.to_owned(),
        },
        header: None,
        theme: ctx.config.ui.theme,
        mouse: ctx.config.ui.mouse,
        keys: ctx.config.keys.clone(),
        timezone: ctx.profile.timezone().clone(),
        refresh_secs: ctx.config.ui.refresh_secs,
        read_only: ctx.is_read_only(),
        columns: ctx.config.ui.columns.clone(),
    };
    crate::tui::run(backend, opts)
        .await
        .map_err(|e| CliError::failure(format!("{e}")))
}
