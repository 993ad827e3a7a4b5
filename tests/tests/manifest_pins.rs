//! The shard format does not drift by accident: the sample wiki's and the real corpus's
//! lexical builds (compiled in-process with the default options, as `compile_dir` does) have
//! these manifests byte for byte (a manifest names every shard by its SHA-256, so equal
//! manifests mean equal indexes).
//!
//! A page's history (its git version and `updated` time) comes from the checkout — git log, or
//! the file's modification time where the wiki is not a git work tree, as the corpus beside the
//! repository is not — and differs from machine to machine, so the pinned builds fix every
//! page's history ([`compile_dir_with_fixed_history`]); everything else is derived from the
//! page text and must not move.
//!
//! A change that means to change the format (a new shard kind, a different chunking, a new
//! analyzer setting) updates the pins here in the same commit, saying why; a refactoring never
//! does.

use wikantik_tests::{compile_dir_with_fixed_history, corpus, sample_wiki};

/// The `updated` time every page of a pinned build gets (2025-12-01T00:00:00Z).
const FIXED_UPDATED: i64 = 1_764_547_200;

/// SHA-256 of the sample wiki's manifest (examples/wiki, lexical build). Last changed by the
/// analyzer's marked identifiers (flags and absolute paths kept with their `--` / `/`: new
/// terms, and `marked_identifiers` in the manifest's analyzer settings).
const SAMPLE_WIKI_MANIFEST: &str = "ec105b00c891cd63d66ed846308434d08ac8ea245d5ea3766c0488c8c8c5ba9f";
/// SHA-256 of the real corpus's manifest (the 1,201-page wiki kept beside the repository,
/// lexical build). Last changed by the analyzer's marked identifiers.
const CORPUS_MANIFEST: &str = "b6d581738cb866cacc8088989ade1391c7586ab9a24ec29530a161b3086d7777";

#[test]
fn the_sample_wiki_builds_the_pinned_manifest() {
    let index = compile_dir_with_fixed_history(&sample_wiki(), FIXED_UPDATED);
    assert_eq!(index.pointer.sha256, SAMPLE_WIKI_MANIFEST, "the sample wiki's manifest changed: {}", index.manifest_name);
}

#[test]
fn the_real_corpus_builds_the_pinned_manifest() {
    let Some(dir) = corpus() else {
        eprintln!("SKIP: the real corpus is absent (../shared/corpus/wikantik-pages or WIKANTIK_CORPUS)");
        return;
    };
    let index = compile_dir_with_fixed_history(&dir, FIXED_UPDATED);
    assert_eq!(index.pointer.sha256, CORPUS_MANIFEST, "the corpus's manifest changed: {}", index.manifest_name);
}
