//! [`ServerOptions`]: what a server is started with, and its conversion to what the core and the
//! catalogs read.

use super::group::{Group, Seconds};
use super::replay::ReplayOptions;
use crate::catalog;
use crate::error::Error;
use crate::protocol::{EraChoice, Revision};
use crate::server::{Server, ServerConfig};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// Threads of each server's tokio runtime: two serve a test's traffic without contention on the
/// two-core machines CI runs on; more only add start-up time.
pub const WORKER_THREADS: usize = 2;

/// Most threads of a server runtime's blocking pool, which runs sync Python handlers (and
/// attaches to Python for the binding's callbacks). Why a bound, and why this one: Python
/// handlers serialise on the GIL, so threads beyond a few only add memory and contention; the
/// pool's size matters only for sync handlers that wait with the GIL released (`time.sleep`,
/// I/O, `ctx.ask`), and 64 such handlers at once is far beyond a test's needs. Nothing else waits
/// on this pool: stdin is read on a thread of its own (`transport::stdio`), and `async def`
/// handlers and `aask` occupy no thread while they wait. Tokio's default (512) would let a
/// runaway test start hundreds of threads.
pub const MAX_BLOCKING_THREADS: usize = 64;

/// The catalogs served when none are named: the reference server's current surface.
pub const CATALOGS: &[&str] = &["everything"];

