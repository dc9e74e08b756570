//! `frames`: see `everything_mcp::fuzzing::frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| everything_mcp::fuzzing::frames(data));
