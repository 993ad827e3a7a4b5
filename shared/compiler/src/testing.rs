//! Test fixtures for the crates above the build (feature `test-model`): indexes with vectors
//! but without model files, and the sub-cluster wiki of the knowledge-graph visibility tests.

use wikantik_encoder::testing::{keyword_embedding, tiny_shard};

/// Compile `pages` with vectors but without model files: the tiny model as the query encoder
/// (or `lite`'s table, with the lite thresholds) and [`keyword_embedding`] section vectors of
/// its dimension, so sections sharing words are close. For the real model see the
/// end-to-end `tests/dense.rs`.
pub fn compile_with_keyword_vectors(
    pages: Vec<crate::compile::SourcePage>,
    options: &crate::compile::CompileOptions,
    lite: Option<&crate::compile::TrainLiteFn<'_>>,
) -> wikantik_format::Result<wikantik_format::payload::CompiledIndex> {
    let model = tiny_shard();
    let embed = |texts: &[String]| -> wikantik_format::Result<Vec<Vec<f32>>> { Ok(texts.iter().map(|t| keyword_embedding(t, model.dim)).collect()) };
    let build = crate::compile::VectorBuild {
        model: &model,
        model_id: "tiny@test".into(),
        contextual: false,
        thresholds: if lite.is_some() { wikantik_format::vectors::MINILM_LITE_THRESHOLDS } else { wikantik_format::vectors::MINILM_THRESHOLDS },
        embed: &embed,
        lite,
    };
    crate::compile::compile_with_vectors(pages, options, Some(&build), &mut |_, _, _| {})
}

/// A wiki whose sub-clusters' alphabetically first members are restricted:
/// `ml/ops` = Aardvark (Alice only) and Beaver (public); `ml/vault` = Alpaca (Alice only) and
/// its hub VaultHub (Bob only); `ml` has the public hub MlHub.
pub fn sub_cluster_wiki() -> wikantik_format::payload::CompiledIndex {
    crate::compile::compile(sub_cluster_pages(), &crate::compile::CompileOptions::default(), &mut |_, _, _| {}).expect("compile")
}

/// The pages of [`sub_cluster_wiki`].
pub fn sub_cluster_pages() -> Vec<crate::compile::SourcePage> {
    let page = |file: &str, frontmatter: &str, acl: &str| crate::compile::SourcePage {
        file_name: file.into(),
        text: format!("---\n{frontmatter}\n---\n{acl}\n\n# {file}\n\nSome notes about pipelines.\n"),
        git_version: None,
        updated: 0,
    };
    vec![
        page("MlHub.md", "type: hub\ncluster: ml", ""),
        page("Aardvark.md", "cluster: ml/ops", "[{ALLOW view Alice}]()"),
        page("Beaver.md", "cluster: ml/ops", ""),
        page("Alpaca.md", "cluster: ml/vault", "[{ALLOW view Alice}]()"),
        page("VaultHub.md", "type: hub\ncluster: ml/vault", "[{ALLOW view Bob}]()"),
    ]
}

/// The callers of [`sub_cluster_wiki`]'s tests: a name and the principals of its API key
/// (`None`: anonymous, no key).
pub const SUB_CLUSTER_CALLERS: [(&str, Option<&[&str]>); 5] =
    [("anonymous", None), ("key", Some(&[])), ("Alice", Some(&["Alice"])), ("Bob", Some(&["Bob"])), ("Carol", Some(&["Carol"]))];
