//! The server's data model: the types that name one another — the [`Server`], what it offers
//! (the [`Registry`] and its entries), the handler function types those entries hold, and the
//! [`RequestContext`] every handler gets, which names the server. They are defined together
//! because a type ring (server → registry → handler → context → server) spread over several
//! modules is an import cycle; their behaviour lives beside them, one module per concern
//! (`registry.rs`, `handler.rs`, `context.rs`, `mod.rs`), each importing this one.

use super::config::ServerConfig;
use super::listeners::Listeners;
use super::pagination::Pager;
use super::request_state::Key;
use super::rounds::Rounds;
use super::scope::Scope;
use super::seams::{Seams, Wire};
use super::session::Session;
use super::sink::Sink;
use super::skills::Skill;
use super::tasks::gate::Gates;
use super::tasks::store::TaskStore;
use super::tasks::task::{Task, TaskSupport};
use super::uri_template::UriTemplate;
use crate::fast_map::FastIndexMap;
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::protocol::header_params::HeaderParam;
use crate::protocol::meta::RequestMeta;
use crate::traffic::Recorder;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock, Weak};

/// An MCP server: shared by all its connections and transports.
pub struct Server {
    /// How it was set up.
    pub config: ServerConfig,
    /// What it offers. Readers take a snapshot (`Arc` clone) so a handler never holds a lock;
    /// writers replace the snapshot (registration is rare, reads are per request).
    pub(super) registry: RwLock<Arc<Registry>>,
    /// Whether its registry has a responder (a replay; set when the server is made, and kept by
    /// every later snapshot): the dispatcher asks this, not the registry, for each request, so
    /// a server without one does not take a registry snapshot just to find none.
    pub(super) responds: bool,
    /// Every frame in and out.
    pub recorder: Arc<Recorder>,
    /// Where fault rules and the like plug in (inbound, outbound, transport); none by default.
    pub seams: Arc<Seams>,
    /// The fault rules in force (none by default): Python's `srv.faults`, `--faults FILE` and
    /// the control API all change this one set, which arms `seams` while it holds a rule.
    pub faults: Arc<crate::faults::Faults>,
    /// The seams and the recorder as every sink of this server shares them.
    pub(super) wire: Arc<Wire>,
    /// Live sessions, for broadcasts (`list_changed`, `resources/updated`).
    pub(super) sessions: Mutex<crate::fast_map::FastMap<Arc<str>, Weak<Session>>>,
    /// How often each bound refused or dropped something ([`super::limits`]): shown by `GET
    /// /_control/limits` and `srv.limits`, so a bound that bites is never silent.
    pub limit_hits: Arc<super::limits::LimitHits>,
    /// Open `subscriptions/listen` streams (the stateless era's broadcast audience).
    pub(super) listeners: Listeners,
    /// Numbers connection ids (`stdio-1`, `memory-2`, ...).
    pub(super) next_conn: AtomicU64,
    /// Signs the `requestState` of multi-round-trip requests (random per server, so no other
    /// server, and no earlier run, can mint a state this one accepts).
    pub(crate) state_key: Key,
    /// `serverInfo` for the stateless revision, built once: every stateless result carries it
    /// (`super::outgoing::complete`), most as the text of `stateless_meta`, and the few with a
    /// `_meta` of their own get this value cloned into it instead of rebuilt.
    pub(super) stateless_info: Value,
    /// The clock every timer of the server runs on (the real one unless a test drives it).
    pub clock: crate::clock::Clock,
    /// Every live task (both eras), with its expiry.
    pub tasks: TaskStore,
    /// The tests' task gates, by tool: a task of a gated tool is held for the test to move
    /// instead of running the handler.
    pub gates: Gates,
    /// `"_meta":{"io.modelcontextprotocol/serverInfo":stateless_info}` as JSON text: the
    /// member a stateless result that has no `_meta` of its own (most) ends with, written as
    /// it is ([`super::outgoing::Completed`]). Building it per request hashed two more keys and
    /// allocated a map (about 440 instructions a result); cloning it as a value, to serialise
    /// it and drop it, cost about 4k more (callgrind: 71.4k -> 67.2k per stateless echo).
    pub(super) stateless_meta: Arc<str>,
    /// Whether the handshake and the stateless era are served: read per request by both
    /// eras' gates, fixed once `new` settled the revisions.
    pub(super) eras: (bool, bool),
    /// Where `GET /_control/report` and the lab page get the report of the traffic: the Python
    /// package installs its source here (the core does not compute the report itself).
    pub report: super::report_hook::ReportHook,
    /// `http://host:port` of the first HTTP listener that serves this server (unset while none
    /// does): an MCP Apps view is told to load its CSP probes from this origin (and from the
    /// same listener under its other loopback name, an origin it did not declare).
    pub web_base: std::sync::OnceLock<String>,
}

