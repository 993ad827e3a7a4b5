//! The publishing protocol, one implementation for every store (`build --out DIR` and
//! `publish --to file://…|s3://…`):
//!
//! 1. list the store; upload the content-addressed objects it lacks (concurrently, bounded);
//! 2. upload the manifest;
//! 3. write the build history (`builds.json`: the new build first, then the previous pointer's
//!    build, then older ones, cut to `keep_builds`);
//! 4. swap the pointer (`current.json`) — the last write, so a reader that sees the new pointer
//!    finds every object of its build, and an interrupted publish leaves the old build live;
//! 5. garbage-collect `shards/` and `manifests/` objects that no kept build references.
//!
//! Every step is idempotent, so re-running an interrupted publish completes it. Garbage
//! collection deletes nothing when it cannot prove an object unused: if a kept manifest is
//! missing or unreadable, or the history is unreadable, it skips and says why. It assumes one
//! publisher per target at a time (CI: a concurrency group).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use wikantik::compile::CompiledIndex;
use wikantik::hashing::sha256_hex;
use wikantik::manifest::Manifest;
use wikantik::shard::{Pointer, POINTER_NAME};

use crate::error::{BuildError, Result};
use crate::store::{Mutability, ObjectStore};

/// Name of the build history kept next to the pointer (newest first).
pub const HISTORY_NAME: &str = "builds.json";

/// Environment variable of the test hook that stops a publish after K uploads (before the
/// pointer moves), to exercise resuming an interrupted publish.
pub const FAIL_AFTER_ENV: &str = "WIKANTIK_PUBLISH_FAIL_AFTER";

/// One build, ready to publish: its objects (verified), manifest and pointer.
#[derive(Debug, Clone)]
pub struct BuildObjects {
    pub build_id: String,
    /// Content-addressed shard objects: (name, bytes).
    pub shards: Vec<(String, Vec<u8>)>,
    pub manifest_name: String,
    pub manifest_bytes: Vec<u8>,
    pub pointer: Pointer,
}

impl BuildObjects {
    /// The objects of a build compiled in memory.
    pub fn from_compiled(compiled: &CompiledIndex) -> BuildObjects {
        BuildObjects {
            build_id: compiled.manifest.build_id.clone(),
            shards: compiled.shards.iter().map(|s| (s.entry.name.clone(), s.bytes.clone())).collect(),
            manifest_name: compiled.manifest_name.clone(),
            manifest_bytes: compiled.manifest_bytes.clone(),
            pointer: compiled.pointer.clone(),
        }
    }

    /// Read the current build of a local index directory (its `current.json` → manifest →
    /// shards), verifying every object's SHA-256 before anything is published. A corrupt or
    /// missing object is an error naming its file.
    pub fn load_local(dir: &Path) -> Result<BuildObjects> {
        if !dir.is_dir() {
            return Err(BuildError::NotADirectory(dir.to_path_buf()));
        }
        let read = |name: &str| -> Result<Vec<u8>> {
            check_object_name(name)?;
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| BuildError::io(path, e))
        };
        let pointer_path = dir.join(POINTER_NAME);
        let pointer_bytes = match std::fs::read(&pointer_path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(BuildError::NoIndex(dir.to_path_buf())),
            Err(e) => return Err(BuildError::io(pointer_path, e)),
        };
        let pointer = Pointer::from_json(&pointer_bytes)?;
        let manifest_bytes = read(&pointer.manifest)?;
        verify(&dir.join(&pointer.manifest), "pointer", &pointer.sha256, &manifest_bytes)?;
        let manifest = Manifest::from_stored(&pointer.manifest, &manifest_bytes)?;
        let mut directories = std::collections::BTreeMap::new();
        for d in &manifest.directories {
            directories.insert(d.shard.name.clone(), read(&d.shard.name)?);
        }
        let rows = manifest.every_shard(|entry| {
            directories.get(&entry.name).cloned().ok_or_else(|| wikantik::Error::MissingShard { name: entry.name.clone() })
        })?;
        let mut shards = Vec::with_capacity(rows.len());
        for entry in &rows {
            let bytes = match directories.remove(&entry.name) {
                Some(bytes) => bytes,
                None => read(&entry.name)?,
            };
            verify(&dir.join(&entry.name), "manifest", &entry.sha256, &bytes)?;
            shards.push((entry.name.clone(), bytes));
        }
        Ok(BuildObjects {
            build_id: pointer.build_id.clone(),
            shards,
            manifest_name: pointer.manifest.clone(),
            manifest_bytes,
            pointer,
        })
    }

    /// Bytes of every object (shards and manifest).
    pub fn total_bytes(&self) -> u64 {
        self.shards.iter().map(|(_, b)| b.len() as u64).sum::<u64>() + self.manifest_bytes.len() as u64
    }
}

