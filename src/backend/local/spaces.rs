//! The space rules of the embedded service over the SQL in `store::spaces`.

use super::LocalBackend;
use super::store::spaces as store;
use crate::domain::{
    Error, FieldErrors, Id, Mode, Page, Result, Sort, Space, SpaceInput, SpaceQuery,
    validate_space_input,
};

pub(super) const NAME_TAKEN: &str = "is already used by another of your spaces";

impl LocalBackend {
    pub(super) async fn space_list(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        query.validate()?;
        let query = query.clone();
        self.read_page(query.page, query.per_page, move |conn, owner, offset| {
            store::list(
                conn,
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
        self.read_owned("space", id, store::get).await
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
        let now = self.service.now().as_second();
        let id = self
            .service
            .db()?
            .write(move |tx| {
                if let Some(id) = id
                    && store::get(tx, owner, id)?.is_none()
                {
                    return Err(Error::not_found(format!("space {id}")));
                }
                let (patch, mut errors) = match validated {
                    Ok(patch) => (Some(patch), FieldErrors::default()),
                    Err(errors) => (None, errors),
                };
                let name = patch.as_ref().map_or(raw_name, |p| p.name.clone());
                if let Some(name) = name.filter(|n| !n.is_empty())
                    && store::id_by_name(tx, owner, &name, id)?.is_some()
                {
                    errors.add("name", NAME_TAKEN);
                }
                let Some(patch) = patch.filter(|_| errors.is_empty()) else {
                    return Err(errors.into());
                };
                match (id, patch.name, patch.color) {
                    (Some(id), name, color) => {
                        store::update(tx, owner, id, name.as_deref(), color, now)?;
                        Ok(id)
                    }
                    (None, Some(name), Some(color)) => store::insert(tx, owner, &name, color, now),
                    // Validation requires both on create.
                    (None, _, _) => Err(Error::field("name", "is required")),
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
