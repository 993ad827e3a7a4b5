//! The `index-builder` binary, run as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_index-builder"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = repo().join("target/test-scratch").join(format!("cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(cmd: &mut Command) -> (Output, String, String) {
    let out = cmd.output().expect("run index-builder");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["", "shards", "manifests"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { continue };
        for e in entries.flatten() {
            if e.path().is_file() {
                out.push((format!("{sub}/{}", e.file_name().to_string_lossy()), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn builds_the_sample_wiki_and_prints_a_summary() {
    let out = scratch("sample");
    let (status, stdout, stderr) = run(bin().args(["build", "../examples/wiki", "--out"]).arg(&out).current_dir(env!("CARGO_MANIFEST_DIR")));
    assert!(status.status.success(), "{stderr}");
    for needle in ["pages", "33", "sections", "clusters", "6 hubs, 2 sub-clusters", "links", "133", "shards", "MISSING_CANONICAL_ID", "HEADLESS_CLUSTER", "STALE_CITATION"] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    assert!(out.join("current.json").is_file());
}

#[test]
fn malformed_yaml_names_file_and_line_and_keeps_the_previous_index() {
    let wiki = scratch("broken-wiki");
    let out = scratch("broken-out");
    std::fs::write(wiki.join("Good.md"), "---\ntitle: Good\n---\n# Good\n\nFine text.\n").unwrap();
    let (first, _, _) = run(bin().arg("build").arg(&wiki).arg("--out").arg(&out).arg("-q"));
    assert!(first.status.success());
    let pointer_before = std::fs::read(out.join("current.json")).unwrap();

    std::fs::write(wiki.join("Broken.md"), "---\ntitle: Broken\ntags: [a, b\nsummary: x\n---\n# Broken\n").unwrap();
    let (status, _, stderr) = run(bin().arg("build").arg(&wiki).arg("--out").arg(&out));
    assert!(!status.status.success());
    // (progress lines may come first: stderr is not a terminal here)
    assert!(stderr.lines().any(|l| l.starts_with("error: Broken.md:")), "{stderr}");
    assert!(stderr.contains("malformed YAML frontmatter"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read(out.join("current.json")).unwrap(), pointer_before, "nothing already stored is lost");

    let (status, stdout, stderr) = run(bin().arg("build").arg(&wiki).arg("--out").arg(&out).arg("--lenient"));
    assert!(status.status.success(), "{stderr}");
    assert!(stdout.contains("Broken.md:") && stdout.contains("MALFORMED_FRONTMATTER"), "{stdout}");
}

#[test]
fn a_missing_wiki_directory_is_a_clear_error() {
    let (status, _, stderr) = run(bin().args(["build", "/nonexistent/wiki", "--out", "/tmp/never"]));
    assert!(!status.status.success());
    assert_eq!(stderr.trim(), "error: /nonexistent/wiki is not a directory");
}

#[test]
fn changing_one_page_rewrites_only_the_shards_that_contain_it() {
    let wiki = scratch("local-wiki");
    copy_dir(&repo().join("examples/wiki"), &wiki);
    // Enough pages that sections and bodies span several partitions.
    for i in 0..120 {
        std::fs::write(wiki.join(format!("Filler{i:03}.md")), format!("# Filler {i}\n\nFiller page number {i} about topic{i}.\n")).unwrap();
    }
    let out = scratch("local-out");
    let (status, _, stderr) = run(bin().arg("build").arg(&wiki).arg("--out").arg(&out).arg("-q"));
    assert!(status.status.success(), "{stderr}");
    let before: std::collections::BTreeSet<String> = files_of(&out).into_iter().map(|(n, _)| n).filter(|n| n.starts_with("shards/")).collect();

    let page = wiki.join("Filler050.md");
    std::fs::write(&page, "# Filler 50\n\nFiller page number 50 about topic50, now edited.\n").unwrap();
    let (status, stdout, stderr) = run(bin().arg("build").arg(&wiki).arg("--out").arg(&out).arg("--keep-builds").arg("1"));
    assert!(status.status.success(), "{stderr}");
    let after: std::collections::BTreeSet<String> = files_of(&out).into_iter().map(|(n, _)| n).filter(|n| n.starts_with("shards/")).collect();
    let new: Vec<&String> = after.difference(&before).collect();
    let kinds: std::collections::BTreeSet<&str> = new.iter().map(|n| n.trim_start_matches("shards/").split('-').next().unwrap_or("")).collect();
    // The page's own section and body partitions, the page table, and the term partitions of
    // the words it changed; never the whole index.
    assert!(kinds.contains("sections") && kinds.contains("bodies") && kinds.contains("pages"), "{new:?}");
    let sections_total = after.iter().filter(|n| n.starts_with("shards/sections-")).count();
    let sections_new = new.iter().filter(|n| n.starts_with("shards/sections-")).count();
    assert!(sections_total >= 5, "{sections_total} partitions");
    assert_eq!(sections_new, 1, "{new:?}");
    assert!(!kinds.contains("graph") && !kinds.contains("spine") && !kinds.contains("citations"), "{new:?}");
    assert!(new.len() < after.len() / 2, "{} of {} shards rewritten", new.len(), after.len());
    assert!(stdout.contains("unchanged"), "{stdout}");
}

#[test]
fn the_real_corpus_builds_deterministically_with_the_reference_findings() {
    let corpus = std::env::var_os("WIKANTIK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/corpus/wikantik-pages"));
    if !corpus.is_dir() {
        eprintln!("SKIP: the real corpus is not at {} (set WIKANTIK_CORPUS)", corpus.display());
        return;
    }
    let (a, b) = (scratch("corpus-a"), scratch("corpus-b"));
    let (status, stdout, stderr) = run(bin().arg("build").arg(&corpus).arg("--out").arg(&a));
    assert!(status.status.success(), "{stderr}");
    let (status, _, stderr) = run(bin().arg("build").arg(&corpus).arg("--out").arg(&b).arg("-q"));
    assert!(status.status.success(), "{stderr}");
    assert!(files_of(&a) == files_of(&b), "two builds of the same corpus differ");

    assert!(stdout.contains("pages          1201"), "{stdout}");
    assert!(stdout.contains("(75 hubs, 24 sub-clusters)"), "{stdout}");
    assert!(stdout.contains("HEADLESS_CLUSTER: cluster 'computer-science'"), "{stdout}");
    for page in ["ArtHistory", "CSSThemeDark", "ConnectingClaudeCodeToWikantikMcp", "News"] {
        assert!(stdout.contains(&format!("{page}.md: MISSING_CANONICAL_ID")), "{page}");
    }
    // 18 pages author ids that are not ULIDs; 17 keep them (PaxosAndRaft loses the duplicate).
    assert_eq!(stdout.matches("is not a valid ULID; kept as written").count(), 17, "{stdout}");
    assert_eq!(stdout.matches("MALFORMED_CANONICAL_ID").count(), 17, "{stdout}");
    for page in ["PhilosophyHub", "CurationTest"] {
        assert!(stdout.contains(&format!("{page}.md: MALFORMED_CANONICAL_ID")), "{page}");
    }
    assert!(stdout.contains("PaxosAndRaft.md: DUPLICATE_CANONICAL_ID: 'KentBeckDistributedPatterns' keeps canonical_id 01KS6S8Z8QYAS6P09AM61S5E2O"), "{stdout}");
    assert!(stdout.contains("DUPLICATE_CANONICAL_ID: canonical_id 01KS6S8Z8QYAS6P09AM61S5E2O is carried by 2 pages: KentBeckDistributedPatterns, PaxosAndRaft"), "{stdout}");
}

#[test]
fn keys_new_mints_a_key_whose_line_authenticates_it() {
    let (status, stdout, stderr) = run(bin().args(["keys", "new", "--scopes", "mcp_read", "--principals", "Alice,Engineering", "--label", "laptop"]));
    assert!(status.status.success(), "{stderr}");
    let key = stdout.lines().find_map(|l| l.strip_prefix("key:  ")).expect("a key line").to_string();
    let line = stdout.lines().find_map(|l| l.strip_prefix("line: ")).expect("a hash line").to_string();
    assert!(key.starts_with("wkk_") && key.len() == 47, "{key}");
    assert!(!line.contains(&key), "the ring line holds only the hash");
    let ring = wikantik::auth::KeyRing::parse(&line).expect("the line parses");
    match ring.authenticate(Some(&format!("Bearer {key}"))) {
        wikantik::auth::AuthOutcome::Key { principals, .. } => assert_eq!(principals, vec!["Alice", "Engineering"]),
        other => panic!("unexpected {other:?}"),
    }
    let (again, stdout2, _) = run(bin().args(["keys", "new"]));
    assert!(again.status.success());
    assert_ne!(stdout2, stdout, "every key is fresh");
    let (bad, _, stderr) = run(bin().args(["keys", "new", "--scopes", "bogus"]));
    assert!(!bad.status.success());
    assert_eq!(stderr.trim(), "error: unknown scope 'bogus' (use mcp_read, mcp, tools, all)");
}
