//! `_core.Server` ([`PyServer`]): owns a tokio runtime and a core [`Server`]. The methods Python
//! calls are delegations, one module per concept: running and serving ([`serving`]: the
//! options, stdio, HTTP, the relay, in-process connections, stopping), what it offers
//! ([`registration`]), what the test triggers or asks ([`triggers`]), the recorded traffic
//! ([`traffic`]), tasks ([`tasks`]), fault rules ([`faults`]) and the clock ([`clock`]).

mod auth;
mod clock;
mod faults;
mod registration;
pub(super) mod report;
mod serving;
mod state;
mod tasks;
mod traffic;
mod triggers;

use super::callback::Pending;
use super::connection::Connection;
use super::handlers::Invoker;
use super::options;
use pyo3::prelude::*;
use pyo3::types::PyDict;
pub use state::PyServer;
use std::path::PathBuf;

#[pymethods]
impl PyServer {
    /// Takes every option of `crate::options::ServerOptions` as a keyword argument; an omitted
    /// one (or `None`) takes its default (`_core.DEFAULTS` lists them).
    #[new]
    #[pyo3(signature = (**options))]
    fn new(py: Python<'_>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        serving::new(py, options::extract("Server()", options)?)
    }

    /// Serves this process's stdin/stdout until stdin closes (returns) or a signal handler
    /// raises (the exception propagates after the server stopped cleanly).
    fn run_stdio(&self, py: Python<'_>) -> PyResult<()> {
        serving::run_stdio(self, py)
    }

    /// Serves Streamable HTTP (`/mcp`), legacy SSE (`/sse`, `/message`) and `/health` on
    /// `host:port` with the options of `crate::options::HttpOptions` (keyword arguments, each
    /// optional). Returns the announced `(host, port)`.
    #[pyo3(signature = (host=None, port=0, **options))]
    fn start_http(
        &self,
        py: Python<'_>,
        host: Option<&str>,
        port: u16,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<(String, u16)> {
        let options = options::extract("start_http()", options)?;
        serving::start_http(self, py, host, port, options)
    }

    /// Serves stdio connections relayed over a Unix socket in `directory` (see
    /// `python -m everything_mcp.relay`); returns the socket's path.
    fn start_relay(&self, py: Python<'_>, directory: PathBuf) -> PyResult<String> {
        serving::start_relay(self, py, directory)
    }

    /// `http://host:port` of the HTTP listener (IPv6 in brackets), or `None` before
    /// `start_http`: formatted here so the CLI needs no Python wrapper to print it.
    fn base_url(&self, py: Python<'_>) -> Option<String> {
        serving::base_url(self, py)
    }

    /// Blocks until `stop()` is called (from another thread) or a signal handler raises.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        serving::wait(self, py)
    }

    /// Opens an in-process connection (frames in, frames out).
    fn connect(&self) -> PyResult<Connection> {
        serving::connect(self)
    }

    /// Recorded frames with `seq > since`, each as one JSON text (see docs/traffic-format.md).
    #[pyo3(signature = (since=0))]
    fn traffic(&self, py: Python<'_>, since: u64) -> Vec<String> {
        traffic::since(self, py, since)
    }

    /// Adds a fault rule (JSON text, `docs/faults.md`); returns its id. A malformed rule raises
    /// `ConfigError` naming the member and the problem.
    fn add_fault(&self, rule: &str) -> PyResult<String> {
        faults::add(self, rule)
    }

    /// Adds every rule of a fault file's text (a JSON array, or `{"rules": [...]}`), all or
    /// none; returns their ids. An error names the line.
    fn load_faults(&self, text: &str) -> PyResult<Vec<String>> {
        faults::load(self, text)
    }

    /// Puts fault preset `name`'s rules in force (`docs/faults.md`), drawing from `seed`;
    /// returns their ids. An unknown preset raises `ConfigError` naming the known ones.
    #[pyo3(signature = (name, seed=0))]
    fn add_fault_preset(&self, name: &str, seed: u64) -> PyResult<Vec<String>> {
        faults::add_preset(self, name, seed)
    }

