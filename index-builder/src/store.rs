//! Where an index is written: the object-store abstraction the publishing protocol
//! (`publish.rs`) runs against and its local-directory implementation (the S3 one is `s3.rs`;
//! `target.rs` opens the store a `--to` URL names).
//!
//! Object names are the index's own relative names (`current.json`, `builds.json`,
//! `manifests/…`, `shards/…`); each store maps them under its root or prefix.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{BuildError, Result};

/// One listed object: its index-relative name and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    pub name: String,
    pub size: u64,
}

/// How an object may change, which decides the caching headers a store attaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutability {
    /// Content-addressed: the name's bytes never change (shards, manifests).
    Immutable,
    /// Overwritten in place (`current.json`, `builds.json`).
    Mutable,
}

/// The five operations the publishing protocol needs. Implementations must make `put`
/// atomic: a reader sees the old object, the new one, or none — never a partial object.
/// They are shared between upload threads, hence `Send + Sync`.
pub trait ObjectStore: Send + Sync {
    /// The target as the user wrote it, for messages (`s3://bucket/prefix`, `file://dir`).
    fn describe(&self) -> String;
    /// Objects whose names start with `prefix` (e.g. `"shards/"`), in any order.
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>>;
    /// The size of `name`, or `None` when it does not exist.
    fn head(&self, name: &str) -> Result<Option<u64>>;
    /// The bytes of `name`, or `None` when it does not exist.
    fn get(&self, name: &str) -> Result<Option<Vec<u8>>>;
    /// Write `name` atomically (create or replace).
    fn put(&self, name: &str, bytes: &[u8], mutability: Mutability) -> Result<()>;
    /// Remove `name`; removing a missing object is not an error.
    fn delete(&self, name: &str) -> Result<()>;
}

/// An index in a local directory. Writes go through a temporary file in the same directory
/// and a rename, so readers never see partial objects and the pointer swap is atomic.
#[derive(Debug, Clone)]
pub struct LocalStore {
    root: PathBuf,
}

/// Marker in the names of temporary files; listing skips them.
const TMP_MARKER: &str = ".tmp-";

/// Makes temporary file names unique among the upload threads of this process.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl LocalStore {
    /// A store rooted at `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> LocalStore {
        LocalStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

impl ObjectStore for LocalStore {
    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        // Names are at most one directory deep (`shards/x`), so list the prefix's directory.
        let (dir, file_prefix) = match prefix.rfind('/') {
            Some(i) => (&prefix[..i], &prefix[i + 1..]),
            None => ("", prefix),
        };
        let dir_path = self.path(dir);
        let entries = match std::fs::read_dir(&dir_path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(BuildError::io(dir_path, e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| BuildError::io(&dir_path, e))?;
            let Some(file) = entry.file_name().to_str().map(str::to_string) else { continue };
            if !file.starts_with(file_prefix) || file.contains(TMP_MARKER) {
                continue;
            }
            let meta = entry.metadata().map_err(|e| BuildError::io(entry.path(), e))?;
            if meta.is_file() {
                let name = if dir.is_empty() { file } else { format!("{dir}/{file}") };
                out.push(ObjectMeta { name, size: meta.len() });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn head(&self, name: &str) -> Result<Option<u64>> {
        let path = self.path(name);
        match std::fs::metadata(&path) {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(BuildError::io(path, e)),
        }
    }

    fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path(name);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(BuildError::io(path, e)),
        }
    }

    fn put(&self, name: &str, bytes: &[u8], _mutability: Mutability) -> Result<()> {
        let path = self.path(name);
        let dir = path.parent().unwrap_or(&self.root).to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| BuildError::io(&dir, e))?;
        let file_name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let unique = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!("{file_name}{TMP_MARKER}{}-{unique}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&tmp);
            return Err(BuildError::io(&tmp, e));
        }
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            BuildError::io(&path, e)
        })
    }

    fn delete(&self, name: &str) -> Result<()> {
        let path = self.path(name);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(BuildError::io(path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_store_round_trips_and_lists_without_temp_files() {
        let dir = std::env::temp_dir().join(format!("wikantik-localstore-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = LocalStore::new(&dir);
        assert_eq!(store.get("shards/a.cbor").unwrap(), None);
        assert_eq!(store.list("shards/").unwrap(), vec![]);
        store.put("shards/a.cbor", b"abc", Mutability::Immutable).unwrap();
        store.put("current.json", b"{}", Mutability::Mutable).unwrap();
        std::fs::write(dir.join("shards/b.cbor.tmp-1-2"), b"partial").unwrap();
        assert_eq!(store.list("shards/").unwrap(), vec![ObjectMeta { name: "shards/a.cbor".into(), size: 3 }]);
        assert_eq!(store.head("shards/a.cbor").unwrap(), Some(3));
        assert_eq!(store.get("current.json").unwrap().as_deref(), Some(&b"{}"[..]));
        store.delete("shards/a.cbor").unwrap();
        store.delete("shards/a.cbor").unwrap();
        assert_eq!(store.head("shards/a.cbor").unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
