//! A link's options on any backend (forwarding the visitor's query and path, indexing, the
//! preview card): the defaults on a plain link, given and read back, changed one at a time,
//! cleared, refused by field with a reason, refused for many links at once, and kept through
//! the trash and undo.

use linkdeck::backend::{BulkAction, Progress, Selection};
use linkdeck::domain::{LinkInput, LinkOptions, PREVIEW_DESCRIPTION_MAX, PREVIEW_TITLE_MAX};

use super::{Harness, assert_fields};

fn optioned() -> LinkInput {
    LinkInput {
        forward_query: Some("0".into()),
        forward_path: Some("1".into()),
        allow_indexing: Some("true".into()),
        preview_title: Some("  Spring <sale> & \"more\"  ".into()),
        preview_description: Some("Everything half price".into()),
        preview_image: Some("https://img.example/spring.png".into()),
        ..LinkInput::with_url("https://a.example/shop")
    }
}

fn spring() -> LinkOptions {
    LinkOptions {
        forward_query: false,
        forward_path: true,
        allow_indexing: true,
        preview_title: Some("Spring <sale> & \"more\"".into()),
        preview_description: Some("Everything half price".into()),
        preview_image: Some("https://img.example/spring.png".into()),
        rules: Vec::new(),
    }
}

pub async fn link_options_are_stored_changed_and_checked(h: &dyn Harness) {
    let b = h.backend();
    let plain = b
        .create_link(&LinkInput::with_url("https://a.example/plain"))
        .await
        .unwrap();
    assert_eq!(plain.options, LinkOptions::default(), "today's behaviour");
    assert!(plain.options.forward_query && !plain.options.forward_path);
    assert_eq!(plain.previews, 0);

    let link = b.create_link(&optioned()).await.unwrap();
    assert_eq!(link.options, spring(), "as typed, trimmed");
    assert_eq!(b.show_link(link.id).await.unwrap().options, spring());

    // One switch changed; the others stay.
    let changed = b
        .update_link(
            link.id,
            &LinkInput {
                forward_query: Some("1".into()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        changed.options,
        LinkOptions {
            forward_query: true,
            ..spring()
        }
    );
    // Empty clears a preview text; an update naming nothing of the options keeps them.
    let cleared = b
        .update_link(
            link.id,
            &LinkInput {
                preview_title: Some(String::new()),
                preview_image: Some(String::new()),
                alias: Some("spring".into()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(cleared.options.preview_title, None);
    assert_eq!(cleared.options.preview_image, None);
    assert_eq!(
        cleared.options.preview_description.as_deref(),
        Some("Everything half price")
    );
    assert!(cleared.options.forward_path && cleared.options.allow_indexing);

    let bad = LinkInput {
        forward_path: Some("sometimes".into()),
        preview_title: Some("t".repeat(PREVIEW_TITLE_MAX + 1)),
        preview_description: Some("d".repeat(PREVIEW_DESCRIPTION_MAX + 1)),
        preview_image: Some("javascript:alert(1)".into()),
        ..LinkInput::with_url("https://a.example/bad")
    };
    let errors = assert_fields(
        b.create_link(&bad).await,
        &[
            "forward_path",
            "preview_title",
            "preview_description",
            "preview_image",
        ],
    );
    assert!(
        errors.get("preview_title").unwrap()[0].contains("200"),
        "{errors:?}"
    );
    // At the bounds: accepted.
    let long = b
        .create_link(&LinkInput {
            preview_title: Some("é".repeat(PREVIEW_TITLE_MAX)),
            preview_description: Some("d".repeat(PREVIEW_DESCRIPTION_MAX)),
            ..LinkInput::with_url("https://a.example/long")
        })
        .await
        .unwrap();
    assert_eq!(
        long.options.preview_title.map(|t| t.chars().count()),
        Some(PREVIEW_TITLE_MAX)
    );

    // Options belong to one link at a time.
    let many = BulkAction::Update(LinkInput {
        allow_indexing: Some("1".into()),
        ..LinkInput::default()
    });
    assert_fields(
        b.bulk(&Selection::of_ids([plain.id]), &many, &Progress::new())
            .await,
        &["allow_indexing"],
    );
}

pub async fn link_options_come_back_with_their_links_from_the_trash(h: &dyn Harness) {
    let b = h.backend();
    let link = b.create_link(&optioned()).await.unwrap();
    let report = b
        .bulk(
            &Selection::of_ids([link.id]),
            &BulkAction::Delete,
            &Progress::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.changed, 1);
    b.revert(&report.undo, &Progress::new()).await.unwrap();
    let back = b
        .list_links(&linkdeck::domain::LinkQuery::default())
        .await
        .unwrap()
        .items;
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].options, spring());
}
