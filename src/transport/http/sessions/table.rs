//! The table of live HTTP sessions, by id: bounded on insert, emptied of idle sessions by the
//! expiry sweep and of every session at shutdown.

use super::session::HttpSession;
use crate::lock::lock;
use std::sync::{Arc, Mutex};

/// The live sessions, by id.
#[derive(Default)]
pub struct SessionTable {
    /// Each session by its id (`Mcp-Session-Id`, or the legacy SSE session id).
    map: Mutex<crate::fast_map::FastMap<Arc<str>, Arc<HttpSession>>>,
}

impl SessionTable {
    /// The session with this id.
    pub fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.map).get(id).cloned()
    }

    /// Adds a session unless the table already holds `limit`; `false` when full.
    pub fn insert(&self, session: Arc<HttpSession>, limit: usize) -> bool {
        let mut map = lock(&self.map);
        if map.len() >= limit {
            return false;
        }
        map.insert(session.core.id.clone(), session);
        true
    }

    /// Removes and returns a session.
    pub fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.map).remove(id)
    }

    /// Removes and returns every session idle for longer than `idle`.
    pub fn take_idle(&self, idle: std::time::Duration) -> Vec<Arc<HttpSession>> {
        let mut map = lock(&self.map);
        let expired: Vec<Arc<str>> = map
            .iter()
            .filter(|(_, s)| s.idle_for() > idle)
            .map(|(k, _)| k.clone())
            .collect();
        expired.iter().filter_map(|k| map.remove(k)).collect()
    }

    /// Removes and returns every session.
    pub fn drain(&self) -> Vec<Arc<HttpSession>> {
        lock(&self.map).drain().map(|(_, s)| s).collect()
    }
}
