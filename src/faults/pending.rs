//! What rules leave for later frames: the changes waiting for the answers to the requests they
//! hit, and the requests held until the client cancels them. Each table is the server's one
//! (shared by every snapshot of its rules) and is read only while it holds something.

use super::change::Change;
use crate::jsonrpc::RequestId;
use crate::lock::lock;
use crate::server::seams::Signal;
use crate::traffic::FaultMark;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The requests held until the client cancels them (`after_cancel`), by connection and id,
/// with the signal that releases each and the mark of the rule that holds it.
#[derive(Default)]
pub struct Holds {
    /// How many are held (so a cancellation with none held is not looked up).
    count: AtomicU64,
    /// The holds.
    held: Mutex<HashMap<Key, Held>>,
}

/// A request: its connection and id.
type Key = (Arc<str>, RequestId);

/// A held request's release, with the mark of the rule that holds it.
type Held = (Signal, Option<Arc<FaultMark>>);

impl Holds {
    /// Whether any request is held.
    pub(super) fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    /// Holds request `id` on `conn` until `signal` is given.
    pub(super) fn hold(
        &self,
        conn: &str,
        id: RequestId,
        signal: Signal,
        mark: Option<Arc<FaultMark>>,
    ) {
        let mut held = lock(&self.held);
        held.insert((conn.into(), id), (signal, mark));
        self.count.store(held.len() as u64, Ordering::Release);
    }

    /// Releases the request `id` on `conn` if it is held; the mark of the rule that held it.
    pub(super) fn release(&self, conn: &str, id: &RequestId) -> Option<Option<Arc<FaultMark>>> {
        let mut held = lock(&self.held);
        let found = held.remove(&(Arc::<str>::from(conn), id.clone()));
        self.count.store(held.len() as u64, Ordering::Release);
        found.map(|(signal, mark)| {
            signal.0.notify_one();
            mark
        })
    }
}

/// The changes rules left for the answers to the requests they hit, by connection and request
/// id, taken when the answer goes out. Read on the outbound path only while one waits.
#[derive(Default)]
pub struct Answers {
    /// How many wait (so an answer with none waiting is not looked up).
    count: AtomicU64,
    /// The changes, with the mark of the rule that made each.
    waiting: Mutex<HashMap<Key, Left>>,
}

/// A change left for an answer, with the mark of the rule that left it.
type Left = (Arc<Change>, Option<Arc<FaultMark>>);

impl Answers {
    /// Whether any change waits.
    pub(super) fn waiting(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    /// Leaves `change` for the answer to request `id` on `conn`.
    pub(super) fn leave(
        &self,
        conn: &str,
        id: RequestId,
        change: Arc<Change>,
        mark: Option<Arc<FaultMark>>,
    ) {
        let mut waiting = lock(&self.waiting);
        waiting.insert((conn.into(), id), (change, mark));
        self.count.store(waiting.len() as u64, Ordering::Release);
    }

    /// The change left for the answer to `id` on `conn`, taken out.
    pub(super) fn take(&self, conn: &str, id: &RequestId) -> Option<Left> {
        let mut waiting = lock(&self.waiting);
        let found = waiting.remove(&(Arc::<str>::from(conn), id.clone()));
        self.count.store(waiting.len() as u64, Ordering::Release);
        found
    }
}

/// The connections whose output a rule closed (`close_output`, or `exit` where the server does
/// not own its process): the transport seam closes each at its next write.
#[derive(Default)]
pub struct Closing {
    /// How many (so a write with none closing is not looked up).
    count: AtomicU64,
    /// The connections.
    conns: Mutex<std::collections::HashSet<Arc<str>>>,
}

impl Closing {
    /// Closes `conn`'s output from its next write on.
    pub(super) fn close(&self, conn: &str) {
        let mut conns = lock(&self.conns);
        conns.insert(conn.into());
        self.count.store(conns.len() as u64, Ordering::Release);
    }

    /// Whether `conn`'s output is closed.
    pub(super) fn closed(&self, conn: &str) -> bool {
        self.count.load(Ordering::Acquire) > 0 && lock(&self.conns).contains(conn)
    }
}
