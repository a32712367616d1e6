//! `linkdeck links list|show|create|update|delete`.

use std::io::{BufRead, Write};

use clap::{Args, Subcommand};
use serde_json::json;

use super::bulk::{self, MatchArgs};
use super::context::Context;
use super::error::{CliError, CliResult};
use super::link_filter::{LinkFilterArgs, parse_tag};
use super::link_view::{filtered_note, link_json, link_table, show};
use super::lookup::{domain_id, link_id, space_id};
use super::output::{page_json, plural, print, print_json};
use super::{PageArgs, parse_bool};
use crate::backend::{Backend, BulkAction};
use crate::domain::{
    Link, LinkInput, LinkQuery, RuleInput, Sort, TargetType, retagged, shown, tags_text,
};

/// With `--all`, columns keep the first page's widths, but at least this wide (where their
/// maximum allows) so that later, longer cells are not cut too short.
const STREAM_MIN_WIDTH: usize = 12;

#[derive(Debug, Subcommand)]
pub enum LinksCommand {
    /// List links, newest first, one page at a time (or every page with --all).
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Show one link in full.
    Show {
        /// The link's id or alias.
        link: String,
    },
    /// Create a link to URL.
    Create(CreateArgs),
    /// Change the given fields of a link, or of every link matching filters; the others stay
    /// as they are.
    Update(UpdateArgs),
    /// Delete a link, or every link matching filters (local profiles keep them in the trash).
    #[command(visible_alias = "rm")]
    Delete(DeleteArgs),
    /// Show a link's QR code in the terminal, or write it with --png or --svg.
    Qr(super::qr::QrArgs),
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The link's id or alias (or give filters instead).
    pub link: Option<String>,
    #[command(flatten)]
    pub matching: MatchArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: LinkFilterArgs,
    /// desc (newest), asc (oldest), max (most clicks) or min (fewest clicks).
    #[arg(long, value_name = "ORDER", value_parser = parse_sort, default_value = "desc")]
    pub sort: Sort,
    #[command(flatten)]
    pub paging: PageArgs,
    /// Every page, streamed (with --json: one JSON array).
    #[arg(long)]
    pub all: bool,
}

/// The fields create and update share, as flags: their own shape, not a [`LinkInput`], as flags
/// parse into types and some differ from the wire (`--expires`, `--max-clicks`, `--geo CC=URL`).
#[derive(Debug, Args)]
pub struct LinkFields {
    /// The short name (letters, digits, - and _); generated when left out on create.
    #[arg(long)]
    pub alias: Option<String>,
    /// Protect the link with a password (visible to other users of this machine in the
    /// process list: prefer --password-stdin).
    #[arg(long, conflicts_with = "password_stdin")]
    pub password: Option<String>,
    /// Read the password from the first line of standard input.
    #[arg(long)]
    pub password_stdin: bool,
    /// The space (id or name).
    #[arg(long, value_name = "ID|NAME")]
    pub space: Option<String>,
    /// Disable the link (--disabled=false enables it).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub disabled: Option<bool>,
    /// Make its statistics page public (--public=false hides it).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub public: Option<bool>,
    /// Expire at this date and time, in the profile's time zone.
    #[arg(long, value_name = "'YYYY-MM-DD HH:MM'")]
    pub expires: Option<String>,
    /// Expire after N clicks (0: no limit).
    #[arg(long, value_name = "N")]
    pub max_clicks: Option<String>,
    /// Where an expired link leads (empty: nowhere).
    #[arg(long, value_name = "URL")]
    pub expiration_url: Option<String>,
    /// Send visitors from country CC to URL (repeatable; sets geo targeting).
    #[arg(long, value_name = "CC=URL", value_parser = parse_rule,
          conflicts_with_all = ["platform", "rotation"])]
    pub geo: Vec<(String, String)>,
    /// Send visitors on platform NAME (iOS, Android, Windows, OS X, Linux, …) to URL
    /// (repeatable; sets platform targeting).
    #[arg(long, value_name = "NAME=URL", value_parser = parse_rule, conflicts_with = "rotation")]
    pub platform: Vec<(String, String)>,
    /// Rotate visitors over these URLs in turn (repeatable; sets rotation targeting).
    #[arg(long, value_name = "URL")]
    pub rotation: Vec<String>,
    /// Tag the link (repeatable); on update, these become its tags.
    #[arg(long = "tag", value_name = "TAG", value_parser = parse_tag)]
    pub tags: Vec<String>,
    #[command(flatten)]
    pub options: OptionFlags,
}

