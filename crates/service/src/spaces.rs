//! The space rules of the embedded service over the SQL in `store::spaces` (SQLite) and
//! `pg::spaces` (PostgreSQL).

use linkdeck_store::words::NAME_TAKEN;

use super::LocalBackend;
use linkdeck_domain::{
    Color, Error, FieldErrors, Id, Mode, Page, Result, Sort, Space, SpaceInput, SpacePatch,
    SpaceQuery, validate_space_input,
};

impl LocalBackend {
    pub(super) async fn space_list(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        query.validate()?;
        let query = query.clone();
        self.page(query.page, query.per_page, move |tx, owner, offset| {
            tx.spaces(
                owner,
                query.search_term(),
                query.sort == Sort::Desc,
                offset,
                query.per_page,
            )
        })
        .await
    }

    pub(super) async fn space_show(&self, id: Id) -> Result<Space> {
        self.one("space", id, |tx, owner, id| tx.space(owner, id))
            .await
    }

    pub(super) async fn space_create(&self, input: &SpaceInput) -> Result<Space> {
        self.space_write(None, input).await
    }

    pub(super) async fn space_update(&self, id: Id, input: &SpaceInput) -> Result<Space> {
        self.space_write(Some(id), input).await
    }

    /// Creates (`id` None) or updates a space, checking every field and the name's uniqueness.
    async fn space_write(&self, id: Option<Id>, input: &SpaceInput) -> Result<Space> {
        let mode = if id.is_some() {
            Mode::Update
        } else {
            Mode::Create
        };
        let validated = validate_space_input(input, mode);
        let raw_name = input.name.as_deref().map(str::trim).map(str::to_owned);
        let owner = self.owner_id;
        let now = self.service.now();
        let id = self
            .store()
            .write(move |tx| {
                if let Some(id) = id
                    && tx.space(owner, id)?.is_none()
                {
                    return Err(Error::not_found(format!("space {id}")));
                }
                let taken = match name_to_check(&validated, raw_name) {
                    Some(name) => tx.space_named(owner, &name, id)?.is_some(),
                    None => false,
                };
                match (id, settle(validated, taken)?) {
                    (Some(id), (name, color)) => {
                        tx.update_space(owner, id, name.as_deref(), color, now)?;
                        Ok(id)
                    }
                    (None, (Some(name), Some(color))) => tx.insert_space(owner, &name, color, now),
                    // Validation requires both on create.
                    (None, _) => Err(Error::field("name", "is required")),
                }
            })
            .await?;
        self.space_show(id).await
    }

    /// Moves the space to the trash; its links stay, without a space, until it comes back.
    pub(super) async fn space_delete(&self, id: Id) -> Result<()> {
        self.trash_space(id).await
    }
}

/// The name whose uniqueness a write must check: the validated one, or — when other fields are
/// invalid — the one typed, so one answer reports every invalid field.
fn name_to_check(
    validated: &Result<SpacePatch, FieldErrors>,
    raw: Option<String>,
) -> Option<String> {
    match validated {
        Ok(patch) => patch.name.clone(),
        Err(_) => raw,
    }
    .filter(|n| !n.is_empty())
}

/// The validated name and colour to write, or every field error.
fn settle(
    validated: Result<SpacePatch, FieldErrors>,
    name_taken: bool,
) -> Result<(Option<String>, Option<Color>)> {
    let (patch, mut errors) = match validated {
        Ok(patch) => (Some(patch), FieldErrors::default()),
        Err(errors) => (None, errors),
    };
    if name_taken {
        errors.add("name", NAME_TAKEN);
    }
    match patch.filter(|_| errors.is_empty()) {
        Some(patch) => Ok((patch.name, patch.color)),
        None => Err(errors.into()),
    }
}
