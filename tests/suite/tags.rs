//! Tags on any backend: given as typed and read back as stored, listed with every tag or any,
//! beside a search and the other filters; counted, renamed and merged; kept through the trash
//! and undo; each owner's own.

use linkdeck::backend::{BulkAction, Progress, Selection};
use linkdeck::domain::{
    Error, Id, LinkInput, LinkQuery, SearchBy, SpaceFilter, SpaceInput, StatusFilter, TagCount,
    TagMatch,
};

use super::{Harness, assert_fields, ids, query};

fn tagged(url: &str, tags: &str) -> LinkInput {
    LinkInput {
        tags: Some(tags.into()),
        ..LinkInput::with_url(url)
    }
}

fn with_tags(tags: &[&str], how: TagMatch) -> LinkQuery {
    LinkQuery {
        tags: tags.iter().map(|t| t.to_string()).collect(),
        tag_match: how,
        ..query()
    }
}

/// The ids `q` lists, in id order.
async fn listed(h: &dyn Harness, q: LinkQuery) -> Vec<Id> {
    let mut listed = ids(h, q).await;
    listed.sort();
    listed
}

fn counts(pairs: &[(&str, u64)]) -> Vec<TagCount> {
    pairs
        .iter()
        .map(|(name, links)| TagCount {
            name: name.to_string(),
            links: *links,
        })
        .collect()
}

pub async fn tags_are_stored_as_the_rules_say_and_filter_lists(h: &dyn Harness) {
    let b = h.backend();
    let a = b
        .create_link(&tagged("https://a.example/spring", " Promo , q4,promo"))
        .await
        .unwrap();
    assert_eq!(a.tags, ["promo", "q4"], "trimmed, lower-case, sorted, once");
    let c = b
        .create_link(&tagged("https://c.example/spring", "promo"))
        .await
        .unwrap();
    let d = b
        .create_link(&tagged("https://d.example/autumn", "q4, news"))
        .await
        .unwrap();
    let plain = b
        .create_link(&LinkInput::with_url("https://e.example/spring"))
        .await
        .unwrap();
    assert!(plain.tags.is_empty());
    assert_eq!(b.show_link(a.id).await.unwrap().tags, ["promo", "q4"]);

    assert_eq!(
        listed(h, with_tags(&["promo"], TagMatch::All)).await,
        [a.id, c.id]
    );
    assert_eq!(
        listed(h, with_tags(&["promo", "q4"], TagMatch::All)).await,
        [a.id]
    );
    assert_eq!(
        listed(h, with_tags(&["promo", "news"], TagMatch::Any)).await,
        [a.id, c.id, d.id]
    );
    assert!(
        listed(h, with_tags(&["nothing"], TagMatch::Any))
            .await
            .is_empty()
    );
    // Beside a search, which narrows them: short terms and longer ones.
    for term in ["sp", "spring"] {
        let q = LinkQuery {
            search: Some(term.into()),
            by: SearchBy::Url,
            ..with_tags(&["q4"], TagMatch::All)
        };
        assert_eq!(listed(h, q).await, [a.id], "{term}");
    }
    // And beside a status; the total counts the tagged links alone.
    b.update_link(
        c.id,
        &LinkInput {
            disabled: Some("1".into()),
            ..LinkInput::default()
        },
    )
    .await
    .unwrap();
    let active = LinkQuery {
        status: StatusFilter::Active,
        ..with_tags(&["promo"], TagMatch::All)
    };
    let page = b.list_links(&active).await.unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.items[0].id, a.id);

    assert_eq!(
        b.tags().await.unwrap(),
        counts(&[("news", 1), ("promo", 2), ("q4", 2)])
    );
    // The other owner has none of them, and finds none of these links by them.
    assert!(h.other_owner().tags().await.unwrap().is_empty());
    let theirs = h
        .other_owner()
        .list_links(&with_tags(&["promo"], TagMatch::Any))
        .await
        .unwrap();
    assert_eq!(theirs.total, 0);
}

