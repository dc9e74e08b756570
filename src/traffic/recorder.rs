//! The [`Recorder`]: one lock per frame, under which a frame takes its `seq`, is written to the
//! file, joins the memory ring and (outgoing) is handed to the transport, so all those orders
//! agree; the memory ring, bounded by records and by bytes ([`RingBound`]), with a count of
//! what it dropped; and the queries Python and the tests make of the ring.

use super::exchanges::{task_of_request, Exchanges, OpenStep};
use super::file::RecordFile;
use super::frame::{FrameMeta, FrameSummary};
use super::record::Record;
use super::OVERSIZED_PREFIX;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The shared recorder. Cheap to call from any thread; one lock per frame.
pub struct Recorder {
    /// Zero point of `t_ns`.
    start: Instant,
    /// The wall clock at `start`: a record's `ts` is this plus its `t_ns`.
    wall_start: chrono::DateTime<chrono::Utc>,
    /// How much of the traffic stays in memory (oldest dropped first). The file, if any,
    /// always gets every record.
    bound: RingBound,
    /// Whether records are kept anywhere (memory or file). When not (the CLI without
    /// `--record`), frames only get a `seq`: the per-frame cost of a record is not paid for
    /// nothing, and transports skip gathering HTTP metadata ([`Recorder::capturing`]).
    capturing: bool,
    /// Everything behind one lock so `seq` order, memory order, file order and (for outgoing
    /// frames) the order frames are handed to the transport all agree.
    inner: Mutex<Inner>,
    /// Wakes waiters (`wait_beyond`) when a frame is recorded. Only sent to while someone
    /// subscribes: with nobody waiting, a frame does not pay for the notification.
    latest: tokio::sync::watch::Sender<u64>,
}

/// What the recorder's lock guards.
struct Inner {
    /// The last `seq` given out.
    seq: u64,
    /// The records in memory; `records[i].seq == dropped + i + 1`. Pointers, so that the
    /// work under the lock stays in memory that is hot: a record is allocated before the lock
    /// is taken and freed after it is released. (Held by value instead, the ring's cold slots
    /// were written and read under the lock, and contention grew.)
    records: VecDeque<Arc<Record>>,
    /// The `seq` of the newest record no longer in memory (taken out by `clear` or the bound).
    dropped: u64,
    /// Bytes the records in memory hold ([`Record::footprint`]), held under `bound.bytes`.
    bytes: usize,
    /// Records the bound took out of memory (or never kept, with a bound of 0 records), which
    /// no reader of the memory will see: counted so that what is missing is always said.
    evicted: u64,
    /// The `seq` of the newest record when `clear` last ran (0: never): records up to it were
    /// forgotten on purpose, the rest of those missing were taken by the bound.
    cleared_through: u64,
    /// How many times `clear` ran ([`Since::clears`]).
    clears: u64,
    /// The `--record` file.
    file: RecordFile,
    /// The requests awaiting an answer and each connection's negotiated revision.
    exchanges: Exchanges,
}

/// A record built outside the recorder's lock; [`Recorder::commit`] fills in its place.
struct Draft {
    /// The record, `seq`/`ts`/`t_ns` still unset; already in the `Arc` it is kept in (not
    /// shared until committed).
    record: Arc<Record>,
    /// What it does to the requests awaiting a response.
    open: OpenStep,
}

impl Draft {
    fn new(meta: &FrameMeta, text: Arc<str>, summary: FrameSummary) -> Self {
        let open = OpenStep::of(meta, &text, &summary);
        let task = task_of_request(meta, &text, &summary);
        let record = Arc::new(Record::unplaced(meta, text, summary, task));
        Self { record, open }
    }
}

/// How much traffic the recorder keeps in memory: the newest records within both limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingBound {
    /// Most records (`None`: no limit on the count).
    pub records: Option<usize>,
    /// Most bytes of records ([`Record::footprint`]; `None`: no limit on the bytes). A record
    /// larger than this on its own is not kept at all (and counted as dropped).
    pub bytes: Option<usize>,
}

impl RingBound {
    /// No limit: every record stays (unit tests; a server always has a bound).
    pub const UNBOUNDED: Self = Self {
        records: None,
        bytes: None,
    };

    /// Whether nothing is kept.
    fn keeps_nothing(&self) -> bool {
        self.records == Some(0) || self.bytes == Some(0)
    }

    /// Whether `records` records of `bytes` bytes are more than the bound allows.
    fn exceeded(&self, records: usize, bytes: usize) -> bool {
        self.records.is_some_and(|most| records > most)
            || self.bytes.is_some_and(|most| bytes > most)
    }
}

/// What the memory holds and what it lost: shown wherever the records are read
/// (`srv.traffic`, `GET /_control/traffic`, the lab page, the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingStats {
    /// Records in memory now.
    pub kept: usize,
    /// Their bytes ([`Record::footprint`]).
    pub kept_bytes: usize,
    /// Records the bound dropped from memory since the last `clear` (never those `clear`
    /// forgot): what a reader of the memory now lacks of the traffic since then.
    pub dropped: u64,
    /// Records the bound dropped since the recorder started.
    pub dropped_total: u64,
    /// The bound in force.
    pub bound: RingBound,
}

