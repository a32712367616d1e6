//! A real, throwaway PostgreSQL cluster for the tests of one test binary: `initdb` into a fresh
//! temporary directory, a superuser `linkdeck` with a password, scram-sha-256 over 127.0.0.1
//! only, settings that trade durability for speed. Each test takes its own empty database from
//! [`PgCluster::fresh_database`].
//!
//! Without PostgreSQL's server programs (Debian's `postgresql`) [`cluster`] says so once and
//! returns `None`, and the tests skip; with `LINKDECK_REQUIRE_POSTGRES=1` (as CI sets it) they
//! fail instead. `LINKDECK_PG_BINDIR` names the directory of `initdb`, `pg_ctl` and `postgres`
//! when they are somewhere unusual (or nowhere: `/nonexistent` shows what a machine without
//! them does).
//!
//! The password: a spawned `linkdeck` gets it from [`password_env`]; in-process tests pass
//! [`PASSWORD`] themselves. They must not `std::env::set_var` it: tests run on threads that
//! read the environment concurrently, which is why edition 2024 makes `set_var` unsafe.
//!
//! [`tls_cluster`] is a second cluster of the same kind with `ssl = on`, serving a certificate
//! for `localhost` and `127.0.0.1` made at start by a test root of its own ([`TlsFiles`]), and
//! logging every connection, so a test can see whether each one was encrypted. The certificates
//! come from `rcgen` (on aws-lc-rs, which rustls already brings) rather than the `openssl`
//! command: a PostgreSQL found through `LINKDECK_PG_BINDIR` or the `PATH` need not come with it.
//!
//! Statics are never dropped, so the cluster cannot be stopped from Rust: a detached watchdog
//! stops it and removes its directory once the test process is gone, however it ended.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The cluster's superuser, the role every URL names.
pub const USER: &str = "linkdeck";
/// Its password. Only the loopback TCP socket is open, so a constant is no risk.
pub const PASSWORD: &str = "linkdeck-test-password";
/// Set to 1 to make a missing PostgreSQL a failure rather than a skip.
pub const REQUIRE: &str = "LINKDECK_REQUIRE_POSTGRES";
/// Overrides where the server programs are looked for.
pub const BINDIR: &str = "LINKDECK_PG_BINDIR";

const PROGRAMS: [&str; 3] = ["initdb", "pg_ctl", "postgres"];

/// The environment a spawned `linkdeck` needs to log in to a URL of this cluster.
pub fn password_env() -> [(&'static str, &'static str); 1] {
    [("LINKDECK_DB_PASSWORD", PASSWORD)]
}

pub struct PgCluster {
    root: PathBuf,
    port: u16,
    databases: AtomicUsize,
    tls: Option<TlsFiles>,
}

/// The client's side of a TLS cluster's certificates, PEM files in the cluster's directory.
pub struct TlsFiles {
    /// The root that signed the server's certificate (for `localhost` and `127.0.0.1`).
    pub root_cert: PathBuf,
    /// A root that signed nothing the server has: `verify-*` with it must fail.
    pub other_root_cert: PathBuf,
}

enum Unavailable {
    /// The server programs are not installed: a skip, unless required.
    Missing(String),
    /// They are, but the cluster did not come up: always a failure.
    Failed(String),
}

/// The cluster of this test binary, started on first use; `None` (after one line on standard
/// error) when PostgreSQL is not installed and [`REQUIRE`] is not set.
pub fn cluster() -> Option<&'static PgCluster> {
    static CLUSTER: OnceLock<Result<PgCluster, Unavailable>> = OnceLock::new();
    started(&CLUSTER, false)
}

/// A second cluster of this test binary, with TLS (see the module's comment); `None` as for
/// [`cluster`].
pub fn tls_cluster() -> Option<&'static PgCluster> {
    static CLUSTER: OnceLock<Result<PgCluster, Unavailable>> = OnceLock::new();
    started(&CLUSTER, true)
}

