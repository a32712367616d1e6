//! `linkdeck tags list|rename`: an owner's tags, and renaming one on every link (a merge when
//! the new name is a tag already). Tags are put on links by `links create|update --tag`.

use clap::Subcommand;
use serde_json::json;

use super::context::Context;
use super::error::CliResult;
use super::link_filter::parse_tag;
use super::output::{Table, plural, print, print_json, thousands};
use crate::domain::TAG_MAX;

#[derive(Debug, Subcommand)]
pub enum TagsCommand {
    /// Every tag and how many links carry it, by name.
    #[command(visible_alias = "ls")]
    List,
    /// Rename a tag on every link that carries it; onto a tag that exists, the two merge.
    Rename {
        /// The tag as it is now.
        #[arg(value_parser = parse_tag)]
        from: String,
        /// Its new name.
        #[arg(value_parser = parse_tag)]
        to: String,
    },
}

pub async fn run(ctx: &Context, command: TagsCommand) -> CliResult {
    let backend = ctx.backend().await?;
    match command {
        TagsCommand::List => {
            let tags = backend.tags().await?;
            if ctx.json {
                return Ok(print_json(&tags)?);
            }
            if tags.is_empty() {
                return Ok(print(
                    "no tags yet: `linkdeck links update LINK --add-tag TAG` puts one on",
                )?);
            }
            let mut table = Table::new(&[("TAG", TAG_MAX, false), ("LINKS", 12, true)]);
            for tag in &tags {
                table.row(vec![tag.name.clone(), thousands(tag.links)]);
            }
            Ok(print(table.render().trim_end())?)
        }
        TagsCommand::Rename { from, to } => {
            let links = backend.rename_tag(&from, &to).await?;
            if ctx.json {
                return Ok(print_json(
                    &json!({"from": from, "to": to, "links": links}),
                )?);
            }
            Ok(print(&format!(
                "renamed tag {from:?} to {to:?} on {}",
                plural(links, "link")
            ))?)
        }
    }
}
