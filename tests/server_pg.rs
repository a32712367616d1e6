//! `linkdeck serve` on PostgreSQL: several servers on one database behaving as one. `instances`
//! runs the real binary twice against one database of a throwaway cluster (exact click limits,
//! rotation in turn, edits seen by the other server, keys made by the CLI, nothing lost on
//! SIGTERM); `quota` follows a limited link's count through edits, the trash and an upgrade
//! of the schema; `store` holds the PostgreSQL store's traffic to SQLite's answers and lets two
//! click writers race; `tls` connects to a cluster with TLS under each `sslmode`, from the
//! service, the CLI, `db copy` and `serve`; `webhooks` delivers to a real receiver through
//! refusals and restarts (on a SQLite file, which needs no PostgreSQL) and from two servers on
//! one database, each event once.
//!
//! Without PostgreSQL these tests say why and pass (see `tests/pg_cluster`).

mod common;
mod pg_cluster;
mod raw;

#[path = "server_pg/instances.rs"]
mod instances;
#[path = "server_pg/quota.rs"]
mod quota;
#[path = "server_pg/store.rs"]
mod store;
#[path = "server_pg/tls.rs"]
mod tls;
#[path = "server_pg/webhooks.rs"]
mod webhooks;

use std::process::{Command, Stdio};

use linkdeck::backend::local::pg::PgTarget;
use linkdeck::backend::local::{LocalOptions, LocalService, StoreLocation};
use linkdeck::domain::Id;
use tokio_postgres::{Client, NoTls};

/// A fresh database of the test cluster, and a superuser connection to it for what the
/// service cannot do yet on PostgreSQL (links are made with SQL here) and for reading back
/// what was stored.
pub struct Database {
    pub url: String,
    pub sql: Client,
}

/// A fresh database, or `None` when PostgreSQL is not installed (the test then passes).
pub async fn database() -> Option<Database> {
    let url = pg_cluster::cluster()?.fresh_database();
    let mut config: tokio_postgres::Config = url.parse().unwrap();
    config.password(pg_cluster::PASSWORD);
    let (sql, connection) = config.connect(NoTls).await.unwrap();
    tokio::spawn(connection);
    Some(Database { url, sql })
}

impl Database {
    /// The embedded service on this database, in this process.
    pub async fn service(&self, opts: LocalOptions) -> LocalService {
        let target = PgTarget::parse(&self.url)
            .unwrap()
            .with_password(pg_cluster::PASSWORD);
        LocalService::open_at(&StoreLocation::Postgres(target), opts)
            .await
            .unwrap()
    }

    /// A superuser connection to the cluster's `postgres` database, for what is done to this
    /// database from outside (dropping it).
    pub async fn admin(&self) -> Client {
        let (base, _) = self.url.rsplit_once('/').unwrap();
        let mut config: tokio_postgres::Config = format!("{base}/postgres").parse().unwrap();
        config.password(pg_cluster::PASSWORD);
        let (sql, connection) = config.connect(NoTls).await.unwrap();
        tokio::spawn(connection);
        sql
    }

    /// The id of owner `name`.
    pub async fn owner(&self, name: &str) -> Id {
        self.sql
            .query_one("SELECT id FROM owners WHERE name = $1", &[&name])
            .await
            .unwrap()
            .get(0)
    }

    /// Adds a link of `owner` without a domain: `limit` clicks at most (0 for none), rotating
    /// over `rotation` when it is not empty.
    pub async fn link(
        &self,
        owner: Id,
        alias: &str,
        url: &str,
        limit: i64,
        rotation: &[&str],
    ) -> Id {
        let (target, rotation) = if rotation.is_empty() {
            (0i16, None)
        } else {
            (3i16, Some(serde_json::to_string(rotation).unwrap()))
        };
        self.sql
            .query_one(
                "INSERT INTO links (owner_id, alias, url, expiration_clicks, target_type,
                                    rotation_target, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, 0, 0) RETURNING id",
                &[&owner, &alias, &url, &limit, &target, &rotation],
            )
            .await
            .unwrap()
            .get(0)
    }

    /// A link's stored clicks and logged visits.
    pub async fn clicks(&self, link: Id) -> (i64, i64) {
        let row = self
            .sql
            .query_one(
                "SELECT (SELECT clicks FROM links WHERE id = $1),
                        (SELECT count(*) FROM visit_log WHERE link_id = $1)",
                &[&link],
            )
            .await
            .unwrap();
        (row.get(0), row.get(1))
    }
}

/// Where the binary keeps its files in a test: nowhere near the user's own.
pub struct Sandbox(tempfile::TempDir);

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox(tempfile::tempdir().unwrap())
    }
}

impl Sandbox {
    /// `linkdeck --db URL` with the cluster's password in its environment.
    pub fn linkdeck(&self, url: &str) -> Command {
        let mut cmd = self.bare();
        cmd.arg("--db").arg(url);
        cmd
    }

    /// `linkdeck` with the cluster's password in its environment and its config in
    /// [`Sandbox::config_dir`].
    pub fn bare(&self) -> Command {
        let root = self.0.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_linkdeck"));
        cmd.envs(pg_cluster::password_env())
            .env("XDG_CONFIG_HOME", root.join("config"))
            .env("XDG_DATA_HOME", root.join("data"))
            .env("XDG_STATE_HOME", root.join("state"))
            .env("HOME", root)
            .env_remove("LINKDECK_LOG");
        cmd
    }

    /// The directory of the binary's `config.toml`.
    pub fn config_dir(&self) -> std::path::PathBuf {
        self.0.path().join("config").join("linkdeck")
    }

    /// Runs a command to its end; its standard output, or a panic with its error.
    pub fn run(&self, url: &str, args: &[&str]) -> String {
        let out = self.linkdeck(url).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "linkdeck {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The sandbox's own folder.
    pub fn path(&self) -> &std::path::Path {
        self.0.path()
    }

    /// `linkdeck serve` on a free loopback port, once it says it listens.
    pub fn serve(&self, url: &str) -> Server {
        self.serve_with(url, &[])
    }

    /// [`Sandbox::serve`] with these variables in its environment.
    pub fn serve_with(&self, url: &str, env: &[(&str, &str)]) -> Server {
        let mut child = self
            .linkdeck(url)
            .envs(env.iter().copied())
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut server = Server {
            child,
            base: String::new(),
            log: None,
        };
        match common::listening_on(stderr) {
            Ok((base, log)) => {
                server.base = base;
                server.log = Some(log);
                server
            }
            Err(seen) => panic!("serve exited before it listened:\n{seen}"),
        }
    }
}

/// A running `linkdeck serve`, stopped with SIGTERM when dropped (also when a test fails).
pub struct Server {
    child: std::process::Child,
    pub base: String,
    log: Option<std::thread::JoinHandle<String>>,
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Stops the server as a service manager would (SIGTERM) and waits for it; its log. The
    /// server must exit successfully.
    pub fn stop(mut self) -> String {
        self.terminate();
        let status = self.child.wait().unwrap();
        let log = self
            .log
            .take()
            .map(|l| l.join().unwrap())
            .unwrap_or_default();
        assert!(status.success(), "serve exited with {status}:\n{log}");
        log
    }

    /// Kills the server outright (SIGKILL): nothing it holds in memory is written.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.log.take();
    }

    fn terminate(&self) {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.log.is_some() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
            let _ = self.child.wait();
        }
    }
}
