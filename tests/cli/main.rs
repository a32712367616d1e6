//! The command line, run as the real binary against temporary databases. One module per part of
//! the CLI, each named for what it covers; `cli_support` runs the binary in a sandbox, `common`
//! reads where a `linkdeck serve` child listens, `pg_cluster` gives a throwaway PostgreSQL.

#[path = "../cli_support/mod.rs"]
mod cli_support;
#[path = "../common/mod.rs"]
mod common;
#[path = "../pg_cluster/mod.rs"]
mod pg_cluster;
#[path = "../raw/mod.rs"]
mod raw;
#[path = "../stores/mod.rs"]
#[macro_use]
mod stores;

mod bulk;
mod completions;
mod config;
mod control_characters;
mod errors;
mod hostile_files;
mod links;
mod man;
mod options;
mod postgres;
mod read_only;
mod rules;
mod spaces;
mod tags;
mod through_server;
mod transfer;
mod webhooks;

use serde_json::Value;

/// The ids of a list's items, in order.
fn ids(list: &Value) -> Vec<i64> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|l| l["id"].as_i64().unwrap())
        .collect()
}

/// The lines an import's error lists, in the order it lists them (`  line 12: url`).
fn listed_lines(stderr: &str) -> Vec<usize> {
    stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix("line "))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect()
}

/// The aliases of an array of links, sorted.
fn aliases_of(links: &Value) -> Vec<String> {
    let mut aliases: Vec<String> = links
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["alias"].as_str().unwrap().to_owned())
        .collect();
    aliases.sort();
    aliases
}
