//! Fuzz target `url`: see `elicit_fuzz::checks::url` (fuzz/src/checks.rs)
//! for what it feeds and asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| elicit_fuzz::checks::url(data));
