//! Property tests of the recorder's memory (proptest): whatever the bound and whatever mix of
//! frames, `clear`s and reads, the ring keeps the newest records in `seq` order within its
//! bound, as many as fit, and a reader that follows `through` accounts for every `seq` once: read,
//! counted as missed (the bound took it since the last `clear`), or before a `clear` (which the
//! reader learns from `clears`, and starts over).

use super::tests::meta;
use super::{Direction, FrameSummary, Recorder, RingBound};
use proptest::prelude::*;

/// What the test does next.
#[derive(Debug, Clone)]
enum Op {
    /// Records a frame of this many bytes of text.
    Record(usize),
    /// Forgets the records in memory.
    Clear,
    /// A reader reads what came after its last `through`.
    Read,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        8 => (0usize..3000).prop_map(Op::Record),
        1 => Just(Op::Clear),
        3 => Just(Op::Read),
    ];
    prop::collection::vec(op, 0..80)
}

fn bounds() -> impl Strategy<Value = RingBound> {
    (
        prop::option::of(0usize..12),
        prop::option::of(0usize..20_000),
    )
        .prop_map(|(records, bytes)| RingBound { records, bytes })
}

fn record(r: &Recorder, bytes: usize) -> u64 {
    r.record(
        &meta(Direction::In),
        "x".repeat(bytes),
        FrameSummary::notification("x"),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_ring_keeps_the_newest_records_in_order_within_its_bound(bound in bounds(), ops in ops()) {
        let ring = Recorder::new(None, Some(bound)).unwrap();
        // The same frames unbounded: each record's footprint, whether or not the ring kept it.
        let all = Recorder::new(None, None).unwrap();
        let mut cleared_through = 0u64;
        let mut after = 0u64; // the reader's position
        for op in ops {
            match op {
                Op::Record(bytes) => {
                    let seq = record(&ring, bytes);
                    prop_assert_eq!(seq, record(&all, bytes));
                    prop_assert_eq!(seq, ring.len());
                }
                Op::Clear => {
                    cleared_through = ring.len();
                    ring.clear();
                }
                Op::Read => {
                    let since = ring.read_since(after);
                    let seqs: Vec<u64> = since.records.iter().map(|r| r.seq).collect();
                    prop_assert!(seqs.iter().all(|&s| s > after));
                    if let (Some(first), Some(last)) = (seqs.first(), seqs.last()) {
                        prop_assert_eq!(seqs.clone(), (*first..=*last).collect::<Vec<_>>());
                        prop_assert_eq!(since.through, *last);
                    }
                    let forgotten = cleared_through.min(since.through).saturating_sub(after);
                    prop_assert_eq!(
                        since.through - after,
                        seqs.len() as u64 + since.missed + forgotten,
                        "read {:?}, missed {}, forgotten {}", seqs, since.missed, forgotten
                    );
                    after = since.through;
                }
            }
            // The memory: a run of the newest seqs, within both bounds, as many as fit.
            let kept: Vec<u64> = ring.since(0).iter().map(|r| r.seq).collect();
            let footprints: Vec<usize> = all.since(0).iter().map(|r| r.footprint()).collect();
            let footprint = |seq: u64| footprints[seq as usize - 1];
            let stats = ring.stats();
            prop_assert_eq!(stats.kept, kept.len());
            prop_assert_eq!(stats.kept_bytes, kept.iter().map(|&s| footprint(s)).sum::<usize>());
            prop_assert!(bound.records.is_none_or(|most| stats.kept <= most));
            prop_assert!(bound.bytes.is_none_or(|most| stats.kept_bytes <= most));
            if let Some(&first) = kept.first() {
                prop_assert_eq!(kept.clone(), (first..=ring.len()).collect::<Vec<_>>());
            }
            // The record before the run, if no clear took it, did not fit beside it.
            let before = kept.first().map_or(ring.len(), |&first| first - 1);
            if before > cleared_through {
                let full = bound.records.is_some_and(|most| stats.kept + 1 > most)
                    || bound.bytes.is_some_and(|most| stats.kept_bytes + footprint(before) > most);
                prop_assert!(full, "seq {} would have fit beside {:?}", before, kept);
            }
            // Every record since the last clear is in memory or counted as dropped.
            prop_assert_eq!(stats.kept as u64 + stats.dropped, ring.len() - cleared_through);
        }
    }
}
