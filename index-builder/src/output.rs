//! Writing a compiled index into a directory (`build --out`). This is the publishing protocol
//! of `publish.rs` run against a [`LocalStore`]: objects that do not exist yet, then the
//! manifest, then the history, then the atomic pointer swap, then garbage collection of
//! builds older than the last `keep_builds`. A small wiki change writes only the shards that
//! changed.

use std::path::Path;

use wikantik::compile::CompiledIndex;

use crate::error::Result;
use crate::publish::{publish, BuildObjects, PublishOptions};
use crate::store::LocalStore;

pub use crate::publish::HISTORY_NAME;

/// What a write did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteReport {
    pub shards_written: usize,
    pub shards_unchanged: usize,
    pub bytes_written: u64,
    pub total_bytes: u64,
    pub builds_kept: usize,
    pub objects_removed: usize,
}

/// Write `compiled` into `out`, keeping the last `keep_builds` builds (at least 1).
pub fn write_index(out: &Path, compiled: &CompiledIndex, keep_builds: usize) -> Result<WriteReport> {
    let store = LocalStore::new(out);
    let build = BuildObjects::from_compiled(compiled);
    let options = PublishOptions { keep_builds, concurrency: 1, dry_run: false, fail_after_uploads: None };
    let report = publish(&store, &build, &options)?;
    Ok(WriteReport {
        shards_written: report.uploaded.len(),
        shards_unchanged: report.skipped,
        bytes_written: shard_bytes(&build, &report.uploaded),
        total_bytes: build.shards.iter().map(|(_, b)| b.len() as u64).sum(),
        builds_kept: report.builds_kept.len(),
        objects_removed: report.removed.len(),
    })
}

/// Bytes of the shards named in `names`.
fn shard_bytes(build: &BuildObjects, names: &[String]) -> u64 {
    let names: std::collections::BTreeSet<&String> = names.iter().collect();
    build.shards.iter().filter(|(n, _)| names.contains(n)).map(|(_, b)| b.len() as u64).sum()
}
