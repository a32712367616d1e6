//! Text from outside — an older database, a remote server, an import file — holding control
//! characters: every command that prints it writes them out visibly (`\u{1b}`), so a title
//! cannot clear the screen or set the window's title; `--json` keeps the text exact.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::cli_support::{Env, Run, run};

/// An escape sequence that clears the screen, one that sets the window's title (ended by BEL),
/// a C1 control sequence and a bidirectional override.
const HOSTILE: &str = "Sale\u{1b}[2J\u{1b}]0;pwned\u{7} now\u{9b}31m \u{202e}fdp.exe";
/// [`HOSTILE`] as a terminal is given it.
const HOSTILE_SHOWN: &str = "Sale\\u{1b}[2J\\u{1b}]0;pwned\\u{7} now\\u{9b}31m \\u{202e}fdp.exe";

/// Whether a terminal would act on `c` rather than show it (line breaks aside, which end the
/// lines of the output itself).
fn acts_on_a_terminal(c: char) -> bool {
    (c.is_control() && c != '\n') || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Asserts that what `run` printed holds nothing a terminal would act on.
fn printable(run: &Run, what: &str) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.chars().any(acts_on_a_terminal),
            "{what}: {stream} holds a control character:\n{text:?}"
        );
    }
}

#[test]
fn records_from_an_older_database_are_printed_with_their_controls_written_out() {
    let env = Env::new();
    env.run(&["spaces", "create", "Launch", "--color", "green"])
        .ok();
    env.run(&[
        "links",
        "create",
        "https://example.com/landing",
        "--alias",
        "promo",
        "--space",
        "Launch",
        "--max-clicks",
        "5",
        "--expiration-url",
        "https://example.com/over",
        "--geo",
        "US=https://example.com/us",
    ])
    .ok();
    // What an older build, or another program writing the file, may have left.
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    conn.execute(
        "UPDATE links SET title = ?1, url = ?2, expiration_url = ?3, geo_target = ?4",
        (
            HOSTILE,
            "https://example.com/\u{1b}[5mlanding",
            "https://example.com/\u{7}over",
            json!([{"key": "US", "value": "https://example.com/\u{1b}]0;us\u{7}"}]).to_string(),
        ),
    )
    .unwrap();
    conn.execute("UPDATE spaces SET name = ?1", ["Launch\u{1b}[2J\tteam"])
        .unwrap();
    drop(conn);

    let show = env.run(&["links", "show", "promo"]).ok();
    printable(&show, "links show");
    for line in [
        format!("title         {HOSTILE_SHOWN}"),
        "destination   https://example.com/\\u{1b}[5mlanding".to_owned(),
        "when expired  https://example.com/\\u{7}over".to_owned(),
        "              US → https://example.com/\\u{1b}]0;us\\u{7}".to_owned(),
        "space         Launch\\u{1b}[2J\\tteam (green)".to_owned(),
    ] {
        assert!(
            show.stdout.lines().any(|l| l == line),
            "no line {line:?} in:\n{}",
            show.stdout
        );
    }

    for args in [
        &["links", "list"][..],
        &["links", "list", "--all"],
        &["spaces", "list"],
        &["spaces", "list", "--all"],
        &["spaces", "show", "1"],
    ] {
        let listed = env.run(args).ok();
        printable(&listed, &args.join(" "));
        // (A table cuts it at its column's width.)
        assert!(
            listed.stdout.contains("Launch\\u{1b}[2J"),
            "{args:?}:\n{}",
            listed.stdout
        );
    }
    let listed = env.run(&["links", "list"]).ok();
    assert!(
        listed
            .stdout
            .contains("https://example.com/\\u{1b}[5mlanding"),
        "{}",
        listed.stdout
    );

    // Programs reading --json get the stored text exactly.
    let json = env.json(&["links", "show", "promo"]);
    assert_eq!(json["title"], HOSTILE);
    assert_eq!(json["url"], "https://example.com/\u{1b}[5mlanding");
    assert_eq!(json["space"]["name"], "Launch\u{1b}[2J\tteam");

    // A bulk preview and its summary name links the same way.
    let deleted = env
        .run(&["links", "delete", "--search", "Sale", "--yes"])
        .ok();
    printable(&deleted, "links delete --search");
    let trash = env.run(&["trash", "list"]).ok();
    printable(&trash, "trash list");
    assert!(
        trash
            .stdout
            .contains("https://example.com/\\u{1b}[5mlanding"),
        "{}",
        trash.stdout
    );
}

