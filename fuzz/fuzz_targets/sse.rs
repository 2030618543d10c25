//! Fuzz target `sse`: see `elicit_fuzz::checks::sse` (fuzz/src/checks.rs)
//! for what it feeds and asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| elicit_fuzz::checks::sse(data));
