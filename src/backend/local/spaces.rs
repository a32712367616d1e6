//! The space rules of the embedded service over the SQL in `store::spaces` (SQLite) and
//! `pg::spaces` (PostgreSQL).

use super::LocalBackend;
use super::pg::{self, spaces as pg_spaces};
use super::store::spaces as store;
use crate::domain::{
    Color, Error, FieldErrors, Id, Mode, Page, Result, Sort, Space, SpaceInput, SpacePatch,
    SpaceQuery, validate_space_input,
};

pub(super) const NAME_TAKEN: &str = "is already used by another of your spaces";

impl LocalBackend {
    pub(super) async fn space_list(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        query.validate()?;
        let on_sqlite = query.clone();
        let on_pg = query.clone();
        self.read_page(
            query.page,
            query.per_page,
            move |conn, owner, offset| {
                store::list(
                    conn,
                    owner,
                    on_sqlite.search_term(),
                    on_sqlite.sort == Sort::Desc,
                    offset,
                    on_sqlite.per_page,
                )
            },
            move |pg, owner, offset| async move {
                pg_spaces::list(
                    &pg,
                    owner,
                    on_pg.search_term(),
                    on_pg.sort == Sort::Desc,
                    offset,
                    on_pg.per_page,
                )
                .await
            },
        )
        .await
    }

    pub(super) async fn space_show(&self, id: Id) -> Result<Space> {
        self.read_owned("space", id, store::get, |pg, owner, id| async move {
            let client = pg.client().await?;
            pg_spaces::get(&client, owner, id).await
        })
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
        let now = self.service.now().as_second();
        let id = match self.service.pg() {
            Some(pg) => {
                let mut client = pg.client().await?;
                let tx = pg::write(&mut client).await?;
                if let Some(id) = id
                    && pg_spaces::get(&tx, owner, id).await?.is_none()
                {
                    return Err(Error::not_found(format!("space {id}")));
                }
                let name = name_to_check(&validated, raw_name);
                let taken = match &name {
                    Some(name) => pg_spaces::id_by_name(&tx, owner, name, id).await?.is_some(),
                    None => false,
                };
                let id = match (id, settle(validated, taken)?) {
                    (Some(id), (name, color)) => {
                        pg_spaces::update(&tx, owner, id, name.as_deref(), color, now).await?;
                        id
                    }
                    (None, (Some(name), Some(color))) => {
                        pg_spaces::insert(&tx, owner, &name, color, now).await?
                    }
                    (None, _) => return Err(Error::field("name", "is required")),
                };
                tx.commit().await.map_err(pg::pg_error)?;
                id
            }
            None => {
                self.service
                    .db()?
                    .write(move |tx| {
                        if let Some(id) = id
                            && store::get(tx, owner, id)?.is_none()
                        {
                            return Err(Error::not_found(format!("space {id}")));
                        }
                        let taken = match name_to_check(&validated, raw_name) {
                            Some(name) => store::id_by_name(tx, owner, &name, id)?.is_some(),
                            None => false,
                        };
                        match (id, settle(validated, taken)?) {
                            (Some(id), (name, color)) => {
                                store::update(tx, owner, id, name.as_deref(), color, now)?;
                                Ok(id)
                            }
                            (None, (Some(name), Some(color))) => {
                                store::insert(tx, owner, &name, color, now)
                            }
                            // Validation requires both on create.
                            (None, _) => Err(Error::field("name", "is required")),
                        }
                    })
                    .await?
            }
        };
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
