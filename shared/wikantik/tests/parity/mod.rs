//! The core end to end over an in-memory store: compile the fixture of [`crate::support`],
//! publish it into a [`MemStore`], read it back through [`IndexReader`] and retrieve from it.
//!
//! The same tests are compiled into two test targets:
//!
//! * `tests/wasm.rs` — inside WASM: under Node through `wasm-bindgen-test-runner` on
//!   wasm32-unknown-unknown (the Workers target), or under wasmtime on wasm32-wasip2 (Spin);
//! * `tests/in_memory.rs` — natively.
//!
//! so every assertion is a parity check between the platforms. Values pinned below (chunk
//! hashes, token counts, the build id) were produced natively; a WASM build that computes
//! anything differently fails here.
//!
//! On wasm32-unknown-unknown, `#[test]` is `wasm_bindgen_test`; everywhere else it is the
//! standard test attribute (libtest runs on WASI too).

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;

use wikantik::acl::Action;
use wikantik::catalog::PageTable;
use wikantik::chunk::{chunk_body, ChunkerConfig};
use wikantik::citation::CitationStatus;
use wikantik::compile::{compile, CompileOptions, SectionPartition};
use wikantik::hashing::sha256_hex;
use wikantik::lexical::{Bm25Params, TermPartition};
use wikantik::manifest::Manifest;
use wikantik::page::derived_canonical_id;
use wikantik::retrieval::{lexical_search, SectionHit};
use wikantik::shard::{decode_shard, Pointer, ShardEntry, ShardKind, POINTER_NAME};
use wikantik::tokens::{estimate_tokens, utf16_len};
use wikantik::Error;

use crate::support::{block_on, compile_sample, ids, sample_pages, sample_store, MemStore, MemStoreExt};

/// The five best sections for `query` in the fixture.
fn search(store: &MemStore, query: &str) -> Vec<SectionHit> {
    let reader = store.reader().expect("open the index");
    block_on(lexical_search(&reader, query, &Bm25Params::default(), 5)).expect("search")
}

/// `(slug, last heading)` of a hit, for compact ranking assertions.
fn place(hit: &SectionHit) -> (&str, &str) {
    (hit.slug.as_str(), hit.heading_path.last().map(String::as_str).unwrap_or(""))
}

fn principals(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn the_fixture_compiles_to_the_expected_index() {
    let index = compile_sample();
    let stats = &index.manifest.stats;
    assert_eq!(stats.pages, 8);
    assert_eq!(stats.restricted_pages, 1, "only VolunteerRota hides from anonymous callers");
    assert_eq!((stats.clusters, stats.hubs, stats.sub_clusters), (3, 2, 1));
    assert_eq!(stats.links, 10);
    assert_eq!(stats.citations, 1);
    let mut kinds: Vec<(&str, Option<&str>)> =
        index.warnings.iter().map(|w| (w.kind.as_str(), w.file.as_deref())).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        vec![("HEADLESS_CLUSTER", Some("CompostTemperature.md")), ("MISSING_CANONICAL_ID", Some("Glossary.md"))],
        "{:#?}",
        index.warnings
    );
    // Every object a reader needs is in the store: pointer, manifest, every listed shard.
    let store = MemStore::from_compiled(&index);
    let names: Vec<&str> = store.names().collect();
    assert!(names.contains(&POINTER_NAME));
    assert!(names.contains(&index.manifest_name.as_str()));
    assert_eq!(names.len(), index.manifest.shards.len() + 2);
}

#[test]
fn lexical_retrieval_ranks_the_expected_section_first() {
    let store = sample_store();
    let expectations = [
        ("how often to flush sediment out of the lines", ("DripIrrigation", "Flushing the lines")),
        ("litres per hour per emitter", ("DripIrrigation", "Emitters")),
        ("ladybird larvae against aphids", ("PestControl", "Aphids")),
        ("yellow sticky traps whitefly", ("PestControl", "Whitefly")),
        ("heat mat thermostat probe", ("SeedStarting", "Germination temperature")),
        ("when to turn the heap", ("CompostTemperature", "Turning")),
        // An identifier query is split into its parts and matches the title field.
        ("SeedStarting", ("SeedStarting", "Seed starting")),
    ];
    for (query, expected) in expectations {
        let hits = search(&store, query);
        assert!(!hits.is_empty(), "no hits for {query:?}");
        assert_eq!(place(&hits[0]), expected, "query {query:?}: {:#?}", hits.iter().map(place).collect::<Vec<_>>());
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "hits are sorted by score");
        assert!(hits.iter().all(|h| h.score.is_finite() && h.score > 0.0));
    }
    assert!(search(&store, "zzqx").is_empty(), "an unknown term finds nothing");
    assert!(search(&store, "the of and").is_empty(), "stop words alone find nothing");
}

