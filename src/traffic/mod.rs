//! The traffic recorder: every frame in and out, in order, with its exact text, what it parsed
//! to, and timing. Records live in memory (for Python's `server.traffic`) and, with
//! `--record FILE`, are appended to a JSON-lines file one complete line per `write`, so a
//! SIGTERM or a crashing handler cannot lose a frame that was already seen.
//!
//! The format is documented (and versioned) in `docs/traffic-format.md`. The pieces:
//!
//! - [`frame`]: what the callers say about a frame — where it went ([`FrameMeta`], [`HttpMeta`])
//!   and what it was ([`FrameSummary`]);
//! - [`record`]: one recorded frame ([`Record`]) and its JSON line;
//! - [`recorder`]: the [`Recorder`], its lock, its memory ring and the queries on it;
//! - `exchanges`: the requests awaiting an answer and each connection's negotiated revision,
//!   which give answers their method, latency, era, revision and task;
//! - `file`: the `--record` file.

mod exchanges;
mod file;
pub mod frame;
#[cfg(test)]
mod properties;
pub mod record;
pub mod recorder;
#[cfg(test)]
mod tests;

pub use frame::{
    method_name, Direction, FaultMark, FrameMeta, FrameSummary, HttpMeta, Kind, RecordedHeaders,
    TransportKind,
};
pub use record::{task_of, FrameText, Record};
pub use recorder::{Recorder, RingBound, RingStats, Since};

/// The version of the record format written in every record's `v` field.
pub const FORMAT_VERSION: u32 = 2;

/// Bytes of a frame over the size limit that are kept for its record (the rest is dropped,
/// and the record says so). Transports keep this many bytes of such frames.
pub const OVERSIZED_PREFIX: usize = 1024;
