//! Shared set-up of the fuzz targets: the sample wiki compiled once into memory, and the
//! service configuration every request goes through.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use wikantik::auth::{AccessConfig, KeyRing};
use wikantik::compile::{compile, CompileOptions, SourcePage};
use wikantik::http::{Request, Response};
use wikantik::mcp::McpConfig;
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::service::{handle, ServiceConfig};

/// The sample wiki's pages (`examples/wiki`), read without the index-builder.
pub fn sample_pages() -> Vec<SourcePage> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wiki");
    let mut pages: Vec<SourcePage> = std::fs::read_dir(&dir)
        .expect("examples/wiki")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.ends_with(".md") || name.ends_with(".html")).then(|| SourcePage {
                text: std::fs::read_to_string(e.path()).expect("page"),
                file_name: name,
                git_version: None,
                updated: 1_790_000_000,
            })
        })
        .collect();
    pages.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    pages
}

/// The sample wiki as an in-memory index, opened once.
pub fn reader() -> &'static IndexReader<MemoryStore> {
    static READER: OnceLock<IndexReader<MemoryStore>> = OnceLock::new();
    READER.get_or_init(|| {
        let compiled = compile(sample_pages(), &CompileOptions::default(), &mut |_, _, _| {}).expect("compile sample");
        let store = MemoryStore::from_compiled(&compiled);
        pollster::block_on(IndexReader::open(store, Arc::new(ShardCache::default()))).expect("open sample")
    })
}

/// REST and MCP open to anonymous callers (public pages only).
pub fn config() -> &'static ServiceConfig {
    static CONFIG: OnceLock<ServiceConfig> = OnceLock::new();
    CONFIG.get_or_init(|| ServiceConfig {
        mcp: McpConfig { access: AccessConfig { keys: KeyRing::empty(), allow_unrestricted: true }, ..McpConfig::default() },
        ..ServiceConfig::default()
    })
}

/// Route one request through the whole service; every answer must be a well-formed response.
pub fn serve(request: &Request) -> Response {
    let response = pollster::block_on(handle(Ok(reader()), request, config()));
    assert!((200..600).contains(&response.status));
    assert_ne!(response.status, 500, "internal error for {request:?}: {}", String::from_utf8_lossy(&response.body));
    response
}
