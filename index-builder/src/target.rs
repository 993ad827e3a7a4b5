//! The `--to` targets of `index-builder publish` (`file://DIR`, `s3://bucket[/prefix]`) and the
//! store each one opens.

use std::path::PathBuf;

use crate::error::{BuildError, Result};
use crate::s3::{S3Settings, S3Store};
use crate::store::{LocalStore, ObjectStore};

/// A parsed `--to` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `file://DIR`: everything after `file://` is the path (`file:///abs`, `file://rel/dir`).
    Dir(PathBuf),
    /// `s3://bucket[/prefix]`.
    S3 { bucket: String, prefix: String },
}

impl Target {
    /// Parse `file://DIR` or `s3://bucket[/prefix]`.
    pub fn parse(url: &str) -> Result<Target> {
        let bad = |reason: &str| BuildError::BadUrl { url: url.to_string(), reason: reason.to_string() };
        if let Some(path) = url.strip_prefix("file://") {
            if path.is_empty() {
                return Err(bad("file:// needs a directory, e.g. file:///srv/index or file://out/index"));
            }
            return Ok(Target::Dir(PathBuf::from(path)));
        }
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad("no bucket name; expected s3://bucket[/prefix]"));
            }
            let valid_bucket = (3..=63).contains(&bucket.len())
                && bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
                && !bucket.starts_with(['.', '-'])
                && !bucket.ends_with(['.', '-']);
            if !valid_bucket {
                return Err(bad(&format!(
                    "{bucket:?} is not a valid bucket name (3–63 characters: lowercase letters, digits, '.', '-')"
                )));
            }
            let prefix = prefix.trim_matches('/').to_string();
            if prefix.split('/').any(|part| part == "." || part == "..") || prefix.contains("//") {
                return Err(bad("the prefix must not contain '.', '..' or empty path segments"));
            }
            return Ok(Target::S3 { bucket: bucket.to_string(), prefix });
        }
        Err(bad("unsupported target; expected s3://bucket[/prefix] or file://DIR"))
    }
}

/// Open the store a `--to` URL names. S3 settings (credentials, region, endpoint) come from
/// `settings`; see [`S3Settings::from_env`].
pub fn open(url: &str, settings: &S3Settings) -> Result<Box<dyn ObjectStore>> {
    match Target::parse(url)? {
        Target::Dir(dir) => Ok(Box::new(LocalStore::new(dir))),
        Target::S3 { bucket, prefix } => Ok(Box::new(S3Store::new(url, &bucket, &prefix, settings)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        assert_eq!(Target::parse("file:///tmp/x").unwrap(), Target::Dir(PathBuf::from("/tmp/x")));
        assert_eq!(Target::parse("file://out/x").unwrap(), Target::Dir(PathBuf::from("out/x")));
        assert_eq!(
            Target::parse("s3://my-bucket/wiki/index/").unwrap(),
            Target::S3 { bucket: "my-bucket".into(), prefix: "wiki/index".into() }
        );
        assert_eq!(Target::parse("s3://my-bucket").unwrap(), Target::S3 { bucket: "my-bucket".into(), prefix: String::new() });
        for bad in ["http://x", "s3://", "s3:///p", "s3://UPPER", "s3://b/../x", "file://", "bucket/prefix"] {
            assert!(matches!(Target::parse(bad), Err(BuildError::BadUrl { .. })), "{bad}");
        }
    }
}
