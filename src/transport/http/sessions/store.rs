//! One session's event store: its most recent events, kept for a GET that resumes a stream
//! with `Last-Event-ID` and for standalone events no GET has received yet, bounded in count
//! (`event_store_capacity`) and in bytes (`event_store_bytes`, [`STORE_MAX_BYTES`] unless
//! configured); each event let go of is counted (`Limit::EventStore`).

use super::events::{event_id, SseEvent};
use crate::server::limits::{Limit, LimitHits};
use crate::server::sink::Held;
use std::collections::VecDeque;
use std::sync::Arc;

/// Most bytes of event data one session keeps for replay unless configured
/// (`event_store_bytes`), whatever the event count: the oldest events go first, and a single
/// event larger than the bound is not kept at all.
pub const STORE_MAX_BYTES: usize = 16 * 1024 * 1024;

/// One event kept for replay.
pub(super) struct Stored {
    /// The stream it was sent on: a resume replays only its own stream's events.
    stream: u64,
    /// Its number in the session, which a resume's `Last-Event-ID` names.
    n: u64,
    /// The frame.
    data: Arc<str>,
    /// Whether a live connection received it (undelivered standalone events go to the next GET).
    delivered: bool,
    /// Its record, while it waits for a GET: written when the GET takes it.
    held: Option<Held>,
}

/// The events one session keeps for replay, oldest first.
pub(super) struct EventStore {
    /// The most recent events, oldest first; at most `capacity`.
    pub(super) events: VecDeque<Stored>,
    /// Bound of `events`.
    capacity: usize,
    /// Bytes of event data in `events`.
    pub(super) bytes: usize,
    /// Bound of `bytes`.
    max_bytes: usize,
    /// Where the events let go of are counted.
    hits: Arc<LimitHits>,
}

impl EventStore {
    /// An empty store that keeps at most `capacity` events and `max_bytes` bytes of them.
    pub(super) fn new(capacity: usize, max_bytes: usize, hits: Arc<LimitHits>) -> Self {
        Self {
            events: VecDeque::new(),
            capacity,
            bytes: 0,
            max_bytes,
            hits,
        }
    }

    /// Whether an event of `len` bytes would be kept: a store of capacity 0 keeps none, and
    /// none keeps an event larger than its byte bound.
    pub(super) fn keeps(&self, len: usize) -> bool {
        self.capacity > 0 && len <= self.max_bytes
    }

    /// Keeps event `n` of `stream`, the oldest events going first to stay within both bounds.
    /// An event no live connection received keeps its record (`held`) until a GET takes it;
    /// otherwise `held` is given back, to be written now.
    pub(super) fn keep(
        &mut self,
        stream: u64,
        n: u64,
        data: Arc<str>,
        delivered: bool,
        mut held: Option<Held>,
    ) -> Option<Held> {
        if !self.keeps(data.len()) {
            if self.capacity > 0 {
                self.hits.hit(Limit::EventStore);
            }
            return held;
        }
        while self.events.len() >= self.capacity || self.bytes + data.len() > self.max_bytes {
            let Some(old) = self.events.pop_front() else {
                break;
            };
            self.bytes -= old.data.len();
            self.hits.hit(Limit::EventStore);
        }
        self.bytes += data.len();
        let waiting = if delivered { None } else { held.take() };
        self.events.push_back(Stored {
            stream,
            n,
            data,
            delivered,
            held: waiting,
        });
        held
    }

    /// The kept events of `stream` after event `after` (for a fresh standalone GET, only those
    /// no connection received), now marked delivered, and the records that waited for them,
    /// each with its event's id.
    pub(super) fn replay(
        &mut self,
        stream: u64,
        after: u64,
        fresh_standalone: bool,
    ) -> (Vec<SseEvent>, Vec<(Held, Arc<str>)>) {
        let mut held = Vec::new();
        let replay: Vec<SseEvent> = self
            .events
            .iter_mut()
            .filter(|e| e.stream == stream && e.n > after && (!fresh_standalone || !e.delivered))
            .map(|e| {
                e.delivered = true;
                let id = event_id(e.stream, e.n);
                held.extend(e.held.take().map(|h| (h, id.clone())));
                SseEvent {
                    id: Some(id),
                    data: e.data.clone(),
                }
            })
            .collect();
        (replay, held)
    }

    /// Forgets every event (the session ended).
    pub(super) fn clear(&mut self) {
        self.events.clear();
        self.bytes = 0;
    }
}
