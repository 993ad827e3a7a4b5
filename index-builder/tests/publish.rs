//! `index-builder publish`, run as a user runs it, against `file://` targets (always) and a
//! real S3-compatible server (when `scripts/s3-tests.sh` started one and set
//! `WIKANTIK_S3_TEST_ENDPOINT`; otherwise those tests skip with a message).
//!
//! The bucket's contents are inspected through the library's own stores, so each scenario
//! checks the same facts on both kinds of target.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use wikantik::manifest::Manifest;
use wikantik::shard::{Pointer, ShardEntry};
use wikantik_index_builder::s3::{S3Settings, S3Store};
use wikantik_index_builder::store::{LocalStore, ObjectStore};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_index-builder"));
    for var in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "WIKANTIK_PUBLISH_FAIL_AFTER"] {
        cmd.env_remove(var);
    }
    cmd
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = repo().join("target/test-scratch").join(format!("publish-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Every shard of a build: the rows its manifest lists and those of its directories (the
/// sample wiki is built with `--directories-from 2`, so every partitioned kind has them).
fn every_shard(manifest: &Manifest, get: impl Fn(&str) -> Option<Vec<u8>>) -> Vec<ShardEntry> {
    manifest
        .every_shard(|e| get(&e.name).ok_or_else(|| wikantik::Error::MissingShard { name: e.name.clone() }))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn run(cmd: &mut Command) -> Run {
    let out: Output = cmd.output().expect("run index-builder");
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A publish target: its URL, the environment the CLI needs for it, and a store to inspect it.
struct Target {
    url: String,
    env: Vec<(&'static str, String)>,
    store: Box<dyn ObjectStore>,
}

fn file_target(name: &str) -> Target {
    let dir = scratch(&format!("{name}-target"));
    let _ = std::fs::remove_dir_all(&dir);
    Target { url: format!("file://{}", dir.display()), env: Vec::new(), store: Box::new(LocalStore::new(dir)) }
}

fn s3_target(name: &str) -> Option<Target> {
    let Ok(endpoint) = std::env::var("WIKANTIK_S3_TEST_ENDPOINT") else {
        eprintln!("SKIP: no S3 test server (WIKANTIK_S3_TEST_ENDPOINT unset); run scripts/s3-tests.sh to run the S3 tests");
        return None;
    };
    let bucket = std::env::var("WIKANTIK_S3_TEST_BUCKET").unwrap_or_else(|_| "wikantik-test".to_string());
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let prefix = format!("{name}-{}-{nanos}/index", std::process::id());
    let url = format!("s3://{bucket}/{prefix}");
    let settings = S3Settings {
        endpoint: Some(endpoint.clone()),
        region: Some("us-east-1".to_string()),
        access_key_id: Some("test".to_string()),
        secret_access_key: Some("test".to_string()),
        session_token: None,
    };
    let store = S3Store::new(&url, &bucket, &prefix, &settings).expect("S3 test store");
    let env = vec![
        ("AWS_ACCESS_KEY_ID", "test".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_string()),
        ("AWS_REGION", "us-east-1".to_string()),
        ("AWS_ENDPOINT_URL", endpoint),
    ];
    Some(Target { url, env, store: Box::new(store) })
}

impl Target {
    fn publish(&self, index: &Path, args: &[&str]) -> Run {
        let mut cmd = bin();
        cmd.arg("publish").arg(index).arg("--to").arg(&self.url).args(args);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        run(&mut cmd)
    }

    fn publish_interrupted(&self, index: &Path, after: usize) -> Run {
        let mut cmd = bin();
        cmd.arg("publish").arg(index).arg("--to").arg(&self.url).env("WIKANTIK_PUBLISH_FAIL_AFTER", after.to_string());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        run(&mut cmd)
    }

    fn pointer(&self) -> Option<Pointer> {
        self.store.get("current.json").unwrap().map(|b| Pointer::from_json(&b).unwrap())
    }

    fn names(&self, prefix: &str) -> BTreeSet<String> {
        self.store.list(prefix).unwrap().into_iter().map(|m| m.name).collect()
    }

    fn every_shard(&self, manifest: &Manifest) -> Vec<ShardEntry> {
        every_shard(manifest, |name| self.store.get(name).unwrap())
    }

    fn manifest(&self, name: &str) -> Manifest {
        let bytes = self.store.get(name).unwrap().unwrap_or_else(|| panic!("{name} missing at the target"));
        Manifest::from_stored(name, &bytes).unwrap()
    }

    /// Every object the current build needs is at the target, byte-identical to the local index.
    fn assert_holds_build_of(&self, index: &Path) {
        let local_pointer = std::fs::read(index.join("current.json")).unwrap();
        assert_eq!(self.store.get("current.json").unwrap().as_deref(), Some(local_pointer.as_slice()), "pointer");
        let pointer = self.pointer().unwrap();
        let manifest = self.manifest(&pointer.manifest);
        assert!(!manifest.directories.is_empty(), "the build lists its partitions through directories");
        for entry in &self.every_shard(&manifest) {
            let remote = self.store.get(&entry.name).unwrap().unwrap_or_else(|| panic!("{} missing", entry.name));
            assert_eq!(remote, std::fs::read(index.join(&entry.name)).unwrap(), "{}", entry.name);
        }
    }
}

/// A copy of the sample wiki that tests may edit, and an index directory to build it into.
struct Wiki {
    dir: PathBuf,
    index: PathBuf,
    edits: usize,
}

impl Wiki {
    fn new(name: &str) -> Wiki {
        let dir = scratch(&format!("{name}-wiki"));
        for entry in std::fs::read_dir(repo().join("examples/wiki")).unwrap() {
            let entry = entry.unwrap();
            if entry.path().is_file() {
                std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
            }
        }
        let index = scratch(&format!("{name}-index"));
        let wiki = Wiki { dir, index, edits: 0 };
        wiki.build();
        wiki
    }

    fn build(&self) {
        let r = run(bin().arg("build").arg(&self.dir).arg("--out").arg(&self.index).args(["-q", "--directories-from", "2"]));
        assert!(r.ok, "build failed: {}", r.stderr);
    }

    /// Change one page and rebuild.
    fn edit_and_build(&mut self) {
        self.edits += 1;
        let mut pages: Vec<PathBuf> = std::fs::read_dir(&self.dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
        pages.sort();
        let page = &pages[0];
        let mut text = std::fs::read_to_string(page).unwrap();
        text.push_str(&format!("\n\nA new paragraph about zanzibarian edit number {}.\n", self.edits));
        std::fs::write(page, text).unwrap();
        self.build();
    }

    fn shard_count(&self) -> usize {
        let pointer = Pointer::from_json(&std::fs::read(self.index.join("current.json")).unwrap()).unwrap();
        let manifest = Manifest::from_stored(&pointer.manifest, &std::fs::read(self.index.join(&pointer.manifest)).unwrap()).unwrap();
        every_shard(&manifest, |name| std::fs::read(self.index.join(name)).ok()).len()
    }

    fn build_id(&self) -> String {
        Pointer::from_json(&std::fs::read(self.index.join("current.json")).unwrap()).unwrap().build_id
    }
}

fn count_uploaded(stdout: &str) -> usize {
    let line = stdout.lines().find(|l| l.trim_start().starts_with("objects")).unwrap_or_else(|| panic!("no objects line:\n{stdout}"));
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("bad objects line: {line}"))
}

// ---- scenarios, each run against a file:// target and (when available) an S3 bucket ----

fn first_publish_then_republish_uploads_nothing(t: &Target) {
    let wiki = Wiki::new("first");
    let n = wiki.shard_count();
    let r = t.publish(&wiki.index, &[]);
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("{n} uploaded, 0 already present")), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("current.json (none) -> {}", wiki.build_id())), "{}", r.stdout);
    t.assert_holds_build_of(&wiki.index);
    assert!(t.store.get("builds.json").unwrap().is_some());

    let r = t.publish(&wiki.index, &[]);
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("0 uploaded, {n} already present")), "{}", r.stdout);
    assert!(r.stdout.contains("(already present)") && r.stdout.contains("current.json unchanged"), "{}", r.stdout);
    assert!(r.stdout.contains("0 old objects removed"), "{}", r.stdout);
    t.assert_holds_build_of(&wiki.index);
}

