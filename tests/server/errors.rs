//! Every way a request to `/api/` can be wrong answers JSON with the specified status and body:
//! never a 500, never HTML.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::common::json;
use linkdeck::server::ServeOptions;

#[tokio::test]
async fn missing_bad_and_revoked_keys_are_401() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let expected = json!({"message": "Unauthenticated.", "status": 401});

    let no_key = s
        .client
        .get(s.url("/api/v1/links"))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    let (status, _, body) = json(no_key).await;
    assert_eq!((status, body), (StatusCode::UNAUTHORIZED, expected.clone()));

    for bad in ["nope", "ldk_wrong", "Basic abc", &format!("{}x", s.key)] {
        let (status, _, body) = json(
            s.api_as(bad, Method::GET, "/api/v1/links")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body),
            (StatusCode::UNAUTHORIZED, expected.clone()),
            "key {bad:?}"
        );
    }
    let raw_scheme = s
        .client
        .get(s.url("/api/v1/links"))
        .header("authorization", format!("Token {}", s.key))
        .send()
        .await
        .unwrap();
    assert_eq!(raw_scheme.status(), StatusCode::UNAUTHORIZED);

    // Revoking takes effect at once.
    let (_, key2) = s.other_owner("bob").await;
    let keys = s.service.list_keys(None).await.unwrap();
    assert!(
        keys.iter()
            .all(|k| !k.prefix.is_empty() && k.revoked_at.is_none())
    );
    let bob_key = keys.iter().find(|k| k.owner == "bob").unwrap();
    s.service.revoke_key(bob_key.id).await.unwrap();
    let (status, _, body) = json(
        s.api_as(&key2, Method::GET, "/api/v1/spaces")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, body), (StatusCode::UNAUTHORIZED, expected));
}

