#[allow(dead_code)] // used by its tests and by examples/export_model_shard.rs for now
mod model_import;
fn main() {}