#[test]
fn hydrated_sections_carry_citation_facts() {
    let store = sample_store();
    let hit = search(&store, "flush sediment").into_iter().next().expect("a hit");
    assert_eq!(hit.slug, "DripIrrigation");
    assert_eq!(hit.canonical_id, ids::DRIP_IRRIGATION);
    assert_eq!(hit.version, 4, "a frontmatter version wins over the git version");
    assert_eq!(hit.heading_path, vec!["Drip irrigation".to_string(), "Flushing the lines".to_string()]);
    assert!(hit.text.starts_with("Sediment from the rain barrels"), "{:?}", hit.text);
    assert!(hit.text.ends_with("and after a storm."), "{:?}", hit.text);

    let hit = search(&store, "ladybird larvae").into_iter().next().expect("a hit");
    assert_eq!((hit.slug.as_str(), hit.canonical_id.as_str(), hit.version), ("PestControl", ids::PEST_CONTROL, 5));

    // A page without an authored id gets the derived one.
    let hit = search(&store, "carbon-rich cardboard straw").into_iter().next().expect("a hit");
    assert_eq!(hit.slug, "Glossary");
    assert_eq!(hit.canonical_id, derived_canonical_id("Glossary"));
    assert!(hit.text.contains("| pricking out |"), "the table is one atomic section: {:?}", hit.text);

    // Retrieval itself does not filter by ACL: callers check `permits` on the page table.
    let hit = search(&store, "phone tree coordinator").into_iter().next().expect("a hit");
    assert_eq!(place(&hit), ("VolunteerRota", "Phone tree"));
}

#[test]
fn page_table_citations_spine_and_graph_read_back() {
    let reader = sample_store().reader().expect("open");
    let pages = block_on(reader.pages()).expect("pages");
    assert_eq!(pages.pages.len(), 8);
    let drip = pages.by_slug("DripIrrigation").expect("DripIrrigation");
    assert_eq!(drip.clusters, vec!["greenhouse/irrigation".to_string(), "greenhouse".to_string()]);
    assert_eq!(drip.title, "Drip irrigation");
    assert_eq!(pages.by_canonical_id(ids::GREENHOUSE_HUB).map(|p| p.slug.as_str()), Some("Greenhouse Hub"));
    assert_eq!(pages.by_slug("Greenhouse Hub").map(|p| p.source.as_str()), Some("Greenhouse+Hub.md"));
    let authored = [
        ("Greenhouse Hub", ids::GREENHOUSE_HUB),
        ("IrrigationHub", ids::IRRIGATION_HUB),
        ("DripIrrigation", ids::DRIP_IRRIGATION),
        ("SeedStarting", ids::SEED_STARTING),
        ("PestControl", ids::PEST_CONTROL),
        ("CompostTemperature", ids::COMPOST_TEMPERATURE),
        ("VolunteerRota", ids::VOLUNTEER_ROTA),
    ];
    for (slug, id) in authored {
        let record = pages.by_slug(slug).expect(slug);
        assert_eq!((record.canonical_id.as_str(), record.canonical_id_authored), (id, true), "{slug}");
    }
    let glossary = pages.by_slug("Glossary").expect("Glossary");
    assert!(!glossary.canonical_id_authored);
    assert_eq!(glossary.canonical_id, derived_canonical_id("Glossary"));

    let citations = block_on(reader.citations()).expect("citations");
    let [citation] = citations.citations.as_slice() else { panic!("{:#?}", citations.citations) };
    assert_eq!(citation.source_slug, "CompostTemperature");
    assert_eq!(citation.target_canonical_id, ids::DRIP_IRRIGATION);
    assert_eq!(citation.target_heading_path, "Drip irrigation > Emitters");
    assert_eq!(citation.status, CitationStatus::Current);
    assert_eq!(citation.pinned_target_version, Some(4));

    let spine = block_on(reader.spine()).expect("spine");
    assert_eq!(spine.spine.cluster("compost").map(|c| c.hub.clone()), Some(None), "compost is headless");
    assert_eq!(spine.spine.members("greenhouse").len(), 7, "members of greenhouse and its sub-cluster");

    let graph = block_on(reader.graph()).expect("graph");
    let drip = graph.graph.node("DripIrrigation").expect("node");
    assert_eq!(graph.graph.in_degree(drip), 3);
}

