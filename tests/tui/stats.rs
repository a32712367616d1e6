//! The Stats view through the real event loop: from the list into a link's traffic, a period
//! change and a step back, the dashboard and a top link's own traffic, and back each time.

use super::*;
use linkdeck::backend::local::serving::VisitRow;

fn visit(link: Id, hours_ago: i64, country: &str) -> VisitRow {
    VisitRow {
        link_id: link,
        at: now().as_second() - hours_ago * 3600,
        country: Some(country.into()),
        platform: Some("iOS".into()),
        browser: Some("Safari".into()),
        referrer: Some("t.co".into()),
        language: Some("de".into()),
        address: None,
        rule: None,
    }
}

#[tokio::test]
async fn from_the_list_into_a_links_traffic_a_period_change_and_back() {
    let db = db().await;
    let spring = db.link("spring", "https://shop.example.com/spring").await;
    let docs = db.link("docs", "https://docs.example.com/").await;
    let mut visits: Vec<VisitRow> = (0..5).map(|h| visit(spring.id, h * 30, "DE")).collect();
    // Forty days ago: outside 30 days, inside 90.
    visits.push(visit(spring.id, 40 * 24, "FR"));
    visits.push(visit(docs.id, 2, "US"));
    db.service.record_visits(visits).await.unwrap();
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("2 links").await;

    // docs is newest, on top: move to spring and open its traffic.
    tui.key(KeyCode::Char('j'));
    tui.press(KeyCode::Char('S'), KeyModifiers::SHIFT);
    let screen = tui.settled_with("Traffic of link spring").await;
    assert!(screen.contains("5 clicks"), "{screen}");
    assert!(screen.contains("Germany"), "{screen}");
    assert!(!screen.contains("France"), "{screen}");

    // 30 days → 90 days: the visit of forty days ago comes in.
    tui.key(KeyCode::Char('p'));
    let screen = tui.settled_with("6 clicks").await;
    assert!(screen.contains("France"), "{screen}");
    // The 90 days before: nothing.
    tui.key(KeyCode::Char('['));
    let screen = tui.settled_with("0 clicks").await;
    assert!(screen.contains("No visits in this period"), "{screen}");
    tui.key(KeyCode::Char(']'));
    tui.settled_with("6 clicks").await;

    // Back to the list, where it was.
    tui.key(KeyCode::Esc);
    tui.wait_for("the list again", |s| {
        s.contains("▶ spring") && !s.contains("Traffic of")
    })
    .await;

    // The dashboard: top links, and Enter on one opens its own traffic.
    tui.press(KeyCode::Char('T'), KeyModifiers::SHIFT);
    let screen = tui.settled_with("Traffic of every link").await;
    assert!(screen.contains("Top links"), "{screen}");
    assert!(
        screen.contains("7 clicks"),
        "the period stays 90 days: {screen}"
    );
    tui.key(KeyCode::Char('j'));
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("Traffic of link docs").await;
    assert!(screen.contains("1 click "), "{screen}");
    tui.key(KeyCode::Esc);
    tui.settled_with("Traffic of every link").await;
    tui.key(KeyCode::Esc);
    tui.wait_for("the list again", |s| {
        s.contains("▶ spring") && !s.contains("Traffic of")
    })
    .await;
    tui.quit().await;
}

#[tokio::test]
async fn a_space_opens_its_traffic_from_the_spaces_pane() {
    let db = db().await;
    let space = db
        .backend
        .create_space(&SpaceInput {
            name: s("Launch"),
            color: s("3"),
        })
        .await
        .unwrap();
    let link = db
        .link_with(
            "inside",
            "https://example.com/in",
            LinkInput {
                space: Some(space.id.to_string()),
                ..LinkInput::default()
            },
        )
        .await;
    db.service
        .record_visits(vec![visit(link.id, 1, "NL"), visit(link.id, 2, "NL")])
        .await
        .unwrap();
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("1 link").await;
    tui.key(KeyCode::Tab);
    tui.wait_text("Launch").await;
    tui.press(KeyCode::Char('S'), KeyModifiers::SHIFT);
    let screen = tui.settled_with("Traffic of space Launch").await;
    assert!(
        screen.contains("2 clicks") && screen.contains("inside"),
        "{screen}"
    );
    tui.quit().await;
}

#[tokio::test]
async fn a_tag_in_the_tag_filter_opens_the_traffic_of_its_links() {
    let db = db().await;
    let tagged = |tags: &str| LinkInput {
        tags: s(tags),
        ..LinkInput::default()
    };
    let spring = db
        .link_with("spring", "https://example.com/spring", tagged("promo"))
        .await;
    let autumn = db
        .link_with("autumn", "https://example.com/autumn", tagged("promo, q4"))
        .await;
    let docs = db.link("docs", "https://example.com/docs").await;
    db.service
        .record_visits(vec![
            visit(spring.id, 1, "NL"),
            visit(autumn.id, 2, "DE"),
            visit(autumn.id, 3, "DE"),
            visit(docs.id, 1, "US"),
        ])
        .await
        .unwrap();
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("3 links").await;
    tui.key(KeyCode::Char('t'));
    // Most used first: promo (2), then q4 (1).
    tui.wait_text("S its traffic").await;
    tui.wait_text("promo (2)").await;
    tui.key(KeyCode::Down);
    tui.key(KeyCode::Down);
    tui.press(KeyCode::Char('S'), KeyModifiers::SHIFT);
    let screen = tui.settled_with("Traffic of tag promo").await;
    assert!(screen.contains("3 clicks"), "{screen}");
    assert!(
        screen.contains("autumn") && screen.contains("spring") && !screen.contains("docs"),
        "its top links: {screen}"
    );
    assert!(!screen.contains("United States"), "{screen}");
    // Back to the list, its filter as it was.
    tui.key(KeyCode::Esc);
    tui.wait_for("the list again", |s| {
        s.contains("3 links") && !s.contains("Traffic of")
    })
    .await;
    tui.quit().await;
}
