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

    /// Seeks and reads only the range; a file too short for it is an error naming the file.
    async fn get_range(&self, name: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.path_of(name)?;
        let cannot = |e: std::io::Error| Error::Invalid(format!("cannot read {} at {offset}+{len}: {e}", path.display()));
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(cannot(e)),
        };
        file.seek(SeekFrom::Start(offset)).map_err(cannot)?;
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(64 << 20));
        file.take(len).read_to_end(&mut bytes).map_err(cannot)?;
        if bytes.len() as u64 != len {
            return Err(cannot(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, format!("only {} bytes there", bytes.len()))));
        }
        Ok(Some(bytes))
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

    #[test]
    fn reads_a_range_by_seeking_and_refuses_a_short_one() {
        let dir = std::env::temp_dir().join(format!("wikantik-dirstore-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("shards")).unwrap();
        std::fs::write(dir.join("shards/blob.bin"), (0u8..100).collect::<Vec<_>>()).unwrap();
        let store = DirStore::new(&dir);
        let get = |offset, len| pollster::block_on(store.get_range("shards/blob.bin", offset, len));
        assert_eq!(get(10, 5).unwrap(), Some(vec![10, 11, 12, 13, 14]));
        assert_eq!(get(95, 5).unwrap(), Some(vec![95, 96, 97, 98, 99]));
        assert_eq!(get(0, 0).unwrap(), Some(vec![]));
        let err = get(96, 5).unwrap_err().to_string();
        assert!(err.contains("blob.bin") && err.contains("only 4 bytes"), "{err}");
        assert!(get(200, 1).is_err(), "past the end");
        assert_eq!(pollster::block_on(store.get_range("shards/none.bin", 0, 1)).unwrap(), None);
        assert!(pollster::block_on(store.get_range("../x", 0, 1)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
