//! The v1 API's records, lists and writes over the embedded service.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{TestServer, json};
use linkdeck::server::ServeOptions;

fn is_rfc3339_utc(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.ends_with('Z') && s.parse::<jiff::Timestamp>().is_ok())
}

#[tokio::test]
async fn health_answers_without_a_key() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let response = s.client.get(s.url("/api/health")).send().await.unwrap();
    let (status, _, body) = json(response).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"status": "ok"}));
}

#[tokio::test]
async fn link_crud_round_trip() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let space = {
        let (status, _, body) = json(
            s.api(Method::POST, "/api/v1/spaces")
                .form(&[("name", "Launch"), ("color", "2")])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["status"], 200);
        body["data"].clone()
    };
    let space_id = space["id"].as_i64().unwrap().to_string();

    let response = s
        .api(Method::POST, "/api/v1/links")
        .form(&[
            ("url", "https://example.com/landing"),
            ("alias", "Launch-1"),
            ("password", "hunter2"),
            ("space", space_id.as_str()),
            ("public", "1"),
            ("expiration_clicks", "50"),
            ("target_type", "1"),
            ("geo[0][key]", "us"),
            ("geo[0][value]", "https://us.example.com"),
            ("platform[0][key]", "ios"),
            ("platform[0][value]", "https://apps.example.com"),
            ("rotation[0][value]", "https://a.example.com"),
        ])
        .send()
        .await
        .unwrap();
    let (status, _, created) = json(response).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["status"], 200);
    let link = &created["data"];
    let keys: Vec<&str> = link
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for field in [
        "id",
        "alias",
        "url",
        "short_url",
        "title",
        "target_type",
        "geo_target",
        "platform_target",
        "rotation_target",
        "last_rotation",
        "disabled",
        "public",
        "password",
        "expiration_url",
        "expiration_clicks",
        "clicks",
        "user_id",
        "space",
        "domain",
        "ends_at",
        "created_at",
        "updated_at",
    ] {
        assert!(keys.contains(&field), "record lacks {field}: {link}");
    }
    assert_eq!(link["alias"], "Launch-1");
    assert_eq!(link["short_url"], s.url("/Launch-1"));
    assert_eq!(link["password"], true);
    assert_eq!(link["public"], 1);
    assert_eq!(link["disabled"], 0);
    assert_eq!(link["user_id"], s.owner_id);
    assert_eq!(link["target_type"], 1);
    assert_eq!(
        link["geo_target"],
        json!([{"key": "US", "value": "https://us.example.com"}])
    );
    assert_eq!(
        link["platform_target"],
        json!([{"key": "iOS", "value": "https://apps.example.com"}])
    );
    assert_eq!(
        link["rotation_target"],
        json!([{"value": "https://a.example.com"}])
    );
    assert_eq!(link["space"]["name"], "Launch");
    assert_eq!(link["space"]["user_id"], s.owner_id);
    assert_eq!(link["domain"], Value::Null);
    assert_eq!(link["ends_at"], Value::Null);
    assert!(is_rfc3339_utc(&link["created_at"]) && is_rfc3339_utc(&link["updated_at"]));
    assert!(
        !link.to_string().contains("hunter2"),
        "the password is never returned"
    );
    let id = link["id"].as_i64().unwrap();

    let (status, _, shown) = json(
        s.api(Method::GET, &format!("/api/v1/links/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown, created);

    // PATCH and PUT change only the fields present.
    let (status, _, patched) = json(
        s.api(Method::PATCH, &format!("/api/v1/links/{id}"))
            .form(&[
                ("disabled", "1"),
                ("password", ""),
                ("expiration_date", "2031-02-03"),
                ("expiration_time", "04:05"),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["data"]["disabled"], 1);
    assert_eq!(patched["data"]["password"], false);
    assert_eq!(patched["data"]["ends_at"], "2031-02-03T04:05:00Z");
    assert_eq!(patched["data"]["url"], "https://example.com/landing");
    let (status, _, put) = json(
        s.api(Method::PUT, &format!("/api/v1/links/{id}"))
            .form(&[("url", "https://example.org/")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{put}");
    assert_eq!(put["data"]["url"], "https://example.org/");
    assert_eq!(put["data"]["disabled"], 1);

    // A PATCH with nothing in it changes nothing.
    let (status, _, _) = json(
        s.api(Method::PATCH, &format!("/api/v1/links/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // Validation needing stored state.
    let (status, _, body) = json(
        s.api(Method::POST, "/api/v1/links")
            .form(&[("url", "https://example.com"), ("alias", "launch-1")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["message"]["alias"].is_array(), "{body}");
    let (status, _, body) = json(
        s.api(Method::POST, "/api/v1/links")
            .form(&[("url", "https://example.com"), ("space", "999")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["message"]["space"].is_array(), "{body}");

    let (status, _, deleted) = json(
        s.api(Method::DELETE, &format!("/api/v1/links/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        deleted,
        json!({"id": id, "object": "link", "deleted": true, "status": 200})
    );
    for method in [Method::GET, Method::DELETE] {
        let (status, _, body) = json(
            s.api(method, &format!("/api/v1/links/{id}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            body,
            json!({"message": "Resource not found.", "status": 404})
        );
    }
    let (status, _, _) = json(
        s.api(Method::PATCH, &format!("/api/v1/links/{id}"))
            .form(&[("disabled", "0")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn link_lists_page_and_keep_filters() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    for i in 0..23 {
        s.create_link(&[
            ("url", &format!("https://example.com/{i}")),
            ("alias", &format!("l{i:02}")),
        ])
        .await;
    }
    let (status, headers, body) = json(
        s.api(
            Method::GET,
            "/api/v1/links?sort=asc&by=alias&search=l&per_page=10&page=2&status=0",
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(headers.contains_key("x-ratelimit-limit"));
    let aliases: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["alias"].as_str().unwrap())
        .collect();
    assert_eq!(
        aliases,
        (10..20).map(|i| format!("l{i:02}")).collect::<Vec<_>>()
    );
    let meta = &body["meta"];
    assert_eq!(meta["current_page"], 2);
    assert_eq!(meta["from"], 11);
    assert_eq!(meta["to"], 20);
    assert_eq!(meta["last_page"], 3);
    assert_eq!(meta["per_page"], 10);
    assert_eq!(meta["total"], 23);
    assert_eq!(meta["path"], s.url("/api/v1/links"));
    let next = body["links"]["next"].as_str().unwrap();
    for part in ["search=l", "by=alias", "sort=asc", "per_page=10", "page=3"] {
        assert!(next.contains(part), "{next} lacks {part}");
    }
    // Following `next` gives the last page.
    let path = next.strip_prefix(&s.base).unwrap();
    let (_, _, last) = json(s.api(Method::GET, path).send().await.unwrap()).await;
    assert_eq!(last["data"].as_array().unwrap().len(), 3);
    assert_eq!(last["links"]["next"], Value::Null);

    // Status filter survives in the page links too.
    let (_, _, disabled) = json(
        s.api(Method::GET, "/api/v1/links?status=3")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(disabled["meta"]["total"], 0);
    assert!(
        disabled["links"]["first"]
            .as_str()
            .unwrap()
            .contains("status=3")
    );

    // Sorting by clicks is accepted.
    let (status, _, _) = json(
        s.api(Method::GET, "/api/v1/links?sort=max")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn space_crud_and_list() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let (status, _, created) = json(
        s.api(Method::POST, "/api/v1/spaces")
            .form(&[("name", "Marketing"), ("color", "3")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let space = &created["data"];
    assert_eq!(space["name"], "Marketing");
    assert_eq!(space["color"], 3);
    assert_eq!(space["user_id"], s.owner_id);
    assert!(is_rfc3339_utc(&space["created_at"]));
    let id = space["id"].as_i64().unwrap();

    let (status, _, dup) = json(
        s.api(Method::POST, "/api/v1/spaces")
            .form(&[("name", "marketing"), ("color", "1")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(dup["message"]["name"].is_array());
    let (status, _, missing) = json(
        s.api(Method::POST, "/api/v1/spaces")
            .form(&[("name", "x")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(missing["message"]["color"].is_array());

    for method in [Method::PUT, Method::PATCH] {
        let (status, _, updated) = json(
            s.api(method, &format!("/api/v1/spaces/{id}"))
                .form(&[("color", "5")])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{updated}");
        assert_eq!(updated["data"]["color"], 5);
        assert_eq!(updated["data"]["name"], "Marketing");
    }
    let (status, _, list) = json(
        s.api(Method::GET, "/api/v1/spaces?search=market")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["meta"]["total"], 1);
    assert!(
        list["links"]["first"]
            .as_str()
            .unwrap()
            .contains("search=market")
    );
    let (status, _, shown) = json(
        s.api(Method::GET, &format!("/api/v1/spaces/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["data"]["id"], id);

    let link = s
        .create_link(&[("url", "https://example.com"), ("space", &id.to_string())])
        .await;
    let (status, _, deleted) = json(
        s.api(Method::DELETE, &format!("/api/v1/spaces/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        deleted,
        json!({"id": id, "object": "space", "deleted": true, "status": 200})
    );
    let (_, _, kept) = json(
        s.api(Method::GET, &format!("/api/v1/links/{}", link["id"]))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        kept["data"]["space"],
        Value::Null,
        "the link stays, without a space"
    );
}

/// Adds a domain for `owner` as the CLI's `domains add` does (the API has no way to).
pub async fn add_domain(s: &TestServer, owner: i64, name: &str) -> i64 {
    s.service
        .for_owner(owner)
        .add_domain(name)
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn domains_are_listed_and_shown() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let id = add_domain(&s, s.owner_id, "https://sho.rt").await;
    let (status, _, list) = json(s.api(Method::GET, "/api/v1/domains").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["meta"]["total"], 1);
    assert_eq!(list["data"][0]["name"], "https://sho.rt");
    assert_eq!(list["data"][0]["user_id"], s.owner_id);
    let (status, _, shown) = json(
        s.api(Method::GET, &format!("/api/v1/domains/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["data"]["id"], id);

    let link = s
        .create_link(&[
            ("url", "https://example.com"),
            ("alias", "d1"),
            ("domain", &id.to_string()),
        ])
        .await;
    assert_eq!(link["domain"]["name"], "https://sho.rt");
    assert_eq!(link["short_url"], "https://sho.rt/d1");
}

#[tokio::test]
async fn owners_see_only_their_own_records() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s.create_link(&[("url", "https://example.com/mine")]).await;
    let (status, _, space) = json(
        s.api(Method::POST, "/api/v1/spaces")
            .form(&[("name", "Mine"), ("color", "1")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let domain = add_domain(&s, s.owner_id, "https://mine.example").await;
    let (_, bob) = s.other_owner("bob").await;
    let not_found = json!({"message": "Resource not found.", "status": 404});
    for (method, path, field) in [
        (Method::GET, format!("/api/v1/links/{}", link["id"]), None),
        (
            Method::PATCH,
            format!("/api/v1/links/{}", link["id"]),
            Some(("disabled", "1")),
        ),
        (
            Method::DELETE,
            format!("/api/v1/links/{}", link["id"]),
            None,
        ),
        (
            Method::GET,
            format!("/api/v1/spaces/{}", space["data"]["id"]),
            None,
        ),
        (
            Method::PUT,
            format!("/api/v1/spaces/{}", space["data"]["id"]),
            Some(("color", "4")),
        ),
        (
            Method::DELETE,
            format!("/api/v1/spaces/{}", space["data"]["id"]),
            None,
        ),
        (Method::GET, format!("/api/v1/domains/{domain}"), None),
    ] {
        let mut request = s.api_as(&bob, method.clone(), &path);
        if let Some(field) = field {
            request = request.form(&[field]);
        }
        let (status, _, body) = json(request.send().await.unwrap()).await;
        assert_eq!(
            (status, body),
            (StatusCode::NOT_FOUND, not_found.clone()),
            "{method} {path}"
        );
    }
    for path in ["/api/v1/links", "/api/v1/spaces", "/api/v1/domains"] {
        let (_, _, list) = json(s.api_as(&bob, Method::GET, path).send().await.unwrap()).await;
        assert_eq!(list["meta"]["total"], 0, "{path}");
    }
    // Bob cannot file a link under alice's space.
    let (status, _, body) = json(
        s.api_as(&bob, Method::POST, "/api/v1/links")
            .form(&[
                ("url", "https://example.com"),
                ("space", &space["data"]["id"].to_string()),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["message"]["space"].is_array());
    // Alice's link is untouched.
    let (status, _, _) = json(
        s.api(Method::GET, &format!("/api/v1/links/{}", link["id"]))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}
