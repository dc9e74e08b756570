//! The server: configuration, the registry of what it offers, its live sessions, and the
//! recorder. Transports feed it frames through [`Server::receive`], or, when the answer's HTTP
//! status must be known before the frame is recorded, [`Server::decode`] then [`Server::accept`]
//! (see [`exchange`] and [`dispatch`]).
//!
//! The modules are layered (docs/architecture.md, "Layers"; `tests/test_layers.py` checks it):
//! state (`config`, `outgoing`, `sink`, `session`, `report_hook`, `request_state`, `rounds`, `pagination`,
//! `uri_template`, `frontmatter`, `skills`, `listeners`, the task store and gates) → the model
//! (`model`: the types that name each other) → serving (`handler`, `registry`, `context`,
//! `exchange`, `seams`, `dispatch`, `stateless`, `methods`, `tasks`, `listen`) → this module,
//! the server's registration and broadcast API. Each imports only what is below it.

pub mod config;
pub mod context;
pub mod dispatch;
pub mod exchange;
pub mod frontmatter;
pub mod handler;
pub mod limits;
pub mod listen;
pub mod listeners;
pub mod methods;
pub mod model;
pub mod outgoing;
pub mod pagination;
pub mod registry;
pub mod report_hook;
pub mod request_state;
pub mod rounds;
pub mod scope;
mod seamed;
pub mod seams;
pub mod serve;
pub mod session;
pub mod sink;
pub mod skills;
pub mod stateless;
pub mod tasks;
pub mod uri_template;

pub use config::{ServerConfig, DEFAULT_MAX_MESSAGE_BYTES};
pub use model::Server;

use crate::error::Error;
use crate::jsonrpc::Message;
use crate::protocol::envelope::SERVER_INFO;
use crate::protocol::method_names::NotificationMethod;
use crate::protocol::Revision;
use crate::traffic::{Recorder, TransportKind};
use handler::CompleteFn;
use listeners::Event;
use registry::{CompletionKey, ListKind, Prompt, Registry, Resource, ResourceTemplate, Tool};
use serde_json::{json, Value};
use session::{Phase, Session};
use sink::{Outlet, Sink};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

impl Server {
    /// A server offering `registry`; fails on a bad limit or a record file that cannot be
    /// opened.
    pub fn new(mut config: ServerConfig, registry: Registry) -> Result<Arc<Self>, Error> {
        if config.revisions.is_empty() {
            return Err(Error::Config(
                "at least one protocol revision must be allowed".into(),
            ));
        }
        config.revisions = config
            .era
            .narrow(&config.revisions)
            .map_err(Error::Config)?;
        if registry.handshake_only {
            // Dropped silently under `--era both` (the catalog's docs say so); refused when
            // nothing would be left.
            config.revisions.retain(|r| r.has_handshake());
            if config.revisions.is_empty() {
                return Err(Error::Config(
                    "a loaded catalog (everything-v1) serves only the handshake era; it cannot be served in the stateless era".into(),
                ));
            }
        }
        if config.max_message_bytes == 0 {
            return Err(Error::Config("max_message_bytes must be positive".into()));
        }
        if config.page_size == Some(0) {
            return Err(Error::Config("page_size must be positive".into()));
        }
        let bound = crate::traffic::RingBound {
            records: config.keep_traffic,
            bytes: config.keep_traffic_bytes,
        };
        let recorder = Recorder::new(config.record_path.as_deref(), Some(bound)).map_err(|e| {
            let path = config
                .record_path
                .as_deref()
                .unwrap_or_else(|| std::path::Path::new(""));
            Error::Config(format!("cannot open record file {}: {e}", path.display()))
        })?;
        let (recorder, seams) = (Arc::new(recorder), Arc::new(seams::Seams::default()));
        let stateless_info = config.implementation(Revision::V2026_07_28);
        let stateless_meta =
            format!("\"_meta\":{}", json!({ SERVER_INFO: &stateless_info })).into();
        let eras = (
            config.revisions.iter().any(|r| r.has_handshake()),
            config.revisions.iter().any(|r| !r.has_handshake()),
        );
        let clock = crate::clock::Clock::new(config.clock);
        let dialect = config.dialect;
        let state_key = request_state::Key::random(clock.clone());
        let limit_hits = Arc::new(limits::LimitHits::default());
        let core_limits = config.limits;
        Ok(Arc::new(Self {
            config,
            tasks: tasks::store::TaskStore::new(clock.clone()),
            clock,
            stateless_info,
            stateless_meta,
            eras,
            gates: Default::default(),
            responds: registry.responder.is_some(),
            registry: RwLock::new(Arc::new(registry)),
            wire: Arc::new(seams::Wire {
                recorder: recorder.clone(),
                seams: seams.clone(),
                dialect,
                limits: core_limits,
                hits: limit_hits.clone(),
            }),
            recorder,
            faults: crate::faults::Faults::new(seams.clone()),
            seams,
            sessions: Mutex::default(),
            listeners: listeners::Listeners::default(),
            limit_hits,
            next_conn: AtomicU64::new(1),
            state_key,
            report: Default::default(),
            web_base: Default::default(),
        }))
    }

