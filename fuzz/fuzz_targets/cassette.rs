//! Fuzz target `cassette`: see `elicit_fuzz::checks::cassette` (fuzz/src/checks.rs)
//! for what it feeds and asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| elicit_fuzz::checks::cassette(data));
