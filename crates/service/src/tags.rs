//! The tag rules of the embedded service: what an owner's tags are, and renaming one — a merge
//! where a link already carries the new name.

use super::LocalBackend;
use linkdeck_domain::{Error, FieldErrors, Result, TagCount, retagged, tag};

/// The tags a link carries after `from` is renamed `to`.
fn renamed(tags: Vec<String>, from: &str, to: &str) -> Vec<String> {
    retagged(&tags, &[to.to_owned()], &[from.to_owned()])
}

impl LocalBackend {
    pub(super) async fn tag_list(&self) -> Result<Vec<TagCount>> {
        let owner = self.owner_id;
        self.store().read(move |tx| tx.tags(owner)).await
    }

    pub(super) async fn tag_rename(&self, from: &str, to: &str) -> Result<u64> {
        let mut errors = FieldErrors::default();
        let mut checked =
            |field: &str, raw: &str| tag(raw).map_err(|message| errors.add(field, message)).ok();
        let (from, to) = (checked("from", from), checked("to", to));
        let (Some(from), Some(to)) = (from, to) else {
            return Err(errors.into());
        };
        let owner = self.owner_id;
        self.store()
            .write(move |tx| {
                let tagged = tx.tagged(owner, &from)?;
                if tagged.is_empty() {
                    return Err(Error::not_found(format!("tag {from:?}")));
                }
                if from == to {
                    return Ok(0);
                }
                let changed = tagged.len() as u64;
                for (id, tags) in tagged {
                    tx.set_tags(id, &renamed(tags, &from, &to))?;
                }
                Ok(changed)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::renamed;

    #[test]
    fn a_rename_onto_a_tag_the_link_has_merges_them() {
        let tags = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(renamed(tags(&["b", "old"]), "old", "a"), tags(&["a", "b"]));
        assert_eq!(renamed(tags(&["new", "old"]), "old", "new"), tags(&["new"]));
    }
}
