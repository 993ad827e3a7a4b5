//! Shard, manifest and pointer decoding: arbitrary bytes give an error, never a panic or an
//! allocation blow-up (run with -malloc_limit_mb, see scripts/fuzz.sh). The hash check is
//! satisfied on purpose (the expected SHA-256 is the input's), so the decoder itself is reached.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikantik::catalog::{PageIndex, PageTable};
use wikantik::compile::{BodyPartition, CitationTable, GraphShard, SectionPartition, SpineShard};
use wikantik::hashing::sha256_hex;
use wikantik::lexical::TermPartition;
use wikantik::manifest::{DirectoryEntry, Manifest, ManifestDirectory};
use wikantik::shard::{decode_shard, from_cbor, Pointer, ShardEntry, ShardKind};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else { return };
    let sha256 = sha256_hex(bytes);
    let entry = |kind: ShardKind| ShardEntry {
        name: "shards/fuzz.cbor".into(),
        kind,
        partition: 0,
        sha256: sha256.clone(),
        size: bytes.len() as u64,
        first_key: None,
        last_key: None,
    };
    match mode % 14 {
        0 => {
            let _ = Pointer::from_json(bytes);
        }
        1 => {
            let pointer = Pointer { format: 1, build_id: "fuzz".into(), manifest: "manifests/fuzz.cbor".into(), sha256: sha256.clone() };
            let _ = Manifest::decode(&pointer, bytes);
        }
        2 => drop(decode_shard::<PageTable>(&entry(ShardKind::Pages), bytes)),
        3 => drop(decode_shard::<SectionPartition>(&entry(ShardKind::Sections), bytes)),
        4 => drop(decode_shard::<BodyPartition>(&entry(ShardKind::Bodies), bytes)),
        5 => drop(decode_shard::<TermPartition>(&entry(ShardKind::Terms), bytes)),
        6 => drop(decode_shard::<GraphShard>(&entry(ShardKind::Graph), bytes)),
        7 => drop(decode_shard::<SpineShard>(&entry(ShardKind::Spine), bytes)),
        8 => drop(decode_shard::<CitationTable>(&entry(ShardKind::Citations), bytes)),
        9 => {
            // The HNSW graph: decoding, then validation into the searchable form.
            if let Ok(shard) = decode_shard::<wikantik::ann::AnnShard>(&entry(ShardKind::Ann), bytes) {
                let _ = wikantik::ann::AnnIndex::from_shard(shard, "shards/fuzz.cbor");
            }
        }
        10 => {
            // The lite encoder's head: checked against the blob size it implies, then block 0
            // decoded from the input.
            use wikantik::encoder::lite::{BlockLayout, StaticTableHead};
            if let Ok(head) = decode_shard::<StaticTableHead>(&entry(ShardKind::StaticEncoder), bytes) {
                let size = (head.dim as u64).checked_add(4).and_then(|row| row.checked_mul(head.rows as u64)).unwrap_or(0);
                if let Ok(layout) = BlockLayout::from_head(&head, size) {
                    let _ = layout.decode_block(0, bytes);
                }
            }
        }
        11 => {
            // The page index: decoding, validation, then every key looked up.
            if let Ok(index) = decode_shard::<PageIndex>(&entry(ShardKind::PageIndex), bytes) {
                if index.validate().is_ok() {
                    for &key in index.keys.iter().take(1024) {
                        let _ = index.by_key(key);
                    }
                }
            }
        }
        12 => {
            // A manifest directory: decoding, validation against an entry made from its own
            // first and last rows, then lookups by partition and by term.
            if let Ok(directory) = decode_shard::<ManifestDirectory>(&entry(ShardKind::Directory), bytes) {
                let (first, last) = match (directory.entries.first(), directory.entries.last()) {
                    (Some(f), Some(l)) => (f.partition, l.partition),
                    _ => (0, 0),
                };
                let kind = directory.entries.first().map(|e| e.kind).unwrap_or(ShardKind::Terms);
                let d = DirectoryEntry { kind, first_partition: first, last_partition: last, first_key: None, bytes: 0, shard: entry(ShardKind::Directory) };
                if directory.validate(&d).is_ok() {
                    let _ = directory.partition(first, last);
                    let _ = directory.term_partition("fuzz");
                }
            }
        }
        _ => {
            if let Ok(store) = from_cbor::<wikantik::sparql::Store>("fuzz", bytes) {
                let _ = store.validate();
            }
        }
    }
});
