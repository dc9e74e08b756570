//! A task's timer and its sleeps, on either clock.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use super::manual::{Awake, Key, Manual, Slot};

/// One task's timer. On the manual clock, a wake counts as work in progress until the same
/// timer sleeps again, says it waits elsewhere ([`Timer::idle`]) or is dropped, so
/// [`super::Clock::advance`] returns only after the work a wake started (a log message sent, a
/// stage's progress recorded) is done. A periodic task keeps one `Timer` for its loop; a
/// handler that sleeps and then answers keeps it until it has answered.
#[derive(Debug)]
pub struct Timer(Option<OnManual>);

/// A timer on a manual clock (on the real one there is nothing to keep: a timer there costs
/// no allocation).
#[derive(Debug)]
struct OnManual {
    /// The clock.
    clock: Arc<Manual>,
    /// Whether a wake's work is in progress.
    awake: Arc<Awake>,
}

impl Timer {
    /// A timer on `manual` (`None`: the real clock); `busy`: its work is already under way.
    pub(super) fn new(manual: Option<Arc<Manual>>, busy: bool) -> Self {
        Self(manual.map(|clock| {
            let awake = Arc::<Awake>::default();
            if busy {
                clock.start_work(&awake);
            }
            OnManual { clock, awake }
        }))
    }

    /// Sleeps `duration` on the timer's clock (ending the work of its last wake first). The
    /// sleep is set now, not when first polled.
    pub fn sleep(&mut self, duration: Duration) -> Sleep {
        match &self.0 {
            None => Sleep(SleepOn::Real(Box::pin(tokio::time::sleep(duration)))),
            Some(OnManual { clock: m, awake }) => {
                let (key, slot) = m.set(duration, awake);
                Sleep(SleepOn::Manual {
                    clock: m.clone(),
                    key,
                    slot,
                })
            }
        }
    }

    /// Runs `work` for at most `limit`: `None` if the time ran out first. `work` is polled once
    /// before the limit's sleep is set, so what it starts at once (a request sent to the
    /// client) is part of the last wake's work, which ends when it waits.
    pub async fn timeout<F: Future>(&mut self, limit: Duration, work: F) -> Option<F::Output> {
        let mut work = std::pin::pin!(work);
        let first = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
        if let Poll::Ready(out) = first {
            return Some(out);
        }
        let sleep = self.sleep(limit);
        tokio::select! {
            biased;
            out = &mut work => Some(out),
            () = sleep => None,
        }
    }

    /// Says the last wake's work now waits on something other than this clock (the client,
    /// a gate): an advance need not wait for it.
    pub fn idle(&self) {
        if let Some(OnManual { clock, awake }) = &self.0 {
            clock.rest(awake, false);
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(OnManual { clock, awake }) = &self.0 {
            clock.rest(awake, true);
        }
    }
}

/// A sleep of a [`Timer`].
pub struct Sleep(SleepOn);

/// Which clock a [`Sleep`] is on.
enum SleepOn {
    /// On the real clock.
    Real(Pin<Box<tokio::time::Sleep>>),
    /// On a manual clock: ready once the clock passed `key`'s deadline.
    Manual {
        /// The clock, to unregister a sleep dropped before its deadline.
        clock: Arc<Manual>,
        /// Its place among the clock's sleeps.
        key: Key,
        /// Fired and who to wake.
        slot: Arc<Slot>,
    },
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.get_mut().0 {
            SleepOn::Real(sleep) => sleep.as_mut().poll(cx),
            SleepOn::Manual { slot, .. } if Manual::due(slot, cx.waker()) => Poll::Ready(()),
            SleepOn::Manual { .. } => Poll::Pending,
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let SleepOn::Manual { clock, key, slot } = &self.0 {
            clock.unset(key, slot);
        }
    }
}
