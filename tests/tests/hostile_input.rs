//! Decoding hostile bytes: what the `shard_decode` fuzz target checks, pinned
//! as ordinary tests. CBOR headers that announce 2^64-byte strings, 2^64-element arrays and maps
//! must fail with a decode error naming the object — ciborium reads strings in bounded segments
//! and serde pre-allocates at most a cautious size, so nothing is allocated up front — and
//! nesting past the recursion limit (128) is an error, not a stack overflow.

use wikantik::catalog::PageTable;
use wikantik::compile::SectionPartition;
use wikantik::hashing::sha256_hex;
use wikantik::manifest::Manifest;
use wikantik::shard::{decode_shard, from_cbor, Pointer, ShardEntry, ShardKind};
use wikantik::Error;

fn entry(kind: ShardKind, bytes: &[u8]) -> ShardEntry {
    ShardEntry {
        kind,
        partition: 0,
        name: "shards/hostile.cbor".into(),
        size: bytes.len() as u64,
        sha256: sha256_hex(bytes),
        first_key: None,
        last_key: None,
    }
}

fn assert_decode_error(result: wikantik::error::Result<impl std::fmt::Debug>, what: &str) {
    match result {
        Err(Error::Decode { name, .. }) => assert!(name.ends_with("hostile.cbor") || name.starts_with("manifests/"), "{what}: {name}"),
        other => panic!("{what}: expected a decode error, got {other:?}"),
    }
}

const HUGE: [u8; 8] = [0xff; 8];

fn with(prefix: &[u8]) -> Vec<u8> {
    let mut v = prefix.to_vec();
    v.extend_from_slice(&HUGE);
    v
}

#[test]
fn huge_cbor_length_headers_are_decode_errors_not_allocations() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("array of 2^64-1 items", with(&[0x9b])),
        ("map of 2^64-1 entries", with(&[0xbb])),
        ("byte string of 2^64-1 bytes", with(&[0xa1, 0x67, b'p', b'a', b'y', b'l', b'o', b'a', b'd', 0x5b])),
        ("text string of 2^64-1 bytes", with(&[0xa1, 0x66, b'f', b'o', b'r', b'm', b'a', b't', 0x7b])),
        ("array of 2^32-1 items", vec![0x9a, 0xff, 0xff, 0xff, 0xff]),
    ];
    for (what, bytes) in cases {
        assert_decode_error(decode_shard::<PageTable>(&entry(ShardKind::Pages, &bytes), &bytes), what);
        assert_decode_error(decode_shard::<SectionPartition>(&entry(ShardKind::Sections, &bytes), &bytes), what);
        assert_decode_error(decode_shard::<wikantik::ann::AnnShard>(&entry(ShardKind::Ann, &bytes), &bytes), what);
        let pointer = Pointer { format: 1, build_id: "x".into(), manifest: "manifests/hostile.cbor".into(), sha256: sha256_hex(&bytes) };
        assert_decode_error(Manifest::decode(&pointer, &bytes), what);
    }
}

#[test]
fn deep_cbor_nesting_is_an_error_not_a_stack_overflow() {
    let deep = vec![0x81u8; 100_000]; // [[[[…]]]]
    assert!(matches!(from_cbor::<serde_json::Value>("shards/hostile.cbor", &deep), Err(Error::Decode { .. })));
    assert_decode_error(decode_shard::<PageTable>(&entry(ShardKind::Pages, &deep), &deep), "deep nesting");
}

#[test]
fn a_pointer_that_is_not_json_is_a_decode_error() {
    for bytes in [&b""[..], b"{", b"\xff\xfe", b"{\"format\":1}", b"[1,2,3]"] {
        assert!(matches!(Pointer::from_json(bytes), Err(Error::Decode { .. })), "{bytes:?}");
    }
}
