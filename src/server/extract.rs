//! Typed extractors for the v1 API's handlers, so each rule about a request is written once:
//! who is calling ([`Caller`], put there by the key check), which record the path names
//! ([`RecordId`]), and a form body read strictly ([`V1Form`]). A handler names what it needs in
//! its arguments; the first one that fails answers for it.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::form::{FormFields, check_form_content_type, parse_form};
use crate::backend::Backend;
use crate::domain::{Error, Id, SpaceSet};

/// Who is calling: the backend acting for the API key's owner. The key check (`api::authenticate`)
/// adds it to every request it lets through.
#[derive(Clone)]
pub struct Caller {
    /// The owner's data as far as the key reaches.
    pub backend: Arc<dyn Backend>,
    /// The key's owner, for what the service answers beyond the `Backend` contract.
    pub owner: Id,
    /// The spaces the key is limited to; `None`: the whole account.
    pub spaces: Option<SpaceSet>,
}

/// A caller whose key reaches the whole account: what a path that answers beyond the `Backend`
/// contract (an import, webhooks) takes instead of [`Caller`], so that a key limited to spaces
/// is refused it (403, saying why) before anything is read.
#[derive(Clone)]
pub struct AccountCaller(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for AccountCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        match caller.spaces {
            None => Ok(AccountCaller(caller)),
            Some(spaces) => Err(ApiError::Domain(Error::Forbidden(format!(
                "this key is limited to {}, and this request concerns the whole account",
                spaces.described()
            )))),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ApiError::Domain(Error::Unauthorized("no caller".into())))
    }
}

/// A record id from the path (`/links/{id}`); anything but a positive integer names no record.
#[derive(Debug, Clone, Copy)]
pub struct RecordId(pub Id);

impl<S: Send + Sync> FromRequestParts<S> for RecordId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        raw.parse::<Id>()
            .ok()
            .filter(|id| *id > 0)
            .map(RecordId)
            .ok_or_else(|| ApiError::Domain(Error::not_found("record")).into_response())
    }
}

/// A v1 form body: form-urlencoded in UTF-8 (or empty), read into `T` by [`parse_form`] with
/// `T`'s list fields.
pub struct V1Form<T>(pub T);

impl<S: Send + Sync, T: FormFields> FromRequest<S> for V1Form<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let headers = request.headers().clone();
        let body = Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        check_form_content_type(&headers, body.len()).map_err(IntoResponse::into_response)?;
        parse_form(&body, &T::SPEC)
            .map(V1Form)
            .map_err(IntoResponse::into_response)
    }
}
