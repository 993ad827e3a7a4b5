//! The shard format does not drift by accident: the sample wiki's and the real corpus's
//! lexical builds (compiled in-process with the default options, as `compile_dir` does) have
//! these manifests byte for byte (a manifest names every shard by its SHA-256, so equal
//! manifests mean equal indexes). The pins were taken when the core was split into crates, after
//! checking that `index-builder build` gives the same manifests before and after the split.
//!
//! A change that means to change the format (a new shard kind, a different chunking, a new
//! analyzer setting) updates the pins here in the same commit, saying why; a refactoring never
//! does.

use wikantik_tests::{compile_dir, corpus, sample_wiki};

/// SHA-256 of the sample wiki's manifest (examples/wiki, lexical build).
const SAMPLE_WIKI_MANIFEST: &str = "2b53ad69535e73064aadaf17eace6b136b5547c241604674c13878626c2805bf";
/// SHA-256 of the real corpus's manifest (the 1,201-page wiki kept beside the repository,
/// lexical build).
const CORPUS_MANIFEST: &str = "e690d73d111093a8a0d20efcf83dd4e6214062663fe0524a869fce2ddebd0cba";

#[test]
fn the_sample_wiki_builds_the_pinned_manifest() {
    let index = compile_dir(&sample_wiki());
    assert_eq!(index.pointer.sha256, SAMPLE_WIKI_MANIFEST, "the sample wiki's manifest changed: {}", index.manifest_name);
}

#[test]
fn the_real_corpus_builds_the_pinned_manifest() {
    let Some(dir) = corpus() else {
        eprintln!("SKIP: the real corpus is absent (../shared/corpus/wikantik-pages or WIKANTIK_CORPUS)");
        return;
    };
    let index = compile_dir(&dir);
    assert_eq!(index.pointer.sha256, CORPUS_MANIFEST, "the corpus's manifest changed: {}", index.manifest_name);
}