    /// Back to the start for the next test: no fault rules, no traffic kept, a manual clock's
    /// `elapsed` at zero (time itself goes on; see [`crate::clock::Clock::restart`]).
    pub fn reset(&self) {
        self.faults.clear();
        self.recorder.clear();
        self.clock.restart();
    }

    /// Fires the catalogs' trigger `name` ([`Registry::triggers`]) and says how many things it
    /// set off; `None` when no loaded catalog offers it.
    pub fn trigger(&self, name: &str) -> Option<usize> {
        let trigger = self.registry().triggers.get(name).cloned()?;
        Some(trigger(self))
    }

    /// The names of the triggers the loaded catalogs offer.
    pub fn trigger_names(&self) -> Vec<String> {
        self.registry().triggers.keys().cloned().collect()
    }

    /// Moves a manual clock `by` forward ([`crate::clock::Clock::advance`]: every timer due by
    /// then fires, in order, its work done), then drops the tasks whose TTL passed, so they are
    /// gone when this returns; how far the clock has moved since it started. The real clock
    /// cannot be advanced.
    pub async fn advance_clock(
        &self,
        by: std::time::Duration,
    ) -> Result<std::time::Duration, Error> {
        let at = self.clock.advance(by).await.map_err(Error::Config)?;
        self.tasks.sweep();
        Ok(at)
    }

    /// What this server's sinks pass every outgoing frame through: the seams, then the recorder.
    pub fn wire(&self) -> Arc<seams::Wire> {
        self.wire.clone()
    }

