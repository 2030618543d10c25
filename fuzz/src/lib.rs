//! The fuzz targets' bodies, shared with `tests/fuzz_regressions.rs` (which
//! includes `checks.rs` by path) so a saved crash is replayed through exactly
//! the code that found it.
pub mod checks;