/// A link's options as flags: each switch with its `--no-` (the last given wins), the preview's
/// texts (empty clears one) and `--no-preview`.
#[derive(Debug, Args)]
pub struct OptionFlags {
    /// Pass the visitor's query string on to the destination (the default).
    #[arg(long, overrides_with = "no_forward_query")]
    forward_query: bool,
    /// Drop the visitor's query string: the destination's own is kept.
    #[arg(long)]
    no_forward_query: bool,
    /// Append the rest of the path: /alias/extra → the destination's path + /extra.
    #[arg(long, overrides_with = "no_forward_path")]
    forward_path: bool,
    /// /alias/extra is an unknown path (the default).
    #[arg(long)]
    no_forward_path: bool,
    /// Let search engines index the redirect (no X-Robots-Tag: noindex).
    #[arg(long, overrides_with = "no_allow_indexing")]
    allow_indexing: bool,
    /// Keep the redirect out of search engines (the default).
    #[arg(long)]
    no_allow_indexing: bool,
    /// The title chat and social apps show for the link (up to 200 characters; empty: none).
    #[arg(long, value_name = "TEXT")]
    preview_title: Option<String>,
    /// The description under it (up to 500 characters; empty: none).
    #[arg(long, value_name = "TEXT")]
    preview_description: Option<String>,
    /// The image of its card: an http or https URL (empty: none).
    #[arg(long, value_name = "URL")]
    preview_image: Option<String>,
    /// Remove the preview's title, description and image.
    #[arg(long, conflicts_with_all = ["preview_title", "preview_description", "preview_image"])]
    no_preview: bool,
    /// A redirect rule, `KIND ARGS => URL` (repeatable, asked in the order given; on update,
    /// these become its rules): language fr,de-CH · after|before 2030-01-01T00:00Z ·
    /// schedule mon,fri 09-17 Europe/Paris · query NAME[=VALUE] · cidr 10.0.0.0/8 ·
    /// browser Firefox · country DE · platform iOS ·
    /// split 30*URL,70*URL [until INSTANT] (the rule's URL wins after the end).
    #[arg(long = "rule", value_name = "RULE")]
    rules: Vec<String>,
    /// Remove every redirect rule.
    #[arg(long, conflicts_with = "rules")]
    no_rules: bool,
}

impl OptionFlags {
    /// Writes the given flags into `input`.
    fn apply(self, input: &mut LinkInput) {
        let switch = |on: bool, off: bool| match (on, off) {
            (true, _) => Some("1".to_owned()),
            (_, true) => Some("0".to_owned()),
            _ => None,
        };
        input.forward_query = switch(self.forward_query, self.no_forward_query);
        input.forward_path = switch(self.forward_path, self.no_forward_path);
        input.allow_indexing = switch(self.allow_indexing, self.no_allow_indexing);
        let cleared = self.no_preview.then(String::new);
        input.preview_title = self.preview_title.or_else(|| cleared.clone());
        input.preview_description = self.preview_description.or_else(|| cleared.clone());
        input.preview_image = self.preview_image.or(cleared);
        if !self.rules.is_empty() || self.no_rules {
            input.rules = Some(self.rules);
        }
    }
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The destination: an http or https URL.
    pub url: String,
    /// The domain that serves the short link (id or name); fixed once created.
    #[arg(long, value_name = "ID|NAME")]
    pub domain: Option<String>,
    #[command(flatten)]
    pub fields: LinkFields,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The link's id or alias (or give filters instead).
    pub link: Option<String>,
    #[command(flatten)]
    pub matching: MatchArgs,
    /// A new destination.
    #[arg(long)]
    pub url: Option<String>,
    #[command(flatten)]
    pub fields: LinkFields,
    /// Remove the password.
    #[arg(long, conflicts_with_all = ["password", "password_stdin"])]
    pub no_password: bool,
    /// Take the link out of its space.
    #[arg(long, conflicts_with = "space")]
    pub no_space: bool,
    /// Never expire: removes the expiry date and time and the click limit (an expiration URL
    /// is kept, unused until a new limit is set).
    #[arg(long, conflicts_with_all = ["expires", "max_clicks"])]
    pub no_expiry: bool,
    /// Remove all targeting rules.
    #[arg(long, conflicts_with_all = ["geo", "platform", "rotation"])]
    pub no_targeting: bool,
    /// Put this tag on, keeping the others (repeatable).
    #[arg(long, value_name = "TAG", value_parser = parse_tag, conflicts_with = "tags")]
    pub add_tag: Vec<String>,
    /// Take this tag off, keeping the others (repeatable).
    #[arg(long, value_name = "TAG", value_parser = parse_tag, conflicts_with = "tags")]
    pub remove_tag: Vec<String>,
    /// Take every tag off.
    #[arg(long, conflicts_with_all = ["tags", "add_tag", "remove_tag"])]
    pub no_tags: bool,
}

