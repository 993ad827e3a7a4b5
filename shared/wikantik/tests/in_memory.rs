//! The native twin of `tests/wasm.rs`: the same end-to-end tests of the core over an
//! in-memory store (`parity/`, `support/`), so the WASM runs are a parity check against
//! this one. On wasm32 targets this file is empty; `tests/wasm.rs` runs the tests there.
#![cfg(not(target_arch = "wasm32"))]

mod parity;
mod support;
