//! The events of a session's SSE streams: which stream is which, an event's id
//! (`"<stream>-<n>"`, `n` counting every event of the session), and what a live SSE response
//! receives.

use std::sync::Arc;

/// The standalone stream's id.
pub const STANDALONE: u64 = 0;

/// What a live SSE response receives.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// The event id (`None` on legacy SSE, which has none).
    pub id: Option<Arc<str>>,
    /// The JSON-RPC frame.
    pub data: Arc<str>,
}

impl super::super::outbox::Weighed for SseEvent {
    fn weight(&self) -> usize {
        self.data.len()
    }
}

/// The SSE event id of event `n` of stream `stream`: `<stream>-<n>`. Written digit by digit
/// rather than with `format!`: a POST names two events (the priming one and the answer), and
/// the formatting machinery cost about 500 instructions each (callgrind).
pub(super) fn event_id(stream: u64, n: u64) -> Arc<str> {
    let mut id = String::with_capacity(24);
    super::super::sse::push_decimal(&mut id, stream);
    id.push('-');
    super::super::sse::push_decimal(&mut id, n);
    id.into()
}

/// Parses a `Last-Event-ID` of this server (`"<stream>-<n>"`).
pub fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, n) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, n.parse().ok()?))
}