/// Every option of a server (`Server(**options)`, the CLI's commands). Defaults are read from
/// the types that own them ([`ServerConfig::default`], [`catalog::Options::default`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerOptions {
    /// The built-in surfaces to serve, loaded in this order (`catalog::CATALOGS` names them).
    pub catalogs: Vec<String>,
    /// Also append every frame in and out to this JSON-lines file.
    pub record: Option<PathBuf>,
    /// Speak like this peer where peers differ (`python-sdk`, `typescript-sdk`, `reference`;
    /// docs/dialects.md); unset: the spec, as this server reads it.
    pub dialect: Option<String>,
    /// Answer from recorded traffic instead of the catalogs ([`ReplayOptions`]): unset, the
    /// catalogs serve.
    pub replay: Option<ReplayOptions>,
    /// The protocol revisions accepted (default: all), narrowed further by `era`.
    pub revisions: Vec<String>,
    /// Which eras are served: `handshake` (2024-11-05 … 2025-11-25), `stateless` (2026-07-28)
    /// or `both`.
    pub era: String,
    /// Items per `*/list` page; unset: everything in one page.
    pub page_size: Option<usize>,
    /// The largest accepted frame (a stdio line, an HTTP body) in bytes; larger ones get
    /// `-32600` and are not parsed.
    pub max_message_bytes: usize,
    /// Most traffic records kept in memory, oldest dropped first (the record file gets every
    /// one); unset: all.
    pub keep_traffic: Option<usize>,
    /// Most bytes of traffic records kept in memory, oldest dropped first (the record file gets
    /// every one); unset: no byte limit.
    pub keep_traffic_bytes: Option<usize>,
    /// Server → client requests awaiting an answer per connection; one more fails at once
    /// (`-32603` naming this option), counted in `GET /_control/limits`.
    pub max_pending_requests: usize,
    /// Tasks kept at once; a task-augmented call beyond it gets `-32603` naming this option.
    pub max_tasks: usize,
    /// Open `subscriptions/listen` streams in all; one more gets `-32603` naming this option.
    pub max_listen_streams: usize,
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.title`; unset: ours while `name` is ours too, none for a custom name.
    pub title: Option<String>,
    /// `serverInfo.version`.
    pub version: String,
    /// The `instructions` of the `initialize` result; unset: the catalog's.
    pub instructions: Option<String>,
    /// Threads of the server's tokio runtime (at least one).
    pub worker_threads: usize,
    /// The interval of every periodic catalog timer (simulated logs, subscription updates, roots
    /// sync, the research task's stages, the async tools' polls) instead of the reference's
    /// 1–15 s; unset: the reference's.
    pub tick: Option<Seconds>,
    /// `review-lab`: how long after a subscription the watched resource changes.
    pub update_delay: Seconds,
    /// `review-lab`: also send `notifications/resources/list_changed` with the update.
    pub send_list_changed: bool,
    /// `get-env` / `printEnv` show secret-looking variables instead of `<redacted>`.
    pub expose_env: bool,
    /// `apps`: who sees the views' `_meta.ui` and the app-only tools: `gate` (a host that
    /// declared the UI extension, in `initialize` or in the request), `always`, `off` (nobody,
    /// and the extension is not declared).
    pub apps: String,
    /// How long a task is kept after it is created (and again after it settles): its `ttl`.
    pub task_ttl: Seconds,
    /// The `pollInterval` suggested to clients polling a task.
    pub task_poll_interval: Seconds,
    /// The clock every timer runs on: `real`, or `manual` (time moves only when a test
    /// advances it: `srv.clock.advance(seconds)`, `POST /_control/clock/advance`).
    pub clock: String,
}

impl Group for ServerOptions {}

impl Default for ServerOptions {
    fn default() -> Self {
        let server = ServerConfig::default();
        let catalog = catalog::Options::default();
        Self {
            catalogs: CATALOGS.iter().map(|c| c.to_string()).collect(),
            record: server.record_path,
            dialect: None,
            replay: None,
            revisions: server.revisions.iter().map(|r| r.as_str().into()).collect(),
            era: server.era.as_str().into(),
            page_size: server.page_size,
            max_message_bytes: server.max_message_bytes,
            keep_traffic: server.keep_traffic,
            keep_traffic_bytes: server.keep_traffic_bytes,
            max_pending_requests: server.limits.max_pending_requests,
            max_tasks: server.limits.max_tasks,
            max_listen_streams: server.limits.max_listen_streams,
            name: server.name,
            // Ours only while the name is: `server_config` fills it in.
            title: None,
            version: server.version,
            instructions: server.instructions,
            worker_threads: WORKER_THREADS,
            tick: catalog.tick.map(Seconds::of),
            update_delay: Seconds::of(catalog.update_delay),
            send_list_changed: catalog.send_list_changed,
            expose_env: catalog.expose_env,
            apps: catalog.apps.as_str().into(),
            task_ttl: Seconds::of(server.task_ttl),
            task_poll_interval: Seconds::of(server.task_poll_interval),
            clock: server.clock.as_str().into(),
        }
    }
}

impl ServerOptions {
    /// A server with these options: the named catalogs' registry, served as configured.
    pub fn server(&self) -> Result<Arc<Server>, Error> {
        let Some(replay) = &self.replay else {
            let registry = catalog::registry(&self.catalogs, &self.catalog_options()?)?;
            return Server::new(self.server_config()?, registry);
        };
        let replaying = replay.replay()?;
        let replay = Arc::new(replaying.replay);
        let mut config = self.server_config()?;
        if let Some(path) = replaying.records_to {
            // Recording from the real server: the server's own recorder writes the file.
            if config.record_path.as_ref().is_some_and(|p| *p != path) {
                return Err(Error::Config(format!(
                    "record and a replay that records ({}) would write two files; give one",
                    path.display()
                )));
            }
            config.record_path = Some(path);
        }
        // The recording's revisions only: a client that asks for another is answered as the
        // recorded server answered (a 2026 client of a handshake-era recording gets the
        // `-32601` for `server/discover` that makes it fall back to `initialize`).
        let recorded = &replay.recording().revisions;
        if !recorded.is_empty() {
            config.revisions.retain(|r| recorded.contains(r));
            if config.revisions.is_empty() {
                return Err(Error::Config(format!(
                    "the recording was served under {}, which these options do not allow",
                    recorded
                        .iter()
                        .map(|r| r.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        Server::new(config, crate::replay::registry(&replay))
    }

    /// What the core reads. Fails on an unknown revision or era, or a bad duration.
    pub fn server_config(&self) -> Result<ServerConfig, Error> {
        let defaults = ServerConfig::default();
        let title = match &self.title {
            Some(title) => Some(title.clone()),
            None if self.name == defaults.name => defaults.title,
            None => None,
        };
        let revisions = self
            .revisions
            .iter()
            .map(|r| {
                r.parse::<Revision>()
                    .map_err(|e| Error::Config(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let dialect = self
            .dialect
            .as_deref()
            .map(crate::protocol::Dialect::parse)
            .transpose()
            .map_err(Error::Config)?;
        // A peer that speaks one revision only: that one, if these options allow it.
        let mut revisions: Vec<Revision> = revisions;
        if let Some(only) = dialect.and_then(|d| d.only_revision()) {
            revisions.retain(|r| *r == only);
            if revisions.is_empty() {
                return Err(Error::Config(format!(
                    "the dialect {} speaks {} only, which these options do not allow",
                    self.dialect.as_deref().unwrap_or_default(),
                    only.as_str()
                )));
            }
        }
        Ok(ServerConfig {
            name: self.name.clone(),
            title,
            version: self.version.clone(),
            instructions: self.instructions.clone(),
            revisions,
            era: self.era.parse::<EraChoice>().map_err(Error::Config)?,
            page_size: self.page_size,
            max_message_bytes: self.max_message_bytes,
            record_path: self.record.clone(),
            keep_traffic: self.keep_traffic,
            keep_traffic_bytes: self.keep_traffic_bytes,
            task_ttl: self.task_ttl.duration("task_ttl")?,
            task_poll_interval: self.task_poll_interval.duration("task_poll_interval")?,
            clock: crate::clock::ClockKind::parse(&self.clock).map_err(Error::Config)?,
            dialect,
            limits: crate::server::limits::Limits {
                max_pending_requests: self.max_pending_requests,
                max_tasks: self.max_tasks,
                max_listen_streams: self.max_listen_streams,
            },
        })
    }

    /// What the catalogs read. Fails on a bad duration.
    pub fn catalog_options(&self) -> Result<catalog::Options, Error> {
        Ok(catalog::Options {
            expose_env: self.expose_env,
            tick: self.tick.map(|t| t.duration("tick")).transpose()?,
            update_delay: self.update_delay.duration("update_delay")?,
            send_list_changed: self.send_list_changed,
            apps: catalog::apps::AppsMode::parse(&self.apps)?,
        })
    }

    /// Threads of the server's runtime: `worker_threads`, at least one.
    pub fn worker_threads(&self) -> usize {
        self.worker_threads.max(1)
    }

    /// The server's own tokio runtime: [`Self::worker_threads`] threads, and a blocking pool
    /// of at most [`MAX_BLOCKING_THREADS`].
    pub fn runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.worker_threads())
            .max_blocking_threads(MAX_BLOCKING_THREADS)
            .thread_name("everything-mcp")
            .enable_all()
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_owning_types_defaults() {
        let options = ServerOptions::default();
        let config = options.server_config().unwrap();
        let expected = ServerConfig::default();
        assert_eq!(config.title, expected.title);
        assert_eq!(config.revisions, expected.revisions);
        assert_eq!(config.era, expected.era);
        assert_eq!(config.task_ttl, expected.task_ttl);
        assert_eq!(config.keep_traffic, expected.keep_traffic);
        assert_eq!(config.keep_traffic_bytes, expected.keep_traffic_bytes);
        assert_eq!(
            options.catalog_options().unwrap(),
            catalog::Options::default()
        );
    }

    #[test]
    fn a_custom_name_without_a_title_has_no_title() {
        let options = ServerOptions {
            name: "mine".into(),
            ..Default::default()
        };
        assert_eq!(options.server_config().unwrap().title, None);
    }

    #[test]
    fn a_wrong_value_is_a_configuration_error() {
        let options = ServerOptions {
            revisions: vec!["1999-01-01".into()],
            ..Default::default()
        };
        assert!(matches!(options.server_config(), Err(Error::Config(_))));
        let options = ServerOptions {
            era: "bogus".into(),
            ..Default::default()
        };
        assert!(matches!(options.server_config(), Err(Error::Config(_))));
    }
}