    /// The fault rules in force, in order, each as JSON text with its `hits`.
    fn faults(&self) -> Vec<String> {
        faults::list(self)
    }

    /// How many frames fault rule `id` acted on; `None` when no such rule is in force.
    fn fault_hits(&self, id: &str) -> Option<u64> {
        faults::hits(self, id)
    }

    /// Takes fault rule `id` out; whether it was in force.
    fn remove_fault(&self, id: &str) -> bool {
        self.core.faults.remove(id)
    }

    /// Takes every fault rule out.
    fn clear_faults(&self) {
        self.core.faults.clear();
    }

    /// The records with `seq > since` (JSON texts) and how many after `since` the memory bound
    /// dropped since the last clear, from one read.
    #[pyo3(signature = (since=0))]
    fn traffic_read(&self, py: Python<'_>, since: u64) -> (Vec<String>, u64) {
        traffic::read(self, py, since)
    }

    /// What the memory holds and what its bound dropped: `kept`, `kept_bytes`, `dropped` (since
    /// the last clear), `dropped_total`, and the bound (`keep_traffic`, `keep_traffic_bytes`).
    fn traffic_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        traffic::stats(self, py)
    }

    /// How often each bound refused or dropped something since the server started, by the
    /// option that sets it (`max_tasks`, `stream_buffer_bytes`, ...; docs/reliability.md).
    fn limit_hits(&self) -> Vec<(&'static str, u64)> {
        self.core.limit_hits.snapshot()
    }

    /// How many frames were recorded so far.
    fn traffic_count(&self) -> u64 {
        self.core.recorder.len()
    }

    /// Forgets the in-memory traffic (a record file keeps everything).
    fn clear_traffic(&self) {
        self.core.recorder.clear();
    }

    /// Sends `notifications/resources/updated` for `uri` to subscribed sessions; returns how many.
    fn notify_resource_updated(&self, uri: &str) -> usize {
        self.core.notify_resource_updated(uri)
    }

    /// Sends `notifications/<kind>/list_changed` (`tools`, `resources` or `prompts`).
    fn notify_list_changed(&self, kind: &str) -> PyResult<()> {
        triggers::notify_list_changed(self, kind)
    }

    /// Fires the loaded catalogs' trigger `name` (e.g. `review-lab.update`); how many things it
    /// set off.
    fn trigger(&self, name: &str) -> PyResult<usize> {
        triggers::trigger(self, name)
    }

    /// The names of the triggers the loaded catalogs offer.
    fn trigger_names(&self) -> Vec<String> {
        self.core.trigger_names()
    }

    /// The auth lab's registered clients (without secrets), as JSON text.
    fn auth_clients(&self) -> PyResult<String> {
        auth::clients(self)
    }

    /// The auth lab's issued access tokens (never the tokens themselves), as JSON text.
    fn auth_tokens(&self) -> PyResult<String> {
        auth::tokens(self)
    }

    /// Registers a client with the auth lab (`metadata`: JSON text); the answer, as JSON text.
    fn auth_register(&self, metadata: &str) -> PyResult<String> {
        auth::register(self, metadata)
    }

    /// Seeds the auth lab's Client ID Metadata Document of `url` (`document`: JSON text).
    fn auth_add_document(&self, url: String, document: &str) -> PyResult<()> {
        auth::add_document(self, url, document)
    }

    /// Moves the resource to the auth lab's second authorization server; its issuer.
    fn auth_migrate(&self) -> PyResult<String> {
        auth::migrate(self)
    }

    /// Scripts the consent step's next answers (`answers`: a JSON array); the rules' ids.
    fn auth_consent(&self, answers: &str) -> PyResult<Vec<String>> {
        auth::consent(self, answers)
    }

    /// Ends the access token `jti` (every one when `None`) as `why`: `revoked` or `expired`.
    #[pyo3(signature = (jti, why))]
    fn auth_end(&self, jti: Option<&str>, why: &str) -> PyResult<usize> {
        auth::end(self, jti, why)
    }

    /// How many sessions are open, on any transport.
    fn session_count(&self) -> usize {
        self.core.session_count()
    }

    /// How many `subscriptions/listen` streams are open, on any transport.
    fn listener_count(&self) -> usize {
        self.core.listener_count()
    }

    /// Registers a tool whose `definition` (JSON text) is listed and whose `invoker(arguments,
    /// context, reply)` runs on `tools/call`; `requires` gates it on a client capability.
    #[pyo3(signature = (definition, invoker, requires=None))]
    fn add_tool(
        &self,
        definition: &str,
        invoker: Py<Invoker>,
        requires: Option<String>,
    ) -> PyResult<()> {
        registration::tool(self, definition, invoker, requires)
    }

    /// Registers a resource: `definition` (JSON text with `uri`), `invoker(uri, context, reply)`
    /// answering a JSON array of contents.
    fn add_resource(&self, definition: &str, invoker: Py<Invoker>) -> PyResult<()> {
        registration::resource(self, definition, invoker)
    }

    /// Registers a resource template: `definition` (JSON text with `uriTemplate`),
    /// `invoker(uri, variables, context, reply)` answering a JSON array of contents.
    fn add_template(&self, definition: &str, invoker: Py<Invoker>) -> PyResult<()> {
        registration::template(self, definition, invoker)
    }

    /// Registers a prompt: `definition` (JSON text with `name`, `arguments`),
    /// `invoker(arguments, context, reply)`.
    fn add_prompt(&self, definition: &str, invoker: Py<Invoker>) -> PyResult<()> {
        registration::prompt(self, definition, invoker)
    }

    /// Registers a custom JSON-RPC method served by `invoker(params, context, reply)`.
    fn add_method(&self, name: &str, invoker: Py<Invoker>) -> PyResult<()> {
        registration::method(self, name, invoker)
    }

    /// How the `async def` handlers' event-loop thread is reached: `schedule(drain)` makes it
    /// call `drain()` soon (`loop.call_soon_threadsafe`).
    fn set_handler_loop(&self, schedule: Py<PyAny>) {
        self.dispatch.set_loop(schedule);
    }

    /// Serves a skill (SEP-2640) made of `files`, `(path inside the skill folder, bytes)`: its
    /// `SKILL.md` frontmatter names it. Returns the skill's URI, `skill://<name>/SKILL.md`.
    fn add_skill(&self, files: Vec<(String, pyo3::pybacked::PyBackedBytes)>) -> PyResult<String> {
        registration::skill(self, files)
    }

    /// Registers completions for `argument` of a prompt (`ref/prompt`, by name) or a resource
    /// template (`ref/resource`, by `uriTemplate`): `invoker(value, context_arguments, context,
    /// reply)` answers a JSON array of strings.
    fn add_completion(&self, ref_type: &str, ref_name: &str, argument: &str, invoker: Py<Invoker>) {
        registration::completion(self, ref_type, ref_name, argument, invoker);
    }

    /// Asks the client of one session (`session`), or of every initialized session, something
    /// (`roots/list`, `sampling/createMessage`, `elicitation/create`); returns `{session: result
    /// JSON}` (an error answer is `{"error": …}`). Waits at most `timeout` seconds.
    #[pyo3(signature = (method, params=None, session=None, timeout=30.0))]
    fn ask(
        &self,
        py: Python<'_>,
        method: &str,
        params: Option<&str>,
        session: Option<String>,
        timeout: f64,
    ) -> PyResult<Vec<(String, String)>> {
        triggers::ask(self, py, method, params, session, timeout)
    }

    /// `ask` for async tests: returns at once and calls `callback(answers, None)` or
    /// `callback(None, exception)` later, from another thread (see `callback.rs`).
    #[pyo3(signature = (method, params, session, timeout, callback))]
    fn ask_async(
        &self,
        method: &str,
        params: Option<&str>,
        session: Option<String>,
        timeout: f64,
        callback: Py<PyAny>,
    ) -> PyResult<Pending> {
        triggers::ask_async(self, method, params, session, timeout, callback)
    }

    /// Back to the start: no fault rules, no traffic kept, a manual clock's elapsed at zero.
    fn reset(&self) {
        self.core.reset();
        auth::reset(self);
    }

    /// Advances a manual clock `seconds` (every timer due by then fires, in order, its work
    /// done), GIL released; how far it has moved since it started. On the real clock: a
    /// `ConfigError`.
    fn advance_clock(&self, py: Python<'_>, seconds: f64) -> PyResult<f64> {
        clock::advance(self, py, seconds)
    }

    /// `advance_clock` for async tests: returns at once and calls `callback(elapsed, None)` or
    /// `callback(None, exception)` later, from another thread (see `callback.rs`).
    fn advance_clock_async(&self, seconds: f64, callback: Py<PyAny>) -> PyResult<Pending> {
        clock::advance_async(self, seconds, callback)
    }

    /// How far a manual clock has moved since it started, in seconds; `None` on the real clock.
    #[getter]
    fn clock_elapsed(&self) -> Option<f64> {
        clock::elapsed(self)
    }

    /// The clock the server runs on: `"real"` or `"manual"`.
    #[getter]
    fn clock_kind(&self) -> &'static str {
        clock::kind(self)
    }

    /// Sends a notification (`params` is JSON text) to one session or every initialized one;
    /// returns how many were sent.
    #[pyo3(signature = (method, params=None, session=None))]
    fn notify(&self, method: &str, params: Option<&str>, session: Option<&str>) -> PyResult<usize> {
        triggers::notify(self, method, params, session)
    }

    /// Removes a tool, resource (or template) or prompt; returns whether it existed.
    fn remove(&self, kind: &str, name: &str) -> PyResult<bool> {
        registration::remove(self, kind, name)
    }

    /// Sends `notifications/message` (`data` is JSON text) to every initialized session;
    /// returns how many received it (after their log-level filters).
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &str, logger: Option<&str>) -> PyResult<usize> {
        triggers::log(self, level, data, logger)
    }

    /// Waits (GIL released, interruptible) until a traffic record with `seq > since` exists or
    /// `timeout` seconds pass; returns whether one exists.
    fn wait_traffic(&self, py: Python<'_>, since: u64, timeout: f64) -> PyResult<bool> {
        traffic::wait(self, py, since, timeout)
    }

    /// Opens the test gate of `tool` (or returns the one open): from now on a task started for
    /// that tool is held for the test instead of running the handler.
    fn task_gate(&self, tool: &str) -> PyResult<super::tasks::TaskGate> {
        tasks::gate(self, tool)
    }

    /// The live tasks, oldest first, as a JSON array (see `tasks::info`).
    fn tasks(&self) -> String {
        tasks::all(self)
    }

    /// Waits (GIL released, interruptible) until the task `id` has one of `statuses` (any
    /// terminal one when empty), at most `timeout` seconds; returns whether it got there (an
    /// unknown task never does).
    fn wait_task(
        &self,
        py: Python<'_>,
        id: &str,
        statuses: Vec<String>,
        timeout: f64,
    ) -> PyResult<bool> {
        tasks::wait(self, py, id, statuses, timeout)
    }

    /// Names of the registered tools, in `tools/list` order.
    fn tool_names(&self) -> Vec<String> {
        self.core.registry().tools.keys().cloned().collect()
    }

    /// Stops every connection and the runtime; idempotent. Open SSE streams are closed and the
    /// HTTP port is free when this returns.
    fn stop(&self, py: Python<'_>) {
        serving::stop(self, py);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<Bound<'_, PyAny>>,
        _exc_value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) {
        self.stop(py);
    }
}
