//! Who may see what: API keys and the key ring ([`auth`]), and the caller a request runs as,
//! with what it may view ([`access`]: restricted ≡ nonexistent).

pub mod access;
pub mod auth;

pub use access::Caller;
