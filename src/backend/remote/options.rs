//! Link options on a remote server: a linkdeck server keeps them (and says so in its
//! capabilities); a v1-only server (a phpShort site) has none, and is told apart before
//! anything is sent, so a request that sets one is a field error naming it rather than an
//! option silently lost. A request that only names the defaults is sent without them.

use super::RemoteBackend;
use crate::domain::{Error, FieldErrors, LinkInput, Result};

impl RemoteBackend {
    /// Whether the server keeps link options (a linkdeck server new enough to say so).
    pub(super) async fn keeps_options(&self) -> Result<bool> {
        Ok(self.linkdeck().await?.is_some_and(|caps| caps.link_options))
    }

    /// `input` as this server can take it: see the module's comment.
    pub(super) async fn optioned_input(&self, input: LinkInput) -> Result<LinkInput> {
        let none = input.options().iter().all(|(_, v)| v.is_none()) && input.rules.is_none();
        if none || self.keeps_options().await? {
            return Ok(input);
        }
        let set = input.options_set();
        if !set.is_empty() {
            let mut errors = FieldErrors::default();
            for field in set {
                errors.add(field.name(), no_options().to_string());
            }
            return Err(errors.into());
        }
        let mut input = input;
        input.take_options();
        Ok(input)
    }
}

/// What a server without link options answers for one.
pub fn no_options() -> Error {
    Error::Unsupported(
        "this server keeps no link options (forwarding, indexing, previews and redirect rules \
         need a linkdeck server)"
            .into(),
    )
}
