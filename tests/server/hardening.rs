//! What a stranger without a key can throw at `linkdeck serve`: idle and half-sent
//! connections, oversized headers, floods of password guesses. Each is bounded.

use std::time::Duration;

use reqwest::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{TestServer, client, client_from as from, json, location};
use linkdeck::server::ServeOptions;

/// Options whose connection timeouts are short enough to watch.
fn quick() -> ServeOptions {
    ServeOptions {
        header_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(300),
        ..ServeOptions::default()
    }
}

/// Reads until the server closes the connection; panics if it is still open after 10 s.
async fn closed_by_server(stream: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return seen,
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
            Err(_) => panic!("the server kept the connection open (read so far: {seen:?})"),
        }
    }
}

async fn connect(s: &TestServer) -> TcpStream {
    TcpStream::connect(s.base.trim_start_matches("http://"))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let mut silent = connect(&s).await;
    assert!(closed_by_server(&mut silent).await.is_empty());
}

#[tokio::test]
async fn half_a_request_line_is_closed() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let mut half = connect(&s).await;
    half.write_all(b"GET /some-alias HT").await.unwrap();
    closed_by_server(&mut half).await;
}

#[tokio::test]
async fn a_head_trickled_in_byte_by_byte_is_cut_off() {
    let Some(s) = crate::serve(ServeOptions {
        header_timeout: Duration::from_millis(500),
        idle_timeout: Duration::from_secs(60),
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    let mut slow = connect(&s).await;
    let head =
        b"GET /api/v1/links HTTP/1.1\r\nHost: x\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut cut = false;
    for byte in head {
        // Each byte keeps the socket busy, but the head as a whole takes too long.
        if slow.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !cut {
        closed_by_server(&mut slow).await;
    }
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_its_request() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let mut conn = connect(&s).await;
    conn.write_all(b"GET /no-such-alias HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = closed_by_server(&mut conn).await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 404"), "{text}");
}

#[tokio::test]
async fn a_request_is_answered_while_idle_connections_fill_the_cap() {
    let Some(s) = crate::serve(ServeOptions {
        max_connections: 16,
        header_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    let mut idle = Vec::new();
    for _ in 0..24 {
        idle.push(connect(&s).await);
    }
    // Idle connections are closed to make room once they have been idle a moment.
    let response = s
        .api(reqwest::Method::GET, "/api/v1/links")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut closed = 0;
    for conn in &mut idle {
        let mut buf = [0u8; 1];
        if let Ok(Ok(0)) =
            tokio::time::timeout(Duration::from_millis(50), conn.read(&mut buf)).await
        {
            closed += 1;
        }
    }
    assert!(closed > 0, "no idle connection was closed to make room");
}

#[tokio::test]
async fn oversized_headers_are_refused_with_431_in_the_paths_format() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    s.create_link(&[("url", "https://example.com/a"), ("alias", "a")])
        .await;
    let big = "x".repeat(9 * 1024);
    let (status, _, body) = json(
        s.api(reqwest::Method::GET, "/api/v1/links")
            .header("x-big", &big)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert_eq!(body["status"], 431);
    assert!(body["message"].as_str().unwrap().contains("too large"));

    let response = s.visit("/a", &[("user-agent", &big)]).await;
    assert_eq!(
        response.status(),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
    );
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );

    // Many headers each under the limit, too many bytes together.
    let mut request = s.client.get(s.url("/api/v1/links")).bearer_auth(&s.key);
    for i in 0..4 {
        request = request.header(format!("x-part-{i}"), "y".repeat(5 * 1024));
    }
    let (status, _, _) = json(request.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);

    // A head beyond what the server reads at all.
    let response = s.visit("/a", &[("x-huge", &"z".repeat(64 * 1024))]).await;
    assert_eq!(
        response.status(),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
    );

    // A long but allowed agent still gets its redirect.
    let agent = format!("Mozilla/5.0 (Windows NT 10.0) {}", "w".repeat(7_900));
    let response = s.visit("/a", &[("user-agent", &agent)]).await;
    assert_eq!(location(&response), "https://example.com/a");
}

/// A server with `opts` and a link `/vault` to https://example.com/vault, password "right one".
async fn vault(opts: ServeOptions) -> Option<TestServer> {
    let s = crate::serve(opts).await?;
    s.create_link(&[
        ("url", "https://example.com/vault"),
        ("alias", "vault"),
        ("password", "right one"),
    ])
    .await;
    Some(s)
}

#[tokio::test]
async fn wrong_guesses_are_limited_per_link_across_addresses() {
    let Some(s) = vault(ServeOptions {
        password_attempts: 10,
        password_guesses_per_link: 5,
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    let mut statuses = Vec::new();
    for n in 2..10u8 {
        let response = from(n)
            .post(s.url("/vault"))
            .form(&[("password", format!("guess {n}"))])
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    // Five wrong guesses close the link for the minute; past them, a tenth as many (one) may
    // come from addresses new to the link, and then none.
    assert_eq!(statuses, [403, 403, 403, 403, 403, 403, 429, 429]);
    for n in [2, 20] {
        let response = from(n)
            .post(s.url("/vault"))
            .form(&[("password", "right one")])
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "127.0.0.{n}"
        );
        assert!(response.headers().contains_key("retry-after"));
    }
    // Other links are not affected.
    s.create_link(&[
        ("url", "https://example.com/other"),
        ("alias", "other"),
        ("password", "pw"),
    ])
    .await;
    let response = from(2)
        .post(s.url("/other"))
        .form(&[("password", "pw")])
        .send()
        .await
        .unwrap();
    assert_eq!(location(&response), "https://example.com/other");
}

#[tokio::test]
async fn a_visitor_new_to_a_link_gets_in_while_a_flood_holds_it_shut() {
    let Some(s) = vault(ServeOptions {
        password_attempts: 10,
        password_guesses_per_link: 20,
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    let guess = |n: u8, password: &str| {
        from(n)
            .post(s.url("/vault"))
            .form(&[("password", password.to_owned())])
            .send()
    };
    // Twenty addresses guess, round after round: the first round spends the link's wrong
    // guesses for the minute, and every later guess is turned away unchecked.
    for round in 0..5 {
        for n in 2..22u8 {
            let response = guess(n, &format!("guess {round} {n}")).await.unwrap();
            let expected = if round == 0 {
                StatusCode::FORBIDDEN
            } else {
                StatusCode::TOO_MANY_REQUESTS
            };
            assert_eq!(response.status(), expected, "round {round}, 127.0.0.{n}");
        }
    }
    // Someone who has not guessed wrong here, with the right password, gets in.
    let response = guess(50, "right one").await.unwrap();
    assert_eq!(location(&response), "https://example.com/vault");
    // An address of the flood does not, even with the right password.
    let response = guess(2, "right one").await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    // A newcomer's wrong guess is checked, and then it is one of the flood.
    let response = guess(51, "not it").await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = guess(51, "right one").await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_flood_of_guesses_runs_few_checks_at_once_and_turns_the_rest_away() {
    let Some(s) = vault(ServeOptions {
        password_checks: 1,
        password_guesses_per_link: 0,
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    let url = s.url("/vault");
    let guesses = (2..62u8).map(|n| {
        let url = url.clone();
        async move {
            let response = from(n)
                .post(url)
                .form(&[("password", format!("guess {n}"))])
                .send()
                .await
                .unwrap();
            let retry = response.headers().contains_key("retry-after");
            (response.status(), retry)
        }
    });
    let answers = futures::future::join_all(guesses).await;
    let busy = answers
        .iter()
        .filter(|(status, retry)| *status == StatusCode::SERVICE_UNAVAILABLE && *retry)
        .count();
    let wrong = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::FORBIDDEN)
        .count();
    assert_eq!(busy + wrong, answers.len(), "{answers:?}");
    assert!(busy > 0, "every guess was checked: {answers:?}");
    assert!(wrong > 0, "no guess was checked: {answers:?}");
    // Meanwhile, and after, the link still opens with its password.
    let response = client()
        .post(s.url("/vault"))
        .form(&[("password", "right one")])
        .send()
        .await
        .unwrap();
    assert_eq!(location(&response), "https://example.com/vault");
}