pub async fn run(ctx: &Context, command: LinksCommand) -> CliResult {
    let backend = ctx.backend().await?;
    let backend = backend.as_ref();
    match command {
        LinksCommand::List(args) => list(ctx, backend, args).await,
        LinksCommand::Show { link } => {
            let link = backend.show_link(link_id(backend, &link).await?).await?;
            show(ctx, &link)
        }
        LinksCommand::Create(args) => {
            let mut input = LinkInput::with_url(args.url);
            if let Some(domain) = &args.domain {
                input.domain = Some(domain_id(backend, domain).await?.to_string());
            }
            args.fields.apply(backend, &mut input).await?;
            let link = backend.create_link(&input).await?;
            let done = format!("created link {} → {}", link.id, link.short_url);
            written(ctx, &link, &done)
        }
        LinksCommand::Update(args) => {
            let target = match &args.link {
                Some(link) => {
                    args.matching.refuse_with_one_link()?;
                    Some(link_id(backend, link).await?)
                }
                None => None,
            };
            let mut input = LinkInput {
                url: args.url,
                ..LinkInput::default()
            };
            args.fields.apply(backend, &mut input).await?;
            if args.no_password {
                input.password = Some(String::new());
            }
            if args.no_space {
                input.space = Some(String::new());
            }
            if args.no_expiry {
                input.expiration_date = Some(String::new());
                input.expiration_time = Some(String::new());
                input.expiration_clicks = Some("0".into());
            }
            if args.no_targeting {
                input.target_type = Some("0".into());
                input.geo = Some(Vec::new());
                input.platform = Some(Vec::new());
                input.rotation = Some(Vec::new());
            }
            if args.no_tags {
                input.tags = Some(String::new());
            }
            let retag = !args.add_tag.is_empty() || !args.remove_tag.is_empty();
            if retag {
                let (add, remove) = (args.add_tag, args.remove_tag);
                let Some(id) = target else {
                    if input != LinkInput::default() {
                        return Err(CliError::usage(
                            "--add-tag and --remove-tag change many links on their own: give \
                             the other fields in a second `links update`",
                        ));
                    }
                    let action = BulkAction::Tag { add, remove };
                    return bulk::run(ctx, backend, &args.matching, action, "changed").await;
                };
                let now = backend.show_link(id).await?.tags;
                input.tags = Some(tags_text(&retagged(&now, &add, &remove)));
            }
            if input == LinkInput::default() {
                return Err(CliError::usage(
                    "nothing to change: give at least one field, such as --url or --alias \
                     (see `linkdeck links update --help`)",
                ));
            }
            let Some(id) = target else {
                return bulk::run(
                    ctx,
                    backend,
                    &args.matching,
                    BulkAction::Update(input),
                    "changed",
                )
                .await;
            };
            let link = backend.update_link(id, &input).await?;
            let done = format!("updated link {} ({})", link.id, link.short_url);
            written(ctx, &link, &done)
        }
        LinksCommand::Delete(args) => {
            let Some(link) = &args.link else {
                return bulk::run(ctx, backend, &args.matching, BulkAction::Delete, "deleted")
                    .await;
            };
            args.matching.refuse_with_one_link()?;
            let id = link_id(backend, link).await?;
            backend.delete_link(id).await?;
            if ctx.json {
                Ok(print_json(
                    &json!({"id": id, "object": "link", "deleted": true}),
                )?)
            } else if ctx.profile.is_local() {
                Ok(print(&format!(
                    "deleted link {id} (kept in the trash: `linkdeck trash restore {id}` brings it back)"
                ))?)
            } else {
                Ok(print(&format!("deleted link {id}"))?)
            }
        }
        LinksCommand::Qr(args) => super::qr::run(ctx, backend, args).await,
    }
}

