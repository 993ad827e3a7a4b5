//! The core's end-to-end tests, run inside WebAssembly.
//!
//! * wasm32-unknown-unknown (Cloudflare Workers): `wasm-bindgen-test` under Node, through the
//!   runner in `.cargo/config.toml` — `cargo test -p wikantik --target wasm32-unknown-unknown
//!   --test wasm` (or `scripts/wasm-tests.sh`, which installs the runner first);
//! * wasm32-wasip2 (Spin): libtest under wasmtime — `CARGO_TARGET_WASM32_WASIP2_RUNNER=wasmtime
//!   cargo test -p wikantik --target wasm32-wasip2 --test wasm`.
//!
//! The tests themselves live in `parity/` and also run natively as `tests/in_memory.rs`.
//! Without `wasm_bindgen_test_configure!(run_in_browser)`, wasm-bindgen-test runs them in Node.
#![cfg(target_arch = "wasm32")]

mod parity;
mod support;
