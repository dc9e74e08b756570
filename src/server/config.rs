//! How a server is set up: [`ServerConfig`], what the core itself reads (identity, revisions,
//! paging, limits, recording, task timing). What a server offers is not configured here: it is
//! the registry given to `Server::new`.

use crate::protocol::{EraChoice, Revision};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// How long a task is kept (from creation, and again from when it settles) unless configured
/// (`ServerConfig::task_ttl`): the reference's fixed 300 s.
pub const TTL: Duration = Duration::from_secs(300);

/// The poll interval suggested to clients unless configured
/// (`ServerConfig::task_poll_interval`): the reference's fixed 1 s.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Default cap on one incoming frame (a stdio line, an HTTP body): large enough for any real
/// payload, small enough that a runaway client cannot exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Bytes of traffic records a server keeps in memory unless told otherwise
/// ([`ServerConfig::keep_traffic_bytes`]).
pub const DEFAULT_KEEP_TRAFFIC_BYTES: usize = 64 * 1024 * 1024;

/// How a server is set up. `Default` is every revision, no recording. What it offers is not
/// configured here: it is the [`Registry`] given to [`Server::new`] (built from catalogs by
/// `catalog::registry`, or by hand).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.title` (sent from 2025-06-18 on).
    pub title: Option<String>,
    /// `serverInfo.version`.
    pub version: String,
    /// `instructions` in the `initialize` result; `None`: the catalog's (or a generic text).
    pub instructions: Option<String>,
    /// Revisions this server accepts (a client asking for another gets the newest of these).
    /// [`Server::new`] narrows them to `era` (and to the handshake era for a handshake-only
    /// catalog), so once the server exists this is exactly what it serves.
    pub revisions: Vec<Revision>,
    /// Which eras are served (`--era`): a test pins one to check its client in that era.
    pub era: EraChoice,
    /// Items per page for `*/list`; `None` returns everything in one page.
    pub page_size: Option<usize>,
    /// Largest accepted frame in bytes; larger ones get `-32600` and are not parsed.
    pub max_message_bytes: usize,
    /// Also write traffic to this JSON-lines file.
    pub record_path: Option<PathBuf>,
    /// Most traffic records kept in memory, oldest dropped first (`None`: all). 10,000 by
    /// default, so a load test's memory stays flat while a test still sees its whole exchange;
    /// the CLI keeps none (nothing reads them; the record file has everything).
    pub keep_traffic: Option<usize>,
    /// Most bytes of traffic records kept in memory ([`crate::traffic::Record::footprint`]),
    /// oldest dropped first (`None`: no byte limit). Bounded by bytes as well as by count:
    /// 1,000 `echo` calls of 1 MiB each held 2.4 GB under a count bound alone. 64 MiB by
    /// default: a test's whole exchange, and a few dozen frames of a megabyte.
    pub keep_traffic_bytes: Option<usize>,
    /// How long a task is kept after it is created (and again after it settles): its `ttl`.
    /// The reference's fixed 300 s by default; a test of expiry sets it short.
    pub task_ttl: std::time::Duration,
    /// The `pollInterval` suggested to clients polling a task (the reference's 1 s).
    pub task_poll_interval: std::time::Duration,
    /// Which clock every timer of the server runs on: the real one, or a manual one that a
    /// test advances (`Server(clock="manual")`, `--clock manual`).
    pub clock: crate::clock::ClockKind,
    /// The peer this server speaks like where peers differ (`--dialect`, docs/dialects.md);
    /// `None`: the spec, as this server reads it.
    pub dialect: Option<crate::protocol::Dialect>,
    /// Bounds on what clients can make the core hold (pending requests to clients, tasks,
    /// listen streams), each refusal counted in [`crate::server::Server::limit_hits`].
    pub limits: super::limits::Limits,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            name: "everything-mcp".into(),
            title: Some("everything-mcp test server".into()),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
            revisions: Revision::ALL.to_vec(),
            era: EraChoice::Both,
            page_size: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            record_path: None,
            keep_traffic: Some(10_000),
            keep_traffic_bytes: Some(DEFAULT_KEEP_TRAFFIC_BYTES),
            task_ttl: TTL,
            task_poll_interval: POLL_INTERVAL,
            clock: crate::clock::ClockKind::Real,
            dialect: None,
            limits: Default::default(),
        }
    }
}

impl ServerConfig {
    /// The `Implementation` object (`serverInfo`) this describes, shaped for `revision`.
    pub fn implementation(&self, revision: Revision) -> Value {
        let mut info = serde_json::Map::new();
        info.insert("name".into(), self.name.clone().into());
        if let Some(t) = &self.title {
            info.insert("title".into(), t.clone().into());
        }
        info.insert("version".into(), self.version.clone().into());
        crate::protocol::shape::for_revision(
            crate::protocol::shape::Shape::Implementation,
            &mut info,
            revision,
        );
        Value::Object(info)
    }
}
