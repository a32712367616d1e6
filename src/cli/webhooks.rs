//! `linkdeck webhooks create|list|show|deliveries|delete|resume|secret`: subscriptions of the
//! embedded service, or of a remote `linkdeck serve` through its API ([`WebhookAdmin`]), which
//! `linkdeck serve` delivers. A secret is printed
//! when a subscription is made, and again only when asked for with `webhooks secret`.

use clap::Subcommand;
use serde_json::json;

use super::context::Context;
use super::error::CliResult;
use super::output::{Table, date, date_time, print, print_json};
use super::webhook_admin::WebhookAdmin;
use crate::backend::local::webhooks::{Delivery, Webhook};
use crate::domain::{Id, WebhookInput, clip};

/// Deliveries `show` and `deliveries` list unless told otherwise.
const RECENT: u32 = 20;

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Subscribe a receiver to events of the owner's links (--owner, else the default owner)
    /// and print its signing secret: only the secret on standard output.
    Create {
        /// The receiver: an http or https URL.
        #[arg(long)]
        url: String,
        /// An event wanted: link.created, link.updated, link.deleted, link.expired,
        /// link.clicked (again for more, or several separated by commas).
        #[arg(
            long = "event",
            value_name = "EVENT",
            value_delimiter = ',',
            required = true
        )]
        events: Vec<String>,
    },
    /// List subscriptions (of --owner, when given): id, URL, events, state.
    #[command(visible_alias = "ls")]
    List,
    /// A subscription and its latest deliveries.
    Show { id: Id },
    /// A subscription's latest deliveries: status, attempts, next try, last error.
    Deliveries {
        id: Id,
        /// How many, newest first.
        #[arg(long, default_value_t = RECENT)]
        limit: u32,
    },
    /// Delete a subscription and its deliveries.
    Delete { id: Id },
    /// Start a stopped subscription again; what waits in its outbox is sent.
    Resume { id: Id },
    /// Print a subscription's signing secret (a new one with --rotate).
    Secret {
        id: Id,
        /// Give it a new secret first; the old one stops signing at once.
        #[arg(long)]
        rotate: bool,
    },
}

pub async fn run(ctx: &Context, command: WebhooksCommand) -> CliResult {
    let reads = matches!(
        command,
        WebhooksCommand::List | WebhooksCommand::Show { .. } | WebhooksCommand::Deliveries { .. }
    );
    if !reads {
        ctx.writable("webhooks")?;
    }
    let admin = WebhookAdmin::open(ctx).await?;
    match command {
        WebhooksCommand::Create { url, events } => {
            let (secret, hook) = admin.create(&WebhookInput { url, events }).await?;
            if ctx.json {
                Ok(print_json(&json!({ "secret": secret, "webhook": hook }))?)
            } else {
                eprintln!(
                    "webhook {} created; its secret is shown now and on `webhooks secret {}`",
                    hook.id, hook.id
                );
                Ok(print(&format!("{secret}\n"))?)
            }
        }
        WebhooksCommand::List => {
            let hooks = admin.list().await?;
            if ctx.json {
                return Ok(print_json(&hooks)?);
            }
            let tz = ctx.timezone();
            let mut table = Table::new(&[
                ("ID", 5, true),
                ("URL", 36, false),
                ("EVENTS", 28, false),
                ("CREATED", 10, false),
                ("WAITING", 7, true),
                ("STATE", 30, false),
            ]);
            for h in &hooks {
                table.row(vec![
                    h.id.to_string(),
                    h.url.clone(),
                    h.events
                        .iter()
                        .map(|e| e.name())
                        .collect::<Vec<_>>()
                        .join(","),
                    date(h.created_at, tz),
                    h.pending.to_string(),
                    state(h, tz),
                ]);
            }
            Ok(print(&table.render())?)
        }
        WebhooksCommand::Show { id } => {
            let hook = admin.show(id).await?;
            let deliveries = admin.deliveries(id, RECENT).await?;
            if ctx.json {
                return Ok(print_json(
                    &json!({ "webhook": hook, "deliveries": deliveries }),
                )?);
            }
            let tz = ctx.timezone();
            let events = hook.events.iter().map(|e| e.name()).collect::<Vec<_>>();
            let mut out = format!(
                "webhook {}\nurl      {}\nevents   {}\ncreated  {}\nwaiting  {}\nstate    {}\n",
                hook.id,
                clip(&hook.url, 200),
                events.join(", "),
                date(hook.created_at, tz),
                hook.pending,
                state(&hook, tz),
            );
            if let Some(reason) = &hook.stopped_reason {
                out.push_str(&format!("reason   {}\n", clip(reason, 400)));
            }
            out.push('\n');
            out.push_str(&deliveries_table(ctx, &deliveries));
            Ok(print(&out)?)
        }
        WebhooksCommand::Deliveries { id, limit } => {
            let deliveries = admin.deliveries(id, limit).await?;
            if ctx.json {
                return Ok(print_json(&deliveries)?);
            }
            Ok(print(&deliveries_table(ctx, &deliveries))?)
        }
        WebhooksCommand::Delete { id } => {
            admin.delete(id).await?;
            if ctx.json {
                Ok(print_json(&json!({ "deleted": id }))?)
            } else {
                Ok(print(&format!("deleted webhook {id}\n"))?)
            }
        }
        WebhooksCommand::Resume { id } => {
            let hook = admin.resume(id).await?;
            if ctx.json {
                Ok(print_json(&hook)?)
            } else {
                Ok(print(&format!(
                    "webhook {} runs again; {} deliveries waiting\n",
                    hook.id, hook.pending
                ))?)
            }
        }
        WebhooksCommand::Secret { id, rotate } => {
            let secret = admin.secret(id, rotate).await?;
            if ctx.json {
                Ok(print_json(&json!({ "id": id, "secret": secret }))?)
            } else {
                Ok(print(&format!("{secret}\n"))?)
            }
        }
    }
}

/// Running, or stopped and when.
fn state(hook: &Webhook, tz: &jiff::tz::TimeZone) -> String {
    match (hook.stopped_at, hook.failures) {
        (Some(at), _) => format!("stopped {}", date_time(at, tz)),
        (None, 0) => "running".into(),
        (None, n) => format!("running, {n} failed in a row"),
    }
}

fn deliveries_table(ctx: &Context, deliveries: &[Delivery]) -> String {
    let tz = ctx.timezone();
    let time = |t: jiff::Timestamp| date_time(t, tz);
    let mut table = Table::new(&[
        ("ID", 6, true),
        ("EVENT", 12, false),
        ("CREATED", 20, false),
        ("STATUS", 9, false),
        ("TRIES", 5, true),
        ("NEXT TRY", 20, false),
        ("LAST ERROR", 40, false),
    ]);
    for d in deliveries {
        let status = match (d.delivered_at, d.attempts) {
            (Some(_), _) => "delivered".to_owned(),
            (None, 0) => "waiting".to_owned(),
            (None, _) => "failing".to_owned(),
        };
        table.row(vec![
            d.id.to_string(),
            d.event.clone(),
            time(d.created_at),
            status,
            d.attempts.to_string(),
            d.next_at.map(time).unwrap_or_default(),
            d.last_error.clone().unwrap_or_default(),
        ]);
    }
    table.render()
}