fn a_changed_page_uploads_only_new_objects_and_keeps_the_old_build(t: &Target) {
    let mut wiki = Wiki::new("change");
    let r = t.publish(&wiki.index, &[]);
    assert!(r.ok, "{}", r.stderr);
    let old_pointer = t.pointer().unwrap();
    let before = t.names("shards/");

    wiki.edit_and_build();
    let r = t.publish(&wiki.index, &[]);
    assert!(r.ok, "{}", r.stderr);
    let uploaded = count_uploaded(&r.stdout);
    let after = t.names("shards/");
    let new: Vec<&String> = after.difference(&before).collect();
    assert!(uploaded > 0 && uploaded < wiki.shard_count(), "{uploaded} of {}: {}", wiki.shard_count(), r.stdout);
    assert_eq!(new.len(), uploaded, "exactly the new objects were uploaded: {new:?}");
    assert!(r.stdout.contains(&format!("current.json {} -> {}", old_pointer.build_id, wiki.build_id())), "{}", r.stdout);
    t.assert_holds_build_of(&wiki.index);
    // The previous build stays whole for in-flight readers and rollbacks.
    let old = t.manifest(&old_pointer.manifest);
    for entry in &t.every_shard(&old) {
        assert!(after.contains(&entry.name), "old build lost {}", entry.name);
    }
}