fn verify(path: &Path, referrer: &'static str, expected: &str, bytes: &[u8]) -> Result<()> {
    let actual = sha256_hex(bytes);
    if actual != expected {
        return Err(BuildError::CorruptObject { path: path.to_path_buf(), referrer, expected: expected.to_string(), actual });
    }
    Ok(())
}

/// Accept only `shards/<file>` and `manifests/<file>` with a plain file name, so a hostile
/// manifest cannot make the writer touch anything else.
pub fn check_object_name(name: &str) -> Result<()> {
    let ok = match name.split_once('/') {
        Some((dir, file)) => {
            matches!(dir, "shards" | "manifests")
                && !file.is_empty()
                && !file.starts_with('.')
                && file.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        None => false,
    };
    if ok {
        Ok(())
    } else {
        Err(BuildError::BadObjectName(name.to_string()))
    }
}

/// How to publish.
#[derive(Debug, Clone)]
pub struct PublishOptions {
    /// Builds to keep (at least 1): the new one and the `keep_builds - 1` before it.
    pub keep_builds: usize,
    /// Uploads in flight at once (at least 1).
    pub concurrency: usize,
    /// Plan only: read the store, write nothing.
    pub dry_run: bool,
    /// Test hook: fail after this many object uploads, before the pointer moves.
    pub fail_after_uploads: Option<usize>,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions { keep_builds: 5, concurrency: 8, dry_run: false, fail_after_uploads: None }
    }
}

impl PublishOptions {
    /// Read the [`FAIL_AFTER_ENV`] test hook; an unparsable value is an error, not ignored.
    pub fn fail_after_from_env() -> Result<Option<usize>> {
        match std::env::var(FAIL_AFTER_ENV) {
            Ok(v) if !v.trim().is_empty() => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| BuildError::Invalid(format!("{FAIL_AFTER_ENV}={v:?} is not a number of uploads"))),
            _ => Ok(None),
        }
    }
}

/// What a publish did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublishReport {
    pub target: String,
    pub dry_run: bool,
    pub build_id: String,
    /// The build the pointer named before (`None`: no pointer, or an unreadable one).
    pub previous_build_id: Option<String>,
    /// Shard objects uploaded (or to upload), by name.
    pub uploaded: Vec<String>,
    /// Shard objects already present.
    pub skipped: usize,
    /// Bytes of the uploaded shards and manifest.
    pub bytes_uploaded: u64,
    /// Bytes of all the build's objects.
    pub total_bytes: u64,
    pub manifest_name: String,
    pub manifest_uploaded: bool,
    /// Whether `current.json` was written (false when it already named this build).
    pub pointer_written: bool,
    /// Builds in the history after the publish (newest first).
    pub builds_kept: Vec<String>,
    /// Objects garbage-collected (or to collect).
    pub removed: Vec<String>,
    /// Why garbage collection did nothing, when it could not prove objects unused.
    pub gc_skipped: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct History {
    /// Manifest object names, newest first.
    manifests: Vec<String>,
}

