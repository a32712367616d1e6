//! `bare-hyper LINKS_FILE ADDR`: answers `GET /{alias}` with `301` and `Location` from an
//! in-memory map read from LINKS_FILE (one `alias<TAB>url` a line), `404` otherwise. Prints
//! `listening on http://ADDR` on stderr once bound. The ceiling for `scripts/bench-redirect`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::Empty;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, LOCATION};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

type Links = HashMap<Box<str>, HeaderValue>;

fn answer(links: &Links, req: &Request<Incoming>) -> Response<Empty<Bytes>> {
    let alias = req.uri().path().strip_prefix('/').unwrap_or("");
    let mut res = Response::new(Empty::new());
    match links.get(alias) {
        Some(url) => {
            *res.status_mut() = StatusCode::MOVED_PERMANENTLY;
            res.headers_mut().insert(LOCATION, url.clone());
        }
        None => *res.status_mut() = StatusCode::NOT_FOUND,
    }
    res
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(addr)) = (args.next(), args.next()) else {
        eprintln!("usage: bare-hyper LINKS_FILE ADDR");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&file)?;
    let links: Links = text
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(alias, url)| {
            let url = HeaderValue::from_str(url).expect("a URL is a valid header value");
            (alias.into(), url)
        })
        .collect();
    let links = Arc::new(links);

    let listener = TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let links = Arc::clone(&links);
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let res = answer(&links, &req);
                async move { Ok::<_, Infallible>(res) }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