fn builds_beyond_keep_are_collected_and_kept_ones_stay_whole(t: &Target) {
    let mut wiki = Wiki::new("gc");
    let mut manifests = Vec::new();
    for i in 0..4 {
        if i > 0 {
            wiki.edit_and_build();
        }
        let r = t.publish(&wiki.index, &["--keep-builds", "2"]);
        assert!(r.ok, "{}", r.stderr);
        manifests.push(t.pointer().unwrap().manifest);
        if i >= 2 {
            assert!(!r.stdout.contains(" 0 old objects removed"), "build {i} removed nothing: {}", r.stdout);
        }
    }
    let present = t.names("manifests/");
    let kept: BTreeSet<String> = manifests[2..].iter().cloned().collect();
    assert_eq!(present, kept, "exactly the last two builds are kept");
    let mut referenced = BTreeSet::new();
    for m in &kept {
        referenced.extend(t.every_shard(&t.manifest(m)).into_iter().map(|s| s.name));
    }
    assert_eq!(t.names("shards/"), referenced, "every kept shard present, no unreferenced shard left");
    let history: serde_json::Value = serde_json::from_slice(&t.store.get("builds.json").unwrap().unwrap()).unwrap();
    assert_eq!(history["manifests"], serde_json::json!([manifests[3], manifests[2]]));
}

