//! HTTP sessions: the table of live `Mcp-Session-Id`s (and legacy SSE session ids), and per
//! session its SSE streams with a bounded event store for resumption.
//!
//! Stream `0` is the session's standalone (GET) stream; every POST that carries requests gets a
//! new stream `1, 2, …`. An event id is `"<stream>-<n>"` with `n` counting all events of the
//! session, so ids are unique per session and name their stream: a GET with `Last-Event-ID`
//! replays only that stream's later events.
//!
//! One module per concept: [`table`] (the live sessions), [`session`] (one of them),
//! [`streams`] (its streams: open, attach, detach, and each event handed to its live
//! connection), [`bounds`] (what they may hold), [`store`] (the events kept for replay), [`events`] (stream and event ids, what a
//! live SSE response receives), [`outlet`] (how a sink reaches a stream).

mod bounds;
mod events;
mod outlet;
#[cfg(test)]
mod properties;
mod session;
mod store;
mod streams;
mod table;
#[cfg(test)]
mod tests;

pub use bounds::{StreamBounds, StreamCount};
pub use events::{parse_event_id, SseEvent, STANDALONE};
pub use outlet::StreamOutlet;
pub use session::{HttpSession, SessionKind};
pub use store::STORE_MAX_BYTES;
pub use streams::Attach;
pub use table::SessionTable;
