//! One test per tolerance, each built from a body of the shape a phpShort 2.4 server sends
//! (docs/ARCHITECTURE.md, "phpShort's quirks").

use serde_json::{Value, json};

use super::*;

/// A list body as the client reads one: from its text.
fn list<T>(
    body: &Value,
    requested: (u32, u32),
    read: impl Fn(&Value) -> Result<T, DecodeError>,
) -> Result<Page<T>, DecodeError> {
    let text = body.to_string();
    page(&envelope(text.as_bytes()).unwrap(), requested, read)
}

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// A link as phpShort 2.4 shows it.
fn reference_show() -> Value {
    json!({
      "data": {
        "id": 12,
        "alias": "x7k2p",
        "url": "https://example.com/page",
        "short_url": "https://sho.rt/x7k2p",
        "title": "Example Domain",
        "target_type": 3,
        "geo_target": null,
        "platform_target": null,
        "rotation_target": [{"value": "https://a.example"}, {"value": "https://b.example"}],
        "last_rotation": 1,
        "disabled": 0,
        "public": 1,
        "expiration_url": null,
        "expiration_clicks": 0,
        "clicks": 7,
        "user_id": 1,
        "space": {"id": 3, "user_id": 1, "name": "Marketing", "color": 2,
                  "created_at": "2020-09-14 06:53:49", "updated_at": "2020-09-14 06:53:49"},
        "domain": null,
        "ends_at": null,
        "created_at": "2020-09-14T06:53:49.000000Z",
        "updated_at": "2020-09-14T07:10:02.000000Z"
      },
      "status": 200
    })
}

#[test]
fn reads_the_reference_show_response() {
    let link = record(&reference_show(), link).unwrap();
    assert_eq!(link.id, 12);
    assert_eq!(link.alias, "x7k2p");
    assert_eq!(link.short_url, "https://sho.rt/x7k2p");
    assert_eq!(link.title.as_deref(), Some("Example Domain"));
    assert_eq!(link.target_type, TargetType::Rotation);
    assert_eq!(link.rotation, ["https://a.example", "https://b.example"]);
    assert!(link.geo.is_empty() && link.platform.is_empty());
    assert_eq!(link.last_rotation, 1);
    assert!(!link.disabled);
    assert!(link.public);
    assert_eq!(link.clicks, 7);
    assert_eq!(link.owner_id, 1);
    assert_eq!(link.ends_at, None);
    assert_eq!(link.created_at, ts("2020-09-14T06:53:49Z"));
    assert_eq!(link.updated_at, ts("2020-09-14T07:10:02Z"));
    let space = link.space.unwrap();
    assert_eq!((space.id, space.name.as_str()), (3, "Marketing"));
    assert_eq!(space.color.number(), 2);
}

#[test]
fn nested_space_dates_in_laravel_form_are_utc() {
    let link = record(&reference_show(), link).unwrap();
    assert_eq!(link.space.unwrap().created_at, ts("2020-09-14T06:53:49Z"));
}

#[test]
fn phpshort_2_4_sends_no_password_field_which_reads_as_false() {
    assert!(!record(&reference_show(), link).unwrap().password);
    let mut body = reference_show();
    body["data"]["password"] = json!(true);
    assert!(record(&body, link).unwrap().password);
}

#[test]
fn numbers_arrive_as_numeric_strings_or_null_on_a_store_response() {
    // A freshly created model echoes the form's strings and leaves unset columns null.
    let body = json!({"data": {
        "url": "https://example.com", "alias": "abc12", "target_type": "1",
        "geo_target": [{"key": "US", "value": "https://us.example"}],
        "disabled": "0", "public": "1", "expiration_clicks": "25",
        "clicks": null, "last_rotation": null, "user_id": "4", "id": "31",
        "title": null, "short_url": "https://sho.rt/abc12",
        "updated_at": "2020-09-14T06:53:49.000000Z", "created_at": "2020-09-14T06:53:49.000000Z"
    }, "status": 200});
    let link = record(&body, link).unwrap();
    assert_eq!(link.id, 31);
    assert_eq!(link.owner_id, 4);
    assert_eq!(link.target_type, TargetType::Geo);
    assert!(!link.disabled);
    assert!(link.public);
    assert_eq!(link.expiration_clicks, 25);
    assert_eq!(link.clicks, 0);
    assert_eq!(link.last_rotation, 0);
    assert_eq!(link.title, None);
    assert_eq!(link.space, None);
    assert_eq!(link.domain, None);
}

#[test]
fn targets_keyed_by_index_read_in_index_order() {
    let mut body = reference_show();
    body["data"]["target_type"] = json!("1");
    body["data"]["geo_target"] = json!({
        "2": {"key": "DE", "value": "https://de.example"},
        "0": {"key": "US", "value": "https://us.example"}
    });
    body["data"]["rotation_target"] = json!({"1": {"value": "https://r1.example"}});
    let link = record(&body, link).unwrap();
    let keys: Vec<&str> = link.geo.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["US", "DE"]);
    assert_eq!(link.geo[1].value, "https://de.example");
    assert_eq!(link.rotation, ["https://r1.example"]);
}

