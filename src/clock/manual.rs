//! The manual clock's machinery: where it stands, the sleeps not yet due, and the count of woken
//! timers whose work is still running, which an advance waits for.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Waker;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::Notify;

use crate::lock::lock;

/// How long [`Manual::advance`] waits for one woken timer's work to reach its next wait before
/// it moves on anyway: a timer whose work waits on the client (a sampling answer) must not hang
/// the test that advanced the clock. Real work after a wake takes microseconds.
const SETTLE_LIMIT: Duration = Duration::from_secs(5);

/// The manual clock's state, shared by its clones and every sleep on it.
#[derive(Debug)]
pub struct Manual {
    /// The real instant the clock started at: `now` is this plus `elapsed`.
    origin: Instant,
    /// The wall-clock time it started at, for wall-clock deadlines (`requestState`).
    origin_wall: SystemTime,
    /// The sleeps and how far the clock has moved.
    state: Mutex<ManualState>,
    /// How many woken timers' work is still running (see [`super::Timer`]).
    busy: AtomicUsize,
    /// Told when `busy` falls to zero.
    settled: Notify,
    /// One advance at a time: two interleaved advances would fire sleeps out of order.
    advancing: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct ManualState {
    /// Time since `origin` on this clock.
    elapsed: Duration,
    /// Where [`Manual::elapsed`] counts from: `elapsed` at the last [`Manual::restart`]. Time
    /// never runs backwards (deadlines and expiries already set keep their meaning).
    epoch: Duration,
    /// Sleeps not yet due, by deadline then creation order (ties fire in the order set).
    pending: BTreeMap<(Duration, u64), Arc<Slot>>,
    /// Numbers sleeps, for the order of ties.
    next: u64,
}

/// One sleep on the manual clock.
#[derive(Debug)]
pub struct Slot {
    /// Set when the clock passed the deadline.
    fired: AtomicBool,
    /// Who to wake then.
    waker: Mutex<Option<Waker>>,
    /// The timer whose work the wake starts.
    owner: Arc<Awake>,
}

/// Whether a timer's work after a wake is still running (the advance waits for it), and
/// whether the timer still exists: a sleep that outlived its timer (a keep-alive's) wakes
/// work nobody will mark done, so it is not counted. One lock, so a wake and the timer's drop
/// cannot cross.
#[derive(Debug, Default)]
pub struct Awake(Mutex<AwakeState>);

#[derive(Debug, Default)]
struct AwakeState {
    /// A wake's work is in progress (counted in [`Manual::busy`]).
    awake: bool,
    /// The timer has been dropped.
    gone: bool,
}

/// Where a sleep stands among a manual clock's sleeps.
pub type Key = (Duration, u64);

impl Manual {
    /// A manual clock standing at its start.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
            origin_wall: SystemTime::now(),
            state: Mutex::default(),
            busy: AtomicUsize::new(0),
            settled: Notify::new(),
            advancing: tokio::sync::Mutex::new(()),
        }
    }

    /// Now, on this clock.
    pub fn now(&self) -> Instant {
        self.origin + lock(&self.state).elapsed
    }

    /// The wall-clock time now (it starts at the real one).
    pub fn wall(&self) -> SystemTime {
        self.origin_wall + lock(&self.state).elapsed
    }

    /// How far it has been advanced since it started or was restarted.
    pub fn elapsed(&self) -> Duration {
        let state = lock(&self.state);
        state.elapsed - state.epoch
    }

    /// Makes [`Manual::elapsed`] read zero again; time goes on from where it stands.
    pub fn restart(&self) {
        let mut state = lock(&self.state);
        state.epoch = state.elapsed;
    }

    /// Counts `awake`'s work as running from now (a timer made busy).
    pub fn start_work(&self, awake: &Awake) {
        let mut state = lock(&awake.0);
        if !state.awake && !state.gone {
            state.awake = true;
            self.busy.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Marks `awake`'s work done (its timer sleeps again, waits elsewhere, or is `gone`).
    pub fn rest(&self, awake: &Awake, gone: bool) {
        let was = {
            let mut state = lock(&awake.0);
            state.gone |= gone;
            std::mem::replace(&mut state.awake, false)
        };
        if was && self.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.settled.notify_waiters();
        }
    }

    /// Sets a sleep of `duration` from now for `owner`'s timer: its key and slot (a zero one is
    /// due at once). Set before the last wake's work is marked done, so the advance that waits
    /// for that work sees this sleep.
    pub fn set(&self, duration: Duration, owner: &Arc<Awake>) -> (Key, Arc<Slot>) {
        let slot = Arc::new(Slot {
            fired: AtomicBool::new(duration.is_zero()),
            waker: Mutex::new(None),
            owner: owner.clone(),
        });
        let key = {
            let mut state = lock(&self.state);
            let key = (state.elapsed + duration, state.next);
            state.next += 1;
            if !duration.is_zero() {
                state.pending.insert(key, slot.clone());
            }
            key
        };
        self.rest(owner, false);
        (key, slot)
    }

    /// Takes a sleep that was dropped before its deadline out.
    pub fn unset(&self, key: &Key, slot: &Slot) {
        if !slot.fired.load(Ordering::Acquire) {
            lock(&self.state).pending.remove(key);
        }
    }

    /// Whether `slot`'s deadline has passed; if not, `waker` is woken when it does.
    pub fn due(slot: &Slot, waker: &Waker) -> bool {
        if slot.fired.load(Ordering::Acquire) {
            return true;
        }
        *lock(&slot.waker) = Some(waker.clone());
        slot.fired.load(Ordering::Acquire)
    }

    /// Moves the clock `by` forward: each sleep due by then wakes, in deadline order, the
    /// clock standing at its deadline, and the next is woken only once the work the last one
    /// started has reached its next wait (or ended). Sleeps that work sets are fired in turn if
    /// due. How far the clock has moved since it started (see [`Manual::elapsed`]).
    pub async fn advance(&self, by: Duration) -> Duration {
        let _one = self.advancing.lock().await;
        let target = lock(&self.state).elapsed + by;
        loop {
            self.settle().await;
            let slot = {
                let mut state = lock(&self.state);
                let due = state
                    .pending
                    .first_key_value()
                    .is_some_and(|(&(at, _), _)| at <= target);
                if !due {
                    state.elapsed = target;
                    return target - state.epoch;
                }
                let Some(((at, _), slot)) = state.pending.pop_first() else {
                    unreachable!("a due sleep was just seen");
                };
                state.elapsed = state.elapsed.max(at);
                slot
            };
            self.start_work(&slot.owner);
            slot.fired.store(true, Ordering::Release);
            let waker = lock(&slot.waker).take();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }

    /// Waits until every woken timer's work has reached its next wait, or [`SETTLE_LIMIT`].
    async fn settle(&self) {
        let quiet = async {
            loop {
                let told = self.settled.notified();
                tokio::pin!(told);
                told.as_mut().enable();
                if self.busy.load(Ordering::Acquire) == 0 {
                    return;
                }
                told.await;
            }
        };
        let _ = tokio::time::timeout(SETTLE_LIMIT, quiet).await;
    }

    /// How many sleeps are set and not yet due (for tests).
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        lock(&self.state).pending.len()
    }
}
