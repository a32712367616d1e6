//! TLS between linkdeck and PostgreSQL, against a cluster that offers it with a certificate of a
//! test root (`pg_cluster::tls_cluster`) and one that offers none (`pg_cluster::cluster`). What
//! the server says is the judge: `pg_stat_ssl` for the connections a service holds, and the
//! server's log of every connection authorised for a process that has ended (the CLI, `db
//! copy`, `serve`).

use std::process::Output;

use linkdeck::backend::local::pg::PgTarget;
use linkdeck::backend::local::{LocalOptions, LocalService, StoreLocation};
use reqwest::StatusCode;

use crate::Sandbox;
use crate::common::{client, location};
use crate::pg_cluster::{self, PASSWORD, PgCluster};

/// "The database is unavailable": every connection failure, TLS's included.
const UNAVAILABLE: i32 = 6;

/// A fresh database of the TLS cluster.
struct TlsDb {
    cluster: &'static PgCluster,
    name: String,
    /// Its URL without parameters.
    url: String,
}

fn tls_db() -> Option<TlsDb> {
    let cluster = pg_cluster::tls_cluster()?;
    let url = cluster.fresh_database();
    let name = url.rsplit_once('/').unwrap().1.to_owned();
    Some(TlsDb { cluster, name, url })
}

impl TlsDb {
    /// Its URL with `query`.
    fn with(&self, query: &str) -> String {
        format!("{}?{query}", self.url)
    }

    /// Its URL under `verify-full` with the test root.
    fn verified(&self) -> String {
        self.with(&format!(
            "sslmode=verify-full&sslrootcert={}",
            self.cluster.tls().root_cert.display()
        ))
    }

    /// How many connections linkdeck made to it so far, after checking that the server saw
    /// every one of them encrypted.
    fn all_encrypted(&self) -> usize {
        let lines = self.cluster.connections_to(&self.name);
        let ours: Vec<_> = lines
            .iter()
            .filter(|l| l.contains("application_name=linkdeck"))
            .collect();
        assert!(
            !ours.is_empty(),
            "no connection of linkdeck's logged: {lines:#?}"
        );
        let plain: Vec<_> = ours.iter().filter(|l| !l.contains("SSL enabled")).collect();
        assert!(plain.is_empty(), "connections without TLS: {plain:#?}");
        ours.len()
    }
}

/// The embedded service on a database, and a plain connection of the test's own to the same
/// database (under no application name: not one of linkdeck's) from which the server is asked
/// about the service's connections.
struct Opened {
    service: LocalService,
    watcher: tokio_postgres::Client,
}

