//! Imports from other shorteners, run as the real binary on the fixtures in
//! `tests/fixtures/foreign/` (their README says where each format was learnt). Each fixture
//! has one bad row: the import must name it and write nothing; without it, every mapped field
//! must arrive. Every test runs on a SQLite file and on a PostgreSQL database (skipped, with
//! the reason, without PostgreSQL: see `tests/pg_cluster`).

mod cli_support;
mod pg_cluster;
#[macro_use]
mod stores;

use cli_support::Env;
use serde_json::Value;
use stores::Store;

on_both_stores!(
    bitly_group_bitlinks,
    yourls_phpmyadmin_csv,
    yourls_sql_dump,
    yourls_titles_arrive_without_control_characters,
    yourls_click_log_beside_a_phpmyadmin_csv,
    shlink_web_client_csv,
    shlink_rest_api_json,
    kutt_api_v2_links,
    taken_aliases_fail_skip_or_rename,
    unrecognised_files_ask_for_from,
    linkdeck_round_trip_keeps_clicks_and_dates,
);

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/foreign/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The 1-based line of `text` holding `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle}"))
        + 1
}

/// `text` without its line holding `needle`.
fn without_line(text: &str, needle: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| !l.contains(needle))
        .collect()
}

/// Every link of the database, oldest first, by alias.
fn links(env: &Env) -> Vec<Value> {
    env.json(&["links", "list", "--all", "--sort", "asc"])
        .as_array()
        .unwrap()
        .clone()
}

fn link<'a>(all: &'a [Value], alias: &str) -> &'a Value {
    all.iter()
        .find(|l| l["alias"] == alias)
        .unwrap_or_else(|| panic!("no link {alias} in {all:#?}"))
}

/// The bad row stops the import, is named, and nothing (links, spaces) is written.
fn refuses(env: &Env, file: &str, text: &str, args: &[&str], field: &str) {
    let path = env.write(file, text);
    let mut all = vec!["--json", "import", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let err = env.run(&all).fails_with(3).error_json();
    assert!(
        err["fields"][field].is_array(),
        "{file}: expected an error on {field}: {err}"
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("nothing imported"),
        "{err}"
    );
    assert_eq!(env.json(&["links", "list"])["total"], 0, "{file}");
    assert_eq!(env.json(&["spaces", "list"])["total"], 0, "{file}");
}

fn import(env: &Env, file: &str, text: &str, args: &[&str]) -> Value {
    let path = env.write(file, text);
    let mut all = vec!["--json", "import", path.to_str().unwrap()];
    all.extend_from_slice(args);
    env.run(&all).ok().json()
}

fn dropped(summary: &Value) -> Vec<String> {
    summary["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}={}", d["what"].as_str().unwrap(), d["links"]))
        .collect()
}

fn bitly_group_bitlinks(store: Store) {
    let env = store.env();
    env.run(&["domains", "add", "go.brand.test"]).ok();
    let text = fixture("bitly.json");
    let bad = line_of(&text, "bit.ly/bad1");
    refuses(
        &env,
        "bitly.json",
        &text,
        &["--tags-to-spaces"],
        &format!("line {bad}: url"),
    );

    let good = without_line(&text, "bit.ly/bad1");
    let summary = import(&env, "bitly-good.json", &good, &["--tags-to-spaces"]);
    assert_eq!(summary["from"], "Bitly JSON");
    assert_eq!(summary["links_created"], 3);
    assert_eq!(summary["spaces_created"], 2);
    let dropped = dropped(&summary);
    for what in [
        "app deeplinks=1",
        "deleted bitlinks (left out)=1",
        "click totals (not in Bitly's bitlinks list)=1",
    ] {
        assert!(dropped.iter().any(|d| d == what), "{what} in {dropped:?}");
    }
    assert!(
        !dropped.iter().any(|d| d.starts_with("tags")),
        "tags are carried: {dropped:?}"
    );

    let all = links(&env);
    assert_eq!(all.len(), 3);
    let first = link(&all, "2Qj2niP");
    assert_eq!(
        first["url"],
        "https://shop.example.com/sale?utm_source=news&utm_medium=email"
    );
    assert_eq!(first["title"], "Soldes d'été — \"jusqu'à\" -50 %");
    assert_eq!(first["created_at"], "2023-01-02T23:51:47Z");
    assert_eq!(first["clicks"], 17, "from sorted_links");
    assert_eq!(first["space"]["name"], "Summer");
    assert_eq!(first["tags"], serde_json::json!(["email", "summer"]));
    assert!(first["domain"].is_null(), "bit.ly is the main domain");
    let custom = link(&all, "launch");
    assert_eq!(custom["url"], "https://brand.test/launch?ref=bitly&lang=ja");
    assert_eq!(custom["title"], "新製品の発表");
    assert_eq!(custom["clicks"], 1234);
    assert_eq!(custom["domain"]["name"], "https://go.brand.test");
    assert_eq!(custom["short_url"], "https://go.brand.test/launch");
    assert_eq!(custom["space"]["name"], "Launch");
    assert_eq!(
        custom["status"], "active",
        "archived bitlinks still redirect"
    );
    let page_two = link(&all, "p2");
    assert_eq!(page_two["url"], "https://example.org/page-two");
    assert_eq!(page_two["created_at"], "2023-06-01T12:00:00Z");
    assert!(page_two["space"].is_null());
}

fn yourls_phpmyadmin_csv(store: Store) {
    let env = store.env();
    let text = fixture("yourls.csv");
    refuses(&env, "yourls.csv", &text, &[], "line 5: url");
    let good = without_line(&text, "badurl");
    let summary = import(&env, "yourls-good.csv", &good, &[]);
    assert_eq!(summary["from"], "YOURLS CSV");
    assert_eq!(summary["links_created"], 3);
    assert_eq!(dropped(&summary), ["the creator's IP address (ip)=3"]);
    yourls_links(&env, "Zitat: \"Grüße, Welt\"");

    // Without the header row (phpMyAdmin's default), the table's column order is assumed.
    let env = store.env();
    let headless = without_line(&good, "keyword");
    let summary = import(&env, "headless.csv", &headless, &["--from", "yourls"]);
    assert_eq!(summary["links_created"], 3);
    yourls_links(&env, "Zitat: \"Grüße, Welt\"");
}

fn yourls_links(env: &Env, quote_title: &str) {
    let all = links(env);
    assert_eq!(all.len(), 3);
    let ozh = link(&all, "ozh");
    assert_eq!(ozh["url"], "https://ozh.org/");
    assert_eq!(ozh["title"], "ozh.org");
    assert_eq!(ozh["created_at"], "2023-02-03T04:05:06Z");
    assert_eq!(ozh["clicks"], 7);
    let quote = link(&all, "quote");
    assert_eq!(quote["url"], "https://example.com/search?q=a%2Cb&lang=de");
    assert_eq!(quote["title"], quote_title);
    assert_eq!(quote["clicks"], 42);
    let untitled = link(&all, "notitle");
    // No title in the table: the service's own (host and path).
    assert_eq!(untitled["title"], "example.com/x");
    assert_eq!(untitled["clicks"], 0);
}

fn yourls_sql_dump(store: Store) {
    let env = store.env();
    let text = fixture("yourls.sql");
    let line = line_of(&text, "INSERT INTO `yourls_url`");
    refuses(
        &env,
        "yourls.sql",
        &text,
        &[],
        &format!("line {line}, row 4: alias"),
    );
    let good = text.replace(
        ",('bad keyword','https://example.com/y','bad','2023-02-06 12:00:00','10.0.0.3',1)",
        "",
    );
    let summary = import(&env, "yourls-good.sql", &good, &[]);
    assert_eq!(summary["from"], "YOURLS SQL dump");
    assert_eq!(summary["links_created"], 3, "the log table is not links");
    yourls_links(&env, "Zitat: \"Grüße, Welt\" l'été");
    // The dump's yourls_log (before yourls_url, as mysqldump orders tables) is their history.
    yourls_history(&env, &summary);

    // Given again as --log, the dump's log is read once, not twice.
    let env = store.env();
    let path = env.write("yourls-good.sql", &good);
    let path = path.to_str().unwrap();
    let summary = env.json(&["import", path, "--log", path]);
    yourls_history(&env, &summary);
}

/// A YOURLS dump carries what its pages' titles held: `\0`, `\Z` and `\b` as MySQL escapes
/// them, and escape sequences and line breaks as they were. The links come in, their titles
/// clean of control characters (a title of nothing else gets the service's own).
fn yourls_titles_arrive_without_control_characters(store: Store) {
    let env = store.env();
    let dump = "INSERT INTO `yourls_url` (`keyword`, `url`, `title`, `timestamp`, `ip`, `clicks`) \
                VALUES ('ozh','https://ozh.org/','ozh\\0.org\\Z \\bblog','2023-02-03 04:05:06','1.2.3.4',7),\
                ('sale','https://example.com/sale',\
                'Sale\u{1b}[2J\u{1b}]0;pwned\u{7}\\r\\n\\tnow \u{9b}31m\u{202e}','2023-02-03 04:05:06','1.2.3.4',1),\
                ('bare','https://example.com/bare','\\0\\Z\u{1b}','2023-02-03 04:05:06','1.2.3.4',0);\n";
    let summary = import(&env, "yourls.sql", dump, &[]);
    assert_eq!(summary["links_created"], 3, "{summary}");
    let all = links(&env);
    assert_eq!(link(&all, "ozh")["title"], "ozh.org blog");
    assert_eq!(link(&all, "sale")["title"], "Sale[2J]0;pwned now 31m");
    assert_eq!(link(&all, "bare")["title"], "example.com/bare");
    assert_eq!(
        link(&all, "ozh")["clicks"],
        7,
        "the rest of the row came too"
    );
}

/// Values (days, countries) with their clicks.
type Counts = Vec<(String, u64)>;

/// What days of early February 2023 had clicks of `alias`, and from which countries.
fn days_and_countries(env: &Env, alias: &str) -> (Counts, Counts) {
    let stats = env.json(&["stats", alias, "--from", "2023-02-01", "--to", "2023-02-07"]);
    let pairs = |list: &Value, key: &str| -> Counts {
        list.as_array()
            .unwrap()
            .iter()
            // A click without a country is counted as unknown (no value).
            .filter(|b| b["clicks"].as_u64() > Some(0) && b[key].is_string())
            .map(|b| {
                let at = b[key].as_str().unwrap();
                (
                    at[..at.len().min(10)].to_owned(),
                    b["clicks"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    (
        pairs(&stats["timeline"], "starts_at"),
        pairs(&stats["country"]["top"], "value"),
    )
}

/// The clicks of the YOURLS fixtures' click log, on their days, hours and countries; the
/// totals from yourls_url stay (`yourls_links`).
fn yourls_history(env: &Env, summary: &Value) {
    assert_eq!(summary["clicks_imported"], 7, "{summary}");
    assert!(
        dropped(summary)
            .contains(&"clicks in yourls_log of keywords not in yourls_url=1".to_owned()),
        "the deleted keyword's click: {summary}"
    );
    let day = |d: &str, n: u64| (d.to_owned(), n);
    let (days, countries) = days_and_countries(env, "ozh");
    assert_eq!(days, [day("2023-02-03", 3), day("2023-02-05", 1)]);
    assert_eq!(countries, [day("DE", 2), day("FR", 1)]);
    let (days, countries) = days_and_countries(env, "quote");
    assert_eq!(days, [day("2023-02-04", 2), day("2023-02-06", 1)]);
    assert_eq!(countries, [day("AT", 2), day("CH", 1)]);
    let (days, _) = days_and_countries(env, "notitle");
    assert!(days.is_empty(), "no clicks logged: {days:?}");

    // Hour by hour, with the referring hosts and the platforms of the User-Agents.
    let ozh = env.json(&["stats", "ozh", "--from", "2023-02-03", "--to", "2023-02-03"]);
    let hours: Vec<(&str, u64)> = ozh["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["clicks"].as_u64() > Some(0))
        .map(|b| {
            (
                b["starts_at"].as_str().unwrap(),
                b["clicks"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hours,
        [("2023-02-03T05:00:00Z", 1), ("2023-02-03T06:00:00Z", 2)]
    );
    let values = |dim: &str| -> Vec<&str> {
        ozh[dim]["top"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["value"].as_str())
            .collect()
    };
    let mut referrers = values("referrer");
    referrers.sort_unstable();
    assert_eq!(
        referrers,
        ["news.example", "t.co"],
        "direct is no host: {ozh}"
    );
    assert!(values("platform").contains(&"iOS"), "{ozh}");
    assert!(values("platform").contains(&"Linux"), "{ozh}");
    assert!(values("browser").contains(&"Safari"), "{ozh}");
}

fn yourls_click_log_beside_a_phpmyadmin_csv(store: Store) {
    let env = store.env();
    let links = without_line(&fixture("yourls.csv"), "badurl");
    let links = env.write("yourls.csv", &links);
    let links = links.to_str().unwrap();
    let log = fixture("yourls_log.csv");

    // A row of the log that is not a click stops the import, named by its line in the log.
    let bad = env.write("yourls_log.csv", &log);
    let err = env
        .run(&["--json", "import", links, "--log", bad.to_str().unwrap()])
        .fails_with(3)
        .error_json();
    let line = line_of(&log, "yesterday");
    assert!(
        err["fields"][format!("line {line}: click_time")].is_array(),
        "{err}"
    );
    assert!(
        err["message"].as_str().unwrap().contains("yourls_log.csv"),
        "{err}"
    );
    assert_eq!(env.json(&["links", "list"])["total"], 0);

    let good = env.write("yourls_log-good.csv", &without_line(&log, "yesterday"));
    let summary = env.json(&["import", links, "--log", good.to_str().unwrap()]);
    assert_eq!(summary["links_created"], 3);
    yourls_links(&env, "Zitat: \"Grüße, Welt\"");
    yourls_history(&env, &summary);

    // The log belongs to YOURLS's links.
    let bitly = env.write("bitly.json", &fixture("bitly.json"));
    env.run(&[
        "import",
        bitly.to_str().unwrap(),
        "--log",
        good.to_str().unwrap(),
    ])
    .fails_with(2);
}

fn shlink_web_client_csv(store: Store) {
    let env = store.env();
    env.run(&["domains", "add", "go.brand.test"]).ok();
    let text = fixture("shlink.csv");
    refuses(
        &env,
        "shlink.csv",
        &text,
        &["--default-domain", "s.test"],
        "line 5: clicks",
    );
    let good = without_line(&text, "badvisits");
    // The CSV names the main domain's host on every row: without --default-domain it is
    // unknown, and that is said on the row.
    let path = env.write("shlink-good.csv", &good);
    let err = env
        .run(&["--json", "import", path.to_str().unwrap()])
        .fails_with(3)
        .error_json();
    let message = err["fields"]["line 2: domain"][0].as_str().unwrap();
    assert!(message.contains("--default-domain s.test"), "{message}");

    let summary = import(
        &env,
        "shlink-good.csv",
        &good,
        &["--default-domain", "https://S.test/", "--tags-to-spaces"],
    );
    assert_eq!(summary["from"], "Shlink CSV");
    assert_eq!(summary["links_created"], 3);
    assert_eq!(summary["spaces_created"], 2);
    let all = links(&env);
    let promo = link(&all, "promo");
    assert_eq!(
        promo["url"],
        "https://shop.example.com/?utm_source=shlink&a=1"
    );
    assert_eq!(promo["title"], "Angebote, Aktionen & mehr");
    assert_eq!(promo["created_at"], "2023-05-01T08:20:30Z");
    assert_eq!(promo["clicks"], 12);
    assert_eq!(promo["space"]["name"], "spring");
    assert!(promo["domain"].is_null());
    // The first tag made the space, and every tag is kept as a tag too.
    assert_eq!(promo["tags"], serde_json::json!(["sale", "spring"]));
    let launch = link(&all, "launch-2");
    assert_eq!(launch["title"], "Ünïcödé ✓");
    assert_eq!(launch["domain"]["name"], "https://go.brand.test");
    assert_eq!(launch["space"]["name"], "launch");
    let quoted = link(&all, "quoted");
    assert_eq!(quoted["title"], "He said \"hi\"");
    assert_eq!(quoted["url"], "https://example.com/q?x=%22y%22");
    assert!(quoted["space"].is_null());
}

fn shlink_rest_api_json(store: Store) {
    let env = store.env();
    env.run(&["domains", "add", "go.brand.test"]).ok();
    let text = fixture("shlink.json");
    let bad = line_of(&text, "\"broken\"");
    refuses(&env, "shlink.json", &text, &[], &format!("line {bad}: url"));
    let good = without_line(&text, "\"broken\"");
    let summary = import(&env, "shlink-good.json", &good, &[]);
    assert_eq!(summary["from"], "Shlink JSON");
    assert_eq!(summary["links_created"], 2);
    let dropped = dropped(&summary);
    for what in [
        "the start of validity (meta.validSince)=1",
        "redirect rules=1",
    ] {
        assert!(dropped.iter().any(|d| d == what), "{what} in {dropped:?}");
    }
    let all = links(&env);
    let steam = link(&all, "12C18");
    assert_eq!(steam["url"], "https://store.example.com/?q=a&b=c");
    assert_eq!(steam["title"], "Bienvenue à \"Steam\"");
    assert_eq!(steam["created_at"], "2023-08-21T18:34:16Z");
    assert_eq!(steam["tags"], serde_json::json!(["games", "tech"]));
    assert_eq!(steam["clicks"], 328);
    assert_eq!(steam["expiration_clicks"], 500);
    assert_eq!(steam["ends_at"], "2031-06-01T12:00:00Z");
    assert_eq!(
        steam["target_type"], 2,
        "device URLs become platform targeting"
    );
    assert_eq!(
        steam["platform"],
        serde_json::json!([
            {"key": "Android", "value": "https://play.example.com/app"},
            {"key": "iOS", "value": "https://apps.example.com/app"}
        ])
    );
    assert!(steam["domain"].is_null());
    let limited = link(&all, "limit");
    assert_eq!(limited["domain"]["name"], "https://go.brand.test");
    assert_eq!(limited["clicks"], 5);
    assert_eq!(limited["expiration_clicks"], 5);
    assert_eq!(
        limited["status"], "expired",
        "a link at its visit limit stays expired"
    );
}

fn kutt_api_v2_links(store: Store) {
    let env = store.env();
    env.run(&["domains", "add", "go.brand.test"]).ok();
    let text = fixture("kutt.json");
    let bad = line_of(&text, "\"notaurl\"");
    refuses(&env, "kutt.json", &text, &[], &format!("line {bad}: url"));
    let good = without_line(&text, "\"notaurl\"");
    let summary = import(&env, "kutt-good.json", &good, &[]);
    assert_eq!(summary["from"], "Kutt JSON");
    assert_eq!(summary["links_created"], 2);
    let all = links(&env);
    let hello = link(&all, "hello");
    assert_eq!(hello["url"], "https://example.com/hello?who=world&x=1");
    assert_eq!(hello["title"], "Hallo „Welt“, ça va?");
    assert_eq!(hello["created_at"], "2023-09-01T08:00:00Z");
    assert_eq!(hello["clicks"], 9);
    assert_eq!(hello["ends_at"], "2031-01-01T00:00:00Z");
    let secret = link(&all, "secret");
    assert_eq!(secret["disabled"], true, "banned links stay down");
    assert_eq!(secret["domain"]["name"], "https://go.brand.test");
    assert_eq!(secret["password"], false);
    assert!(
        dropped(&summary)
            .iter()
            .any(|d| d.starts_with("passwords (Kutt exports only that a link had one")),
        "{summary}"
    );
}

fn taken_aliases_fail_skip_or_rename(store: Store) {
    let env = store.env();
    env.run(&["links", "create", "https://mine.example", "--alias", "ozh"])
        .ok();
    let good = without_line(&fixture("yourls.csv"), "badurl");
    let path = env.write("yourls.csv", &good);
    let file = path.to_str().unwrap();

    // fail: the row is named, nothing is written.
    let err = env
        .run(&["--json", "import", file])
        .fails_with(3)
        .error_json();
    assert!(err["fields"]["line 2: alias"].is_array(), "{err}");
    assert_eq!(env.json(&["links", "list"])["total"], 1);

    // skip: the stored link stays, the others come in.
    let summary = env.json(&["import", file, "--on-conflict", "skip"]);
    assert_eq!(summary["links_created"], 2);
    assert_eq!(summary["links_skipped"], 1);
    let all = links(&env);
    assert_eq!(link(&all, "ozh")["url"], "https://mine.example");

    // rename: every row comes in; taken aliases get the first free -N.
    let summary = env.json(&["import", file, "--on-conflict", "rename"]);
    assert_eq!(summary["links_created"], 3);
    let renamed: Vec<(String, String)> = summary["renamed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["from"].as_str().unwrap().into(),
                r["to"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        renamed,
        [
            ("ozh".to_owned(), "ozh-2".to_owned()),
            ("quote".to_owned(), "quote-2".to_owned()),
            ("notitle".to_owned(), "notitle-2".to_owned())
        ]
    );
    let all = links(&env);
    assert_eq!(link(&all, "ozh-2")["url"], "https://ozh.org/");
    assert_eq!(link(&all, "ozh-2")["clicks"], 7);

    // The same alias twice in one file is a clash too.
    let twice = env.write(
        "twice.json",
        r#"{"links": [{"url": "https://a.example", "alias": "dup"}, {"url": "https://b.example", "alias": "DUP"}]}"#,
    );
    let err = env
        .run(&["--json", "import", twice.to_str().unwrap()])
        .fails_with(3)
        .error_json();
    // The second link of the line is the one that clashes, named by its place on the line.
    assert!(err["fields"]["line 1, row 2: alias"].is_array(), "{err}");
    let summary = env.json(&["import", twice.to_str().unwrap(), "--on-conflict", "rename"]);
    assert_eq!(summary["renamed"][0]["to"], "DUP-2");
    assert_eq!(summary["renamed"][0]["place"], "line 1, row 2");
}

fn unrecognised_files_ask_for_from(store: Store) {
    let env = store.env();
    let path = env.write("mystery.txt", "hello,world\n1,2\n");
    let run = env.run(&["import", path.to_str().unwrap()]).fails_with(2);
    assert!(run.stderr.contains("--from"), "{}", run.stderr);
    // Named, a file that is not what it claims is refused with its line.
    let run = env
        .run(&["import", path.to_str().unwrap(), "--from", "bitly"])
        .fails_with(3);
    assert!(run.stderr.contains("not a valid Bitly"), "{}", run.stderr);
}

fn linkdeck_round_trip_keeps_clicks_and_dates(store: Store) {
    let env = store.env();
    let file = env.write(
        "seed.json",
        r#"{"links": [
            {"url": "https://a.example/used-up", "alias": "used-up", "expiration_clicks": 2, "clicks": 2, "created_at": "2024-05-01T09:30:00Z", "title": "Used up"},
            {"url": "https://a.example/busy", "alias": "busy", "clicks": 41}
        ]}"#,
    );
    env.run(&["import", file.to_str().unwrap()]).ok();
    let before = links(&env);
    assert_eq!(link(&before, "used-up")["status"], "expired");
    for format in ["json", "csv"] {
        let export = env.path(&format!("export.{format}"));
        env.run(&["export", export.to_str().unwrap()]).ok();
        let fresh = env.path(&format!("fresh-{format}.db"));
        env.run_on(&fresh, &["import", export.to_str().unwrap()])
            .ok();
        let after = env
            .run_on(
                &fresh,
                &["--json", "links", "list", "--all", "--sort", "asc"],
            )
            .ok()
            .json();
        let after = after.as_array().unwrap();
        let used_up = link(after, "used-up");
        assert_eq!(used_up["status"], "expired", "{format}: stays expired");
        assert_eq!(used_up["clicks"], 2);
        assert_eq!(used_up["created_at"], "2024-05-01T09:30:00Z");
        assert_eq!(used_up["title"], "Used up");
        assert_eq!(link(after, "busy")["clicks"], 41);
        assert_eq!(
            link(after, "busy")["created_at"],
            link(&before, "busy")["created_at"]
        );
        // Sorting by clicks sees them.
        let top = env
            .run_on(&fresh, &["--json", "links", "list", "--sort", "max"])
            .ok()
            .json();
        assert_eq!(top["items"][0]["alias"], "busy");
    }
}
