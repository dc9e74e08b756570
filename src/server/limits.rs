//! The bounds on what clients can make a server hold, and the tally of what each one refused or
//! dropped. A bound that bites is counted here and shown (`GET /_control/limits`,
//! `srv.limits`), and its error says which option raises it: a test server that quietly drops
//! work would pass a client's bug off as the server's.
//!
//! The traffic records have bounds of their own (`keep_traffic`, `keep_traffic_bytes`, counted
//! by the recorder); the HTTP transports' bounds (streams, their buffers, the event store) are
//! in `transport::http`'s config and count their hits here too, so one table shows them all.

use std::sync::atomic::{AtomicU64, Ordering};

/// The core's own bounds (the transports have theirs): each configurable as the server option
/// of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Server → client requests awaiting an answer, per connection: a handler that asks a
    /// client that never answers cannot pile up waiters without end.
    pub max_pending_requests: usize,
    /// Tasks kept at once (both eras, every session): a client that creates tasks and never
    /// reads them holds them only until their TTL, and never more than this many.
    pub max_tasks: usize,
    /// Open `subscriptions/listen` streams, all connections together.
    pub max_listen_streams: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_pending_requests: 1024,
            max_tasks: 10_000,
            max_listen_streams: 1024,
        }
    }
}

/// A bound that can refuse or drop something, by the option that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A frame larger than `max_message_bytes`, refused unread.
    MessageBytes,
    /// A session beyond `max_sessions`, refused (503).
    Sessions,
    /// A server → client request beyond `max_pending_requests`, failed before it was sent.
    PendingRequests,
    /// A task beyond `max_tasks`, refused.
    Tasks,
    /// A listen stream beyond `max_listen_streams`, refused.
    ListenStreams,
    /// An SSE stream beyond `max_streams_per_session` in one session, refused (503).
    StreamsPerSession,
    /// An SSE stream beyond `max_streams` in all, refused (503).
    Streams,
    /// A stream whose reader fell `stream_buffer_bytes` behind, dropped (the events stay in the
    /// event store for a resume).
    StreamBufferBytes,
    /// An event the event store let go of to stay within `event_store_capacity` and
    /// `event_store_bytes` (a resume after it cannot replay it).
    EventStore,
}

impl Limit {
    /// Every limit, in the order they are shown.
    pub const ALL: [Limit; 9] = [
        Limit::MessageBytes,
        Limit::Sessions,
        Limit::PendingRequests,
        Limit::Tasks,
        Limit::ListenStreams,
        Limit::StreamsPerSession,
        Limit::Streams,
        Limit::StreamBufferBytes,
        Limit::EventStore,
    ];

    /// The option that sets it, as the tally names it.
    pub fn option(self) -> &'static str {
        match self {
            Limit::MessageBytes => "max_message_bytes",
            Limit::Sessions => "max_sessions",
            Limit::PendingRequests => "max_pending_requests",
            Limit::Tasks => "max_tasks",
            Limit::ListenStreams => "max_listen_streams",
            Limit::StreamsPerSession => "max_streams_per_session",
            Limit::Streams => "max_streams",
            Limit::StreamBufferBytes => "stream_buffer_bytes",
            Limit::EventStore => "event_store_bytes",
        }
    }
}

/// How often each limit refused or dropped something since the server started.
#[derive(Debug, Default)]
pub struct LimitHits([AtomicU64; Limit::ALL.len()]);

impl LimitHits {
    /// Counts one refusal or drop by `limit`.
    pub fn hit(&self, limit: Limit) {
        self.0[limit as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// How often `limit` refused or dropped something.
    pub fn get(&self, limit: Limit) -> u64 {
        self.0[limit as usize].load(Ordering::Relaxed)
    }

    /// Every limit's option name with its count, in [`Limit::ALL`]'s order.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        Limit::ALL
            .iter()
            .map(|&l| (l.option(), self.get(l)))
            .collect()
    }
}

/// The error a request gets when `limit` (set to `value`) refused what it asked for: `-32603`
/// (the server could not do it, the request itself is fine) with the option's name and value
/// in `data`, so a client author sees which bound bit and how to raise it.
pub fn refused(limit: Limit, value: usize, what: &str) -> crate::jsonrpc::ErrorObject {
    crate::jsonrpc::ErrorObject::internal(format!(
        "{what}: the server's limit is {value} ({}; raise it with that option)",
        limit.option()
    ))
    .with_data(serde_json::json!({ "limit": limit.option(), "value": value }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_counts_apart_and_names_its_option() {
        let hits = LimitHits::default();
        hits.hit(Limit::Tasks);
        hits.hit(Limit::Tasks);
        hits.hit(Limit::EventStore);
        assert_eq!(hits.get(Limit::Tasks), 2);
        assert_eq!(hits.get(Limit::EventStore), 1);
        assert_eq!(hits.get(Limit::Streams), 0);
        let names: Vec<_> = hits.snapshot().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), Limit::ALL.len());
        assert!(names.contains(&"max_pending_requests"));
    }

    #[test]
    fn a_refusal_names_the_option_and_value() {
        let e = refused(Limit::Tasks, 3, "Too many tasks");
        assert_eq!(e.code, -32603);
        assert!(e.message.contains("max_tasks"), "{}", e.message);
        assert_eq!(e.data.unwrap()["value"], 3);
    }
}
