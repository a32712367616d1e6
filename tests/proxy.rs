//! `linkdeck serve` behind a real nginx (docs/PROXY.md): the `location` block that page ships is
//! read from it and run, in front of the real binary, all on loopback. Visitors are told apart
//! by their address — seen through the allowance the server counts per visitor, which the API
//! reports in `X-RateLimit-Remaining` to a request without a key — so `127.0.0.2` and
//! `127.0.0.3` are two visitors behind the one proxy at `127.0.0.1`.
//!
//! Without nginx these tests say why and pass; with `LINKDECK_REQUIRE_NGINX=1` (as CI sets it)
//! they fail instead.

mod common;
mod raw;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{client, client_from, listening_on};

const REQUIRE: &str = "LINKDECK_REQUIRE_NGINX";
/// Requests per visitor per minute: small, so that a visitor's allowance runs out quickly.
const ALLOWANCE: u32 = 5;

fn nginx() -> Option<PathBuf> {
    let installed = PathBuf::from("/usr/sbin/nginx");
    if installed.is_file() {
        return Some(installed);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("nginx"))
            .find(|p| p.is_file())
    })
}

/// The `location / { … }` block of docs/PROXY.md's nginx example, with `proxy_pass` sent to
/// `upstream` instead of the page's `127.0.0.1:8080`.
fn documented_location(upstream: &str) -> String {
    let page = include_str!("../docs/PROXY.md");
    let example = page
        .split("```nginx\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/PROXY.md has an nginx example");
    let mut block = Vec::new();
    let mut depth = 0;
    for line in example.lines() {
        if block.is_empty() && line.trim() != "location / {" {
            continue;
        }
        depth += line.matches('{').count();
        depth -= line.matches('}').count();
        block.push(line);
        if depth == 0 {
            break;
        }
    }
    let block = block.join("\n");
    let documented = "proxy_pass http://127.0.0.1:8080;";
    assert!(
        block.contains(documented) && block.contains("$proxy_add_x_forwarded_for"),
        "docs/PROXY.md's location block changed shape: {block}"
    );
    block.replace(documented, &format!("proxy_pass http://{upstream};"))
}

/// A port free on 127.0.0.1 a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `linkdeck serve` and an nginx in front of it, stopped when dropped.
struct Stack {
    _dir: tempfile::TempDir,
    server: Child,
    nginx: Child,
    /// linkdeck itself.
    direct: String,
    /// Through nginx.
    proxied: String,
}

