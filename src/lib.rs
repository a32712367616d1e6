//! linkdeck: manage short links from the terminal. One crate: the service's rules (`domain`),
//! the backends that implement them (`backend`), and the front ends over them.

pub mod backend;
pub mod cli;
pub mod config;
pub use linkdeck_domain as domain;
pub mod qr;
pub mod server;
pub mod transfer;
pub mod tui;
pub mod wire;
