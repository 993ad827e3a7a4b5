//! Writes the int8 all-MiniLM-L6-v2 model shard as CBOR, for the encoder bench and tests.
//!
//! ```text
//! scripts/fetch-model.sh
//! cargo run --release -p wikantik-index-builder --example export_model_shard \
//!     [MODEL_DIR] [OUT]      # defaults: .cache/models/all-MiniLM-L6-v2  .cache/models/all-MiniLM-L6-v2.int8.cbor
//! ```
//! (Until the build pipeline writes the shard itself, this is how one is made.)

use wikantik_index_builder::model_import;

use std::path::PathBuf;

fn main() -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut args = std::env::args_os().skip(1);
    let dir = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".cache/models/all-MiniLM-L6-v2"));
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".cache/models/all-MiniLM-L6-v2.int8.cbor"));
    let shard = model_import::import_minilm(&dir)?;
    let bytes = shard.to_cbor().map_err(|e| e.to_string())?;
    std::fs::write(&out, &bytes).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("wrote {} ({} bytes)", out.display(), bytes.len());
    Ok(())
}