impl Drop for Stack {
    fn drop(&mut self) {
        let _ = self.nginx.kill();
        let _ = self.nginx.wait();
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl Stack {
    /// `serve` with `serve_config` under `[serve]`, behind nginx; `None` (said why) when nginx
    /// is absent and not required.
    fn start(test: &str, serve_config: &str) -> Option<Stack> {
        let Some(nginx) = nginx() else {
            let why = "nginx is not installed (Debian's nginx package)";
            if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") {
                panic!("{test}: {why}, and {REQUIRE}=1 requires it");
            }
            eprintln!("skipping {test}: {why}");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            format!("[serve]\nrate_limit_per_minute = {ALLOWANCE}\n{serve_config}\n"),
        )
        .unwrap();
        let mut server = Command::new(env!("CARGO_BIN_EXE_linkdeck"))
            .arg("--config")
            .arg(&config)
            .arg("--db")
            .arg(dir.path().join("links.db"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("xdg-config"))
            .env("XDG_DATA_HOME", dir.path().join("xdg-data"))
            .env("XDG_STATE_HOME", dir.path().join("xdg-state"))
            .env_remove("LINKDECK_LOG")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (direct, _log) = match listening_on(server.stderr.take().unwrap()) {
            Ok(listening) => listening,
            Err(log) => {
                let _ = server.wait();
                panic!("serve exited early:\n{log}");
            }
        };
        let upstream = direct.trim_start_matches("http://").to_owned();
        let port = free_port();
        let conf = nginx_conf(dir.path(), port, &documented_location(&upstream));
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let error_log = dir.path().join("error.log");
        let mut nginx = Command::new(nginx)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .arg("-e")
            .arg(&error_log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            let exited = nginx.try_wait().unwrap().is_some();
            if exited || started.elapsed() > Duration::from_secs(10) {
                let _ = nginx.kill();
                let _ = server.kill();
                panic!(
                    "nginx did not listen on 127.0.0.1:{port}:\n{}",
                    std::fs::read_to_string(&error_log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Stack {
            _dir: dir,
            server,
            nginx,
            direct,
            proxied: format!("http://127.0.0.1:{port}"),
        })
    }
}

/// nginx in the foreground as one process, every file it writes in `dir`, listening on
/// 127.0.0.1 only, the documented `location` its only one.
fn nginx_conf(dir: &Path, port: u16, location: &str) -> String {
    let d = dir.display();
    format!(
        "daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{port};
        server_name sho.rt;
{location}
    }}
}}
"
    )
}

/// What the server still allows the visitor of one request without a key: the API answers 401
/// with `X-RateLimit-Remaining`, or 429 once the visitor's allowance is spent (`None`).
async fn remaining(http: &reqwest::Client, base: &str, forwarded_for: Option<&str>) -> Option<u32> {
    let mut request = http
        .get(format!("{base}/api/v1/links"))
        .header("accept", "application/json");
    if let Some(claimed) = forwarded_for {
        request = request.header("x-forwarded-for", claimed);
    }
    let response = request.send().await.unwrap();
    match response.status().as_u16() {
        401 => Some(
            response.headers()["x-ratelimit-remaining"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap(),
        ),
        429 => None,
        other => panic!("{base}: {other} {}", response.text().await.unwrap()),
    }
}

#[tokio::test]
async fn behind_nginx_each_visitor_is_their_own_address() {
    let test = "behind_nginx_each_visitor_is_their_own_address";
    let Some(stack) = Stack::start(test, "trusted_proxies = [\"127.0.0.1\"]") else {
        return;
    };
    let proxied = stack.proxied.as_str();
    let (first, second) = (client_from(2), client_from(3));
    let left = ALLOWANCE - 1;

    // Two visitors behind the same proxy: an allowance each.
    assert_eq!(remaining(&first, proxied, None).await, Some(left));
    assert_eq!(remaining(&first, proxied, None).await, Some(left - 1));
    assert_eq!(remaining(&second, proxied, None).await, Some(left));

    // A visitor naming another address in their own X-Forwarded-For gains nothing: nginx
    // appends theirs, and theirs is the first untrusted one from the right.
    assert_eq!(
        remaining(&first, proxied, Some("203.0.113.7")).await,
        Some(left - 2)
    );
    assert_eq!(
        remaining(&second, proxied, Some("198.51.100.1, 127.0.0.1")).await,
        Some(left - 1)
    );

    // A client on the proxy's own address (trusted, like a proxy in front of this one) is
    // passed over, and the address it names is the visitor: each its own allowance.
    let local = client();
    assert_eq!(
        remaining(&local, proxied, Some("203.0.113.7")).await,
        Some(left)
    );
    assert_eq!(
        remaining(&local, proxied, Some("203.0.113.7")).await,
        Some(left - 1)
    );
    assert_eq!(
        remaining(&local, proxied, Some("198.51.100.9")).await,
        Some(left)
    );

    // One visitor spending their allowance shuts out only themselves.
    assert_eq!(remaining(&first, proxied, None).await, Some(1));
    assert_eq!(remaining(&first, proxied, None).await, Some(0));
    assert_eq!(remaining(&first, proxied, None).await, None);
    assert_eq!(remaining(&second, proxied, None).await, Some(left - 2));

    // Straight to linkdeck, a client that is no trusted proxy names nobody: 127.0.0.2 is still
    // shut out, whatever it claims.
    assert_eq!(
        remaining(&first, &stack.direct, Some("203.0.113.99")).await,
        None
    );
}

#[tokio::test]
async fn without_trusted_proxies_every_visitor_is_the_proxy() {
    let test = "without_trusted_proxies_every_visitor_is_the_proxy";
    let Some(stack) = Stack::start(test, "") else {
        return;
    };
    let proxied = stack.proxied.as_str();
    let left = ALLOWANCE - 1;
    // One allowance for everyone who comes through nginx, whatever the header says.
    assert_eq!(remaining(&client_from(2), proxied, None).await, Some(left));
    assert_eq!(
        remaining(&client_from(3), proxied, None).await,
        Some(left - 1)
    );
    assert_eq!(
        remaining(&client(), proxied, Some("203.0.113.7")).await,
        Some(left - 2)
    );
    assert_eq!(
        remaining(&client_from(4), proxied, Some("198.51.100.9")).await,
        Some(left - 3)
    );
    // Straight to linkdeck, 127.0.0.2 is a visitor of its own.
    assert_eq!(
        remaining(&client_from(2), &stack.direct, None).await,
        Some(left)
    );
}
