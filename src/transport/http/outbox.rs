//! An SSE stream's send buffer, bounded by bytes: what the server has queued for one response
//! body and the client has not read yet. A reader that falls `stream_buffer_bytes` behind
//! loses its stream (the body ends; a Streamable HTTP client resumes it with `Last-Event-ID`
//! from the event store), not the server its memory: without the bound, a client that opened
//! a stream and stopped reading held every event sent to it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// What is queued on an outbox: its size in bytes is what the bound counts.
pub trait Weighed {
    /// Bytes it holds.
    fn weight(&self) -> usize;
}

impl Weighed for Arc<str> {
    fn weight(&self) -> usize {
        self.len()
    }
}

/// The sending half.
pub struct Outbox<T> {
    /// The queue.
    tx: mpsc::UnboundedSender<T>,
    /// Shared with the receiving half.
    shared: Arc<Shared>,
}

/// The receiving half: the response body reads it.
pub struct Inbox<T> {
    /// The queue.
    rx: mpsc::UnboundedReceiver<T>,
    /// Shared with the sending half.
    shared: Arc<Shared>,
}

/// What both halves read.
struct Shared {
    /// Bytes queued and not yet taken by the body.
    queued: AtomicUsize,
    /// The bound.
    cap: usize,
    /// Set when a send would have passed the bound: the body ends at its next read.
    overflowed: AtomicBool,
}

/// Why a send did not queue its item.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The body is gone (the client went away).
    Gone,
    /// The reader is `cap` bytes behind: the stream is dropped.
    Overflow,
}

/// A new outbox whose reader may fall at most `cap` bytes behind.
pub fn outbox<T: Weighed>(cap: usize) -> (Outbox<T>, Inbox<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        queued: AtomicUsize::new(0),
        cap,
        overflowed: AtomicBool::new(false),
    });
    (
        Outbox {
            tx,
            shared: shared.clone(),
        },
        Inbox { rx, shared },
    )
}

impl<T: Weighed> Outbox<T> {
    /// Queues `item` unless the body is gone or the reader is too far behind (then the stream
    /// is marked dropped, and the body ends at its next read).
    pub fn send(&self, item: T) -> Result<(), Refused> {
        if self.shared.overflowed.load(Ordering::Relaxed) {
            return Err(Refused::Overflow);
        }
        let weight = item.weight();
        let queued = self.shared.queued.fetch_add(weight, Ordering::AcqRel);
        // One item alone may exceed the bound (a large answer to a reader that is keeping up).
        if queued > 0 && queued + weight > self.shared.cap {
            self.shared.queued.fetch_sub(weight, Ordering::AcqRel);
            self.shared.overflowed.store(true, Ordering::Relaxed);
            return Err(Refused::Overflow);
        }
        self.tx.send(item).map_err(|e| {
            self.shared.queued.fetch_sub(e.0.weight(), Ordering::AcqRel);
            Refused::Gone
        })
    }

    /// Whether the body is gone or the stream was dropped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed() || self.shared.overflowed.load(Ordering::Relaxed)
    }
}

impl<T: Weighed> Inbox<T> {
    /// The next queued item; `None` once the sending half is dropped and the queue is empty,
    /// or at once when the stream was dropped for its slow reader.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if self.shared.overflowed.load(Ordering::Relaxed) {
            return Poll::Ready(None);
        }
        self.rx.poll_recv(cx).map(|item| {
            item.inspect(|item| {
                self.shared
                    .queued
                    .fetch_sub(item.weight(), Ordering::AcqRel);
            })
        })
    }

    /// The next queued item if there is one now.
    pub fn try_recv(&mut self) -> Option<T> {
        let item = self.rx.try_recv().ok()?;
        self.shared
            .queued
            .fetch_sub(item.weight(), Ordering::AcqRel);
        Some(item)
    }

    /// Whether nothing more can arrive (the sending half is gone).
    pub fn is_closed(&self) -> bool {
        self.rx.is_closed()
    }

    /// Waits for the next queued item (see [`Inbox::poll_recv`]).
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(n: usize) -> Arc<str> {
        "x".repeat(n).into()
    }

    #[tokio::test]
    async fn a_reader_that_keeps_up_gets_everything_even_one_large_item() {
        let (tx, mut rx) = outbox::<Arc<str>>(10);
        tx.send(item(50)).unwrap();
        assert_eq!(rx.recv().await.unwrap().len(), 50);
        tx.send(item(4)).unwrap();
        tx.send(item(6)).unwrap();
        assert_eq!(rx.try_recv().unwrap().len(), 4);
        assert_eq!(rx.try_recv().unwrap().len(), 6);
        drop(tx);
        assert!(rx.recv().await.is_none());
    }

    #[tokio::test]
    async fn a_reader_too_far_behind_loses_the_stream() {
        let (tx, mut rx) = outbox::<Arc<str>>(10);
        tx.send(item(6)).unwrap();
        assert_eq!(tx.send(item(6)), Err(Refused::Overflow));
        assert!(tx.is_closed());
        assert_eq!(tx.send(item(1)), Err(Refused::Overflow));
        assert!(rx.recv().await.is_none(), "the body ends at once");
    }

    #[test]
    fn a_gone_body_is_told_apart() {
        let (tx, rx) = outbox::<Arc<str>>(10);
        drop(rx);
        assert_eq!(tx.send(item(1)), Err(Refused::Gone));
    }
}
