//! Helpers shared by the end-to-end tests: locating the fixtures, building indexes into
//! scratch directories, and driving async core APIs to completion.

use std::path::{Path, PathBuf};

use wikantik::compile::{compile, CompileOptions, CompiledIndex};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The bundled sample wiki.
pub fn sample_wiki() -> PathBuf {
    repo_root().join("examples/wiki")
}

/// The real corpus beside the repository, if present (`WIKANTIK_CORPUS` overrides).
pub fn corpus() -> Option<PathBuf> {
    let path = std::env::var_os("WIKANTIK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/corpus/wikantik-pages"));
    if path.is_dir() {
        Some(path)
    } else {
        eprintln!("SKIP: the real corpus is not at {} (set WIKANTIK_CORPUS); corpus checks skipped", path.display());
        None
    }
}

/// A fresh scratch directory under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = repo_root().join("target/test-scratch").join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compile a wiki directory in-process (no output written).
pub fn compile_dir(dir: &Path) -> CompiledIndex {
    let (pages, skipped, _) = wikantik_index_builder::source::read_wiki(dir).expect("read wiki");
    assert!(skipped.is_empty(), "unexpected skipped files: {skipped:?}");
    let entity_sidecar = wikantik_index_builder::source::read_entity_sidecar(dir).expect("entity sidecar");
    compile(pages, &CompileOptions { entity_sidecar, ..CompileOptions::default() }, &mut |_, _, _| {}).expect("compile")
}

/// Compile a wiki directory in-process as [`compile_dir`] does, with every page's history
/// fixed: no git version and `updated` = `updated` for every page. A page's history comes from
/// the checkout (git log, else the file's modification time, which is the copy time of a
/// wiki that is not a git work tree), so only a build with fixed history is the same on
/// every machine.
pub fn compile_dir_with_fixed_history(dir: &Path, updated: i64) -> CompiledIndex {
    let (mut pages, skipped, _) = wikantik_index_builder::source::read_wiki(dir).expect("read wiki");
    assert!(skipped.is_empty(), "unexpected skipped files: {skipped:?}");
    for page in &mut pages {
        page.git_version = None;
        page.updated = updated;
    }
    let entity_sidecar = wikantik_index_builder::source::read_entity_sidecar(dir).expect("entity sidecar");
    compile(pages, &CompileOptions { entity_sidecar, ..CompileOptions::default() }, &mut |_, _, _| {}).expect("compile")
}

/// Compile a wiki directory in-process WITH vectors from a stand-in embedder: the tiny test
/// model (`wikantik::encoder::testing`) as the query encoder and keyword-hash section vectors
/// of its dimension, so sections sharing words are close. Fast and needs no model files; for
/// the real model see `tests/dense.rs`.
pub fn compile_dir_with_vectors(dir: &Path) -> CompiledIndex {
    compile_dir_with_vectors_and(dir, &CompileOptions::default())
}

/// [`compile_dir_with_vectors`] with other compile options.
pub fn compile_dir_with_vectors_and(dir: &Path, options: &CompileOptions) -> CompiledIndex {
    let (pages, skipped, _) = wikantik_index_builder::source::read_wiki(dir).expect("read wiki");
    assert!(skipped.is_empty(), "unexpected skipped files: {skipped:?}");
    wikantik::encoder::testing::compile_with_keyword_vectors(pages, options, None).expect("compile")
}

/// Run a future to completion on this thread.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// Write `pages` (file name, text; a relative path such as `.wikantik/entities.yaml` works
/// too) into a fresh wiki directory, build it, and return the index directory.
pub fn build_wiki(name: &str, pages: &[(String, String)]) -> PathBuf {
    write_and_build(name, pages, None, compile_dir)
}

/// [`build_wiki`], with every page file's modification time (a page's `updated` outside git)
/// set to `modified` when given, so two builds of the same pages agree on it.
pub fn build_wiki_modified_at(name: &str, pages: &[(String, String)], modified: Option<std::time::SystemTime>) -> PathBuf {
    write_and_build(name, pages, modified, compile_dir)
}

/// As [`build_wiki`], with vectors ([`compile_dir_with_vectors`]).
pub fn build_wiki_with_vectors(name: &str, pages: &[(String, String)]) -> PathBuf {
    write_and_build(name, pages, None, compile_dir_with_vectors)
}