#[test]
fn ends_at_reads_in_both_forms() {
    let mut body = reference_show();
    body["data"]["ends_at"] = json!("2020-09-14T06:53:49.000000Z");
    assert_eq!(
        record(&body, link).unwrap().ends_at,
        Some(ts("2020-09-14T06:53:49Z"))
    );
    body["data"]["ends_at"] = json!("2020-09-14 06:53:49");
    assert_eq!(
        record(&body, link).unwrap().ends_at,
        Some(ts("2020-09-14T06:53:49Z"))
    );
}

#[test]
fn a_domain_name_keeps_its_scheme_and_a_bare_host_gets_one() {
    let mut body = reference_show();
    body["data"]["domain"] = json!({"id": 2, "name": "http://Sho.rt", "index_page": null,
        "not_found_page": null, "user_id": 1,
        "created_at": "2020-09-14 06:53:49", "updated_at": "2020-09-14 06:53:49"});
    let domain = record(&body, link).unwrap().domain.unwrap();
    assert_eq!(domain.name, "http://sho.rt");
    assert_eq!(domain.host(), "sho.rt");
    let bare = json!({"id": 2, "name": "go.example", "user_id": 1,
        "created_at": "2020-09-14 06:53:49", "updated_at": "2020-09-14 06:53:49"});
    assert_eq!(domain_of(&bare).name, "https://go.example");
}

fn domain_of(v: &Value) -> Domain {
    domain(v).unwrap()
}

#[test]
fn a_domain_has_settings_only_where_linkdeck_sent_them() {
    let php = json!({"id": 2, "name": "http://sho.rt", "index_page": null, "not_found_page": null,
        "user_id": 1, "created_at": "2020-09-14 06:53:49", "updated_at": "2020-09-14 06:53:49"});
    assert_eq!(domain_of(&php).settings, None);
    let ours = json!({"id": 2, "name": "https://sho.rt", "user_id": 1,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "root_url": "https://home.example/", "unknown_url": null, "expired_url": null,
        "robots": "custom", "robots_txt": "User-agent: *\n"});
    let settings = domain_of(&ours).settings.unwrap();
    assert_eq!(settings.root_url.as_deref(), Some("https://home.example/"));
    assert_eq!(
        settings.robots,
        crate::domain::Robots::Custom("User-agent: *\n".into())
    );
}

#[test]
fn title_null_and_empty_expiration_url_read_as_none() {
    let mut body = reference_show();
    body["data"]["title"] = Value::Null;
    body["data"]["expiration_url"] = json!("");
    let link = record(&body, link).unwrap();
    assert_eq!(link.title, None);
    assert_eq!(link.expiration_url, None);
}

#[test]
fn a_list_without_status_with_a_fixed_page_size_of_ten() {
    // Asked for 50 per page; phpShort 2.4 answers 10 whatever was asked.
    let item = reference_show()["data"].clone();
    let body = json!({
        "data": [item.clone(), item],
        "links": {"first": "https://sho.rt/api/v1/links?page=1", "last": "https://sho.rt/api/v1/links?page=3",
                  "prev": "https://sho.rt/api/v1/links?page=2", "next": null},
        "meta": {"current_page": 3, "from": 21, "last_page": 3, "path": "https://sho.rt/api/v1/links",
                 "per_page": 10, "to": 22, "total": 22}
    });
    let page = list(&body, (3, 50), link).unwrap();
    assert_eq!(page.items.len(), 2);
    assert_eq!((page.page, page.per_page, page.total), (3, 10, 22));
    assert_eq!(page.last_page(), 3);
    assert!(!page.has_next());
    assert!(
        page.total_exact,
        "a server that does not say counts every match"
    );
}

/// A linkdeck server that stopped counting says so; the page after the last one counted is
/// still there to ask for.
#[test]
fn a_total_the_server_stopped_counting_at_is_a_bound() {
    let body = json!({"data": [], "meta": {"current_page": 1, "per_page": 100, "total": 10001,
                                           "total_exact": false}});
    let page = list(&body, (1, 100), link).unwrap();
    assert_eq!((page.total, page.total_exact), (10_001, false));
    assert_eq!(page.shown_total().plural("link"), "10,000+ links");
    assert_eq!(page.last_page(), 101);
    let body = json!({"data": [], "meta": {"total": 3, "total_exact": "yes"}});
    let error = list(&body, (1, 100), link).unwrap_err().to_string();
    assert!(error.contains("meta.total_exact"), "{error}");
}

#[test]
fn list_meta_numbers_may_be_strings() {
    let body = json!({"data": [], "meta": {"current_page": "1", "per_page": "25", "total": "0"}});
    let page = list(&body, (1, 25), link).unwrap();
    assert_eq!((page.page, page.per_page, page.total), (1, 25, 0));
}

