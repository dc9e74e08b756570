//! The server's clock: the real one by default, or a manual one that only a test moves.
//!
//! Every timer of the server (the catalogs' periodic timers and stages, task TTLs, session idle
//! expiry, `requestState` expiry, keep-alives, the roots sync delay, fault delays, timeouts on
//! the server's own requests to the client) reads this clock, so under
//! [`Clock::manual`] nothing happens with time until [`Clock::advance`], and after it exactly the
//! timers due by then have fired, in deadline order, each one's work done (see [`Timer`]).
//! [`manual`] is the manual clock's machinery, [`timer`] a task's timer and its sleeps.
//!
//! Waits that bound real I/O or a shutdown (`fetch`'s network timeout, close graces) and the
//! traffic records' timestamps stay on the real clock: they are the machine's, not the
//! scenario's.

mod manual;
mod timer;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use manual::Manual;
pub use timer::{Sleep, Timer};

/// Which clock a server runs on: `real` (the default) or `manual`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ClockKind {
    /// The machine's clock.
    #[default]
    Real,
    /// Time stands still until a test advances it.
    Manual,
}

impl ClockKind {
    /// Reads `real` or `manual`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "real" => Ok(Self::Real),
            "manual" => Ok(Self::Manual),
            other => Err(format!(
                "unknown clock {other:?} (expected \"real\" or \"manual\")"
            )),
        }
    }

    /// The name [`ClockKind::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Real => "real",
            Self::Manual => "manual",
        }
    }
}

/// A server's clock; cloning shares it.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The machine's clock: tokio's timers.
    #[default]
    Real,
    /// A clock that moves only when [`Clock::advance`] is called.
    Manual(Arc<Manual>),
}

impl Clock {
    /// A clock of this kind.
    pub fn new(kind: ClockKind) -> Self {
        match kind {
            ClockKind::Real => Self::Real,
            ClockKind::Manual => Self::manual(),
        }
    }

    /// A fresh manual clock, standing at its start.
    pub fn manual() -> Self {
        Self::Manual(Arc::new(Manual::new()))
    }

    /// Its kind.
    pub fn kind(&self) -> ClockKind {
        match self {
            Self::Real => ClockKind::Real,
            Self::Manual(_) => ClockKind::Manual,
        }
    }

    /// Now, on this clock.
    pub fn now(&self) -> Instant {
        match self {
            Self::Real => Instant::now(),
            Self::Manual(m) => m.now(),
        }
    }

    /// The wall-clock time now, on this clock (a manual clock's starts at the real one).
    pub fn wall(&self) -> SystemTime {
        match self {
            Self::Real => SystemTime::now(),
            Self::Manual(m) => m.wall(),
        }
    }

    /// How far a manual clock has been advanced since it started (or was restarted); `None`
    /// on the real clock.
    pub fn elapsed(&self) -> Option<Duration> {
        match self {
            Self::Real => None,
            Self::Manual(m) => Some(m.elapsed()),
        }
    }

    /// Makes a manual clock's [`Clock::elapsed`] read zero again (a control API reset): time
    /// goes on from where it stands, so sleeps already set keep their remaining time.
    pub fn restart(&self) {
        if let Self::Manual(m) = self {
            m.restart();
        }
    }

    /// The manual clock, if this is one.
    fn manual_part(&self) -> Option<Arc<Manual>> {
        match self {
            Self::Real => None,
            Self::Manual(m) => Some(m.clone()),
        }
    }

    /// A timer for one task's sleeps: see [`Timer`].
    pub fn timer(&self) -> Timer {
        Timer::new(self.manual_part(), false)
    }

    /// A timer whose work is already under way: made where work is handed to a task that
    /// has not run yet (a task's work spawned before its `CreateTaskResult` is sent), so an
    /// advance waits until that task first sleeps on it, waits elsewhere ([`Timer::idle`]) or
    /// ends.
    pub fn busy_timer(&self) -> Timer {
        Timer::new(self.manual_part(), true)
    }