/// Publish `build` to `store` with the protocol described in the module documentation.
pub fn publish(store: &dyn ObjectStore, build: &BuildObjects, options: &PublishOptions) -> Result<PublishReport> {
    for (name, _) in &build.shards {
        check_object_name(name)?;
    }
    check_object_name(&build.manifest_name)?;
    let keep_builds = options.keep_builds.max(1);
    let mut report = PublishReport {
        target: store.describe(),
        dry_run: options.dry_run,
        build_id: build.build_id.clone(),
        total_bytes: build.total_bytes(),
        manifest_name: build.manifest_name.clone(),
        ..PublishReport::default()
    };

    // What the store holds. An object of the right name and size is the same object (names
    // are content hashes); a different size means a damaged copy, which is replaced.
    let present: BTreeMap<String, u64> = list_index_objects(store)?.into_iter().collect();
    let missing = |name: &str, len: usize| present.get(name) != Some(&(len as u64));
    let to_upload: Vec<&(String, Vec<u8>)> = build.shards.iter().filter(|(n, b)| missing(n, b.len())).collect();
    report.skipped = build.shards.len() - to_upload.len();
    report.uploaded = to_upload.iter().map(|(n, _)| n.clone()).collect();
    report.bytes_uploaded = to_upload.iter().map(|(_, b)| b.len() as u64).sum();
    report.manifest_uploaded = missing(&build.manifest_name, build.manifest_bytes.len());
    if report.manifest_uploaded {
        report.bytes_uploaded += build.manifest_bytes.len() as u64;
    }

    // The pointer and history as they are, and the history as it will be.
    let old_pointer_bytes = store.get(POINTER_NAME)?;
    let old_pointer = old_pointer_bytes.as_deref().and_then(|b| Pointer::from_json(b).ok());
    report.previous_build_id = old_pointer.as_ref().map(|p| p.build_id.clone());
    let new_pointer_bytes = build.pointer.to_json();
    report.pointer_written = old_pointer_bytes.as_deref() != Some(new_pointer_bytes.as_slice());
    let (old_history_bytes, history_trusted) = match store.get(HISTORY_NAME)? {
        None => (None, true),
        Some(bytes) => {
            let trusted = serde_json::from_slice::<History>(&bytes).is_ok();
            (Some(bytes), trusted)
        }
    };
    let old_history: History =
        old_history_bytes.as_deref().and_then(|b| serde_json::from_slice(b).ok()).unwrap_or_default();
    let mut manifests = vec![build.manifest_name.clone()];
    if let Some(previous) = &old_pointer {
        manifests.push(previous.manifest.clone());
    }
    manifests.extend(old_history.manifests.iter().cloned());
    let mut seen = BTreeSet::new();
    manifests.retain(|m| seen.insert(m.clone()) && check_object_name(m).is_ok());
    manifests.truncate(keep_builds);
    let history = History { manifests };
    report.builds_kept = history.manifests.clone();
    let mut history_bytes = serde_json::to_vec_pretty(&history).map_err(|e| BuildError::Invalid(e.to_string()))?;
    history_bytes.push(b'\n');

    if options.dry_run {
        let after: BTreeSet<String> =
            present.keys().cloned().chain(report.uploaded.iter().cloned()).chain([build.manifest_name.clone()]).collect();
        match plan_gc(store, build, &history, history_trusted, &after)? {
            Ok(remove) => report.removed = remove,
            Err(reason) => report.gc_skipped = Some(reason),
        }
        return Ok(report);
    }

    upload_all(store, &to_upload, options)?;
    if report.manifest_uploaded {
        store.put(&build.manifest_name, &build.manifest_bytes, Mutability::Immutable)?;
    }
    if old_history_bytes.as_deref() != Some(history_bytes.as_slice()) {
        store.put(HISTORY_NAME, &history_bytes, Mutability::Mutable)?;
    }
    if report.pointer_written {
        store.put(POINTER_NAME, &new_pointer_bytes, Mutability::Mutable)?;
    }

    let after: BTreeSet<String> = list_index_objects(store)?.into_iter().map(|(n, _)| n).collect();
    match plan_gc(store, build, &history, history_trusted, &after)? {
        Ok(remove) => {
            for name in &remove {
                store.delete(name)?;
            }
            report.removed = remove;
        }
        Err(reason) => report.gc_skipped = Some(reason),
    }
    Ok(report)
}

