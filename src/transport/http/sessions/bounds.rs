//! What one session's streams may hold ([`StreamBounds`]): events kept for resumption (by count
//! and by bytes), each live stream's send buffer, live streams per session and, through a
//! counter every session of a listener shares, in all. Each refusal or drop is counted in the
//! server's [`LimitHits`].

use crate::server::limits::LimitHits;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The bounds of one session's streams (the listener's `HttpConfig`, with the counters shared
/// by its sessions).
#[derive(Clone)]
pub struct StreamBounds {
    /// Events kept for `Last-Event-ID` resumption (`event_store_capacity`).
    pub events: usize,
    /// Bytes of event data kept for resumption (`event_store_bytes`).
    pub event_bytes: usize,
    /// Bytes a live stream's reader may fall behind before the stream is dropped
    /// (`stream_buffer_bytes`).
    pub buffer_bytes: usize,
    /// Live streams of one session (`max_streams_per_session`).
    pub per_session: usize,
    /// Live streams of every session of the listener (`max_streams`).
    pub total: Arc<StreamCount>,
    /// Where refusals and drops are counted (the server's).
    pub hits: Arc<LimitHits>,
}

impl StreamBounds {
    /// Bounds that keep `events` events and otherwise the defaults (the unit tests' sessions,
    /// and legacy SSE's, which keep none).
    pub fn keeping(events: usize, hits: Arc<LimitHits>) -> Self {
        Self {
            events,
            event_bytes: super::STORE_MAX_BYTES,
            buffer_bytes: super::super::config::DEFAULT_STREAM_BUFFER_BYTES,
            per_session: usize::MAX,
            total: Arc::new(StreamCount::new(usize::MAX)),
            hits,
        }
    }
}

/// Live streams of a listener, all sessions together, and their bound.
pub struct StreamCount {
    /// Streams live now.
    live: AtomicUsize,
    /// The bound (`max_streams`).
    max: usize,
}

impl StreamCount {
    /// No stream yet; at most `max` at once.
    pub fn new(max: usize) -> Self {
        Self {
            live: AtomicUsize::new(0),
            max,
        }
    }

    /// The bound.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A place for one more live stream, held until the stream ends; `None` at the bound.
    pub fn take(self: &Arc<Self>) -> Option<Permit> {
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()?;
        Some(Permit(self.clone()))
    }

    /// Streams live now.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }
}

/// One live stream's place in its listener's [`StreamCount`], given back when dropped.
pub struct Permit(Arc<StreamCount>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_are_counted_and_given_back() {
        let count = Arc::new(StreamCount::new(2));
        let a = count.take().unwrap();
        let _b = count.take().unwrap();
        assert!(count.take().is_none());
        drop(a);
        assert_eq!(count.live(), 1);
        assert!(count.take().is_some());
    }
}