fn an_interrupted_publish_completes_when_run_again(t: &Target) {
    let mut wiki = Wiki::new("resume");
    let r = t.publish(&wiki.index, &[]);
    assert!(r.ok, "{}", r.stderr);
    let first = t.pointer().unwrap();

    wiki.edit_and_build();
    let plan = t.publish(&wiki.index, &["--dry-run"]);
    assert!(plan.ok, "{}", plan.stderr);
    let to_upload = count_uploaded(&plan.stdout);
    assert!(to_upload >= 2, "{}", plan.stdout);

    let r = t.publish_interrupted(&wiki.index, 1);
    assert!(!r.ok, "the hook must fail the publish");
    assert!(r.stderr.starts_with("error: publish interrupted after 1 uploads"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert_eq!(t.pointer().unwrap(), first, "the pointer does not move before every object is up");

    let r = t.publish(&wiki.index, &[]);
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(count_uploaded(&r.stdout), to_upload - 1, "the re-run uploads only what is still missing: {}", r.stdout);
    assert!(r.stdout.contains(&format!("current.json {} -> {}", first.build_id, wiki.build_id())), "{}", r.stdout);
    t.assert_holds_build_of(&wiki.index);
}

fn a_corrupt_local_shard_is_refused_before_anything_is_written(t: &Target) {
    let wiki = Wiki::new("corrupt");
    let pointer = Pointer::from_json(&std::fs::read(wiki.index.join("current.json")).unwrap()).unwrap();
    let manifest = Manifest::from_stored(&pointer.manifest, &std::fs::read(wiki.index.join(&pointer.manifest)).unwrap()).unwrap();
    let victim = &manifest.shards[manifest.shards.len() / 2].name;
    let path = wiki.index.join(victim);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();

    let r = t.publish(&wiki.index, &[]);
    assert!(!r.ok);
    assert!(r.stderr.starts_with("error: "), "{}", r.stderr);
    assert!(r.stderr.contains(victim.as_str()) && r.stderr.contains("corrupt object"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was published"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(t.pointer().is_none(), "no pointer was written");
    assert!(t.names("shards/").is_empty() && t.names("manifests/").is_empty(), "nothing was uploaded");
}

fn a_dry_run_writes_nothing(t: &Target) {
    let wiki = Wiki::new("dry");
    let r = t.publish(&wiki.index, &["--dry-run"]);
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stdout.starts_with("Plan (dry run, nothing written)"), "{}", r.stdout);
    assert_eq!(count_uploaded(&r.stdout), wiki.shard_count(), "{}", r.stdout);
    assert!(r.stdout.contains("(would swap)"), "{}", r.stdout);
    assert!(t.pointer().is_none() && t.names("shards/").is_empty() && t.store.get("builds.json").unwrap().is_none());
}

macro_rules! on_both_targets {
    ($($scenario:ident),* $(,)?) => {
        mod file_target {
            $( #[test] fn $scenario() { super::$scenario(&super::file_target(stringify!($scenario))) } )*
        }
        mod s3_target {
            $( #[test] fn $scenario() { if let Some(t) = super::s3_target(stringify!($scenario)) { super::$scenario(&t) } } )*
        }
    };
}

on_both_targets!(
    first_publish_then_republish_uploads_nothing,
    a_changed_page_uploads_only_new_objects_and_keeps_the_old_build,
    builds_beyond_keep_are_collected_and_kept_ones_stay_whole,
    an_interrupted_publish_completes_when_run_again,
    a_corrupt_local_shard_is_refused_before_anything_is_written,
    a_dry_run_writes_nothing,
);

// ---- file:// and CLI specifics ----

#[test]
fn gc_deletes_nothing_when_a_kept_build_cannot_be_read() {
    let mut wiki = Wiki::new("gc-unsure");
    let t = file_target("gc-unsure");
    assert!(t.publish(&wiki.index, &[]).ok);
    let first = t.pointer().unwrap();
    wiki.edit_and_build();
    assert!(t.publish(&wiki.index, &[]).ok);
    // The first build's manifest vanishes and an unreferenced object appears.
    t.store.delete(&first.manifest).unwrap();
    let stray = "shards/pages-0-0123456789abcdef0123.cbor";
    t.store.put(stray, b"stray", wikantik_index_builder::store::Mutability::Immutable).unwrap();
    wiki.edit_and_build();
    let r = t.publish(&wiki.index, &[]);
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stdout.contains("nothing removed: kept build") && r.stdout.contains("is missing"), "{}", r.stdout);
    assert!(t.store.get(stray).unwrap().is_some(), "nothing it could not prove unused was deleted");
    t.assert_holds_build_of(&wiki.index);
}

#[test]
fn gc_deletes_nothing_when_a_kept_build_has_an_unreadable_directory() {
    let mut wiki = Wiki::new("gc-directory");
    let t = file_target("gc-directory");
    assert!(t.publish(&wiki.index, &[]).ok);
    let first = t.manifest(&t.pointer().unwrap().manifest);
    wiki.edit_and_build();
    assert!(t.publish(&wiki.index, &[]).ok);
    let second = t.manifest(&t.pointer().unwrap().manifest);
    // A directory only the first (kept) build has vanishes, and an unreferenced object appears.
    let only_first = first.directories.iter().find(|d| !second.directories.iter().any(|e| e.shard == d.shard)).expect("an edit changes a directory");
    t.store.delete(&only_first.shard.name).unwrap();
    let stray = "shards/pages-0-0123456789abcdef0123.cbor";
    t.store.put(stray, b"stray", wikantik_index_builder::store::Mutability::Immutable).unwrap();
    wiki.edit_and_build();
    let r = t.publish(&wiki.index, &["--keep-builds", "3"]);
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stdout.contains("nothing removed: a directory of kept build"), "{}", r.stdout);
    assert!(t.store.get(stray).unwrap().is_some(), "nothing it could not prove unused was deleted");
    t.assert_holds_build_of(&wiki.index);
}

#[test]
fn build_out_and_publish_write_the_same_layout() {
    let wiki = Wiki::new("same");
    let t = file_target("same");
    assert!(t.publish(&wiki.index, &[]).ok);
    let Some(dir) = t.url.strip_prefix("file://") else { unreachable!() };
    let rebuilt = run(bin().arg("build").arg(&wiki.dir).arg("--out").arg(dir).args(["-q", "--directories-from", "2"]));
    assert!(rebuilt.ok, "{}", rebuilt.stderr);
    let r = t.publish(&wiki.index, &[]);
    assert!(r.stdout.contains("0 uploaded") && r.stdout.contains("current.json unchanged"), "{}", r.stdout);
}

fn publish_error(args: &[&str], env: &[(&str, &str)]) -> String {
    let wiki_index = repo().join("target/test-scratch/publish-never");
    let mut cmd = bin();
    cmd.arg("publish").arg(&wiki_index).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r = run(&mut cmd);
    assert!(!r.ok, "{}", r.stdout);
    assert!(r.stderr.starts_with("error: ") && !r.stderr.contains("panicked") && !r.stderr.contains("backtrace"), "{}", r.stderr);
    r.stderr
}

#[test]
fn bad_targets_and_settings_are_clear_errors() {
    let e = publish_error(&["--to", "ftp://host/x"], &[]);
    assert!(e.contains("expected s3://bucket[/prefix] or file://DIR"), "{e}");
    let e = publish_error(&["--to", "s3://Bad_Bucket/x"], &[]);
    assert!(e.contains("not a valid bucket name"), "{e}");
    let e = publish_error(&["--to", "s3://wikantik-test/x"], &[]);
    assert!(e.contains("missing S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), "{e}");
    let creds = [("AWS_ACCESS_KEY_ID", "k"), ("AWS_SECRET_ACCESS_KEY", "s")];
    let e = publish_error(&["--to", "s3://wikantik-test/x", "--endpoint", "not a url"], &creds);
    assert!(e.contains("not a valid endpoint URL"), "{e}");
    let e = publish_error(&["--to", "file:///tmp/x"], &[]);
    assert!(e.contains("is not a directory"), "{e}");
}

#[test]
fn an_unreachable_endpoint_is_a_clear_error_not_a_hang() {
    let wiki = Wiki::new("unreachable");
    let started = std::time::Instant::now();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let mut cmd = bin();
    cmd.arg("publish").arg(&wiki.index).args(["--to", "s3://wikantik-test/x", "--endpoint", "http://127.0.0.1:1"]);
    cmd.env("AWS_ACCESS_KEY_ID", "k").env("AWS_SECRET_ACCESS_KEY", "s");
    let r = run(&mut cmd);
    assert!(!r.ok);
    assert!(r.stderr.starts_with("error: s3://wikantik-test/x: cannot list"), "{}", r.stderr);
    assert!(r.stderr.contains("is the endpoint reachable?"), "{}", r.stderr);
    assert!(started.elapsed().as_secs() < 60, "took {:?}", started.elapsed());
}

#[test]
fn publishing_a_directory_without_an_index_says_how_to_make_one() {
    let empty = scratch("no-index");
    let target = scratch("no-index-target");
    let r = run(bin().arg("publish").arg(&empty).arg("--to").arg(format!("file://{}", target.display())));
    assert!(!r.ok);
    assert!(r.stderr.contains("holds no index (no current.json)") && r.stderr.contains("index-builder build"), "{}", r.stderr);
}
