//! The QR codes `linkdeck serve` draws for anyone who asks (`/{alias}/qr.png`, `/{alias}/qr.svg`):
//! no larger than print needs, and counted against each address's limit on the public pages.
//! What the codes hold is read back by a decoder in `tests/qr.rs`.

use reqwest::StatusCode;

use crate::common::client_from;
use linkdeck::server::ServeOptions;

/// A PNG's width and height, from its header.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[1..4], b"PNG", "a PNG");
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

#[tokio::test]
async fn a_size_past_what_print_needs_is_refused_naming_size_and_the_range() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    s.create_link(&[("url", "https://example.com/print"), ("alias", "print")])
        .await;
    let largest = s.visit("/print/qr.png?size=2048", &[]).await;
    assert_eq!(largest.status(), StatusCode::OK);
    let (width, height) = png_size(&largest.bytes().await.unwrap());
    assert!(
        width == height && (1_800..=2_048).contains(&width),
        "{width}×{height}"
    );
    for path in [
        "/print/qr.png?size=4096",
        "/print/qr.svg?size=2049",
        "/print/qr.png?size=63",
        "/print/qr.svg?size=big",
    ] {
        let response = s.visit(path, &[]).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{path}");
        let text = response.text().await.unwrap();
        assert!(
            text.contains("size") && text.contains("from 64 to 2048"),
            "{path}: {text}"
        );
    }
}

#[tokio::test]
async fn codes_count_against_each_address_s_limit_on_public_pages() {
    let Some(s) = crate::serve(ServeOptions {
        api_rate_limit: 3,
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    s.create_link(&[
        ("url", "https://example.com/poster"),
        ("alias", "poster"),
        ("public", "1"),
    ])
    .await;
    let visitor = client_from(2);
    for path in ["/poster/qr.png", "/poster/qr.svg", "/poster/qr.png"] {
        let response = visitor.get(s.url(path)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
    }
    let refused = visitor.get(s.url("/poster/qr.png")).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    // The public stats page draws on the same allowance.
    let stats = visitor.get(s.url("/poster/stats")).send().await.unwrap();
    assert_eq!(stats.status(), StatusCode::TOO_MANY_REQUESTS);
    // Another visitor has an allowance of its own.
    let other = client_from(3)
        .get(s.url("/poster/qr.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::OK);
}
