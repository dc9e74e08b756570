//! The fuzz targets: what a client (or a test suite's files) can hand the server, fed whole
//! through the code that takes it, with the properties every input must keep (no panic, an
//! answer that is JSON-RPC, a refusal that is a clear error). `fuzz/` runs them under
//! libFuzzer (`scripts/fuzz.sh [SECONDS] [NAME]`); the unit tests of [`tests`] run them over the committed
//! corpus and a few thousand mutations of it on every `cargo test`, so a crash the fuzzer once
//! found stays fixed (docs/reliability.md, "Fuzzing").
//!
//! Compiled for the fuzz targets (the `fuzzing` feature, which `fuzz/` turns on) and for the unit
//! tests only: nothing here is part of the product.

mod files;
mod frames;
mod http;
#[cfg(test)]
mod tests;

pub use files::files;
pub use frames::frames;
pub use http::http;

/// A fuzz target: takes any bytes, panics on a broken property.
pub type Target = fn(&[u8]);

/// Every target by the name `fuzz/` gives it (its corpus folder, `fuzz/corpus/NAME`).
pub const TARGETS: &[(&str, Target)] = &[("frames", frames), ("http", http), ("files", files)];

/// The runtime every target drives its server on: one thread (libFuzzer runs one input at a
/// time), made once per process.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// Asserts `text` is one JSON-RPC 2.0 message or a batch of them: whatever the input, what the
/// server sends is protocol.
fn assert_json_rpc(text: &str) {
    let value: serde_json::Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("the server sent what is not JSON ({e}): {text}"));
    let messages = match &value {
        serde_json::Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    for m in messages {
        assert_eq!(m["jsonrpc"], "2.0", "not JSON-RPC 2.0: {text}");
    }
}