/// A v1 server on 127.0.0.1 whose every word comes with control characters: a link record
/// (`GET /api/v1/links/1`), a failure with a `message` (the list), and a 422 naming a field
/// (a create).
fn hostile_server() -> SocketAddr {
    async fn answer(request: Request) -> Response {
        let path = request.uri().path().to_owned();
        match (request.method().as_str(), path.as_str()) {
            ("GET", "/api/v1/links/1") => {
                let record = json!({
                    "id": 1, "alias": "promo", "url": "https://example.com/page",
                    "short_url": "https://sho.rt/promo\u{1b}[2J", "title": HOSTILE,
                    "target_type": 0, "geo_target": null, "platform_target": null,
                    "rotation_target": null, "last_rotation": 0, "disabled": 0, "public": 0,
                    "expiration_url": null, "expiration_clicks": 0, "clicks": 3, "user_id": 1,
                    "space": {"id": 4, "user_id": 1, "name": "Ops\u{7}\u{202e}", "color": 2,
                              "created_at": "2020-09-14T06:53:49.000000Z",
                              "updated_at": "2020-09-14T06:53:49.000000Z"},
                    "domain": null, "ends_at": null,
                    "created_at": "2020-09-14T06:53:49.000000Z",
                    "updated_at": "2020-09-14T06:53:49.000000Z"
                });
                (
                    StatusCode::OK,
                    axum::Json(json!({"data": record, "status": 200})),
                )
                    .into_response()
            }
            ("POST", "/api/v1/links") => (
                StatusCode::UNPROCESSABLE_ENTITY,
                axum::Json(json!({
                    "message": {"url\u{1b}[2J": ["is not allowed \u{1b}]0;pwned\u{7}here"]},
                    "status": 422
                })),
            )
                .into_response(),
            ("GET", "/api/v1/links") => (
                StatusCode::INTERNAL_SERVER_ERROR,
                axum::Json(json!({"message": format!("Server Error {HOSTILE}")})),
            )
                .into_response(),
            _ => (
                StatusCode::NOT_FOUND,
                axum::Json(json!({"message": "Resource not found.", "status": 404})),
            )
                .into_response(),
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, Router::new().fallback(answer))
                .await
                .unwrap();
        });
    });
    addr
}

#[test]
fn a_remote_servers_words_are_printed_with_their_controls_written_out() {
    let env = Env::new();
    let addr = hostile_server();
    let remote = |args: &[&str]| {
        run(env
            .bare()
            .env("LINKDECK_TEST_KEY", "some-key")
            .args(["--config", env.config.to_str().unwrap()])
            .args([
                "--remote",
                &format!("http://{addr}"),
                "--api-key-env",
                "LINKDECK_TEST_KEY",
            ])
            .args(args))
    };

    let show = remote(&["links", "show", "1"]).ok();
    printable(&show, "links show");
    assert!(
        show.stdout
            .lines()
            .any(|l| l == format!("title         {HOSTILE_SHOWN}")),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("https://sho.rt/promo\\u{1b}[2J"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("Ops\\u{7}\\u{202e} (orange)"),
        "{}",
        show.stdout
    );

    // The server's own message, in a failure.
    let failed = remote(&["links", "list"]).fails_with(6);
    printable(&failed, "links list");
    assert!(
        failed
            .stderr
            .contains(&format!("(Server Error {HOSTILE_SHOWN})")),
        "{}",
        failed.stderr
    );
    let json: Value = remote(&["--json", "links", "list"])
        .fails_with(6)
        .error_json();
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .ends_with(&format!("(Server Error {HOSTILE})")),
        "--json keeps the server's words exactly: {json}"
    );

    // The fields and messages of its 422.
    let refused = remote(&["links", "create", "https://example.com"]).fails_with(3);
    printable(&refused, "links create");
    assert!(
        refused
            .stderr
            .contains("url\\u{1b}[2J: is not allowed \\u{1b}]0;pwned\\u{7}here"),
        "{}",
        refused.stderr
    );
}

#[test]
fn an_import_files_unknown_keys_are_echoed_with_their_controls_written_out() {
    let env = Env::new();
    let file = env.write(
        "links.json",
        &json!({"links": [{"url": "https://example.com", "\u{1b}]0;pwned\u{7}": 1}]}).to_string(),
    );
    let run = env.run(&["import", file.to_str().unwrap()]).fails_with(3);
    printable(&run, "import");
    assert!(
        run.stderr.contains("unknown field `\\u{1b}]0;pwned\\u{7}`"),
        "{}",
        run.stderr
    );
    assert_eq!(env.json(&["links", "list"])["total"], 0);

    // A key beside the file's lists, which the streaming reader names itself.
    let file = env.write(
        "top.json",
        "{\"\\u001b[2Jextra\": true, \"links\": [{\"url\": \"https://example.com\"}]}",
    );
    let run = env.run(&["import", file.to_str().unwrap()]).fails_with(3);
    printable(&run, "import (a key beside the lists)");
    assert!(
        run.stderr.contains("unknown field `\\u{1b}[2Jextra`"),
        "{}",
        run.stderr
    );
}