#[test]
fn acl_decisions_come_from_the_page_table() {
    let reader = sample_store().reader().expect("open");
    let pages = block_on(reader.pages()).expect("pages");
    let acl = |slug: &str| pages.by_slug(slug).map(|p| p.acl.clone()).expect(slug);

    let rota = acl("VolunteerRota");
    assert!(!rota.permits(&[], Action::View), "anonymous callers may not read the rota");
    assert!(!rota.permits(&principals(&["Alice"]), Action::View));
    assert!(rota.permits(&principals(&["Alice", "Coordinators"]), Action::View));
    assert!(!rota.permits(&principals(&["Coordinators"]), Action::Edit));
    assert!(rota.permits(&principals(&["Admin"]), Action::Delete), "Admin bypasses every ACL");

    let glossary = acl("Glossary");
    assert_eq!(glossary.entries.len(), 2, "the directive inside a code span is ignored");
    assert!(glossary.is_public());
    assert!(!glossary.permits(&principals(&["Alice"]), Action::Edit));
    assert!(glossary.permits(&principals(&["admin"]), Action::Edit), "built-in names ignore case");

    let drip = acl("DripIrrigation");
    assert!(drip.is_empty());
    assert!(drip.permits(&[], Action::Edit), "no ACL: the static policy decides");

    let visible = |who: &[String]| pages.pages.iter().filter(|p| p.acl.permits(who, Action::View)).count();
    assert_eq!(visible(&[]), 7);
    assert_eq!(visible(&principals(&["Coordinators"])), 8);
}

/// A body exercising headings, a fragment, an atomic code block, sentence splitting,
/// overlap, CRLF and characters outside the BMP, chunked with small limits.
const CHUNK_BODY: &str = "# Tide table\r\n\r\nShort intro.\r\n\r\n## Readings\r\n\r\n\
The gauge is read at dawn. It is read again at dusk. Each reading goes into the logbook. \
Readings above two metres are underlined. The harbour master checks the logbook weekly. \
Spring tides (🌊🌊) are marked twice.\r\n\r\n```\r\nhigh 2.4 m 06:12\r\nlow 0.3 m 12:40\r\n```\r\n\r\n\
## Notes\r\n\r\nCafé hours follow the tide.\r\n";

const SMALL_CHUNKS: ChunkerConfig =
    ChunkerConfig { max_tokens: 24, merge_forward_tokens: 10, fragment_floor_tokens: 4, overlap_tokens: 3 };

#[test]
fn the_chunker_gives_the_pinned_chunks() {
    let chunks = chunk_body(CHUNK_BODY, &SMALL_CHUNKS);
    let paths: Vec<Vec<&str>> = chunks.iter().map(|c| c.heading_path.iter().map(String::as_str).collect()).collect();
    let summary: Vec<(&[&str], usize, usize, &str)> = chunks
        .iter()
        .zip(&paths)
        .map(|(c, path)| (path.as_slice(), c.char_count, c.token_estimate, c.content_hash.as_str()))
        .collect();
    assert_eq!(summary, PINNED_CHUNKS, "{chunks:#?}");
    // The short intro is a fragment: it joins the first real section instead of standing alone.
    assert!(chunks[0].text.starts_with("Short intro.\n\nThe gauge"), "{:?}", chunks[0].text);
    // Overlap: the words of the previous chunk's last 12 UTF-16 units open the next one (a
    // tail never begins inside a word).
    assert!(chunks[1].text.starts_with("at dusk.\n\nEach reading"), "{:?}", chunks[1].text);
    assert!(chunks[3].text.starts_with("twice.\n\n```"), "{:?}", chunks[3].text);
    for (i, chunk) in chunks.iter().enumerate() {
        assert_eq!(chunk.index as usize, i);
        assert_eq!(chunk.char_count, utf16_len(&chunk.text));
        assert_eq!(chunk.token_estimate, estimate_tokens(&chunk.text));
        assert!(!chunk.text.contains('\r'), "line endings are normalised");
    }
    // Same body with LF endings: same chunks.
    assert_eq!(chunk_body(&CHUNK_BODY.replace("\r\n", "\n"), &SMALL_CHUNKS), chunks);
    // The default settings keep this short page in one chunk per section.
    assert_eq!(chunk_body(CHUNK_BODY, &ChunkerConfig::default()).len(), PINNED_DEFAULT_CHUNK_COUNT);
    assert!(chunk_body("# Only a heading\n\n## And another", &ChunkerConfig::default()).is_empty());
}

