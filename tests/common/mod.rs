//! Shared helpers for the server tests: a real `linkdeck serve` on an ephemeral loopback port
//! over a real database — a SQLite file in a temporary directory, or a PostgreSQL database
//! ([`Store`]) — a client that never follows redirects, and the address a `linkdeck serve` child
//! process says it listens on. What a test reads back from the database it reads through the
//! store-neutral helpers here, so that one test source runs on both stores.

#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::raw::RawDb;
use jiff::Timestamp;
use linkdeck::backend::local::pg::PgTarget;
use linkdeck::backend::local::{LocalOptions, LocalService, StoreLocation};
use linkdeck::domain::{FixedClock, Id};
use linkdeck::server::{ServeOptions, ServerHandle};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::Value;
use tempfile::TempDir;

/// Where a test's data lives.
#[derive(Clone)]
pub enum Store {
    /// A SQLite file in the test's temporary directory.
    Sqlite,
    /// A PostgreSQL database of its own: its URL, without the password, and the password
    /// (given in-process, never through the environment of this process).
    Postgres { url: String, password: String },
}

impl Store {
    /// Where the service opens this store; a SQLite file is `dir/file`.
    pub fn location(&self, dir: &Path, file: &str) -> StoreLocation {
        match self {
            Store::Sqlite => StoreLocation::File(dir.join(file)),
            Store::Postgres { url, password } => StoreLocation::Postgres(
                PgTarget::parse(url)
                    .unwrap()
                    .with_password(password.clone()),
            ),
        }
    }

    /// The same store for the real binary: its `--db` argument and the environment it needs.
    pub fn for_binary(&self, dir: &Path, file: &str) -> BinaryDb {
        match self {
            Store::Sqlite => BinaryDb {
                arg: dir.join(file).into_os_string(),
                env: Vec::new(),
            },
            Store::Postgres { url, password } => BinaryDb {
                arg: url.into(),
                env: vec![("LINKDECK_DB_PASSWORD", password.clone())],
            },
        }
    }
}

/// A database as the real binary is told of it.
pub struct BinaryDb {
    /// What follows `--db`.
    pub arg: OsString,
    /// What the binary's environment must hold besides (the PostgreSQL password).
    pub env: Vec<(&'static str, String)>,
}

impl BinaryDb {
    /// Gives `cmd` this database: `--db …` and its environment.
    pub fn apply<'c>(&self, cmd: &'c mut std::process::Command) -> &'c mut std::process::Command {
        cmd.arg("--db")
            .arg(&self.arg)
            .envs(self.env.iter().map(|(k, v)| (*k, v)))
    }
}

/// A logged visit: (country, platform, referrer, language).
pub type LoggedVisit = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// Writes kept out of a test's database by another connection ([`TestServer::hold_writes`]).
pub enum WriteHold {
    Sqlite(rusqlite::Connection),
    Postgres(tokio_postgres::Client),
}

impl WriteHold {
    /// Lets the writes in again.
    pub async fn release(self) {
        match self {
            WriteHold::Sqlite(conn) => conn.execute_batch("ROLLBACK").unwrap(),
            WriteHold::Postgres(client) => client.batch_execute("ROLLBACK").await.unwrap(),
        }
    }
}

pub struct TestServer {
    pub dir: TempDir,
    pub location: StoreLocation,
    pub service: LocalService,
    /// The same database through connections of the test's own.
    pub raw: RawDb,
    pub clock: Arc<FixedClock>,
    pub handle: Option<ServerHandle>,
    pub base: String,
    pub client: reqwest::Client,
    pub owner_id: Id,
    pub key: String,
}

/// 2030-01-01T00:00:00Z: "now" for every test, moved on purpose when expiry is tested.
pub fn start_time() -> Timestamp {
    "2030-01-01T00:00:00Z".parse().unwrap()
}

/// What a person's browser says it is: requests without a User-Agent are scripts, not visits.
pub const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";

