//! A space or domain as the app offers it in filters and pickers: its id, and its name.

use crate::domain::{Domain, Id, Space};

/// A filter value and the name shown for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub id: Id,
    pub name: String,
}

impl From<&Space> for Named {
    fn from(space: &Space) -> Named {
        Named {
            id: space.id,
            name: space.name.clone(),
        }
    }
}

impl From<&Domain> for Named {
    fn from(domain: &Domain) -> Named {
        Named {
            id: domain.id,
            name: domain.name.clone(),
        }
    }
}
