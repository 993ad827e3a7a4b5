//! Reading a wiki directory: page files, their text, versions and change times.
//!
//! A wiki is a flat directory of `.md` (also `.markdown`) and `.html`/`.htm` files. Other
//! files (images, `*.pins.yaml`, …) are ignored. When the directory is inside a git
//! repository, each page's version is the number of commits that touched it and `updated`
//! is its last commit time; otherwise version 1 and the file's modification time
//! (CONTRACT §3.4; a frontmatter `version` still wins, see the core's compile step).
//! [`read_entity_sidecar`] reads the optional `.wikantik/entities.yaml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use wikantik::compile::SourcePage;

use crate::error::{BuildError, Result};

/// A file that could not be used, with the reason; reported as a build warning.
#[derive(Debug, Clone)]
pub struct SkippedFile {
    pub file: String,
    pub reason: String,
}

/// Is this file name a page?
pub fn is_page_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !name.starts_with('.') && [".md", ".markdown", ".html", ".htm"].iter().any(|ext| lower.ends_with(ext))
}

/// The entity sidecar of the wiki in `dir` (`.wikantik/entities.yaml`,
/// [`wikantik::entity_sidecar`]), if it has one. Bad YAML or a bad shape is an error naming
/// the file and line.
pub fn read_entity_sidecar(dir: &Path) -> Result<Option<wikantik::entity_sidecar::EntitySidecar>> {
    let path = dir.join(wikantik::entity_sidecar::SIDECAR_PATH);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(BuildError::io(&path, e)),
    };
    Ok(Some(wikantik::entity_sidecar::parse_entity_sidecar(&text, &path.display().to_string())?))
}

/// Read every page file of `dir` (sorted by file name), with git history when available.
pub fn read_wiki(dir: &Path) -> Result<(Vec<SourcePage>, Vec<SkippedFile>, bool)> {
    if !dir.is_dir() {
        return Err(BuildError::NotADirectory(dir.to_path_buf()));
    }
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| BuildError::io(dir, e))? {
        let entry = entry.map_err(|e| BuildError::io(dir, e))?;
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            continue;
        };
        if is_page_file(&name) && path.is_file() {
            names.push((name, path));
        }
    }
    names.sort();
    let history = GitHistory::read(dir);
    let mut pages = Vec::with_capacity(names.len());
    let mut skipped = Vec::new();
    for (name, path) in names {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                skipped.push(SkippedFile { file: name, reason: format!("cannot be read: {e}") });
                continue;
            }
        };
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                skipped.push(SkippedFile {
                    file: name,
                    reason: format!("is not valid UTF-8 (first bad byte at offset {})", e.utf8_error().valid_up_to()),
                });
                continue;
            }
        };
        let mtime = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let (git_version, updated) = match history.as_ref().and_then(|h| h.files.get(&name)) {
            Some(file) => (Some(file.commits), file.last_commit_time),
            None => (None, mtime),
        };
        pages.push(SourcePage { file_name: name, text, git_version, updated });
    }
    Ok((pages, skipped, history.is_some()))
}

/// Per-file commit counts and last commit times from `git log`.
struct GitHistory {
    files: BTreeMap<String, FileHistory>,
}

struct FileHistory {
    commits: u32,
    last_commit_time: i64,
}

impl GitHistory {
    /// `None` when `dir` is not inside a git work tree or git is unavailable.
    fn read(dir: &Path) -> Option<GitHistory> {
        let inside = Command::new("git").arg("-C").arg(dir).args(["rev-parse", "--is-inside-work-tree"]).output().ok()?;
        if !inside.status.success() || String::from_utf8_lossy(&inside.stdout).trim() != "true" {
            return None;
        }
        // One pass over the history of this directory: a header line per commit, then the
        // files it touched (relative to the directory thanks to --relative).
        let log = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["log", "--format=%x00%ct", "--name-only", "--no-renames", "--relative", "--", "."])
            .output()
            .ok()?;
        if !log.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&log.stdout);
        let mut files: BTreeMap<String, FileHistory> = BTreeMap::new();
        let mut commit_time = 0i64;
        for line in text.lines() {
            if let Some(ts) = line.strip_prefix('\0') {
                commit_time = ts.trim().parse().unwrap_or(0);
                continue;
            }
            let name = line.trim();
            if name.is_empty() || name.contains('/') {
                continue;
            }
            let entry = files.entry(name.to_string()).or_insert(FileHistory { commits: 0, last_commit_time: commit_time });
            entry.commits += 1;
            entry.last_commit_time = entry.last_commit_time.max(commit_time);
        }
        Some(GitHistory { files })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_files() {
        assert!(is_page_file("A.md"));
        assert!(is_page_file("Legacy.HTML"));
        assert!(!is_page_file("Main.pins.yaml"));
        assert!(!is_page_file(".hidden.md"));
    }

    #[test]
    fn git_versions_count_commits() {
        let dir = std::env::temp_dir().join(format!("wk-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
                .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(dir.join("A.md"), "# A\n").unwrap();
        std::fs::write(dir.join("B.md"), "# B\n").unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "one"]);
        std::fs::write(dir.join("A.md"), "# A\nmore\n").unwrap();
        git(&["commit", "-qam", "two"]);
        std::fs::write(dir.join("C.md"), "# C untracked\n").unwrap();
        let (pages, skipped, is_git) = read_wiki(&dir).unwrap();
        assert!(is_git);
        assert!(skipped.is_empty());
        let get = |n: &str| pages.iter().find(|p| p.file_name == n).unwrap();
        assert_eq!(get("A.md").git_version, Some(2));
        assert_eq!(get("B.md").git_version, Some(1));
        assert_eq!(get("A.md").updated, 1_767_323_045);
        assert_eq!(get("C.md").git_version, None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn invalid_utf8_is_skipped_with_a_reason() {
        let dir = std::env::temp_dir().join(format!("wk-utf8-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Bad.md"), [0x66, 0xff, 0xfe]).unwrap();
        std::fs::write(dir.join("Good.md"), "# Good\n").unwrap();
        let (pages, skipped, _) = read_wiki(&dir).unwrap();
        assert_eq!(pages.len(), 1);
        assert_eq!(skipped[0].file, "Bad.md");
        assert!(skipped[0].reason.contains("UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
