//! The chunker and the Markdown helpers it relies on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikantik::chunk::{chunk_body, ChunkerConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let config = ChunkerConfig::default();
    for chunk in chunk_body(text, &config) {
        let _ = chunk;
    }
    let _ = wikantik::html::reduce_html_blocks(text);
    let _ = wikantik::html::html_to_text(text);
    let _ = wikantik::markdown::url_decode(text, true);
});