/// The records after a reader's last `seq`, and what it missed: [`Recorder::read_since`].
pub struct Since {
    /// The records in memory after it, in order.
    pub records: Vec<Arc<Record>>,
    /// How many records after it the bound dropped before this read (since the last clear).
    pub missed: u64,
    /// How many times `clear` ran since the recorder started: a reader that folds records
    /// starts over when this changes (what it folded was forgotten).
    pub clears: u64,
    /// The `seq` this read accounts for (its last record's, or that of the last one missed):
    /// the reader's next `after`, so nothing is read or counted as missed twice.
    pub through: u64,
}

impl Recorder {
    /// A recorder that keeps the newest records within `bound` in memory (`None`: all) and, if
    /// `path` is given, appends every record to it.
    pub fn new(path: Option<&Path>, bound: Option<RingBound>) -> std::io::Result<Self> {
        let file = RecordFile::open(path)?;
        let bound = bound.unwrap_or(RingBound::UNBOUNDED);
        Ok(Self {
            start: Instant::now(),
            wall_start: chrono::Utc::now(),
            latest: tokio::sync::watch::Sender::new(0),
            capturing: !bound.keeps_nothing() || file.is_open(),
            bound,
            inner: Mutex::new(Inner {
                seq: 0,
                records: VecDeque::new(),
                dropped: 0,
                bytes: 0,
                evicted: 0,
                cleared_through: 0,
                clears: 0,
                file,
                exchanges: Exchanges::default(),
            }),
        })
    }

    /// Whether records are kept in memory or written to a file; when not, callers may skip
    /// gathering what only a record would hold.
    pub fn capturing(&self) -> bool {
        self.capturing
    }

    /// Records one frame and returns its sequence number.
    pub fn record(&self, meta: &FrameMeta, raw: impl Into<Arc<str>>, summary: FrameSummary) -> u64 {
        self.keep(meta, raw, summary, || {
            Ok::<_, std::convert::Infallible>(None)
        })
        .0
    }

    /// Records an outgoing frame and runs `deliver` (which hands it to the transport) under the
    /// same lock, so the recorded order is the order frames reach the transport. A frame that
    /// could not be delivered (`deliver` returned `false`) is recorded with an `error` saying so.
    /// With nothing capturing there is no order to keep and the lock is not taken.
    pub fn record_and_deliver<E>(
        &self,
        meta: &FrameMeta,
        raw: Arc<str>,
        summary: FrameSummary,
        deliver: impl FnOnce() -> Result<Option<Arc<str>>, E>,
    ) -> bool {
        self.keep(meta, raw, summary, deliver).1
    }

    /// Both of the above: runs `deliver` and records the frame (with the SSE event id it got,
    /// or the failure) in one step under the lock; returns its `seq` and whether it was
    /// delivered. The frame text becomes an `Arc` only when something captures.
    fn keep<E>(
        &self,
        meta: &FrameMeta,
        raw: impl Into<Arc<str>>,
        summary: FrameSummary,
        deliver: impl FnOnce() -> Result<Option<Arc<str>>, E>,
    ) -> (u64, bool) {
        if !self.capturing {
            let delivered = deliver().is_ok();
            return (self.count_only(), delivered);
        }
        // Everything that does not decide the order is built before the lock is taken.
        let draft = Draft::new(meta, raw.into(), summary);
        let mut inner = crate::lock::lock(&self.inner);
        let delivered = deliver().map_err(|_| ());
        let ok = delivered.is_ok();
        let (seq, evicted) = self.commit(&mut inner, draft, delivered);
        drop(inner);
        drop(evicted); // freeing the oldest record need not hold the lock
        (seq, ok)
    }

    /// A frame seen while nothing captures: it only takes a `seq`.
    fn count_only(&self) -> u64 {
        let mut inner = crate::lock::lock(&self.inner);
        inner.seq += 1;
        inner.dropped += 1;
        inner.evicted += 1;
        self.announce(inner.seq);
        inner.seq
    }

    /// Tells waiters that `seq` was recorded; called under the lock. Skipped while nobody
    /// subscribes: a waiter subscribes before it reads `seq` under the lock, so it either is
    /// counted here or reads this `seq` itself ([`Recorder::wait_beyond`]).
    fn announce(&self, seq: u64) {
        if self.latest.receiver_count() > 0 {
            self.latest.send_replace(seq);
        }
    }