/// Every `shards/` and `manifests/` object of the store, with its size.
fn list_index_objects(store: &dyn ObjectStore) -> Result<Vec<(String, u64)>> {
    let mut out = Vec::new();
    for prefix in ["shards/", "manifests/"] {
        out.extend(store.list(prefix)?.into_iter().map(|m| (m.name, m.size)));
    }
    Ok(out)
}

/// Upload `objects` with at most `options.concurrency` in flight; stop at the first error.
fn upload_all(store: &dyn ObjectStore, objects: &[&(String, Vec<u8>)], options: &PublishOptions) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<BuildError>> = Mutex::new(None);
    let workers = options.concurrency.max(1).min(objects.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while !failed.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((name, bytes)) = objects.get(i).copied() else { break };
                    let result = match options.fail_after_uploads {
                        Some(k) if i >= k => Err(BuildError::Interrupted(k)),
                        _ => store.put(name, bytes, Mutability::Immutable),
                    };
                    if let Err(e) = result {
                        failed.store(true, Ordering::SeqCst);
                        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                        // Prefer a real failure over the test hook's, and keep the first.
                        if slot.is_none() || matches!(*slot, Some(BuildError::Interrupted(_))) {
                            *slot = Some(e);
                        }
                        break;
                    }
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The objects among `present` that no kept build references, or why none can be removed.
/// The kept builds are the history's manifests plus the new pointer's.
fn plan_gc(
    store: &dyn ObjectStore,
    build: &BuildObjects,
    history: &History,
    history_trusted: bool,
    present: &BTreeSet<String>,
) -> Result<std::result::Result<Vec<String>, String>> {
    if !history_trusted {
        return Ok(Err(format!("{HISTORY_NAME} was unreadable, so older builds are unknown; it was rewritten, and the next publish collects")));
    }
    let mut keep: BTreeSet<String> = BTreeSet::new();
    let mut kept_manifests: Vec<&String> = history.manifests.iter().collect();
    if !kept_manifests.contains(&&build.manifest_name) {
        kept_manifests.push(&build.manifest_name);
    }
    // The new build's own objects, by name (its directories need not be fetched back).
    let local: std::collections::HashMap<&str, &[u8]> = build.shards.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    for name in kept_manifests {
        let bytes = if *name == build.manifest_name {
            Some(build.manifest_bytes.clone())
        } else {
            store.get(name)?
        };
        let Some(bytes) = bytes else {
            return Ok(Err(format!("kept build {name} is missing from the store")));
        };
        let manifest = match Manifest::from_stored(name, &bytes) {
            Ok(m) => m,
            Err(e) => return Ok(Err(format!("kept build {name} is unreadable ({e})"))),
        };
        // A build's directories name the rest of its shards: one that cannot be read keeps
        // everything (nothing is collected while a kept build's shards are unknown).
        let mut unreadable = None;
        let rows = manifest.every_shard(|entry| {
            let fetched = match local.get(entry.name.as_str()) {
                Some(bytes) => Some(bytes.to_vec()),
                None => store.get(&entry.name).unwrap_or_else(|e| {
                    unreadable = Some(e.to_string());
                    None
                }),
            };
            fetched.ok_or_else(|| wikantik::Error::MissingShard { name: entry.name.clone() })
        });
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => return Ok(Err(format!("a directory of kept build {name} is unreadable ({})", unreadable.unwrap_or_else(|| e.to_string())))),
        };
        keep.insert(name.clone());
        keep.extend(rows.into_iter().map(|s| s.name));
    }
    Ok(Ok(present.iter().filter(|n| !keep.contains(*n)).cloned().collect()))
}
