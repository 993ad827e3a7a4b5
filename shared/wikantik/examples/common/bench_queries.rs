//! The query texts the encoder benchmarks embed (`encoder_bench`, `lite_bench`), so both
//! profiles are timed on the same inputs.

pub const QUERIES: &[&str] = &[
    "how do I rotate the signing keys for the wiki",
    "why are search results stale after a deploy",
    "configure field boosts for title and tags",
    "what does the manifest shard list contain",
    "limits of the key value store per namespace",
];
