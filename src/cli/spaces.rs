//! `linkdeck spaces list|show|create|update|delete`.

use std::io::Write;

use clap::{Args, Subcommand};
use serde_json::json;

use super::PageArgs;
use super::context::Context;
use super::error::{CliError, CliResult};
use super::links::parse_sort;
use super::lookup::space_id;
use super::output::{Table, date, page_json, plural, print, print_json, thousands};
use crate::domain::{Color, Shown, Sort, Space, SpaceInput, SpaceQuery};

#[derive(Debug, Subcommand)]
pub enum SpacesCommand {
    /// List spaces, newest first.
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Show one space.
    Show {
        /// The space's id or name.
        space: String,
    },
    /// Create a space.
    Create {
        /// 1 to 32 characters, unique among your spaces.
        #[arg(required_unless_present = "name_flag")]
        name: Option<String>,
        /// The name, as a flag (instead of the argument).
        #[arg(long = "name", value_name = "NAME", conflicts_with = "name")]
        name_flag: Option<String>,
        /// 1-6 or red, orange, yellow, green, blue, purple. Default: the colour your spaces
        /// use least.
        #[arg(long)]
        color: Option<String>,
    },
    /// Rename or recolour a space.
    Update {
        /// The space's id or name.
        space: String,
        #[arg(long)]
        name: Option<String>,
        /// 1-6 or red, orange, yellow, green, blue, purple.
        #[arg(long)]
        color: Option<String>,
    },
    /// Delete a space; its links stay, without a space.
    #[command(visible_alias = "rm")]
    Delete {
        /// The space's id or name.
        space: String,
    },
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Show only spaces whose name contains TEXT.
    #[arg(long, short, value_name = "TEXT")]
    pub search: Option<String>,
    /// desc (newest first) or asc (oldest first).
    #[arg(long, value_name = "ORDER", value_parser = parse_sort, default_value = "desc")]
    pub sort: Sort,
    #[command(flatten)]
    pub paging: PageArgs,
    /// Every page.
    #[arg(long)]
    pub all: bool,
}

pub async fn run(ctx: &Context, command: SpacesCommand) -> CliResult {
    let backend = ctx.backend().await?;
    let backend = backend.as_ref();
    match command {
        SpacesCommand::List(args) => {
            let (page, per_page) = args.paging.first(args.all);
            let mut query = SpaceQuery {
                search: args.search.filter(|s| !s.is_empty()),
                sort: args.sort,
                page,
                per_page,
            };
            let mut spaces = Vec::new();
            loop {
                let page = backend.list_spaces(&query).await?;
                let more = args.all && page.has_next();
                if !args.all {
                    if ctx.json {
                        return Ok(print_json(&page_json(&page, |s| s))?);
                    }
                    if page.items.is_empty() {
                        return Ok(print("no spaces")?);
                    }
                    print(&space_table(&page.items, ctx))?;
                    return Ok(print(&format!(
                        "page {} of {} · {}",
                        page.page,
                        page.last_page(),
                        plural(page.total, "space")
                    ))?);
                }
                spaces.extend(page.items);
                if !more {
                    break;
                }
                query.page += 1;
            }
            // Spaces are few (a person makes them), so --all collects them for one aligned table.
            if ctx.json {
                return Ok(print_json(&spaces)?);
            }
            if spaces.is_empty() {
                return Ok(print("no spaces")?);
            }
            let mut out = std::io::stdout().lock();
            out.write_all(space_table(&spaces, ctx).as_bytes())?;
            writeln!(out, "{}", plural(spaces.len() as u64, "space"))?;
            Ok(out.flush()?)
        }
        SpacesCommand::Show { space } => {
            let space = backend.show_space(space_id(backend, &space).await?).await?;
            if ctx.json {
                return Ok(print_json(&space)?);
            }
            let tz = ctx.timezone();
            Ok(print(&format!(
                "id       {}\nname     {}\ncolor    {} ({})\nlinks    {}\ncreated  {}\nupdated  {}",
                space.id,
                Shown(&space.name),
                space.color,
                space.color.number(),
                space.links.map_or("-".into(), thousands),
                super::output::date_time(space.created_at, tz),
                super::output::date_time(space.updated_at, tz),
            ))?)
        }
        SpacesCommand::Create {
            name,
            name_flag,
            color,
        } => {
            let color = match color {
                Some(color) => color,
                None => least_used_color(backend).await?.number().to_string(),
            };
            let input = SpaceInput {
                name: name.or(name_flag),
                color: Some(color),
            };
            let space = backend.create_space(&input).await?;
            done(ctx, &space, "created")
        }
        SpacesCommand::Update { space, name, color } => {
            if name.is_none() && color.is_none() {
                return Err(CliError::usage("nothing to change: give --name or --color"));
            }
            let id = space_id(backend, &space).await?;
            let space = backend
                .update_space(id, &SpaceInput { name, color })
                .await?;
            done(ctx, &space, "updated")
        }
        SpacesCommand::Delete { space } => {
            let id = space_id(backend, &space).await?;
            backend.delete_space(id).await?;
            if ctx.json {
                Ok(print_json(
                    &json!({"id": id, "object": "space", "deleted": true}),
                )?)
            } else if ctx.profile.is_local() {
                Ok(print(&format!(
                    "deleted space {id}; its links are now without a space (`linkdeck trash \
                     restore space:{id}` brings it back, with them)"
                ))?)
            } else {
                Ok(print(&format!(
                    "deleted space {id}; its links are now without a space"
                ))?)
            }
        }
    }
}

/// The colour the owner's spaces use least (the first such, in the palette's order), so that
/// spaces made without `--color` tell apart.
async fn least_used_color(backend: &dyn crate::backend::Backend) -> CliResult<Color> {
    let spaces = crate::backend::all_spaces(backend, crate::domain::Sort::Asc).await?;
    let uses = |c: &Color| spaces.iter().filter(|s| s.color == *c).count();
    // `min_by_key` keeps the first of equals: the palette's order decides ties.
    Color::all()
        .min_by_key(uses)
        .ok_or_else(|| CliError::failure("the palette of space colours is empty"))
}

fn done(ctx: &Context, space: &Space, verb: &str) -> CliResult {
    if ctx.json {
        Ok(print_json(space)?)
    } else {
        Ok(print(&format!(
            "{verb} space {} \"{}\" ({})",
            space.id,
            Shown(&space.name),
            space.color
        ))?)
    }
}

fn space_table(spaces: &[Space], ctx: &Context) -> String {
    let mut table = Table::new(&[
        ("ID", 10, true),
        ("NAME", 32, false),
        ("COLOR", 6, false),
        ("LINKS", 12, true),
        ("CREATED", 10, false),
    ]);
    for s in spaces {
        table.row(vec![
            s.id.to_string(),
            s.name.clone(),
            s.color.to_string(),
            s.links.map_or("-".into(), thousands),
            date(s.created_at, ctx.timezone()),
        ]);
    }
    table.render()
}
