//! Property tests of a session's event store (proptest): whatever its bounds and whatever the
//! events, it holds the newest events within both bounds (count and bytes), as many as fit,
//! counts each event it lets go of or never keeps, and a resume from any event replays exactly
//! the kept events of that stream after it, in order.

use super::events::parse_event_id;
use super::store::EventStore;
use crate::server::limits::{Limit, LimitHits};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;

/// An event sent: its stream, its size, whether a live connection received it.
type Sent = (u64, usize, bool);

fn events() -> impl Strategy<Value = Vec<Sent>> {
    prop::collection::vec((0u64..3, 0usize..3000, any::<bool>()), 0..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_store_keeps_the_newest_events_within_its_bounds(
        capacity in 0usize..10,
        max_bytes in 0usize..10_000,
        sent in events(),
    ) {
        let hits = Arc::new(LimitHits::default());
        let mut store = EventStore::new(capacity, max_bytes, hits.clone());
        // The model: (stream, n, size) of the events kept, oldest first, and the events let go.
        let mut kept: VecDeque<(u64, u64, usize)> = VecDeque::new();
        let mut let_go = 0u64;
        for (n, (stream, size, delivered)) in sent.into_iter().enumerate() {
            let n = n as u64 + 1;
            prop_assert!(store.keep(stream, n, "x".repeat(size).into(), delivered, None).is_none());
            if capacity == 0 {
                continue; // a store that keeps nothing counts nothing
            }
            if size > max_bytes {
                let_go += 1;
                continue;
            }
            let bytes = |k: &VecDeque<(u64, u64, usize)>| k.iter().map(|e| e.2).sum::<usize>();
            while kept.len() >= capacity || bytes(&kept) + size > max_bytes {
                kept.pop_front();
                let_go += 1;
            }
            kept.push_back((stream, n, size));

            prop_assert!(store.events.len() <= capacity);
            prop_assert!(store.bytes <= max_bytes);
            prop_assert_eq!(store.bytes, bytes(&kept));
            prop_assert_eq!(hits.get(Limit::EventStore), let_go);
            // A resume of each stream from each point replays what the model kept after it.
            for s in 0..3 {
                for after in [0, n / 2, n.saturating_sub(1), n] {
                    let (replayed, held) = store.replay(s, after, false);
                    prop_assert!(held.is_empty());
                    let got: Vec<(u64, u64, usize)> = replayed
                        .iter()
                        .map(|e| {
                            let (stream, n) = parse_event_id(e.id.as_deref().unwrap()).unwrap();
                            (stream, n, e.data.len())
                        })
                        .collect();
                    let want: Vec<(u64, u64, usize)> =
                        kept.iter().filter(|e| e.0 == s && e.1 > after).copied().collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }
}
