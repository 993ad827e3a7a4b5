//! A directory of shards as a [`ShardStore`]: object names are paths under the root.

use std::path::{Component, Path, PathBuf};

use wikantik::error::{Error, Result};
use wikantik::reader::ShardStore;

/// Shards read from a local directory (what `index-builder build --out DIR` writes).
#[derive(Debug, Clone)]
pub struct DirStore {
    root: PathBuf,
}

impl DirStore {
    pub fn new(root: impl Into<PathBuf>) -> DirStore {
        DirStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file behind an object name; names that try to leave the root are refused.
    fn path_of(&self, name: &str) -> Result<PathBuf> {
        let relative = Path::new(name);
        let safe = relative.components().all(|c| matches!(c, Component::Normal(_)));
        if !safe || name.is_empty() {
            return Err(Error::Invalid(format!("object name {name:?} is not a plain relative path")));
        }
        Ok(self.root.join(relative))
    }
}

impl ShardStore for DirStore {
    async fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path_of(name)?;
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::Invalid(format!("cannot read {}: {e}", path.display()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_names_that_escape_the_root() {
        let store = DirStore::new("/tmp");
        for bad in ["../etc/passwd", "/etc/passwd", "a/../../b", ""] {
            assert!(store.path_of(bad).is_err(), "{bad}");
        }
        assert!(store.path_of("shards/x.cbor").is_ok());
    }
}
