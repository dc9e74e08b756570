//! `http`: see `_core::fuzzing::http`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| _core::fuzzing::http(data));