#[test]
fn a_space_store_response_echoes_the_colour_as_a_string() {
    let body = json!({"data":{"name":"Marketing","user_id":1,"color":"2",
        "updated_at":"2020-09-14 06:53:49","created_at":"2020-09-14 06:53:49","id":3},"status":200});
    let space = record(&body, space).unwrap();
    assert_eq!(space.id, 3);
    assert_eq!(space.color.number(), 2);
    assert_eq!(space.links, None);
    assert_eq!(space.created_at, ts("2020-09-14T06:53:49Z"));
}

#[test]
fn a_422_message_map_keeps_dotted_field_names() {
    let body = json!({"message": {
        "url": ["The Link field is required."],
        "geo.0.key": ["Invalid country."],
        "platform.1.value": ["The platform.1.value format is invalid."]
    }, "status": 422});
    let errors = field_errors(&body);
    assert_eq!(errors.get("url").unwrap(), ["The Link field is required."]);
    assert_eq!(errors.get("geo.0.key").unwrap(), ["Invalid country."]);
    assert!(errors.contains("platform.1.value"));
    assert_eq!(errors.len(), 3);
}

#[test]
fn a_422_message_string_is_an_error_of_the_request() {
    let body = json!({"message": "The given data was invalid.", "status": 422});
    let errors = field_errors(&body);
    assert_eq!(
        errors.get("request").unwrap(),
        ["The given data was invalid."]
    );
}

#[test]
fn laravel_default_422_reads_its_errors_bag() {
    let body = json!({"message": "The given data was invalid.",
        "errors": {"alias": ["The Alias has already been taken."]}});
    let errors = field_errors(&body);
    assert_eq!(
        errors.get("alias").unwrap(),
        ["The Alias has already been taken."]
    );
    assert!(!errors.contains("request"));
}

#[test]
fn a_bare_404_message_is_read() {
    let body = json!({"message": "No query results for model [App\\Link]."});
    assert_eq!(
        message(&body).as_deref(),
        Some("No query results for model [App\\Link].")
    );
    assert_eq!(message(&json!({"message": {"a": ["b"]}})), None);
}

#[test]
fn a_bad_field_is_named_in_the_message() {
    let mut body = reference_show();
    body["data"]["clicks"] = json!("many");
    let err = record(&body, link).unwrap_err();
    assert_eq!(err, "clicks: expected a number, got \"many\"");
    let mut body = reference_show();
    body["data"]["space"]["color"] = json!(9);
    let err = record(&body, link).unwrap_err();
    assert_eq!(err, "space.color: 9 is not a colour from 1 to 6");
}

#[test]
fn a_list_item_error_names_its_index() {
    let mut item = reference_show()["data"].clone();
    item["created_at"] = json!("yesterday");
    let body = json!({"data": [reference_show()["data"].clone(), item]});
    let err = list(&body, (1, 10), link).unwrap_err();
    assert_eq!(
        err,
        "data.1.created_at: \"yesterday\" is not a date and time"
    );
}

#[test]
fn a_list_without_meta_falls_back_to_what_was_asked() {
    let body = json!({"data": [reference_show()["data"].clone()]});
    let page = list(&body, (2, 10), link).unwrap();
    assert_eq!((page.page, page.per_page, page.total), (2, 10, 11));
}

#[test]
fn a_list_is_read_a_record_at_a_time_each_within_its_limit() {
    let item = reference_show()["data"].clone();
    let mut huge = item.clone();
    huge["title"] = json!("t".repeat(RECORD_MAX));
    let body = json!({"data": [item, huge], "meta": {"total": 2}});
    assert_eq!(
        list(&body, (1, 10), link).unwrap_err(),
        "data.1: more than 1 MiB, the most linkdeck reads of one record"
    );
    // Not JSON at all, JSON without a list, and nothing.
    assert!(envelope(b"<html>").is_none());
    assert!(envelope(b"{\"data\": [").is_none());
    for body in [
        &b"[]"[..],
        b"\"data\"",
        b"{\"data\": {}}",
        b"{\"data\": null}",
        b"  ",
    ] {
        let err = page(&envelope(body).unwrap(), (1, 10), link).unwrap_err();
        assert_eq!(err, "no \"data\" list in the answer", "{body:?}");
    }
}

#[test]
fn a_long_server_message_is_cut_to_an_excerpt() {
    let long = "x".repeat(50_000);
    let shown = message(&json!({"message": long})).unwrap();
    assert_eq!(
        shown,
        format!(
            "{}…(49,800 more bytes)",
            "x".repeat(crate::domain::EXCERPT_CHARS)
        )
    );
    let errors = field_errors(&json!({"message": {"url": [long.clone()], long.clone(): "y"}}));
    assert_eq!(errors.get("url").unwrap(), std::slice::from_ref(&shown));
    assert_eq!(errors.get(&shown).unwrap(), ["y"]);
}