impl LinkFields {
    /// Writes the given flags into `input`, looking spaces up by name.
    async fn apply(self, backend: &dyn Backend, input: &mut LinkInput) -> CliResult {
        input.alias = self.alias;
        input.password = match (self.password, self.password_stdin) {
            (Some(p), _) => Some(p),
            (None, true) => Some(read_password()?),
            (None, false) => None,
        };
        if let Some(space) = &self.space {
            input.space = Some(if space.trim().is_empty() {
                String::new()
            } else {
                space_id(backend, space).await?.to_string()
            });
        }
        let flag = |b: bool| if b { "1" } else { "0" }.to_owned();
        input.disabled = self.disabled.map(flag);
        input.public = self.public.map(flag);
        if let Some(expires) = self.expires {
            let expires = expires.trim();
            let (date, time) = expires
                .split_once(|c: char| c.is_whitespace() || c == 'T')
                .unwrap_or((expires, ""));
            // One flag holds both halves: a missing time is this flag's mistake, said in its
            // words, not the service's two fields'.
            if !expires.is_empty() && time.trim().is_empty() {
                return Err(CliError::usage(format!(
                    "--expires {expires:?}: give a date and a time, as --expires \
                     '2027-03-21 18:00' (in the profile's time zone), or \"\" for no date"
                )));
            }
            input.expiration_date = Some(date.trim().to_owned());
            input.expiration_time = Some(time.trim().to_owned());
        }
        input.expiration_clicks = self.max_clicks;
        input.expiration_url = self.expiration_url;
        let keyed = |rules: Vec<(String, String)>| {
            rules
                .into_iter()
                .map(|(k, v)| RuleInput::new(k, v))
                .collect::<Vec<_>>()
        };
        if !self.geo.is_empty() {
            input.target_type = Some(u8::from(TargetType::Geo).to_string());
            input.geo = Some(keyed(self.geo));
        } else if !self.platform.is_empty() {
            input.target_type = Some(u8::from(TargetType::Platform).to_string());
            input.platform = Some(keyed(self.platform));
        } else if !self.rotation.is_empty() {
            input.target_type = Some(u8::from(TargetType::Rotation).to_string());
            input.rotation = Some(self.rotation.into_iter().map(RuleInput::value).collect());
        }
        if !self.tags.is_empty() {
            input.tags = Some(tags_text(&self.tags));
        }
        self.options.apply(input);
        Ok(())
    }
}

fn read_password() -> CliResult<String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| CliError::failure(format!("cannot read the password from stdin: {e}")))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// What a command that wrote `link` prints: the link as JSON, or the sentence `done`.
fn written(ctx: &Context, link: &Link, done: &str) -> CliResult {
    if ctx.json {
        Ok(print_json(&link_json(link, ctx.clock.now()))?)
    } else {
        Ok(print(&shown(done))?)
    }
}

async fn list(ctx: &Context, backend: &dyn Backend, args: ListArgs) -> CliResult {
    let (page, per_page) = args.paging.first(args.all);
    let mut query = LinkQuery {
        sort: args.sort,
        page,
        per_page,
        ..args.filter.query(backend).await?
    };
    let now = ctx.clock.now();
    if !args.all {
        let page = backend.list_links(&query).await?;
        if ctx.json {
            return Ok(print_json(&page_json(&page, |l| link_json(l, now)))?);
        }
        let table = link_table(ctx, &page.items, now).render();
        if page.items.is_empty() {
            return Ok(print(&format!("no links{}", filtered_note(&query)))?);
        }
        print(&table)?;
        // A bounded total's last page is only the last one known of.
        let more = if page.total_exact { "" } else { "+" };
        return Ok(print(&format!(
            "page {} of {}{more} · {}",
            page.page,
            page.last_page(),
            page.shown_total().plural("link")
        ))?);
    }

    // --all: page by page at the largest size, writing as it goes.
    let mut out = std::io::stdout().lock();
    let mut widths: Option<Vec<usize>> = None;
    let mut count = 0usize;
    if ctx.json {
        out.write_all(b"[")?;
    }
    loop {
        let page = backend.list_links(&query).await?;
        for link in &page.items {
            if ctx.json {
                let sep = if count == 0 { "\n" } else { ",\n" };
                out.write_all(sep.as_bytes())?;
                serde_json::to_writer(&mut out, &link_json(link, now))
                    .map_err(std::io::Error::other)?;
            }
            count += 1;
        }
        if !ctx.json && !page.items.is_empty() {
            let table = link_table(ctx, &page.items, now);
            let first = widths.is_none();
            let w = widths.get_or_insert_with(|| table.widths(STREAM_MIN_WIDTH));
            out.write_all(table.render_with(first, w).as_bytes())?;
        }
        if !page.has_next() {
            break;
        }
        query.page += 1;
    }
    if ctx.json {
        out.write_all(if count == 0 { b"]\n" } else { b"\n]\n" })?;
    } else if count == 0 {
        writeln!(out, "no links{}", filtered_note(&query))?;
    } else {
        writeln!(out, "{}", plural(count as u64, "link"))?;
    }
    Ok(out.flush()?)
}

pub(super) fn parse_sort(s: &str) -> Result<Sort, String> {
    Sort::parse(s).ok_or_else(|| "expected desc, asc, max or min".into())
}

fn parse_rule(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_owned(), v.trim().to_owned()))
        }
        _ => Err("expected KEY=URL, such as US=https://example.com/us".into()),
    }
}
