//! The one contract every front end calls (`linkdeck-backend`, re-exported here), and the two
//! services behind it: the embedded one (`local`, the `linkdeck-service` crate) and a remote v1
//! server (`remote`).

pub use linkdeck_backend::*;
pub use linkdeck_secret as secret;
pub use linkdeck_service as local;
pub mod remote;
