//! Dense retrieval seam: section candidates by cosine similarity to the query.
//!
//! Returns `Ok(None)` when the index carries no vectors (or no query encoder), which every
//! caller treats as "dense unavailable": bundles degrade to lexical with `unknown` coverage.

use crate::error::Result;
use crate::lexical::SectionKey;
use crate::reader::{IndexReader, ShardStore};

/// The `limit` sections most similar to `query`, best first, with their cosine.
pub async fn dense_candidates<S: ShardStore>(
    reader: &IndexReader<S>,
    query: &str,
    limit: usize,
) -> Result<Option<Vec<(SectionKey, f32)>>> {
    let _ = (reader, query, limit);
    Ok(None)
}