/// The context of one request being served.
#[derive(Clone)]
pub struct RequestContext {
    /// The server serving the request (its settings, registry and broadcasts).
    pub server: Arc<Server>,
    /// The connection the request came on (in the stateless era, a connection of its own when
    /// the request came alone: an HTTP POST without a session).
    pub session: Arc<Session>,
    /// Where messages related to this request go: the connection for stdio, the request's own
    /// SSE stream for Streamable HTTP.
    pub sink: Sink,
    /// The id of the request being served.
    pub request_id: RequestId,
    /// The method being served.
    pub method: String,
    /// What the request is served under: its revision, where its client's declarations are
    /// read, and its cancellation.
    pub scope: Scope,
    /// `params._meta` as sent (`None` when absent or not an object), kept as its text: a
    /// member is parsed when it is read ([`RequestContext::progress_token`]), the whole of it
    /// when a handler asks ([`RequestMeta::to_map`]).
    pub meta: Option<RequestMeta>,
    /// The multi-round-trip state of a stateless request (answers so far, questions pending);
    /// `None` in the handshake era, where asking is a real server → client request.
    pub rounds: Option<Arc<Rounds>>,
    /// The task this work runs as (`None` for an ordinary request): asking the client becomes
    /// the task's input request, and [`RequestContext::task_status`] its status message.
    pub task: Option<Arc<Task>>,
    /// Whether this call may be answered with a task (`tools::call` decided so for a tool
    /// that starts its own: see [`super::tasks::escalate`]).
    pub task_allowed: bool,
}

/// A tool's `inputSchema` compiled into a validator. A schema a caller registers is compiled at
/// once, so a bad one fails its registration ([`InputValidator::compiled`]); a built-in
/// catalog's (tested with the catalog) is compiled on the tool's first call
/// ([`InputValidator::on_first_use`]): compiling the `everything` catalog's schemas at start
/// took 3.6M of the native command's 7.6M instructions from spawn to exit (callgrind), about
/// 2 ms of its cold start.
pub struct InputValidator {
    /// The schema, kept until compiled.
    schema: Value,
    /// The validator, or why the schema does not compile.
    compiled: std::sync::OnceLock<Result<jsonschema::Validator, String>>,
}

impl InputValidator {
    /// `schema` compiled now; its error says why it does not compile.
    pub fn compiled(schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
        Ok(Self {
            schema: Value::Null,
            compiled: std::sync::OnceLock::from(Ok(validator)),
        })
    }

    /// `schema`, compiled when first needed.
    pub fn on_first_use(schema: Value) -> Self {
        Self {
            schema,
            compiled: std::sync::OnceLock::new(),
        }
    }