#[tokio::test]
async fn unknown_paths_and_wrong_methods_answer_json() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    for path in [
        "/api",
        "/api/",
        "/api/v1",
        "/api/v1/nope",
        "/api/v2/links",
        "/api/v1/links/1/extra",
    ] {
        let (status, _, body) = json(s.api(Method::GET, path).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            body,
            json!({"message": "Resource not found.", "status": 404}),
            "{path}"
        );
    }
    for (method, path, allow) in [
        (Method::DELETE, "/api/v1/links", "GET,HEAD,POST"),
        (Method::POST, "/api/v1/links/1", "GET,HEAD,PUT,PATCH,DELETE"),
        (Method::POST, "/api/v1/domains", "GET,HEAD"),
        (Method::DELETE, "/api/v1/domains/1", "GET,HEAD,PUT,PATCH"),
        (Method::PUT, "/api/v1/spaces", "GET,HEAD,POST"),
    ] {
        let (status, headers, body) = json(s.api(method.clone(), path).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert_eq!(body["status"], 405);
        assert!(body["message"].is_string());
        let mut got: Vec<&str> = headers["allow"].to_str().unwrap().split(',').collect();
        let mut want: Vec<&str> = allow.split(',').collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{method} {path}");
    }
    // Non-numeric or missing ids name no record.
    for path in [
        "/api/v1/links/abc",
        "/api/v1/links/-1",
        "/api/v1/links/0",
        "/api/v1/spaces/99999999999999999999",
    ] {
        let (status, _, _) = json(s.api(Method::GET, path).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn bodies_that_cannot_be_read_are_refused_with_json() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };

    let huge = "a".repeat(200 * 1024);
    let (status, _, body) = json(
        s.api(Method::POST, "/api/v1/links")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("url=https://example.com/{huge}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["status"], 413);

    for content_type in [
        "application/json",
        "text/plain",
        "multipart/form-data; boundary=x",
    ] {
        let (status, _, body) = json(
            s.api(Method::POST, "/api/v1/links")
                .header("content-type", content_type)
                .body(r#"{"url":"https://example.com"}"#)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{content_type}");
        assert_eq!(body["status"], 415);
    }
    let (status, _, _) = json(
        s.api(Method::POST, "/api/v1/links")
            .header(
                "content-type",
                "application/x-www-form-urlencoded; charset=latin1",
            )
            .body("url=https://example.com")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Field errors, each named.
    let cases: &[(&[u8], &str)] = &[
        (b"url=https://example.com&colour=red", "colour"),
        (b"url=https://example.com&url=https://example.org", "url"),
        (b"url=%FF%FE", "url"),
        (b"url=https://example.com&alias=%C3%28", "alias"),
        (b"url=https://example.com&geo[0][land]=US", "geo.0.land"),
        (b"url=https://example.com&geo[x][key]=US", "geo.x.key"),
        (b"url=https://example.com&geo=US", "geo"),
        (
            b"url=https://example.com&geo[0][key]=ZZ&geo[0][value]=https://z.example",
            "geo.0.key",
        ),
        (
            b"url=https://example.com&platform[0][key]=Linux&platform[0][value]=https://l.example\
              &platform[1][key]=Amiga&platform[1][value]=https://a.example",
            "platform.1.key",
        ),
        (
            b"url=https://example.com&rotation[0][value]=https://a.example\
              &rotation[1][value]=https://b.example&rotation[2][value]=javascript:alert(1)",
            "rotation.2.value",
        ),
        // Rows are numbered from 0 without gaps; a gapped list is refused under its name.
        (
            b"url=https://example.com&rotation[2][value]=https://c.example",
            "rotation",
        ),
        (
            b"url=https://example.com&geo%5B0%5D%5Bland%5D=US",
            "geo.0.land",
        ),
        (b"url=https://example.com&target_type=7", "target_type"),
        (
            b"url=https://example.com&expiration_clicks=-1",
            "expiration_clicks",
        ),
        (b"url=https://example.com&disabled=maybe", "disabled"),
        (
            b"url=https://example.com&expiration_date=2030-01-01",
            "expiration_time",
        ),
        (b"url=ftp://example.com", "url"),
        (b"alias=abc", "url"),
        // A broken escape is kept as typed (as browsers and PHP do), so the field is unknown.
        (b"url=https://example.com&%ZZ=1", "%ZZ"),
        (b"url=https://example.com&%FF=1", "body"),
    ];
    for (body, field) in cases {
        let response = s
            .api(Method::POST, "/api/v1/links")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        let (status, _, json_body) = json(response).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}: {json_body}",
            String::from_utf8_lossy(body)
        );
        assert_eq!(json_body["status"], 422);
        assert!(
            json_body["message"][*field].is_array(),
            "{} should name {field}: {json_body}",
            String::from_utf8_lossy(body)
        );
    }

    // Spaces too.
    let (status, _, body) = json(
        s.api(Method::POST, "/api/v1/spaces")
            .form(&[("name", "x"), ("colour", "1")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["message"]["colour"].is_array(), "{body}");
}

#[tokio::test]
async fn list_parameters_are_strict() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    // Longer than the longest title, alias or space name: nothing could match (the filed
    // search was 20 KB of one word said over and over).
    let said_over = format!("search={}", "course+".repeat(2_857));
    let long_alias = format!("by=alias&search={}", "x".repeat(256));
    for (query, field) in [
        (said_over.as_str(), "search"),
        (long_alias.as_str(), "search"),
        ("status=9", "status"),
        ("status=x", "status"),
        ("sort=sideways", "sort"),
        ("by=colour", "by"),
        ("page=0", "page"),
        ("page=abc", "page"),
        ("per_page=5", "per_page"),
        ("per_page=101", "per_page"),
        ("space=abc", "space"),
        ("domain=-2", "domain"),
        ("page=1&page=2", "page"),
        ("search=%FF", "search"),
    ] {
        let (status, _, body) = json(
            s.api(Method::GET, &format!("/api/v1/links?{query}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{query}: {body}");
        assert!(
            body["message"][field].is_array(),
            "{query} should name {field}: {body}"
        );
    }
    let long_name = format!("/api/v1/spaces?search={}", "x".repeat(33));
    for (path, field) in [
        (long_name.as_str(), "search"),
        ("/api/v1/spaces?sort=max", "sort"),
        ("/api/v1/spaces?per_page=1000", "per_page"),
        ("/api/v1/domains?page=0", "page"),
    ] {
        let (status, _, body) = json(s.api(Method::GET, path).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        assert!(body["message"][field].is_array(), "{path}: {body}");
    }
}

#[tokio::test]
async fn rate_limit_answers_429_with_headers() {
    let Some(s) = crate::serve(linkdeck::server::ServeOptions {
        api_rate_limit: 3,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    for remaining in [2, 1, 0] {
        let response = s.api(Method::GET, "/api/v1/spaces").send().await.unwrap();
        assert_ne!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()["x-ratelimit-limit"], "3");
        assert_eq!(
            response.headers()["x-ratelimit-remaining"],
            remaining.to_string().as_str()
        );
    }
    let (status, headers, body) =
        json(s.api(Method::GET, "/api/v1/spaces").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        body,
        json!({"message": "Too Many Attempts.", "status": 429})
    );
    assert_eq!(headers["x-ratelimit-limit"], "3");
    assert_eq!(headers["x-ratelimit-remaining"], "0");
    let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));

    // Another key has its own budget; requests without a valid key share their address's.
    let (_, other) = s.other_owner("bob").await;
    let response = s
        .api_as(&other, Method::GET, "/api/v1/spaces")
        .send()
        .await
        .unwrap();
    assert_ne!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    for _ in 0..3 {
        let r = s
            .api_as("ldk_guess", Method::GET, "/api/v1/spaces")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
    let r = s
        .api_as("ldk_guess", Method::GET, "/api/v1/spaces")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
}

/// Another program keeping every write waiting longer than the service waits gets the API's
/// writer an answer — 503, in the API's words — never a request left hanging; once it is gone,
/// the same write goes through.
#[tokio::test]
async fn a_write_kept_waiting_by_another_program_is_answered_503() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/before"), ("alias", "held")])
        .await;
    let id = link["id"].as_i64().unwrap();
    let path = format!("/api/v1/links/{id}");
    let edit = || {
        s.api(Method::PATCH, &path)
            .form(&[("url", "https://example.com/after")])
            .send()
    };
    let held = s.hold_writes().await;
    let (status, _, body) = json(edit().await.unwrap()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        body["message"],
        "The service is unavailable; try again later."
    );
    // The terminal app and the CLI, on the service itself, are told why, in one wording.
    let mine = s.service.for_owner(s.owner_id);
    let input = linkdeck::domain::LinkInput {
        url: Some("https://example.com/direct".into()),
        ..Default::default()
    };
    let refused = linkdeck::backend::Backend::update_link(&mine, id, &input).await;
    assert_eq!(
        refused.unwrap_err().to_string(),
        "unavailable: the database is busy: another program has it locked; try again in a moment"
    );
    held.release().await;
    let (status, _, body) = json(edit().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["url"], "https://example.com/after");
}

#[tokio::test]
async fn keys_are_stored_only_as_digests() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let key = s.key.clone();
    let stored = s.stored_keys().await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].0.len(), 32);
    assert!(key.starts_with(&stored[0].1) && stored[0].1.len() < 16);
    for file in s.files_on_disk().await {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
            "plain key on disk, in {}",
            file.display()
        );
    }
    assert!(s.service.authenticate(&key).await.unwrap().is_some());
    assert!(s.service.authenticate("ldk_").await.unwrap().is_none());

    // Using a key records when it was last used.
    assert!(
        s.service.list_keys(None).await.unwrap()[0]
            .last_used_at
            .is_none()
    );
    s.api(Method::GET, "/api/v1/spaces").send().await.unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.service.list_keys(None).await.unwrap()[0]
        .last_used_at
        .is_none()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "last_used_at never set"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Garbage in every shape (random bytes, broken escapes, deep brackets, huge indices, mixed
/// valid fields) never gets a 5xx or a non-JSON answer.
#[tokio::test]
async fn random_bodies_and_queries_never_break_the_api() {
    use rand::{Rng, SeedableRng};
    let Some(s) = crate::serve(linkdeck::server::ServeOptions {
        api_rate_limit: 0,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let fragments: &[&[u8]] = &[
        b"url=https://example.com",
        b"alias=ok",
        b"geo[0][key]=US",
        b"geo[0][value]=https://u.example",
        b"geo[99999999999999999999][key]=x",
        b"rotation[][value]=x",
        b"platform[0][key][deep][deeper]=x",
        b"%",
        b"%zz",
        b"%C3",
        b"=",
        b"&&&",
        b"a[b]c=d",
        b"target_type=3",
        b"expiration_clicks=99999999999999999999",
        b"expiration_date=2030-13-45",
        b"expiration_time=25:61",
        b"space=-1",
        b"domain=abc",
        b"password=\xff\xfe",
        b"\x00\x01\x02",
        b"url=javascript:alert(1)",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for round in 0..150 {
        let mut body = Vec::new();
        for _ in 0..rng.random_range(0..6) {
            if rng.random_bool(0.2) {
                body.extend((0..rng.random_range(1..20)).map(|_| rng.random::<u8>()));
            } else {
                body.extend_from_slice(fragments[rng.random_range(0..fragments.len())]);
            }
            body.push(b'&');
        }
        let (method, path) = match round % 4 {
            0 => (Method::POST, "/api/v1/links".to_owned()),
            1 => (Method::PATCH, "/api/v1/links/1".to_owned()),
            2 => (Method::POST, "/api/v1/spaces".to_owned()),
            _ => {
                let query: String = body.iter().map(|b| format!("%{b:02X}")).collect();
                (Method::GET, format!("/api/v1/links?{query}"))
            }
        };
        let response = s
            .api(method.clone(), &path)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        let status = response.status();
        let (_, _, json_body) = json(response).await;
        assert!(
            !status.is_server_error(),
            "{method} {path} {:?} → {status}: {json_body}",
            String::from_utf8_lossy(&body)
        );
        let answered = json_body["message"].is_string()
            || json_body["message"].is_object()
            || json_body["data"].is_object()
            || json_body["data"].is_array();
        assert!(answered, "{status}: {json_body}");
    }
}
