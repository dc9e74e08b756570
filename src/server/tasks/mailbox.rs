//! Where a handshake-era task's messages go (its server → client requests, progress, logs).
//! The `tools/call` that created the task has been answered, so its stream is gone; the
//! reference server queues such messages and delivers them on the stream of a `tasks/result`
//! call while one is open (`modelcontextprotocol/servers#3228`). A [`Mailbox`] does the same:
//! frames wait in order until a stream is attached, then flow to it; stdio and in-memory
//! connections attach their connection for good, so there the messages appear inline.

use crate::server::sink::{Outlet, Undeliverable};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many frames a task may queue for a stream nobody opens: beyond it the oldest are
/// dropped, so a task whose client never calls `tasks/result` cannot grow without bound.
const MAX_QUEUED: usize = 1024;

/// A task's outgoing frames: queued, or handed to the attached stream.
#[derive(Default)]
pub struct Mailbox {
    /// The frames not yet delivered and the stream they go to next, under one lock so a frame
    /// is never delivered out of order.
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    queued: VecDeque<Arc<str>>,
    attached: Option<Arc<dyn Outlet>>,
}

impl Mailbox {
    /// Sends the queued frames to `outlet` and every later one until [`Mailbox::detach`].
    pub fn attach(&self, outlet: Arc<dyn Outlet>) {
        let mut inner = crate::lock::lock(&self.inner);
        while let Some(frame) = inner.queued.pop_front() {
            if outlet.deliver(frame.clone()).is_err() {
                inner.queued.push_front(frame);
                return;
            }
        }
        inner.attached = Some(outlet);
    }

    /// Stops delivering to the attached stream (its `tasks/result` was answered or dropped).
    pub fn detach(&self) {
        crate::lock::lock(&self.inner).attached = None;
    }

    /// How many frames wait for a stream.
    pub fn queued(&self) -> usize {
        crate::lock::lock(&self.inner).queued.len()
    }
}

/// A mailbox is the outlet of the task's sink.
impl Outlet for Mailbox {
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable> {
        let mut inner = crate::lock::lock(&self.inner);
        if let Some(outlet) = &inner.attached {
            match outlet.deliver(frame.clone()) {
                Ok(id) => return Ok(id),
                Err(Undeliverable) => inner.attached = None,
            }
        }
        if inner.queued.len() == MAX_QUEUED {
            inner.queued.pop_front();
        }
        inner.queued.push_back(frame);
        Ok(None)
    }
}