    /// The validator (compiled now if it was not), or why the schema does not compile.
    pub fn get(&self) -> Result<&jsonschema::Validator, &str> {
        self.compiled
            .get_or_init(|| jsonschema::validator_for(&self.schema).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }
}

/// A tool: its `tools/list` entry, a compiled validator for its input, and its handler.
#[derive(Clone)]
pub struct Tool {
    /// The `tools/list` entry as the newest revision shows it (`name`, `title`, `inputSchema`,
    /// ...); older revisions get fields they do not define removed when listed.
    pub definition: Map<String, Value>,
    /// `inputSchema`, compiled once (at registration, or on the first call for a built-in
    /// catalog's): arguments are checked before the handler runs.
    pub validator: Arc<InputValidator>,
    /// What runs on `tools/call`.
    pub handler: ToolFn,
    /// The client capabilities (dotted paths, e.g. `"sampling"`, `"elicitation.url"`) a
    /// session must all have declared to see and call this tool; empty: every session.
    pub requires: Vec<Arc<str>>,
    /// Set for a tool that needs what only the handshake era has (a session the server can
    /// send requests on outside any input round, e.g. to poll a task the client runs): a
    /// stateless request neither sees nor calls it, whatever its capabilities say.
    pub handshake_only: bool,
    /// `execution.taskSupport`, read once from the definition: whether a call may (or must)
    /// run as a task.
    pub task_support: TaskSupport,
    /// Set for a tool whose handler starts its task itself (`tasks::start`) after gathering
    /// input over multi-round-trip requests, so the stateless era's answer is an
    /// `InputRequiredResult` first and a `CreateTaskResult` only on the last round.
    pub starts_own_task: bool,
    /// The arguments `inputSchema` mirrors into `Mcp-Param-*` headers (`x-mcp-header`), read
    /// once here: the stateless HTTP transport checks them on every call, and walking the
    /// schema per call cost about 500 instructions (callgrind) for tools that mirror none.
    pub header_params: Vec<HeaderParam>,
}

/// A concrete resource: its `resources/list` entry and how to read it.
#[derive(Clone)]
pub struct Resource {
    /// The `resources/list` entry (`uri`, `name`, `mimeType`, ...).
    pub definition: Map<String, Value>,
    /// What runs on `resources/read` of this URI.
    pub handler: ResourceFn,
}

/// A resource template: its `resources/templates/list` entry, the parsed template, and a reader.
#[derive(Clone)]
pub struct ResourceTemplate {
    /// The `resources/templates/list` entry (`uriTemplate`, `name`, ...).
    pub definition: Map<String, Value>,
    /// The parsed `uriTemplate`, used to match URIs on `resources/read`.
    pub template: UriTemplate,
    /// What runs on `resources/read` of a matching URI.
    pub handler: TemplateFn,
}

/// A prompt: its `prompts/list` entry and how to render it.
#[derive(Clone)]
pub struct Prompt {
    /// The `prompts/list` entry (`name`, `arguments`, ...).
    pub definition: Map<String, Value>,
    /// What runs on `prompts/get`.
    pub handler: PromptFn,
}

/// What a completion provider completes: `ref/prompt` by prompt name or `ref/resource` by
/// template URI, and one argument of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompletionKey {
    /// `"ref/prompt"` or `"ref/resource"`.
    pub ref_type: String,
    /// The prompt name or the resource template's `uriTemplate`.
    pub ref_name: String,
    /// The argument (or template variable) being completed.
    pub argument: String,
}