    /// The current registry snapshot.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Opens a session for a new connection whose outgoing frames go to `tx`.
    pub fn open_session(&self, transport: TransportKind, outlet: Arc<dyn Outlet>) -> Arc<Session> {
        let id: Arc<str> = match transport {
            TransportKind::Http | TransportKind::Sse => {
                uuid::Uuid::new_v4().simple().to_string().into()
            }
            TransportKind::Stdio | TransportKind::Memory => self.connection_id(transport),
        };
        let sink = Sink::new(outlet, self.wire(), transport, id.clone());
        let session = Arc::new(Session::new(id.clone(), transport, sink));
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|_, s| s.strong_count() > 0);
        sessions.insert(id, Arc::downgrade(&session));
        session
    }

    /// A fresh connection id as records name it (`stdio-1`, `memory-2`, `http-3`, ...): for a
    /// connection that is not a handshake-era HTTP session (those are named by their
    /// `Mcp-Session-Id`).
    pub fn connection_id(&self, transport: TransportKind) -> Arc<str> {
        let n = self.next_conn.fetch_add(1, Ordering::Relaxed);
        let label = match transport {
            TransportKind::Stdio => "stdio",
            TransportKind::Memory => "memory",
            TransportKind::Http => "http",
            TransportKind::Sse => "sse",
        };
        format!("{label}-{n}").into()
    }

    /// Ends a session: its handlers stop and it receives no more broadcasts.
    pub fn close_session(&self, session: &Session) {
        session.close();
        self.tasks.end_scope(&session.id); // a handshake-era task belongs to its session
        self.recorder.forget_conn(&session.id);
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&session.id);
    }

    /// The `instructions` sent in `initialize`.
    pub fn instructions(&self) -> String {
        self.config.instructions.clone().or_else(|| self.registry().instructions.clone()).unwrap_or_else(|| {
            "A Model Context Protocol test server: it exercises every corner of the protocol so MCP clients can be tested against it.".into()
        })
    }

    /// How many sessions are open (on any transport); a closed session's memory is gone once
    /// this no longer counts it.
    pub fn session_count(&self) -> usize {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.values().filter(|s| s.strong_count() > 0).count()
    }

    /// Sessions that finished `initialize` and are still open.
    fn live_sessions(&self) -> Vec<Arc<Session>> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions
            .values()
            .filter_map(Weak::upgrade)
            .filter(|s| {
                matches!(s.phase(), Phase::Initializing | Phase::Ready) && !s.closed.is_cancelled()
            })
            .collect()
    }

    /// Sends `notifications/{tools,resources,prompts}/list_changed` to every initialized session
    /// and every listen stream that asked for it.
    pub fn notify_list_changed(&self, kind: ListKind) {
        let note = Message::notification(kind.notification(), None);
        for s in self.live_sessions() {
            s.sink.send(&note);
        }
        self.listeners.broadcast(Event::ListChanged(kind));
    }

    /// Sends `notifications/resources/updated` to every session subscribed to `uri` and every
    /// listen stream whose `resourceSubscriptions` name it; returns how many were notified.
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        let note = Message::notification(
            NotificationMethod::ResourceUpdated.as_str(),
            Some(json!({ "uri": uri })),
        );
        let mut n = 0;
        for s in self.live_sessions() {
            if s.state().subscriptions.contains(uri) {
                s.sink.send(&note);
                n += 1;
            }
        }
        n + self.listeners.broadcast(Event::ResourceUpdated(uri))
    }

    /// Applies `change` to a copy of the registry, publishes it, and announces `kind` (if any).
    fn change_registry(&self, kind: Option<ListKind>, change: impl FnOnce(&mut Registry)) {
        {
            let mut guard = self.registry.write().unwrap_or_else(|e| e.into_inner());
            let mut next = Registry::clone(&guard);
            change(&mut next);
            *guard = Arc::new(next);
        }
        if let Some(kind) = kind {
            self.notify_list_changed(kind);
        }
    }

    /// Adds (or replaces) a tool and sends `notifications/tools/list_changed`.
    pub fn add_tool(&self, tool: Tool) {
        self.change_registry(Some(ListKind::Tools), |r| {
            r.tools.insert(tool.name().to_string(), tool);
        });
    }

    /// Removes a tool; `false` if there was none by that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        let found = self.registry().tools.contains_key(name);
        if found {
            self.change_registry(Some(ListKind::Tools), |r| {
                r.tools.shift_remove(name);
            });
        }
        found
    }

    /// Adds (or replaces) a resource and sends `notifications/resources/list_changed`.
    pub fn add_resource(&self, resource: Resource) {
        self.change_registry(Some(ListKind::Resources), |r| {
            r.resources.insert(resource.uri().to_string(), resource);
        });
    }

    /// Adds (or replaces) a resource template and sends `notifications/resources/list_changed`.
    pub fn add_template(&self, template: ResourceTemplate) {
        let key = template
            .definition
            .get("uriTemplate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.change_registry(Some(ListKind::Resources), |r| {
            r.templates.insert(key, template);
        });
    }

    /// Removes a resource (or a template, by its `uriTemplate`); `false` if there was none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let registry = self.registry();
        let found = registry.resources.contains_key(uri) || registry.templates.contains_key(uri);
        if found {
            self.change_registry(Some(ListKind::Resources), |r| {
                r.resources.shift_remove(uri);
                r.templates.shift_remove(uri);
            });
        }
        found
    }

    /// Removes a prompt; `false` if there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let found = self.registry().prompts.contains_key(name);
        if found {
            self.change_registry(Some(ListKind::Prompts), |r| {
                r.prompts.shift_remove(name);
            });
        }
        found
    }

    /// Sends `notifications/message` to every initialized session (filtered by each one's level).
    pub fn log(
        &self,
        level: crate::protocol::LogLevel,
        data: Value,
        logger: Option<&str>,
    ) -> usize {
        self.live_sessions()
            .iter()
            .filter(|s| s.log_to(&s.sink, level, data.clone(), logger))
            .count()
    }

    /// Adds (or replaces) a prompt and sends `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, prompt: Prompt) {
        self.change_registry(Some(ListKind::Prompts), |r| {
            r.prompts.insert(prompt.name().to_string(), prompt);
        });
    }

    /// Serves a skill (SEP-2640; replacing one with the same URI) and sends
    /// `notifications/resources/list_changed`, since its files are resources.
    pub fn add_skill(&self, skill: skills::Skill) {
        self.change_registry(Some(ListKind::Resources), |r| r.add_skill(skill));
    }

    /// Adds (or replaces) a custom JSON-RPC method; a built-in method's name is refused (it
    /// would never be routed to the custom one).
    pub fn add_method(&self, name: &str, method: handler::MethodFn) -> Result<(), Error> {
        if crate::protocol::method_names::ClientRequest::parse(name).is_some() {
            return Err(Error::Config(format!("{name} is a built-in method")));
        }
        self.change_registry(None, |r| {
            r.methods.insert(name.to_string(), method);
        });
        Ok(())
    }

    /// Sends a request (e.g. `roots/list`) to the client of session `session_id`, or of every
    /// initialized session, on each session's own stream (it is made for no client request), and
    /// waits for every answer: `(session id, result or error)`, one after the other. A session id
    /// that names no open session is answered with an error.
    pub async fn ask_sessions(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: Option<Value>,
    ) -> Vec<(String, Result<Value, crate::jsonrpc::ErrorObject>)> {
        let targets = session_id.map_or_else(|| self.session_ids(), |s| vec![s.to_string()]);
        let mut answers = Vec::with_capacity(targets.len());
        for id in targets {
            let session = self
                .sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(id.as_str())
                .and_then(Weak::upgrade);
            let answer = match session {
                Some(s) => s.request(&s.sink, method, params.clone()).await,
                None => Err(crate::jsonrpc::ErrorObject::new(
                    crate::jsonrpc::code::INTERNAL_ERROR,
                    "no such open session",
                )),
            };
            answers.push((id, answer));
        }
        answers
    }

    /// Sends a notification to one session (`Some(id)`) or every initialized one; returns how
    /// many were sent.
    pub fn notify(&self, session_id: Option<&str>, method: &str, params: Option<Value>) -> usize {
        let note = Message::notification(method, params);
        self.live_sessions()
            .iter()
            .filter(|s| session_id.is_none_or(|id| &*s.id == id))
            .filter(|s| s.sink.send(&note))
            .count()
    }

    /// Ids of the initialized, open sessions.
    pub fn session_ids(&self) -> Vec<String> {
        self.live_sessions()
            .iter()
            .map(|s| s.id.to_string())
            .collect()
    }

    /// Adds a completion provider (no notification: completions have no list).
    pub fn add_completion(&self, key: CompletionKey, complete: CompleteFn) {
        self.change_registry(None, |r| {
            r.completions.insert(key, complete);
        });
    }

    /// Who this server is, as a completed stateless result says it.
    pub fn identity(&self) -> outgoing::ServerIdentity<'_> {
        outgoing::ServerIdentity {
            stateless_meta: &self.stateless_meta,
            stateless_info: &self.stateless_info,
            config: &self.config,
        }
    }

    /// The `serverInfo` object for `revision`.
    pub fn server_info(&self, revision: Revision) -> Value {
        self.identity().server_info(revision)
    }
}
