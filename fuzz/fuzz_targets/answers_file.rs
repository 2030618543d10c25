//! Fuzz target `answers_file`: see `elicit_fuzz::checks::answers_file` (fuzz/src/checks.rs)
//! for what it feeds and asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| elicit_fuzz::checks::answers_file(data));