fn started(
    cell: &'static OnceLock<Result<PgCluster, Unavailable>>,
    tls: bool,
) -> Option<&'static PgCluster> {
    let cluster = cell.get_or_init(|| {
        let bindir = find_bindir().map_err(Unavailable::Missing)?;
        PgCluster::start(&bindir, tls).map_err(Unavailable::Failed)
    });
    match cluster {
        Ok(cluster) => Some(cluster),
        Err(Unavailable::Failed(why)) => panic!("PostgreSQL test cluster: {why}"),
        Err(Unavailable::Missing(why)) if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") => {
            panic!("{why}, and {REQUIRE}=1 requires it")
        }
        Err(Unavailable::Missing(_)) => None,
    }
}

impl PgCluster {
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's directory: `data/`, the server's `log`, the socket in `sock/`.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The certificates of a [`tls_cluster`]; a panic on the plain one.
    pub fn tls(&self) -> &TlsFiles {
        self.tls
            .as_ref()
            .expect("a cluster from tls_cluster(), not cluster()")
    }

    /// The server log's lines for each connection authorised to database `db`, as PostgreSQL
    /// writes them with `log_connections` (a [`tls_cluster`] only): `… database=DB
    /// application_name=APP SSL enabled (protocol=…)` for an encrypted one.
    pub fn connections_to(&self, db: &str) -> Vec<String> {
        assert!(
            self.tls.is_some(),
            "only a tls_cluster() logs its connections"
        );
        let text = std::fs::read_to_string(self.root.join("log")).unwrap_or_default();
        // Followed by a space, or by nothing when there is no application name and no TLS.
        let (inside, last) = (format!(" database={db} "), format!(" database={db}"));
        text.lines()
            .filter(|l| l.contains("connection authorized:"))
            .filter(|l| l.contains(&inside) || l.ends_with(&last))
            .map(str::to_owned)
            .collect()
    }

