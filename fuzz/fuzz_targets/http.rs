//! `http`: see `everything_mcp::fuzzing::http`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| everything_mcp::fuzzing::http(data));