pub async fn tags_are_changed_cleared_and_checked(h: &dyn Harness) {
    let b = h.backend();
    let link = b
        .create_link(&tagged("https://a.example", "one, two"))
        .await
        .unwrap();
    // Another field changed leaves the tags alone.
    let kept = b
        .update_link(
            link.id,
            &LinkInput {
                public: Some("1".into()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(kept.tags, ["one", "two"]);
    let changed = b
        .update_link(link.id, &tagged("https://a.example", "Three"))
        .await
        .unwrap();
    assert_eq!(changed.tags, ["three"]);
    assert!(
        listed(h, with_tags(&["one"], TagMatch::Any))
            .await
            .is_empty()
    );
    let cleared = b
        .update_link(
            link.id,
            &LinkInput {
                tags: Some(String::new()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert!(cleared.tags.is_empty());
    assert!(b.tags().await.unwrap().is_empty());

    let long = "x".repeat(linkdeck::domain::TAG_MAX + 1);
    let errors = assert_fields(
        b.create_link(&tagged("https://b.example", &format!("fine, {long}")))
            .await,
        &["tags"],
    );
    assert!(errors.to_string().contains("at most"), "{errors}");
    let many: Vec<String> = (0..=linkdeck::domain::TAGS_PER_LINK_MAX)
        .map(|n| format!("t{n}"))
        .collect();
    assert_fields(
        b.create_link(&tagged("https://b.example", &many.join(",")))
            .await,
        &["tags"],
    );
    assert_eq!(
        b.list_links(&query()).await.unwrap().total,
        1,
        "nothing half-written"
    );
}

pub async fn a_tag_renamed_onto_another_merges_them(h: &dyn Harness) {
    let b = h.backend();
    let both = b
        .create_link(&tagged("https://a.example", "sale, promo"))
        .await
        .unwrap();
    let old = b
        .create_link(&tagged("https://b.example", "sale"))
        .await
        .unwrap();
    b.create_link(&tagged("https://c.example", "promo"))
        .await
        .unwrap();
    assert_eq!(b.rename_tag("Sale", "Promo").await.unwrap(), 2);
    assert_eq!(b.show_link(both.id).await.unwrap().tags, ["promo"]);
    assert_eq!(b.show_link(old.id).await.unwrap().tags, ["promo"]);
    assert_eq!(b.tags().await.unwrap(), counts(&[("promo", 3)]));
    assert_eq!(b.rename_tag("promo", "spring sale").await.unwrap(), 3);
    assert_eq!(b.tags().await.unwrap(), counts(&[("spring sale", 3)]));

    assert!(matches!(
        b.rename_tag("gone", "x").await,
        Err(Error::NotFound(_))
    ));
    assert_fields(b.rename_tag("", "a,b").await, &["from", "to"]);
    // Another owner's tag is not theirs to rename.
    assert!(matches!(
        h.other_owner().rename_tag("spring sale", "x").await,
        Err(Error::NotFound(_))
    ));
}

pub async fn tags_come_back_with_their_links_from_the_trash(h: &dyn Harness) {
    let b = h.backend();
    let space = b
        .create_space(&SpaceInput {
            name: Some("Launch".into()),
            color: Some("2".into()),
        })
        .await
        .unwrap();
    let link = b
        .create_link(&LinkInput {
            space: Some(space.id.to_string()),
            ..tagged("https://a.example", "keep")
        })
        .await
        .unwrap();
    let report = b
        .bulk(
            &Selection::of_ids([link.id]),
            &BulkAction::Delete,
            &Progress::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.changed, 1);
    assert!(
        b.tags().await.unwrap().is_empty(),
        "a trashed link's tags go"
    );
    b.revert(&report.undo, &Progress::new()).await.unwrap();
    let q = LinkQuery {
        space: SpaceFilter::In(space.id),
        ..with_tags(&["keep"], TagMatch::All)
    };
    let back = b.list_links(&q).await.unwrap().items;
    assert_eq!(back.len(), 1, "found by its tag again");
    assert_eq!(back[0].tags, ["keep"]);
    assert_eq!(b.tags().await.unwrap(), counts(&[("keep", 1)]));
}