    /// Sleeps `duration` once. The advance that ends it waits only until this returns, so
    /// work that must be done before the advance returns uses a [`Timer`] instead.
    pub async fn sleep(&self, duration: Duration) {
        self.timer().sleep(duration).await;
    }

    /// Runs `work` for at most `limit` on this clock: `None` if the time ran out first.
    pub async fn timeout<F: Future>(&self, limit: Duration, work: F) -> Option<F::Output> {
        match self {
            Self::Real => tokio::time::timeout(limit, work).await.ok(),
            Self::Manual(_) => self.timer().timeout(limit, work).await,
        }
    }

    /// Moves a manual clock `by` forward: each sleep due by then wakes, in deadline order, the
    /// clock standing at its deadline, and the next is woken only once the work the last one
    /// started has reached its next wait (or ended). How far the clock has moved since it
    /// started (see [`Clock::elapsed`]). The real clock cannot be advanced: `Err`.
    pub async fn advance(&self, by: Duration) -> Result<Duration, String> {
        match self {
            Self::Real => Err(
                "the server runs on the real clock; start it with clock=\"manual\" to advance it"
                    .into(),
            ),
            Self::Manual(m) => Ok(m.advance(by).await),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::lock;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Mutex;

    #[tokio::test]
    async fn the_real_clock_cannot_be_advanced() {
        assert!(Clock::Real.advance(Duration::from_secs(1)).await.is_err());
    }

    #[tokio::test]
    async fn an_advance_fires_exactly_the_due_timers_in_order_with_their_work_done() {
        let clock = Clock::manual();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for (name, every) in [("a", 2u64), ("b", 3)] {
            let (clock, seen) = (clock.clone(), seen.clone());
            tokio::spawn(async move {
                let mut timer = clock.timer();
                loop {
                    timer.sleep(Duration::from_secs(every)).await;
                    let at = clock.elapsed().unwrap().as_secs();
                    lock(&seen).push(format!("{name}@{at}"));
                }
            });
        }
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        clock.advance(Duration::from_secs(1)).await.unwrap();
        assert!(lock(&seen).is_empty());
        clock.advance(Duration::from_secs(5)).await.unwrap();
        // b set its 6 s sleep (at 3) before a set its own (at 4): ties fire in the order set.
        assert_eq!(*lock(&seen), ["a@2", "b@3", "a@4", "b@6", "a@6"]);
        assert_eq!(clock.elapsed(), Some(Duration::from_secs(6)));
    }

    #[tokio::test]
    async fn a_dropped_sleep_never_fires_and_a_timeout_runs_out_only_when_advanced() {
        let clock = Clock::manual();
        let fired = Arc::new(AtomicU32::new(0));
        {
            let sleep = clock.timer().sleep(Duration::from_secs(1));
            drop(sleep);
        }
        let waited = {
            let clock = clock.clone();
            let fired = fired.clone();
            tokio::spawn(async move {
                let out = clock
                    .timeout(Duration::from_secs(10), std::future::pending::<()>())
                    .await;
                fired.fetch_add(1, Ordering::SeqCst);
                out
            })
        };
        tokio::task::yield_now().await;
        clock.advance(Duration::from_secs(9)).await.unwrap();
        assert_eq!(fired.load(Ordering::SeqCst), 0);
        clock.advance(Duration::from_secs(1)).await.unwrap();
        assert_eq!(waited.await.unwrap(), None);
        let Clock::Manual(m) = &clock else {
            unreachable!("a manual clock")
        };
        assert_eq!(m.pending(), 0);
    }

    #[tokio::test]
    async fn a_sleep_that_outlived_its_timer_does_not_hold_the_advance() {
        let clock = Clock::manual();
        let woke = tokio::spawn(clock.timer().sleep(Duration::from_secs(1)));
        let advanced = tokio::time::timeout(
            Duration::from_secs(1),
            clock.advance(Duration::from_secs(2)),
        );
        assert_eq!(
            advanced.await.expect("not held"),
            Ok(Duration::from_secs(2))
        );
        woke.await.unwrap();
    }
}