    /// The URL of database `db`, without the password.
    pub fn url_of(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// A new, empty database (with pg_trgm, from template1) that no other test uses; its URL.
    pub fn fresh_database(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("test_{n}");
        // An identifier cannot be a parameter; the name is ours, made of [a-z0-9_].
        self.admin("postgres", &format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("creating database {name}: {e}"));
        self.url_of(&name)
    }

    /// Runs `sql` in database `db` as the superuser, over loopback TCP with the password. On a
    /// thread of its own with its own runtime, so that it works from synchronous tests and from
    /// inside a tokio runtime alike.
    fn admin(&self, db: &str, sql: &str) -> Result<(), String> {
        let mut config = tokio_postgres::Config::new();
        config
            .host("127.0.0.1")
            .port(self.port)
            .user(USER)
            .password(PASSWORD)
            .dbname(db);
        let sql = sql.to_owned();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("a runtime: {e}"))?;
            runtime.block_on(async {
                let (client, connection) = config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .map_err(|e| format!("connecting: {e}"))?;
                let connection = tokio::spawn(connection);
                let done = client.batch_execute(&sql).await.map_err(|e| e.to_string());
                drop(client);
                let _ = connection.await;
                done
            })
        })
        .join()
        .map_err(|_| "the admin thread panicked".to_string())?
    }

    fn start(bindir: &Path, with_tls: bool) -> Result<PgCluster, String> {
        let run_as = if running_as_root() {
            Some(unprivileged_user()?)
        } else {
            None
        };
        let root = tempfile::Builder::new()
            .prefix("linkdeck-pg-")
            .tempdir()
            .map_err(|e| format!("a temporary directory: {e}"))?
            .keep();
        // First, so that the directory goes even when a step below fails.
        start_watchdog(&root, &bindir.join("pg_ctl"), run_as.as_deref())?;

        let data = root.join("data");
        let pwfile = root.join("pwfile");
        std::fs::create_dir(root.join("sock")).map_err(|e| format!("the socket dir: {e}"))?;
        std::fs::write(&pwfile, PASSWORD).map_err(|e| format!("the password file: {e}"))?;
        // Made before the directory changes hands, so the server's user owns its key.
        let tls = with_tls.then(|| make_certificates(&root)).transpose()?;
        if let Some(user) = &run_as {
            run(Command::new("chown")
                .arg("-R")
                .arg(format!("{user}:"))
                .arg(&root))?;
        }
        let as_user = |program: &str| {
            let mut cmd = match &run_as {
                Some(user) => {
                    let mut cmd = Command::new("runuser");
                    cmd.args(["-u", user, "--"]).arg(bindir.join(program));
                    cmd
                }
                None => Command::new(bindir.join(program)),
            };
            // The user may not be allowed into the test's working directory.
            cmd.current_dir(&root);
            cmd
        };

        run(as_user("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", USER, "-A", "scram-sha-256", "-E", "UTF8", "--no-sync"])
            .arg(format!("--locale={}", locale()))
            .arg(format!("--pwfile={}", pwfile.display())))?;
        let _ = std::fs::remove_file(&pwfile);

        // Only the password over 127.0.0.1: no trust, no peer, no unix socket logins.
        std::fs::write(
            data.join("pg_hba.conf"),
            "host all all 127.0.0.1/32 scram-sha-256\n",
        )
        .map_err(|e| format!("pg_hba.conf: {e}"))?;
        let settings = format!(
            "\n# linkdeck tests: throwaway data, so no durability\n\
             listen_addresses = '127.0.0.1'\n\
             unix_socket_directories = '{}'\n\
             fsync = off\n\
             synchronous_commit = off\n\
             full_page_writes = off\n\
             max_connections = 200\n\
             shared_buffers = 32MB\n",
            root.join("sock").display()
        );
        append(&data.join("postgresql.conf"), &settings)?;
        if tls.is_some() {
            let settings = format!(
                "ssl = on\n\
                 ssl_cert_file = '{}'\n\
                 ssl_key_file = '{}'\n\
                 log_connections = on\n",
                root.join("server.crt").display(),
                root.join("server.key").display()
            );
            append(&data.join("postgresql.conf"), &settings)?;
        }

        // The free port is free only until someone takes it: another test binary's cluster
        // may, so a refused bind is tried again on another.
        let log = root.join("log");
        let mut port = 0;
        for attempt in 1..=5 {
            port = free_port()?;
            // pg_ctl appends: only this attempt's lines tell why it failed.
            let _ = std::fs::remove_file(&log);
            let started = run(as_user("pg_ctl")
                .args(["-w", "-t", "60", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-o", &format!("-p {port}"), "start"]));
            match started {
                Ok(()) => break,
                Err(_) if attempt < 5 && log_says(&log, "could not bind") => continue,
                Err(e) => return Err(format!("{e}\nserver log:\n{}", log_tail(&log))),
            }
        }
        let cluster = PgCluster {
            root,
            port,
            databases: AtomicUsize::new(0),
            tls,
        };
        // Every database is made from template1, so each test's has pg_trgm without asking.
        cluster
            .admin("template1", "CREATE EXTENSION IF NOT EXISTS pg_trgm")
            .map_err(|e| format!("pg_trgm in template1: {e}"))?;
        Ok(cluster)
    }
}

/// A test root, a server certificate it signs for `localhost` and `127.0.0.1` with its key
/// (readable by its owner only, which PostgreSQL insists on), and a second, unrelated root.
fn make_certificates(root: &Path) -> Result<TlsFiles, String> {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair, KeyUsagePurpose,
    };
    fn fail(what: &'static str) -> impl Fn(rcgen::Error) -> String {
        move |e| format!("the test certificates ({what}): {e}")
    }
    let authority = |name: &str| -> Result<CertifiedIssuer<'static, KeyPair>, String> {
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().map_err(fail("a root's key"))?;
        CertifiedIssuer::self_signed(params, key).map_err(fail("a root"))
    };
    let ca = authority("linkdeck test root")?;
    let other = authority("linkdeck unrelated root")?;
    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .map_err(fail("the server's names"))?;
    params
        .distinguished_name
        .push(DnType::CommonName, "linkdeck test server");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().map_err(fail("the server's key"))?;
    let cert = params.signed_by(&key, &ca).map_err(fail("the server's"))?;

    let write = |name: &str, text: &str| {
        let path = root.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok::<_, String>(path)
    };
    write("server.crt", &cert.pem())?;
    let key_file = write("server.key", &key.serialize_pem())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: {e}", key_file.display()))?;
    Ok(TlsFiles {
        root_cert: write("root.crt", &ca.pem())?,
        other_root_cert: write("other-root.crt", &other.pem())?,
    })
}