/// `(heading path, UTF-16 length, token estimate, content hash)` of each chunk of
/// [`CHUNK_BODY`] under [`SMALL_CHUNKS`], as produced natively.
const PINNED_CHUNKS: &[(&[&str], usize, usize, &str)] = &[
    (&["Tide table", "Readings"], 66, 17, "360517b69fcacba3"),
    (&["Tide table", "Readings"], 87, 22, "81871d0f1fdbb5f4"),
    (&["Tide table", "Readings"], 96, 24, "3f5c42298a6feabf"),
    (&["Tide table", "Readings"], 48, 12, "4159f9088b071e96"),
    (&["Tide table", "Notes"], 27, 7, "f8fbab40056bcf1f"),
];
const PINNED_DEFAULT_CHUNK_COUNT: usize = 2;

#[test]
fn the_token_estimate_counts_utf16_units() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("abcd"), 1);
    assert_eq!(estimate_tokens("abcde"), 2);
    assert_eq!(estimate_tokens("éééé"), 1, "é is one UTF-16 unit");
    assert_eq!(estimate_tokens("🌊🌊🌊"), 2, "a character outside the BMP is two units");
    assert_eq!(estimate_tokens(CHUNK_BODY), PINNED_BODY_TOKENS);
}

const PINNED_BODY_TOKENS: usize = 89;

#[test]
fn a_flipped_byte_fails_with_an_error_naming_the_object() {
    let index = compile_sample();
    let pages = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();

    let mut store = MemStore::from_compiled(&index);
    store.flip_byte(&pages);
    let reader = store.reader().expect("the manifest is intact");
    let err = block_on(reader.pages()).expect_err("corrupt page table");
    assert!(matches!(&err, Error::ShardHashMismatch { name, .. } if *name == pages), "{err}");
    assert!(err.to_string().contains(&pages), "{err}");

    // A corrupt term partition fails the search and is named.
    let terms = index.manifest.term_partition("emitter").expect("the partition routing 'emitter'").name.clone();
    let mut store = MemStore::from_compiled(&index);
    store.flip_byte(&terms);
    let reader = store.reader().expect("open");
    let err = block_on(lexical_search(&reader, "emitter", &Bm25Params::default(), 5)).expect_err("corrupt terms");
    assert!(matches!(&err, Error::ShardHashMismatch { name, .. } if *name == terms), "{err}");

    // A corrupt manifest is caught when the reader opens.
    let mut store = MemStore::from_compiled(&index);
    store.flip_byte(&index.manifest_name);
    let err = store.reader().err().expect("corrupt manifest");
    assert!(matches!(&err, Error::ShardHashMismatch { name, .. } if *name == index.manifest_name), "{err}");

    // A missing shard is named too.
    let mut store = MemStore::from_compiled(&index);
    store.remove(&pages);
    let err = block_on(store.reader().expect("open").pages()).expect_err("missing");
    assert_eq!(err, Error::MissingShard { name: pages });
}

