//! Writing a compiled index into a directory: immutable objects first, then the manifest,
//! then the pointer swap (atomic rename), then garbage collection of builds older than the
//! last `keep_builds`. Objects that already exist are not rewritten: a small wiki change
//! writes only the shards that changed.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use wikantik::compile::CompiledIndex;
use wikantik::manifest::Manifest;
use wikantik::shard::{from_cbor, POINTER_NAME};

use crate::error::{BuildError, Result};

/// Name of the build history kept next to the pointer (newest first).
pub const HISTORY_NAME: &str = "builds.json";

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

#[derive(Debug, Default, Serialize, Deserialize)]
struct History {
    /// Manifest object names, newest first.
    manifests: Vec<String>,
}

/// Write `compiled` into `out`, keeping the last `keep_builds` builds (at least 1).
pub fn write_index(out: &Path, compiled: &CompiledIndex, keep_builds: usize) -> Result<WriteReport> {
    let mut report = WriteReport::default();
    std::fs::create_dir_all(out.join("shards")).map_err(|e| BuildError::io(out.join("shards"), e))?;
    std::fs::create_dir_all(out.join("manifests")).map_err(|e| BuildError::io(out.join("manifests"), e))?;
    for shard in &compiled.shards {
        report.total_bytes += shard.bytes.len() as u64;
        if write_immutable(out, &shard.entry.name, &shard.bytes)? {
            report.shards_written += 1;
            report.bytes_written += shard.bytes.len() as u64;
        } else {
            report.shards_unchanged += 1;
        }
    }
    write_immutable(out, &compiled.manifest_name, &compiled.manifest_bytes)?;
    write_atomic(out, POINTER_NAME, &compiled.pointer.to_json())?;

    let mut history = read_history(out);
    history.manifests.retain(|m| m != &compiled.manifest_name);
    history.manifests.insert(0, compiled.manifest_name.clone());
    history.manifests.truncate(keep_builds.max(1));
    report.builds_kept = history.manifests.len();
    let mut history_bytes = serde_json::to_vec_pretty(&history).map_err(|e| BuildError::Invalid(e.to_string()))?;
    history_bytes.push(b'\n');
    write_atomic(out, HISTORY_NAME, &history_bytes)?;
    report.objects_removed = collect_garbage(out, &history)?;
    Ok(report)
}

fn read_history(out: &Path) -> History {
    std::fs::read(out.join(HISTORY_NAME)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

/// Write `bytes` as `name` unless an object of that name and size already exists.
/// Returns whether it wrote.
fn write_immutable(out: &Path, name: &str, bytes: &[u8]) -> Result<bool> {
    let path = out.join(name);
    if std::fs::metadata(&path).map(|m| m.len() == bytes.len() as u64).unwrap_or(false) {
        return Ok(false);
    }
    write_atomic(out, name, bytes)?;
    Ok(true)
}

/// Write through a temporary file and rename, so readers never see a partial object.
fn write_atomic(out: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let path = out.join(name);
    let tmp = out.join(format!("{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| BuildError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| BuildError::io(&path, e))
}

/// Remove manifests and shards that no kept build references. A manifest that cannot be
/// read keeps everything (we never delete what we cannot prove unused).
fn collect_garbage(out: &Path, history: &History) -> Result<usize> {
    let mut keep: BTreeSet<String> = BTreeSet::new();
    for name in &history.manifests {
        let Ok(bytes) = std::fs::read(out.join(name)) else { return Ok(0) };
        let Ok(manifest) = from_cbor::<Manifest>(name, &bytes) else { return Ok(0) };
        keep.insert(name.clone());
        keep.extend(manifest.shards.into_iter().map(|s| s.name));
    }
    let mut removed = 0;
    for dir in ["shards", "manifests"] {
        let Ok(entries) = std::fs::read_dir(out.join(dir)) else { continue };
        for entry in entries.flatten() {
            let Some(file) = entry.file_name().to_str().map(str::to_string) else { continue };
            let name = format!("{dir}/{file}");
            if !keep.contains(&name) && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    Ok(removed)
}