/// Where `initdb`, `pg_ctl` and `postgres` are: `$LINKDECK_PG_BINDIR`, else `pg_config
/// --bindir`, else the newest `/usr/lib/postgresql/*/bin`, else the `PATH`. The error says what
/// is missing and that the PostgreSQL tests are skipped.
fn find_bindir() -> Result<PathBuf, String> {
    let complete = |dir: &Path| PROGRAMS.iter().all(|p| dir.join(p).is_file());
    let missing = |place: &str| {
        let why = format!(
            "PostgreSQL's server programs ({}) are not in {place} (apt-get install postgresql)",
            PROGRAMS.join(", ")
        );
        if std::env::var_os(REQUIRE).is_none_or(|v| v != "1") {
            // Past the test harness's capture of eprintln!, which would hide it in a passing test.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "skipping the PostgreSQL tests: {why}");
        }
        why
    };
    if let Some(dir) = std::env::var_os(BINDIR) {
        let dir = PathBuf::from(dir);
        return match complete(&dir) {
            true => Ok(dir),
            false => Err(missing(&format!("{} ({BINDIR})", dir.display()))),
        };
    }
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let newest_debian = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version: f64 = e.file_name().to_str()?.parse().ok()?;
            Some((version, e.path().join("bin")))
        })
        .filter(|(_, dir)| complete(dir))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, dir)| dir);
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    from_pg_config
        .into_iter()
        .chain(newest_debian)
        .chain(on_path)
        .find(|dir| complete(dir))
        .ok_or_else(|| missing("`pg_config --bindir`, /usr/lib/postgresql/*/bin or the PATH"))
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Who runs the cluster when the tests run as root, which initdb and postgres refuse.
fn unprivileged_user() -> Result<String, String> {
    ["postgres", "nobody"]
        .into_iter()
        .find(|user| {
            Command::new("id")
                .arg(user)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(str::to_owned)
        .ok_or_else(|| {
            "running as root, and there is no `postgres` or `nobody` user to run PostgreSQL as"
                .into()
        })
}

/// C.UTF-8 where the system has it: pg_trgm takes only what LC_CTYPE calls letters into its
/// trigrams, and under plain C no letter beyond ASCII is one.
fn locale() -> &'static str {
    let has_c_utf8 = ["/usr/lib/locale/C.utf8", "/usr/lib/locale/C.UTF-8"]
        .iter()
        .any(|p| Path::new(p).exists());
    if has_c_utf8 { "C.UTF-8" } else { "C" }
}

/// A detached shell that waits for this process to end, then stops the cluster at once and
/// removes its directory. Its own process group, so that Ctrl-C on the tests does not end it.
fn start_watchdog(root: &Path, pg_ctl: &Path, run_as: Option<&str>) -> Result<(), String> {
    const SCRIPT: &str = r#"
        pid=$1 root=$2 pg_ctl=$3 user=$4
        while kill -0 "$pid" 2>/dev/null; do sleep 1; done
        if [ -f "$root/data/postmaster.pid" ]; then
            if [ -n "$user" ]; then
                runuser -u "$user" -- "$pg_ctl" stop -D "$root/data" -m immediate
            else
                "$pg_ctl" stop -D "$root/data" -m immediate
            fi
        fi
        rm -rf "$root"
    "#;
    std::os::unix::process::CommandExt::process_group(&mut Command::new("sh"), 0)
        .args(["-c", SCRIPT, "sh"])
        .arg(std::process::id().to_string())
        .arg(root)
        .arg(pg_ctl)
        .arg(run_as.unwrap_or(""))
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("the watchdog (sh): {e}"))
}

/// Runs `cmd` to completion; its output is the error when it fails.
fn run(cmd: &mut Command) -> Result<(), String> {
    let name = format!("{:?}", cmd.get_program());
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{name} did not run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy()).collect();
    Err(format!(
        "{name} {} failed ({}): {}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn append(file: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("{}: {e}", file.display()))
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("a free port on 127.0.0.1: {e}"))
}

fn log_says(log: &Path, what: &str) -> bool {
    std::fs::read_to_string(log).is_ok_and(|text| text.contains(what))
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<_> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