/// Bytes that are not a shard: empty, truncated, invalid CBOR, nesting deep enough to
/// overflow a recursive decoder's stack, absurd length prefixes, and pseudo-random noise.
fn garbage_inputs(real_shard: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut inputs = vec![
        ("empty".to_string(), Vec::new()),
        ("truncated shard".to_string(), real_shard[..real_shard.len() / 2].to_vec()),
        ("reserved bytes".to_string(), vec![0xff, 0xff, 0xff]),
        ("100k nested arrays".to_string(), vec![0x81; 100_000]),
        ("100k indefinite arrays".to_string(), vec![0x9f; 100_000]),
        ("100k nested maps".to_string(), [0xa1, 0x00].repeat(50_000)),
        ("array of 2^64-1 items".to_string(), vec![0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        ("byte string of 2^40 bytes".to_string(), vec![0x5b, 0, 0, 0x01, 0, 0, 0, 0, 0, 0x00]),
        ("text string of 4 GiB".to_string(), vec![0x7a, 0xff, 0xff, 0xff, 0xff, b'a']),
    ];
    // xorshift64: deterministic noise, identical on every platform.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for len in [1usize, 7, 64, 1000, 65_536] {
        let noise = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        inputs.push((format!("{len} random bytes"), noise));
    }
    inputs
}

#[test]
fn garbage_is_a_decode_error_not_a_trap() {
    let index = compile_sample();
    let real = &index.shards.iter().find(|s| s.entry.kind == ShardKind::Pages).expect("pages").bytes;
    for (what, bytes) in garbage_inputs(real) {
        // An entry whose hash matches, so the decoder itself must reject the bytes.
        let entry = |kind| ShardEntry {
            kind,
            partition: 0,
            name: format!("shards/{what}.cbor"),
            size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
            first_key: None,
            last_key: None,
        };
        let pages = decode_shard::<PageTable>(&entry(ShardKind::Pages), &bytes);
        assert!(matches!(pages, Err(Error::Decode { .. })), "{what}: {pages:?}");
        assert!(decode_shard::<TermPartition>(&entry(ShardKind::Terms), &bytes).is_err(), "{what}");
        assert!(decode_shard::<SectionPartition>(&entry(ShardKind::Sections), &bytes).is_err(), "{what}");

        let pointer = Pointer { manifest: format!("manifests/{what}.cbor"), sha256: sha256_hex(&bytes), ..index.pointer.clone() };
        assert!(matches!(Manifest::decode(&pointer, &bytes), Err(Error::Decode { .. })), "{what}");
        assert!(Pointer::from_json(&bytes).is_err(), "{what}");
    }
}

#[test]
fn a_garbage_pointer_or_manifest_fails_the_reader_cleanly() {
    let index = compile_sample();

    let mut store = MemStore::from_compiled(&index);
    store.put(POINTER_NAME, b"{ not json".to_vec());
    let err = store.reader().err().expect("garbage pointer");
    assert!(matches!(&err, Error::Decode { name, .. } if name == POINTER_NAME), "{err}");

    // A pointer that faithfully names garbage: the manifest decoder must reject it.
    let garbage = vec![0x81; 10_000];
    let pointer = Pointer { manifest: "manifests/garbage.cbor".into(), sha256: sha256_hex(&garbage), ..index.pointer.clone() };
    let mut store = MemStore::from_compiled(&index);
    store.put(&pointer.manifest, garbage);
    store.put(POINTER_NAME, pointer.to_json());
    let err = store.reader().err().expect("garbage manifest");
    assert!(matches!(&err, Error::Decode { name, .. } if *name == pointer.manifest), "{err}");

    let mut store = MemStore::from_compiled(&index);
    store.remove(POINTER_NAME);
    assert_eq!(store.reader().err(), Some(Error::MissingShard { name: POINTER_NAME.into() }));
}

#[test]
fn the_same_pages_give_identical_bytes() {
    let a = compile_sample();
    let b = compile_sample();
    assert_eq!(a.manifest_bytes, b.manifest_bytes);
    assert_eq!(a.pointer.to_json(), b.pointer.to_json());
    assert_eq!(a.shards, b.shards);
    // Input order does not matter either.
    let mut reversed = sample_pages();
    reversed.reverse();
    let c = compile(reversed, &CompileOptions::default(), &mut |_, _, _| {}).expect("compile");
    assert_eq!(a.manifest_bytes, c.manifest_bytes);
    assert_eq!(MemStore::from_compiled(&a), MemStore::from_compiled(&c));
}

#[test]
fn the_build_is_byte_identical_on_every_platform() {
    // The manifest lists every shard's SHA-256, so its hash covers the whole index. The
    // value was produced natively; a WASM build that encodes, hashes, chunks or scores
    // anything differently (float formatting, hashing order, libm) lands elsewhere.
    // Deliberate changes to the format or the fixture change it: update it from the
    // native run's failure message.
    let index = compile_sample();
    assert_eq!(index.pointer.sha256, PINNED_MANIFEST_SHA256, "build id {}", index.manifest.build_id);
}

// Last moved by the analyzer's marked identifiers (flags and absolute paths kept with their
// `--` / `/`).
const PINNED_MANIFEST_SHA256: &str = "efa2eff9e70241483f3b3bb0af8427df682ad4b94cbbeef61840b777d110e37b";
