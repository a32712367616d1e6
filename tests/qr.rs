//! QR codes, read back by a real decoder (rqrr): the PNG and SVG `linkdeck links qr` writes,
//! and the ones a real `linkdeck serve` answers at `/{alias}/qr.png` and `/{alias}/qr.svg` —
//! which must hold the short URL and never count a click. SVGs are rendered with resvg first,
//! as a browser would draw them.

mod cli_support;
mod common;
mod raw;

use cli_support::Env;
use common::TestServer;
use reqwest::{Method, StatusCode};

/// The text of the one QR code in a greyscale image.
fn decode_grey(width: usize, height: usize, grey: &[u8]) -> String {
    let mut image =
        rqrr::PreparedImage::prepare_from_greyscale(width, height, |x, y| grey[y * width + x]);
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the image");
    grids[0].decode().expect("a readable QR code").1
}

fn decode_png(bytes: &[u8]) -> String {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    // One bit a pixel, read as a byte a pixel.
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a sized PNG")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    decode_grey(
        info.width as usize,
        info.height as usize,
        &buf[..info.buffer_size()],
    )
}

/// Renders the SVG (as a browser would) and decodes what it shows.
fn decode_svg(text: &str) -> String {
    let tree =
        resvg::usvg::Tree::from_str(text, &resvg::usvg::Options::default()).expect("a valid SVG");
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("a canvas");
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let grey: Vec<u8> = pixmap
        .pixels()
        .iter()
        .map(|p| if p.alpha() == 0 { 255 } else { p.red() })
        .collect();
    decode_grey(size.width() as usize, size.height() as usize, &grey)
}

#[test]
fn the_cli_writes_codes_that_scan_as_the_short_url() {
    let env = Env::new();
    env.run(&[
        "links",
        "create",
        "https://example.com/spring?utm=qr",
        "--alias",
        "spring-sale",
    ])
    .ok();
    let short = env.json(&["links", "show", "spring-sale"])["short_url"]
        .as_str()
        .unwrap()
        .to_owned();
    let png = env.path("code.png");
    let svg = env.path("code.svg");
    let out = env.json(&[
        "links",
        "qr",
        "spring-sale",
        "--png",
        png.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
        "--size",
        "300",
    ]);
    assert_eq!(out["short_url"], short.as_str());
    assert_eq!(decode_png(&std::fs::read(&png).unwrap()), short);
    assert_eq!(decode_svg(&std::fs::read_to_string(&svg).unwrap()), short);

    // In the terminal: the code with its quiet zone, then the URL.
    let text = env.run(&["links", "qr", "spring-sale"]).ok().stdout;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last().copied(), Some(short.as_str()));
    assert!(lines[0].trim().is_empty(), "quiet zone on top");
    assert!(lines[2].starts_with("    ") && lines[2].contains('█'));
    // Piped, no colour codes.
    assert!(!text.contains('\x1b'));

    env.run(&["links", "qr", "spring-sale", "--size", "9"])
        .fails_with(2);
    env.run(&["links", "qr", "no-such-link"]).fails_with(4);
}

#[tokio::test]
async fn the_server_answers_codes_without_counting_a_click() {
    let mut server = TestServer::start().await;
    let link = server
        .create_link(&[
            ("url", "https://example.com/landing?x=1"),
            ("alias", "qr-me"),
        ])
        .await;
    let id = link["id"].as_i64().unwrap();
    let short = format!("{}/qr-me", server.base);

    let png = server.visit("/qr-me/qr.png?size=256", &[]).await;
    assert_eq!(png.status(), StatusCode::OK);
    assert_eq!(png.headers()["content-type"], "image/png");
    assert_eq!(decode_png(&png.bytes().await.unwrap()), short);

    let svg = server.visit("/QR-ME/qr.svg", &[]).await;
    assert_eq!(svg.status(), StatusCode::OK);
    assert_eq!(svg.headers()["content-type"], "image/svg+xml");
    assert_eq!(decode_svg(&svg.text().await.unwrap()), short);

    // A disabled link still has its code (scanning it shows the disabled page).
    server
        .api(Method::PATCH, &format!("/api/v1/links/{id}"))
        .form(&[("disabled", "1")])
        .send()
        .await
        .unwrap();
    let disabled = server.visit("/qr-me/qr.png", &[]).await;
    assert_eq!(disabled.status(), StatusCode::OK);
    assert_eq!(
        server.visit("/qr-me", &[]).await.status(),
        StatusCode::FORBIDDEN
    );

    // Unknown aliases and bad sizes.
    let unknown = server.visit("/nope/qr.png", &[]).await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let bad = server.visit("/qr-me/qr.svg?size=99999", &[]).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);

    server.stop().await;
    let (clicks, visits) = server.stored_clicks(id).await;
    assert_eq!((clicks, visits), (0, 0), "QR codes are not clicks");
}

#[tokio::test]
async fn a_code_on_a_domain_holds_the_domain_url() {
    let server = TestServer::start().await;
    let domain = server
        .service
        .for_owner(server.owner_id)
        .add_domain("https://go.example")
        .await
        .unwrap();
    server
        .create_link(&[
            ("url", "https://example.com/d"),
            ("alias", "on-domain"),
            ("domain", &domain.id.to_string()),
        ])
        .await;
    let png = server
        .visit("/on-domain/qr.png", &[("host", "go.example")])
        .await;
    assert_eq!(png.status(), StatusCode::OK);
    assert_eq!(
        decode_png(&png.bytes().await.unwrap()),
        "https://go.example/on-domain"
    );
    // On another host the alias is not there.
    let elsewhere = server.visit("/on-domain/qr.png", &[]).await;
    assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_cli_and_the_server_allow_the_same_sizes_in_the_same_words() {
    let env = Env::new();
    env.run(&[
        "links",
        "create",
        "https://example.com/big",
        "--alias",
        "big",
    ])
    .ok();
    let png = env.path("big.png");
    let qr = |size: &str| {
        env.run(&[
            "links",
            "qr",
            "big",
            "--png",
            png.to_str().unwrap(),
            "--size",
            size,
        ])
    };
    let short = env.json(&["links", "show", "big"])["short_url"]
        .as_str()
        .unwrap()
        .to_owned();
    qr("2048").ok();
    let written = std::fs::read(&png).unwrap();
    assert!((1_800..=2_048).contains(&width(&written)));
    assert_eq!(decode_png(&written), short);
    let refused = qr("4096").fails_with(2);
    assert!(
        refused.stderr.contains("--size") && refused.stderr.contains(WORDS),
        "{}",
        refused.stderr
    );

    let server = TestServer::start().await;
    server
        .create_link(&[("url", "https://example.com/big"), ("alias", "big")])
        .await;
    let answer = server.visit("/big/qr.png?size=2048", &[]).await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert!((1_800..=2_048).contains(&width(&answer.bytes().await.unwrap())));
    let refused = server.visit("/big/qr.png?size=4096", &[]).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.text().await.unwrap().trim(),
        format!("size {WORDS}")
    );
}

/// A PNG's width, from its header.
fn width(png: &[u8]) -> u32 {
    u32::from_be_bytes(png[16..20].try_into().unwrap())
}

/// What both say of a size out of range.
const WORDS: &str = "must be a number of pixels from 64 to 2048";
