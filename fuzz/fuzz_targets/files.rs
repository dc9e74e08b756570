//! `files`: see `_core::fuzzing::files`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| _core::fuzzing::files(data));