    /// Gives `draft` its place (`seq`, timestamps, the request it answers) and what its
    /// delivery gave (the SSE event id, or the failure), and keeps it; returns its `seq` and
    /// the record that fell off the front, for the caller to free after unlocking.
    fn commit(
        &self,
        inner: &mut Inner,
        mut draft: Draft,
        delivered: Result<Option<Arc<str>>, ()>,
    ) -> (u64, Option<Arc<Record>>) {
        // The time is taken under the lock so that `t_ns` never decreases along `seq`.
        let t_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        inner.seq += 1;
        let seq = inner.seq;
        // Not shared yet: `Draft::new` made the only reference.
        if let Some(record) = Arc::get_mut(&mut draft.record) {
            record.seq = seq;
            record.ts = self.wall_start + chrono::TimeDelta::nanoseconds(t_ns as i64);
            record.t_ns = t_ns;
            match delivered {
                Ok(id) => record.event_id = id,
                Err(()) => {
                    record.error = Some("not delivered: the connection is closed".into());
                }
            }
            inner.exchanges.settle(record, draft.open, t_ns);
        }
        let record = draft.record;
        inner.file.append(&record);
        self.announce(seq);
        inner.bytes += record.footprint();
        inner.records.push_back(record);
        // Usually one record falls off (the count bound, in steady state): it is freed after
        // the lock is released. A large record may push out several; the rest go here.
        let mut evicted = None;
        while self.bound.exceeded(inner.records.len(), inner.bytes) {
            let Some(oldest) = inner.records.pop_front() else {
                break;
            };
            inner.bytes -= oldest.footprint();
            inner.dropped += 1;
            inner.evicted += 1;
            evicted = evicted.or(Some(oldest));
        }
        (seq, evicted)
    }

    /// Records a frame that was too large to keep: its first bytes and its size.
    pub fn record_oversized(
        &self,
        meta: &FrameMeta,
        prefix: &[u8],
        size: usize,
        error: String,
    ) -> u64 {
        let keep = &prefix[..prefix.len().min(OVERSIZED_PREFIX)];
        let raw = String::from_utf8_lossy(keep).into_owned();
        let error = format!("{error} (raw truncated to {} of {size} bytes)", keep.len());
        self.record(
            meta,
            raw,
            FrameSummary::invalid(error, None).text_exact(false),
        )
    }

    /// Resolves once a record with `seq > after` exists.
    pub async fn wait_beyond(&self, after: u64) {
        let mut rx = self.latest.subscribe();
        // `seq` is read from the recorder, not from the channel: frames recorded while nobody
        // subscribed were not announced on it.
        while self.len() <= after {
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Forgets the open requests of a connection that ended (they will never be answered).
    pub fn forget_conn(&self, conn: &str) {
        crate::lock::lock(&self.inner).exchanges.forget_conn(conn);
    }

    /// Records still in memory with `seq > after`, in order.
    pub fn since(&self, after: u64) -> Vec<Arc<Record>> {
        Self::kept_since(&crate::lock::lock(&self.inner), after)
    }

    fn kept_since(inner: &Inner, after: u64) -> Vec<Arc<Record>> {
        let skip = usize::try_from(after.saturating_sub(inner.dropped)).unwrap_or(usize::MAX);
        inner.records.iter().skip(skip).cloned().collect()
    }

    /// [`Recorder::since`], with what a reader that read up to `after` missed: the records the
    /// bound dropped before it read them, and how many times `clear` ran. One lock, so they
    /// agree. (Records in `(cleared_through, dropped]` can only have been taken by the
    /// bound: `clear` sets both.)
    pub fn read_since(&self, after: u64) -> Since {
        let inner = crate::lock::lock(&self.inner);
        let records = Self::kept_since(&inner, after);
        Since {
            through: records.last().map_or(after.max(inner.dropped), |r| r.seq),
            records,
            missed: inner
                .dropped
                .saturating_sub(after.max(inner.cleared_through)),
            clears: inner.clears,
        }
    }

    /// What the memory holds and what the bound dropped.
    pub fn stats(&self) -> RingStats {
        let inner = crate::lock::lock(&self.inner);
        RingStats {
            kept: inner.records.len(),
            kept_bytes: inner.bytes,
            // Records in `(cleared_through, dropped]` can only have been taken by the bound.
            dropped: inner.dropped.saturating_sub(inner.cleared_through),
            dropped_total: inner.evicted,
            bound: self.bound,
        }
    }

    /// The `seq` of the newest record no longer in memory (0: none was dropped): every record
    /// up to it was taken out by `clear` or the bound.
    pub fn dropped(&self) -> u64 {
        crate::lock::lock(&self.inner).dropped
    }

    /// How many frames were recorded (including those no longer in memory).
    pub fn len(&self) -> u64 {
        crate::lock::lock(&self.inner).seq
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets the in-memory records (the file, if any, keeps them). `seq` keeps counting.
    pub fn clear(&self) {
        let mut inner = crate::lock::lock(&self.inner);
        inner.dropped += inner.records.len() as u64;
        inner.cleared_through = inner.seq;
        inner.clears += 1;
        inner.bytes = 0;
        let forgotten = std::mem::take(&mut inner.records);
        drop(inner);
        drop(forgotten); // freeing them need not hold the lock
    }

    /// How many requests await an answer (for tests: that cancelling and closing forget them).
    #[cfg(test)]
    pub(super) fn open_requests(&self) -> usize {
        crate::lock::lock(&self.inner).exchanges.open_len()
    }

    /// Syncs the record file's data to disk (each record is already written when it happens).
    pub fn flush(&self) {
        crate::lock::lock(&self.inner).file.sync();
    }
}