/// As [`build_wiki_modified_at`], with vectors.
pub fn build_wiki_with_vectors_modified_at(name: &str, pages: &[(String, String)], modified: Option<std::time::SystemTime>) -> PathBuf {
    write_and_build(name, pages, modified, compile_dir_with_vectors)
}

fn write_and_build(name: &str, pages: &[(String, String)], modified: Option<std::time::SystemTime>, compile: fn(&Path) -> CompiledIndex) -> PathBuf {
    let root = scratch(name);
    let wiki = root.join("wiki");
    std::fs::create_dir_all(&wiki).expect("create wiki dir");
    for (file, text) in pages {
        let path = wiki.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create dir");
        }
        std::fs::write(&path, text).expect("write page");
        if let Some(at) = modified {
            std::fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(at)).expect("set page mtime");
        }
    }
    let out = root.join("index");
    wikantik_index_builder::output::write_index(&out, &compile(&wiki), 3).expect("write index");
    out
}

/// The sample wiki built with vectors ([`compile_dir_with_vectors`]) into a fresh index directory.
pub fn build_sample_with_vectors(name: &str) -> PathBuf {
    let out = scratch(name).join("index");
    wikantik_index_builder::output::write_index(&out, &compile_dir_with_vectors(&sample_wiki()), 3).expect("write index");
    out
}

/// Build the sample wiki into a fresh index directory.
pub fn build_sample(name: &str) -> PathBuf {
    let out = scratch(name).join("index");
    wikantik_index_builder::output::write_index(&out, &compile_dir(&sample_wiki()), 3).expect("write index");
    out
}

/// Open an index directory.
pub fn open(index: &Path) -> wikantik::reader::IndexReader<wikantik_native::DirStore> {
    block_on(wikantik::reader::IndexReader::open(
        wikantik_native::DirStore::new(index),
        std::sync::Arc::new(wikantik::reader::ShardCache::default()),
    ))
    .expect("open index")
}

/// A reader over `index` as another layout of it: `store` (the index's objects plus any
/// rewritten shards) under a manifest listing `shards` instead of the index's own, with the
/// same settings, statistics and dense side. For tests that older layouts are still served.
pub fn reader_with_shards(
    index: &CompiledIndex,
    mut store: wikantik::reader::MemoryStore,
    shards: Vec<wikantik::shard::ShardEntry>,
) -> wikantik::reader::IndexReader<wikantik::reader::MemoryStore> {
    let pointer = put_layout(index, &mut store, shards, None);
    block_on(wikantik::reader::IndexReader::open_at(store, pointer, std::sync::Arc::new(wikantik::reader::ShardCache::default()))).expect("open the other layout")
}

/// Writes into `store` a manifest of `index` listing `shards` (rows of kinds of more than
/// `directories_from` shards moved into directory shards, also written) and returns the
/// pointer to it: [`reader_with_shards`] for a reader over another store type.
pub fn put_layout(
    index: &CompiledIndex,
    store: &mut wikantik::reader::MemoryStore,
    shards: Vec<wikantik::shard::ShardEntry>,
    directories_from: Option<usize>,
) -> wikantik::shard::Pointer {
    let m = &index.manifest;
    let mut manifest = wikantik::manifest::Manifest::new(m.generator.clone(), m.stats.clone(), m.analyzer, m.chunker, m.lexical.clone(), shards).expect("manifest");
    if let Some(dense) = &m.dense {
        manifest = manifest.with_dense(dense.clone()).expect("manifest with its dense side");
    }
    let (manifest, directories) = manifest.with_directories(directories_from).expect("directories");
    for directory in directories {
        store.put(&directory.entry.name, directory.bytes);
    }
    let (name, bytes, pointer) = manifest.encode().expect("encode manifest");
    store.put(&name, bytes);
    pointer
}

/// A Markdown page with frontmatter.
pub fn page(file: &str, frontmatter: &str, body: &str) -> (String, String) {
    (file.to_string(), format!("---\n{frontmatter}\n---\n{body}"))
}

pub mod faults;
pub mod http_client;
pub mod surfaces;

/// Percent-encodes a URL path segment or query value (every byte but unreserved ones).
pub fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}