/// Everything registered, in registration order (the order `*/list` shows).
#[derive(Clone, Default)]
pub struct Registry {
    /// Tools by name.
    pub tools: FastIndexMap<String, Tool>,
    /// Resources by URI.
    pub resources: FastIndexMap<String, Resource>,
    /// Resource templates by `uriTemplate`.
    pub templates: FastIndexMap<String, ResourceTemplate>,
    /// Prompts by name.
    pub prompts: FastIndexMap<String, Prompt>,
    /// Completion providers.
    pub completions: FastIndexMap<CompletionKey, CompleteFn>,
    /// Run when a session completes its handshake (`notifications/initialized`): per-session
    /// timers, roots sync, announcing capability-gated tools.
    pub on_initialized: Vec<SessionHook>,
    /// Run on `resources/subscribe` (`true`) and `resources/unsubscribe` (`false`).
    pub on_subscribe: Vec<SubscribeHook>,
    /// Run on client notifications the core does not handle itself (e.g.
    /// `notifications/roots/list_changed`).
    pub on_notification: Vec<NotificationHook>,
    /// The `instructions` a catalog brings (used unless the server was given its own).
    pub instructions: Option<String>,
    /// The protocol extensions the catalogs implement (SEP-2133), by identifier, with their
    /// settings object: declared under `capabilities.extensions` in `server/discover` (e.g.
    /// `"io.modelcontextprotocol/skills": {}`).
    pub extensions: Map<String, Value>,
    /// The extensions also declared in a handshake-era `initialize` result (the legacy
    /// negotiation, modelcontextprotocol PR #3364: an MCP Apps host declares
    /// `io.modelcontextprotocol/ui` in `initialize` under 2025-11-25 and earlier), by
    /// identifier with their settings. Those in [`Registry::extensions`] alone are declared
    /// from 2026-07-28 only.
    pub handshake_extensions: Map<String, Value>,
    /// The skills served (SEP-2640), by their `skill://<name>/SKILL.md` URI: what
    /// `skills/list`, `skills/get` and `resources/directory/read` answer from. Their files are
    /// also in [`Registry::resources`] (see [`Registry::add_skill`]).
    pub skills: FastIndexMap<String, Arc<Skill>>,
    /// Custom JSON-RPC methods (e.g. a vendor extension), by method name: `(context, params) ->
    /// result`.
    pub methods: FastIndexMap<String, MethodFn>,
    /// How unknown tool and prompt names are reported, for a catalog that reproduces another
    /// server's errors; `None`: the spec's `-32602`.
    pub dialect: Option<ErrorDialect>,
    /// Replaces the built-in paging of `resources/list` (cursor format and page size), for a
    /// catalog that reproduces another server's cursors; `None`: the built-in one.
    pub resource_pager: Option<Pager>,
    /// Set by a catalog that only exists in the handshake era (`everything-v1` reproduces a
    /// 2025 server): while it is loaded the server serves no stateless revision, so a 2026
    /// client gets the handshake era's `-32601` for `server/discover` and falls back.
    pub handshake_only: bool,
    /// Named triggers a catalog offers a test (e.g. the review lab's `review-lab.update`: every
    /// pending update now): `Server::trigger`, `POST /_control/triggers/{name}` and the lab
    /// page's buttons fire them; each says how many things it set off.
    pub triggers: FastIndexMap<String, TriggerFn>,
    /// How a catalog shapes what one client sees of a listed definition (`tools/list`,
    /// `resources/list`, `resources/templates/list`), applied in order: MCP Apps' `gate` mode
    /// shows `_meta.ui` only to a host that declared the UI extension, which in 2026-07-28 is a
    /// per-request declaration, so a static definition cannot say it. Empty for most catalogs,
    /// and then the lists borrow the definitions as they are.
    pub definition_views: Vec<DefinitionView>,
    /// How long a client may cache the `resources/read` result of a URI, and who may share it
    /// (`ttlMs`, `cacheScope`; 2026-07-28): instead of the server's `0` / `private`, for a
    /// resource that tests a client's cache (MCP Apps hosts cache UI templates).
    pub read_cache: FastIndexMap<String, (u64, &'static str)>,
    /// Answers every request in place of the definitions above, when set: a replay of
    /// recorded traffic answers what the recording answered (`crate::replay`). The core still
    /// decides each frame's era, the lifecycle and the envelope; only the answers change.
    pub responder: Option<Arc<dyn Responder>>,
}

/// What answers every request of a server whose registry holds one ([`Registry::responder`]).
pub trait Responder: Send + Sync {
    /// Serves a request (`initialize` too, once the core moved the session into its
    /// handshake; the responder may set the session's revision to the one its answer names):
    /// its method, id and `_meta` are in `ctx`, its other params in `params`. What it sends on
    /// the way (notifications, requests to the client) goes through `ctx` as a handler's would.
    fn answer(
        &self,
        ctx: RequestContext,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>>;
}

/// What one client sees of a listed definition: the definition as it is, none of it (the entry
/// is left out of the list), or a changed copy.
pub enum Shown {
    /// The definition as registered.
    As,
    /// Left out of the list (it is still served: a call or a read does not consult views).
    Hidden,
    /// This copy instead.
    Changed(Map<String, Value>),
}

/// A catalog's view of its definitions (see [`Registry::definition_views`]): given the request,
/// the client's capabilities as it declares them, and a definition, what the client sees.
pub type DefinitionView =
    Arc<dyn Fn(&RequestContext, &Value, &Map<String, Value>) -> Shown + Send + Sync>;

/// Errors a catalog reports in another server's words (see [`Registry::dialect`]).
#[derive(Clone, Copy)]
pub struct ErrorDialect {
    /// The error for `tools/call` of an unknown tool.
    pub unknown_tool: fn(&str) -> ErrorObject,
    /// The error for `prompts/get` of an unknown prompt.
    pub unknown_prompt: fn(&str) -> ErrorObject,
}

/// A boxed, sendable future: what every handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// How a handler fails.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerError {
    /// A failure the caller should see as content: for tools an `isError: true` result (per the
    /// spec, tool execution errors are results), elsewhere a `-32603` error.
    Failed(String),
    /// A specific JSON-RPC error to send as is.
    Rpc(ErrorObject),
}

impl HandlerError {
    /// A failure with this text.
    pub fn failed(text: impl Into<String>) -> Self {
        Self::Failed(text.into())
    }
}

/// Result of a handler.
pub type HandlerResult<T> = Result<T, HandlerError>;

/// A handler of an object of arguments: `(context, arguments) -> JSON value`. Tools, prompts
/// and custom methods all have this shape (one type, so one wrapper serves all three).
pub type ObjectFn = Arc<
    dyn Fn(RequestContext, Map<String, Value>) -> BoxFuture<HandlerResult<Value>> + Send + Sync,
>;
/// Runs a tool: `(context, arguments) -> CallToolResult` (a JSON object).
pub type ToolFn = ObjectFn;
/// Serves a custom JSON-RPC method: `(context, params) -> result` (a JSON value).
pub type MethodFn = ObjectFn;
/// Reads a resource: `(context, uri) -> contents array`.
pub type ResourceFn =
    Arc<dyn Fn(RequestContext, String) -> BoxFuture<HandlerResult<Vec<Value>>> + Send + Sync>;
/// Reads a templated resource: `(context, uri, variables) -> contents array`.
pub type TemplateFn = Arc<
    dyn Fn(RequestContext, String, Map<String, Value>) -> BoxFuture<HandlerResult<Vec<Value>>>
        + Send
        + Sync,
>;
/// Renders a prompt: `(context, arguments) -> GetPromptResult` (a JSON object).
pub type PromptFn = ObjectFn;
/// Completes an argument: `(context, argument name, partial value, other arguments) ->
/// candidates`. The context is what every handler gets, so a Python completion is called the way
/// every other Python handler is.
pub type CompleteFn = Arc<
    dyn Fn(
            RequestContext,
            String,
            String,
            Map<String, Value>,
        ) -> BoxFuture<HandlerResult<Vec<String>>>
        + Send
        + Sync,
>;

/// A hook run on a client notification: `(server, session, method, params)`.
pub type NotificationHook =
    Arc<dyn Fn(Arc<Server>, Arc<Session>, &str, Option<&Value>) + Send + Sync>;

/// A hook run for a session (see [`Registry::on_initialized`]); spawn anything long-running,
/// and stop it when `session.closed` fires.
pub type SessionHook = Arc<dyn Fn(Arc<Server>, Arc<Session>) + Send + Sync>;

/// A hook run on (un)subscription: `(server, session, uri, subscribed)`.
pub type SubscribeHook = Arc<dyn Fn(Arc<Server>, Arc<Session>, String, bool) + Send + Sync>;
/// A catalog's named trigger ([`Registry::triggers`]): does its thing now and says how many
/// things it set off (updates sent, timers fired).
pub type TriggerFn = Arc<dyn Fn(&Server) -> usize + Send + Sync>;
