//! `files`: see `everything_mcp::fuzzing::files`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| everything_mcp::fuzzing::files(data));