/// The embedded service on `url`, in this process.
async fn open(url: &str) -> Result<Opened, String> {
    let target = PgTarget::parse(url)?.with_password(PASSWORD);
    let service = LocalService::open_at(&StoreLocation::Postgres(target), LocalOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let (bare, _) = url.split_once('?').unwrap_or((url, ""));
    let mut config: tokio_postgres::Config = bare.parse().unwrap();
    config.password(PASSWORD);
    let (watcher, connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    Ok(Opened { service, watcher })
}

/// Whether the connections of the service's pool are encrypted, as the server sees them. One
/// connector makes them all, so they are all encrypted or none is.
async fn encrypted(opened: &Opened) -> bool {
    // A statement of the service's leaves a connection in its pool.
    opened.service.ping().await.unwrap();
    let (tls, all) = held(opened).await;
    assert!(
        tls == 0 || tls == all,
        "{tls} of {all} connections encrypted"
    );
    tls > 0
}

/// Of the connections linkdeck holds open to the service's database now (the pool's and the
/// change listener's): how many are encrypted, and how many there are.
async fn held(opened: &Opened) -> (i64, i64) {
    let row = opened
        .watcher
        .query_one(
            "SELECT count(*) FILTER (WHERE s.ssl), count(*)
               FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
              WHERE a.datname = current_database() AND a.application_name = 'linkdeck'",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// A command that must fail as "unavailable"; its standard error.
fn unavailable(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(UNAVAILABLE), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

#[tokio::test]
async fn require_encrypts_the_pool_and_the_change_listener() {
    let Some(db) = tls_db() else { return };
    let service = open(&db.with("sslmode=require")).await.unwrap();
    assert!(encrypted(&service).await, "sslmode=require");
    let (tls, all) = held(&service).await;
    assert!(all >= 2, "a pooled connection and the listener: {all}");
    assert_eq!(tls, all, "every connection held is encrypted");
}

#[tokio::test]
async fn prefer_is_the_default_and_encrypts_where_tls_is_offered_only() {
    let Some(db) = tls_db() else { return };
    let Some(plain) = pg_cluster::cluster() else {
        return;
    };
    for url in [db.url.clone(), db.with("sslmode=prefer")] {
        let service = open(&url).await.unwrap();
        assert!(encrypted(&service).await, "{url}");
    }
    let url = plain.fresh_database();
    for url in [url.clone(), format!("{url}?sslmode=prefer")] {
        let service = open(&url).await.unwrap();
        assert!(
            !encrypted(&service).await,
            "{url}: no TLS offered, none used"
        );
    }
}

#[tokio::test]
async fn disable_is_not_encrypted_even_where_tls_is_offered() {
    let Some(db) = tls_db() else { return };
    let service = open(&db.with("sslmode=disable")).await.unwrap();
    assert!(!encrypted(&service).await);
    assert_eq!(held(&service).await.0, 0, "no connection is encrypted");
}

#[test]
fn require_against_a_server_without_tls_fails_and_says_so() {
    let Some(plain) = pg_cluster::cluster() else {
        return;
    };
    let url = format!("{}?sslmode=require", plain.fresh_database());
    let sandbox = Sandbox::default();
    let stderr = unavailable(
        sandbox
            .linkdeck(&url)
            .args(["links", "list"])
            .output()
            .unwrap(),
    );
    let expected = format!(
        "the server at 127.0.0.1:{} does not offer TLS (sslmode=require)",
        plain.port()
    );
    assert!(stderr.contains(&expected), "{stderr}");
}

#[test]
fn verify_full_with_the_right_root_runs_the_cli_encrypted() {
    let Some(db) = tls_db() else { return };
    let sandbox = Sandbox::default();
    let url = db.verified();
    sandbox.run(
        &url,
        &[
            "links",
            "create",
            "https://example.com/tls",
            "--alias",
            "tls",
        ],
    );
    let list = sandbox.run(&url, &["--json", "links", "list"]);
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["total"], 1, "{list}");
    assert_eq!(list["items"][0]["alias"], "tls", "{list}");

    // The system's roots are the default: here, the test root given as SSL_CERT_FILE.
    let out = sandbox
        .linkdeck(&db.with("sslmode=verify-full"))
        .env("SSL_CERT_FILE", &db.cluster.tls().root_cert)
        .args(["links", "list"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("tls"));

    // A profile's settings, its root found beside the config file.
    let config = sandbox.config_dir();
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(&db.cluster.tls().root_cert, config.join("db-root.crt")).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[profiles.shared]\nbackend = \"local\"\ndb = \"{}\"\n\
             db_sslmode = \"verify-full\"\ndb_sslrootcert = \"db-root.crt\"\n",
            db.url
        ),
    )
    .unwrap();
    let out = sandbox
        .bare()
        .args(["--profile", "shared", "links", "list"])
        .current_dir("/")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("tls"));

    assert!(db.all_encrypted() >= 4, "each command connected");
}

#[test]
fn verify_full_refuses_a_wrong_root_or_host_and_says_which() {
    let Some(db) = tls_db() else { return };
    let sandbox = Sandbox::default();
    let files = db.cluster.tls();
    let port = db.cluster.port();
    let list = |url: &str| {
        sandbox
            .linkdeck(url)
            .args(["links", "list"])
            .output()
            .unwrap()
    };

    let other = files.other_root_cert.display();
    let stderr = unavailable(list(
        &db.with(&format!("sslmode=verify-full&sslrootcert={other}")),
    ));
    let expected = format!(
        "the certificate of the server at 127.0.0.1:{port} is not signed by the root \
         certificate in {other} (sslmode=verify-full)"
    );
    assert!(stderr.contains(&expected), "{stderr}");

    // The right server, reached by its address, under a name its certificate does not have.
    let root = files.root_cert.display();
    let elsewhere = |mode: &str| {
        format!(
            "postgres://{}@db.invalid:{port}/{}?hostaddr=127.0.0.1&sslmode={mode}&sslrootcert={root}",
            pg_cluster::USER,
            db.name
        )
    };
    let stderr = unavailable(list(&elsewhere("verify-full")));
    let expected = format!(
        "the certificate of the server at db.invalid:{port} is not valid for db.invalid \
         (it names localhost, 127.0.0.1) (sslmode=verify-full)"
    );
    assert!(stderr.contains(&expected), "{stderr}");
    // verify-ca checks the chain only, as libpq's does.
    let out = list(&elsewhere("verify-ca"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let missing = sandbox.config_dir().join("no-such-root.crt");
    let stderr = unavailable(list(&db.with(&format!(
        "sslmode=verify-ca&sslrootcert={}",
        missing.display()
    ))));
    assert!(
        stderr.contains(&format!("cannot read sslrootcert {}", missing.display())),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_on_a_verified_connection_serves_a_redirect() {
    let Some(db) = tls_db() else { return };
    let sandbox = Sandbox::default();
    let url = db.verified();
    sandbox.run(
        &url,
        &[
            "links",
            "create",
            "https://example.com/served",
            "--alias",
            "served",
        ],
    );
    let server = sandbox.serve(&url);
    let http = client();
    let health = http.get(server.url("/api/health")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let r = http.get(server.url("/served")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(location(&r), "https://example.com/served");
    let log = server.stop();
    assert!(!log.contains("WARN") && !log.contains("ERROR"), "{log}");
    assert!(
        db.all_encrypted() >= 3,
        "the CLI, the server's pool and its listener"
    );
}

#[test]
fn db_copy_writes_to_postgresql_over_verified_tls() {
    let Some(db) = tls_db() else { return };
    let sandbox = Sandbox::default();
    let file = sandbox.config_dir().with_file_name("from.db");
    let file = file.to_str().unwrap();
    sandbox.run(
        file,
        &[
            "links",
            "create",
            "https://example.com/copied",
            "--alias",
            "copied",
        ],
    );
    let url = db.verified();
    let out = sandbox
        .bare()
        .args(["db", "copy", "--from", file, "--to", &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(sandbox.run(&url, &["links", "list"]).contains("copied"));
    db.all_encrypted();
}