/// A client that never follows redirects and introduces itself as a browser.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(BROWSER)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A client like [`client`] whose requests come from `127.0.0.N`: distinct visitors on
/// loopback.
pub fn client_from(n: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(BROWSER)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .local_address(std::net::IpAddr::from([127, 0, 0, n]))
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(ServeOptions::default()).await
    }

    pub async fn start_with(opts: ServeOptions) -> TestServer {
        Self::start_on(Store::Sqlite, opts).await
    }

    /// A server over `store`, with an owner `alice` and a key of hers.
    pub async fn start_on(store: Store, mut opts: ServeOptions) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(start_time()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let location = store.location(dir.path(), "linkdeck.db");
        let service = LocalService::open_at(
            &location,
            LocalOptions {
                public_url: base.clone(),
                clock: clock.clone(),
                ..LocalOptions::default()
            },
        )
        .await
        .unwrap();
        let owner = service.add_owner("alice").await.unwrap();
        let (key, _) = service.create_key(owner.id, Some("tests")).await.unwrap();
        if opts.public_url.is_empty() {
            opts.public_url = base.clone();
        }
        let handle = linkdeck::server::start(service.clone(), opts, listener)
            .await
            .unwrap();
        TestServer {
            dir,
            raw: RawDb::new(location.clone()),
            location,
            service,
            clock,
            handle: Some(handle),
            base,
            client: client(),
            owner_id: owner.id,
            key,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// An API request with this server's key and `Accept: application/json`.
    pub fn api(&self, method: Method, path: &str) -> RequestBuilder {
        self.api_as(&self.key, method, path)
    }

    pub fn api_as(&self, key: &str, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(key)
            .header("accept", "application/json")
    }

    /// A new owner and a key for it.
    pub async fn other_owner(&self, name: &str) -> (Id, String) {
        let owner = self.service.add_owner(name).await.unwrap();
        let (key, _) = self.service.create_key(owner.id, None).await.unwrap();
        (owner.id, key)
    }

    /// Creates a link through the API; panics with the answer if it is not a 201.
    pub async fn create_link(&self, fields: &[(&str, &str)]) -> Value {
        let response = self
            .api(Method::POST, "/api/v1/links")
            .form(fields)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, StatusCode::CREATED, "creating {fields:?}: {body}");
        body["data"].clone()
    }

    /// `GET /{alias}` as a browser would send it (never following the redirect).
    pub async fn visit(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        let mut request = self.client.get(self.url(path));
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
        {
            request = request.header(
                "user-agent",
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
            );
        }
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        request.send().await.unwrap()
    }

    /// Stops the server gracefully (every counted click written).
    pub async fn stop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.shutdown().await.unwrap();
        }
    }

    /// Another service on this server's database, with connections of its own: what the
    /// terminal app or the CLI in another process would open.
    pub async fn another_service(&self) -> LocalService {
        LocalService::open_at(&self.location, LocalOptions::default())
            .await
            .unwrap()
    }

    /// Whether this server runs on PostgreSQL.
    pub fn on_postgres(&self) -> bool {
        matches!(self.location, StoreLocation::Postgres(_))
    }

    /// A link's clicks and visit rows as stored in the database.
    pub async fn stored_clicks(&self, link_id: Id) -> (i64, i64) {
        if let Some(pg) = self.raw.pg().await {
            let row = pg
                .client()
                .await
                .unwrap()
                .query_one(
                    "SELECT (SELECT clicks FROM links WHERE id = $1),
                            (SELECT count(*) FROM visit_log WHERE link_id = $1)",
                    &[&link_id],
                )
                .await
                .unwrap();
            return (row.get(0), row.get(1));
        }
        self.raw
            .sqlite()
            .await
            .read(move |conn| {
                let clicks: i64 = conn
                    .query_row("SELECT clicks FROM links WHERE id = ?1", [link_id], |r| {
                        r.get(0)
                    })
                    .unwrap();
                let visits: i64 = conn
                    .query_row(
                        "SELECT count(*) FROM visit_log WHERE link_id = ?1",
                        [link_id],
                        |r| r.get(0),
                    )
                    .unwrap();
                Ok((clicks, visits))
            })
            .await
            .unwrap()
    }

    /// The visit rows of a link: (country, platform, referrer, language).
    pub async fn visits(&self, link_id: Id) -> Vec<LoggedVisit> {
        const SELECT: &str = "SELECT country, platform, referrer, language FROM visit_log";
        if let Some(pg) = self.raw.pg().await {
            let sql = format!("{SELECT} WHERE link_id = $1 ORDER BY id");
            let rows = pg
                .client()
                .await
                .unwrap()
                .query(&sql, &[&link_id])
                .await
                .unwrap();
            return rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                .collect();
        }
        self.raw
            .sqlite()
            .await
            .read(move |conn| {
                let mut stmt = conn
                    .prepare(&format!("{SELECT} WHERE link_id = ?1 ORDER BY id"))
                    .unwrap();
                let rows = stmt
                    .query_map([link_id], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                    })
                    .unwrap()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap();
                Ok(rows)
            })
            .await
            .unwrap()
    }

    /// Every visit row in the log, of whichever link.
    pub async fn logged_visits(&self) -> i64 {
        self.count("SELECT count(*) FROM visit_log").await
    }

    /// The one number `sql` answers, on either store.
    async fn count(&self, sql: &'static str) -> i64 {
        if let Some(pg) = self.raw.pg().await {
            let client = pg.client().await.unwrap();
            return client.query_one(sql, &[]).await.unwrap().get(0);
        }
        self.raw
            .sqlite()
            .await
            .read(move |conn| Ok(conn.query_row(sql, [], |r| r.get(0)).unwrap()))
            .await
            .unwrap()
    }

    /// The rows of orphan visits' paths, of every host and day.
    pub async fn orphan_path_rows(&self) -> i64 {
        self.count("SELECT count(*) FROM orphan_traffic WHERE dim = 4")
            .await
    }

    /// The API keys as stored: (digest, prefix) of each.
    pub async fn stored_keys(&self) -> Vec<(Vec<u8>, String)> {
        const SQL: &str = "SELECT digest, prefix FROM api_keys ORDER BY id";
        if let Some(pg) = self.raw.pg().await {
            let client = pg.client().await.unwrap();
            let rows = client.query(SQL, &[]).await.unwrap();
            return rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        }
        self.raw
            .sqlite()
            .await
            .read(|conn| {
                let mut stmt = conn.prepare(SQL).unwrap();
                Ok(stmt
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap())
            })
            .await
            .unwrap()
    }

    /// How many bytes the database takes: SQLite's pages (after a checkpoint), or what
    /// PostgreSQL says this database's files hold.
    pub async fn stored_bytes(&self) -> u64 {
        if let Some(pg) = self.raw.pg().await {
            let client = pg.client().await.unwrap();
            let row = client
                .query_one("SELECT pg_database_size(current_database())", &[])
                .await
                .unwrap();
            return row.get::<_, i64>(0) as u64;
        }
        self.raw
            .sqlite()
            .await
            .write(|tx| {
                let pages: i64 = tx.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
                let size: i64 = tx.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
                Ok((pages * size) as u64)
            })
            .await
            .unwrap()
    }

    /// The files the database has written on disk, everything written so far in them: the
    /// SQLite file and its write-ahead log; on PostgreSQL, after a checkpoint, this database's
    /// files and the cluster's write-ahead log.
    pub async fn files_on_disk(&self) -> Vec<PathBuf> {
        let Some(pg) = self.raw.pg().await else {
            let db = self.dir.path().join("linkdeck.db");
            return vec![db.clone(), db.with_extension("db-wal")];
        };
        let client = pg.client().await.unwrap();
        client.batch_execute("CHECKPOINT").await.unwrap();
        let row = client
            .query_one(
                "SELECT current_setting('data_directory'), oid::text FROM pg_database
                 WHERE datname = current_database()",
                &[],
            )
            .await
            .unwrap();
        let data = PathBuf::from(row.get::<_, String>(0));
        let mut files = Vec::new();
        for dir in [
            data.join("base").join(row.get::<_, String>(1)),
            data.join("pg_wal"),
        ] {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    files.push(path);
                }
            }
        }
        files
    }

    /// Another connection that keeps every write of a link out until released, as another
    /// program in a long write would: an exclusive transaction on SQLite; on PostgreSQL an
    /// `EXCLUSIVE` lock on `links`, which lets reads go on but makes every writer of a link wait.
    pub async fn hold_writes(&self) -> WriteHold {
        match &self.location {
            StoreLocation::File(path) => {
                let conn = rusqlite::Connection::open(path).unwrap();
                conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
                WriteHold::Sqlite(conn)
            }
            StoreLocation::Postgres(target) => {
                let (client, connection) = target
                    .config()
                    .connect(tokio_postgres::NoTls)
                    .await
                    .unwrap();
                tokio::spawn(connection);
                client
                    .batch_execute("BEGIN; LOCK TABLE links IN EXCLUSIVE MODE")
                    .await
                    .unwrap();
                WriteHold::Postgres(client)
            }
        }
    }

    /// Waits (under a timeout, no fixed sleep) until the link's stored clicks reach `n`.
    pub async fn wait_for_clicks(&self, link_id: Id, n: i64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let (clicks, _) = self.stored_clicks(link_id).await;
            if clicks >= n {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "clicks stayed at {clicks}, wanted {n}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub async fn json(response: Response) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("status {status}: not JSON ({e}): {text}"));
    (status, headers, body)
}

pub fn location(response: &Response) -> String {
    response
        .headers()
        .get("location")
        .unwrap_or_else(|| panic!("no Location in a {} answer", response.status()))
        .to_str()
        .unwrap()
        .to_owned()
}

/// A minimal MaxMind DB (IPv4, one tree node) that places every address in `country`: enough
/// to exercise the database lookup without shipping a real GeoIP file.
pub fn tiny_geoip_db(path: &std::path::Path, country: &str) {
    assert_eq!(country.len(), 2);
    fn string(out: &mut Vec<u8>, s: &str) {
        out.push(0x40 | s.len() as u8);
        out.extend_from_slice(s.as_bytes());
    }
    let mut db = Vec::new();
    // Search tree: node 0, both 24-bit records point at data offset 0 (node_count + 16 + 0).
    db.extend_from_slice(&[0, 0, 17, 0, 0, 17]);
    db.extend_from_slice(&[0; 16]);
    // Data: {"country": {"iso_code": country}}
    db.push(0xE1);
    string(&mut db, "country");
    db.push(0xE1);
    string(&mut db, "iso_code");
    string(&mut db, country);
    // Metadata.
    db.extend_from_slice(b"\xAB\xCD\xEFMaxMind.com");
    db.push(0xE9);
    string(&mut db, "node_count");
    db.extend_from_slice(&[0xC1, 1]);
    string(&mut db, "record_size");
    db.extend_from_slice(&[0xA1, 24]);
    string(&mut db, "ip_version");
    db.extend_from_slice(&[0xA1, 4]);
    string(&mut db, "database_type");
    string(&mut db, "Test-Country");
    string(&mut db, "languages");
    db.extend_from_slice(&[0x00, 0x04]);
    string(&mut db, "binary_format_major_version");
    db.extend_from_slice(&[0xA1, 2]);
    string(&mut db, "binary_format_minor_version");
    db.extend_from_slice(&[0xA0]);
    string(&mut db, "build_epoch");
    db.extend_from_slice(&[0x01, 0x02, 1]);
    string(&mut db, "description");
    db.push(0xE0);
    std::fs::write(path, db).unwrap();
}

/// Reads a `linkdeck serve` child's stderr up to its `listening on URL` line and returns the URL,
/// with a thread that keeps reading the rest (so the server never blocks on a full pipe) and
/// returns it once the child has closed it. `Err` holds everything the child wrote when it
/// exited before listening.
pub fn listening_on(
    stderr: std::process::ChildStderr,
) -> Result<(String, std::thread::JoinHandle<String>), String> {
    use std::io::{BufRead, BufReader, Read};
    let mut stderr = BufReader::new(stderr);
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = stderr
            .read_line(&mut line)
            .expect("reading the log of serve");
        if read == 0 {
            return Err(seen);
        }
        seen.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("listening on ") {
            let base = url.to_owned();
            let rest = std::thread::spawn(move || {
                let mut rest = String::new();
                let _ = stderr.read_to_string(&mut rest);
                rest
            });
            return Ok((base, rest));
        }
    }
}
