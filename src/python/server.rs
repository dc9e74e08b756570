//! `_core.Server`: owns a tokio runtime and a core [`Server`]; serves stdio, in-process
//! connections, HTTP (Streamable and legacy HTTP+SSE) and the stdio relay socket; registers
//! Python callables as tools, resources and prompts; exposes the recorded traffic.

use super::args;
use super::callback::{call_back, Pending};
use super::connection::Connection;
use super::errors::{to_py, ConfigError};
use super::handlers;
use super::wait::{deadline_after, run_interruptibly, wait_detached, wait_interruptibly, Waited};
use crate::catalog;
use crate::protocol::{EraChoice, Revision};
use crate::server::registry::{CompletionKey, ListKind, Prompt, Resource, ResourceTemplate, Tool};
use crate::server::skills::Skill;
use crate::server::{Server as CoreServer, ServerConfig};
use crate::transport::http::{self, guard::Allowlist, HttpConfig, HttpState};
use crate::transport::{memory, relay, stdio};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::MutexExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};
use tokio_util::sync::CancellationToken;

/// How long `stop()` and a signal-interrupted `run_stdio()` wait for tasks to finish.
const STOP_TIMEOUT: Duration = Duration::from_secs(1);

/// Most threads of the runtime's blocking pool, which runs sync Python handlers (and attaches to
/// Python for the binding's callbacks). Why a bound, and why this one: Python handlers serialise
/// on the GIL, so threads beyond a few only add memory and contention; the pool's size matters
/// only for sync handlers that wait with the GIL released (`time.sleep`, I/O, `ctx.ask`), and 64
/// such handlers at once is far beyond a test's needs. Nothing else waits on this pool: stdin is
/// read on a thread of its own (`transport::stdio`), and `async def` handlers and `aask` occupy
/// no thread while they wait. Tokio's default (512) would let a runaway test start hundreds of
/// threads.
const MAX_BLOCKING_THREADS: usize = 64;

/// A running MCP server inside this process.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Server {
    /// The protocol core, shared with every connection.
    core: Arc<CoreServer>,
    /// Runs the server's tasks; taken out (and shut down) by `stop()`.
    runtime: Mutex<Option<Runtime>>,
    /// A handle kept outside the lock so connections can spawn without locking.
    handle: Handle,
    /// Cancelled by `stop()`: every transport this server runs ends.
    shutdown: CancellationToken,
    /// The HTTP listener, once `start_http` ran: its address and its serving task.
    http: Mutex<Option<HttpRunning>>,
}

/// A running HTTP listener.
struct HttpRunning {
    /// Where clients reach it (loopback for a wildcard bind).
    addr: std::net::SocketAddr,
    /// Ends when the listener has shut down gracefully.
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

fn parse_revisions(revisions: Option<Vec<String>>) -> PyResult<Vec<Revision>> {
    match revisions {
        None => Ok(Revision::ALL.to_vec()),
        Some(list) => list
            .iter()
            .map(|r| {
                r.parse::<Revision>()
                    .map_err(|e| ConfigError::new_err(e.to_string()))
            })
            .collect(),
    }
}

#[pymethods]
impl Server {
    /// Every parameter is optional: an omitted one takes its default from the Rust type that
    /// owns it (`_core.DEFAULTS` lists them), so no default is restated in Python.
    #[new]
    #[pyo3(signature = (*, catalogs=None, record=None, revisions=None, era=None, page_size=None, max_message_bytes=None, keep_traffic=None, name=None, title=None, version=None, instructions=None, worker_threads=None, tick=None, update_delay=None, send_list_changed=None, expose_env=None, task_ttl=None, task_poll_interval=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        catalogs: Option<Vec<String>>,
        record: Option<PathBuf>,
        revisions: Option<Vec<String>>,
        era: Option<String>,
        page_size: Option<usize>,
        max_message_bytes: Option<usize>,
        keep_traffic: Option<usize>,
        name: Option<String>,
        title: Option<String>,
        version: Option<String>,
        instructions: Option<String>,
        worker_threads: Option<usize>,
        tick: Option<f64>,
        update_delay: Option<f64>,
        send_list_changed: Option<bool>,
        expose_env: Option<bool>,
        task_ttl: Option<f64>,
        task_poll_interval: Option<f64>,
    ) -> PyResult<Self> {
        let defaults = ServerConfig::default();
        // A custom name without a title gets no title (not ours).
        let title = title.or(if name.is_some() { None } else { defaults.title });
        let config = ServerConfig {
            name: name.unwrap_or(defaults.name),
            title,
            version: version.unwrap_or(defaults.version),
            instructions: instructions.or(defaults.instructions),
            revisions: parse_revisions(revisions)?,
            era: era
                .map(|e| e.parse::<EraChoice>().map_err(ConfigError::new_err))
                .transpose()?
                .unwrap_or(defaults.era),
            page_size: page_size.or(defaults.page_size),
            max_message_bytes: max_message_bytes.unwrap_or(defaults.max_message_bytes),
            record_path: record,
            keep_traffic: keep_traffic.or(defaults.keep_traffic),
            task_ttl: task_ttl
                .map(|t| seconds("task_ttl", t))
                .transpose()?
                .unwrap_or(defaults.task_ttl),
            task_poll_interval: task_poll_interval
                .map(|t| seconds("task_poll_interval", t))
                .transpose()?
                .unwrap_or(defaults.task_poll_interval),
        };
        let option_defaults = catalog::Options::default();
        let options = catalog::Options {
            expose_env: expose_env.unwrap_or(option_defaults.expose_env),
            tick: tick.map(|t| seconds("tick", t)).transpose()?,
            update_delay: update_delay
                .map(|d| seconds("update_delay", d))
                .transpose()?
                .unwrap_or(option_defaults.update_delay),
            send_list_changed: send_list_changed.unwrap_or(option_defaults.send_list_changed),
        };
        let catalogs = catalogs.unwrap_or_else(|| {
            super::defaults::CATALOGS
                .iter()
                .map(|c| c.to_string())
                .collect()
        });
        let core = py
            .detach(|| CoreServer::new(config, catalog::registry(&catalogs, &options)?))
            .map_err(to_py)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(
                worker_threads
                    .unwrap_or(super::defaults::WORKER_THREADS)
                    .max(1),
            )
            .max_blocking_threads(MAX_BLOCKING_THREADS)
            .thread_name("everything-mcp")
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        Ok(Self {
            core,
            runtime: Mutex::new(Some(runtime)),
            handle,
            shutdown: CancellationToken::new(),
            http: Mutex::new(None),
        })
    }

    /// Serves this process's stdin/stdout until stdin closes (returns) or a signal handler
    /// raises (the exception propagates after the server stopped cleanly).
    fn run_stdio(&self, py: Python<'_>) -> PyResult<()> {
        self.ensure_running()?;
        let stop = self.shutdown.child_token();
        let serve = stdio::serve_stdio(self.core.clone(), stop.clone());
        let drain = Some((&stop, STOP_TIMEOUT));
        let served = run_interruptibly(py, &self.handle, None, drain, serve);
        self.core.recorder.flush();
        match served? {
            Waited::Done(result) => result.map_err(Into::into),
            Waited::TimedOut | Waited::Stopped => Ok(()),
        }
    }

    /// Serves Streamable HTTP (`/mcp`), legacy SSE (`/sse`, `/message`) and `/health` on
    /// `host:port` (0: any free port; a busy port moves to the next of 20 unless
    /// `strict_port`). Returns the announced `(host, port)`. Omitted settings take the
    /// defaults of `HttpConfig`; `session_idle_timeout=0` means never.
    #[pyo3(signature = (host=None, port=0, *, strict_port=false, json_response=None, allow_hosts=Vec::new(), allow_origins=Vec::new(), max_sessions=None, session_idle_timeout=None, event_store_capacity=None, sse_retry=None, keepalive=None, standalone_stream=None))]
    #[allow(clippy::too_many_arguments)]
    fn start_http(
        &self,
        py: Python<'_>,
        host: Option<&str>,
        port: u16,
        strict_port: bool,
        json_response: Option<bool>,
        allow_hosts: Vec<String>,
        allow_origins: Vec<String>,
        max_sessions: Option<usize>,
        session_idle_timeout: Option<f64>,
        event_store_capacity: Option<usize>,
        sse_retry: Option<f64>,
        keepalive: Option<f64>,
        standalone_stream: Option<bool>,
    ) -> PyResult<(String, u16)> {
        self.ensure_running()?;
        let mut running = self
            .http
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner());
        if running.is_some() {
            return Err(ConfigError::new_err(
                "HTTP is already being served; stop() first",
            ));
        }
        let defaults = HttpConfig::default();
        let duration = |name: &str, value: Option<f64>, default: Duration| {
            value.map_or(Ok(default), |v| seconds(name, v))
        };
        let mut allow = Allowlist {
            hosts: allow_hosts,
            origins: allow_origins,
        };
        let host = host.unwrap_or(http::DEFAULT_HOST);
        let handle = &self.handle;
        let (listener, reachable) =
            py.detach(|| handle.block_on(http::listen(host, port, strict_port, &mut allow)))?;
        let session_idle_timeout = match session_idle_timeout {
            None => defaults.session_idle_timeout,
            // 0 means never, as on the command line.
            Some(0.0) => None,
            Some(t) => Some(seconds("session_idle_timeout", t)?),
        };
        let config = HttpConfig {
            json_response: json_response.unwrap_or(defaults.json_response),
            allow,
            max_sessions: max_sessions.unwrap_or(defaults.max_sessions),
            session_idle_timeout,
            event_store_capacity: event_store_capacity.unwrap_or(defaults.event_store_capacity),
            sse_retry: duration("sse_retry", sse_retry, defaults.sse_retry)?,
            keepalive: duration("keepalive", keepalive, defaults.keepalive)?
                .max(Duration::from_millis(10)),
            standalone_stream: standalone_stream.unwrap_or(defaults.standalone_stream),
        };
        let state = HttpState::new(self.core.clone(), config, self.shutdown.child_token());
        let task = self.handle.spawn(http::serve(listener, state));
        *running = Some(HttpRunning {
            addr: reachable,
            task,
        });
        Ok((reachable.ip().to_string(), reachable.port()))
    }

    /// Serves stdio connections relayed over a Unix socket in `directory` (see
    /// `python -m everything_mcp.relay`); returns the socket's path.
    fn start_relay(&self, py: Python<'_>, directory: PathBuf) -> PyResult<String> {
        self.ensure_running()?;
        let core = self.core.clone();
        let stop = self.shutdown.child_token();
        let handle = &self.handle;
        let path = py.detach(|| {
            let _guard = handle.enter();
            relay::listen(core, &directory, stop)
        })?;
        Ok(path.to_string_lossy().into_owned())
    }

    /// `http://host:port` of the HTTP listener (IPv6 in brackets), or `None` before
    /// `start_http`: formatted here so the CLI needs no Python wrapper to print it.
    fn base_url(&self, py: Python<'_>) -> Option<String> {
        let running = self
            .http
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner());
        running.as_ref().map(|r| http::base_url(r.addr))
    }

    /// Blocks until `stop()` is called (from another thread) or a signal handler raises.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        wait_interruptibly(py, &self.handle, None, self.shutdown.cancelled()).map(drop)
    }

    /// Opens an in-process connection (frames in, frames out).
    fn connect(&self) -> PyResult<Connection> {
        self.ensure_running()?;
        Ok(Connection::new(
            memory::connect(&self.core, &self.handle),
            self.handle.clone(),
            self.shutdown.clone(),
        ))
    }

    /// Recorded frames with `seq > since`, each as one JSON text (see docs/traffic-format.md).
    #[pyo3(signature = (since=0))]
    fn traffic(&self, py: Python<'_>, since: u64) -> Vec<String> {
        let core = &self.core;
        py.detach(|| {
            core.recorder
                .since(since)
                .iter()
                .map(|r| r.to_json())
                .collect()
        })
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
        let kind = match kind {
            "tools" => ListKind::Tools,
            "resources" => ListKind::Resources,
            "prompts" => ListKind::Prompts,
            other => {
                return Err(ConfigError::new_err(format!(
                    "unknown list {other:?} (tools, resources, prompts)"
                )))
            }
        };
        self.core.notify_list_changed(kind);
        Ok(())
    }

    /// How many sessions are open, on any transport.
    fn session_count(&self) -> usize {
        self.core.session_count()
    }

    /// How many `subscriptions/listen` streams are open, on any transport.
    fn listener_count(&self) -> usize {
        self.core.listener_count()
    }

    /// Registers a tool whose `definition` (JSON text) is listed and whose `invoker(arguments_json,
    /// context) -> result_json` runs on `tools/call`; `requires` gates it on a client capability.
    #[pyo3(signature = (definition, invoker, requires=None))]
    fn add_tool(
        &self,
        definition: &str,
        invoker: Py<PyAny>,
        requires: Option<String>,
    ) -> PyResult<()> {
        let handler = handlers::object(invoker, &self.handle);
        let mut tool = Tool::new(args::json(definition)?, handler).map_err(to_py)?;
        if let Some(path) = requires {
            tool = tool.requiring(&path);
        }
        self.core.add_tool(tool);
        Ok(())
    }

    /// Registers a resource: `definition` (JSON text with `uri`), `invoker(uri, context) ->
    /// contents_json` (a JSON array of contents).
    fn add_resource(&self, definition: &str, invoker: Py<PyAny>) -> PyResult<()> {
        self.core.add_resource(Resource {
            definition: args::object(definition, "a resource")?,
            handler: handlers::resource(invoker, &self.handle),
        });
        Ok(())
    }

    /// Registers a resource template: `definition` (JSON text with `uriTemplate`),
    /// `invoker(uri, variables_json, context) -> contents_json`.
    fn add_template(&self, definition: &str, invoker: Py<PyAny>) -> PyResult<()> {
        let handler = handlers::template(invoker, &self.handle);
        let template = ResourceTemplate::new(args::json(definition)?, handler).map_err(to_py)?;
        self.core.add_template(template);
        Ok(())
    }

    /// Registers a prompt: `definition` (JSON text with `name`, `arguments`),
    /// `invoker(arguments_json, context) -> result_json`.
    fn add_prompt(&self, definition: &str, invoker: Py<PyAny>) -> PyResult<()> {
        self.core.add_prompt(Prompt {
            definition: args::object(definition, "a prompt")?,
            handler: handlers::object(invoker, &self.handle),
        });
        Ok(())
    }

    /// Registers a custom JSON-RPC method served by `invoker(params_json, context) -> result_json`.
    fn add_method(&self, name: &str, invoker: Py<PyAny>) -> PyResult<()> {
        self.core
            .add_method(name, handlers::object(invoker, &self.handle))
            .map_err(to_py)
    }

    /// Serves a skill (SEP-2640) made of `files`, `(path inside the skill folder, bytes)`: its
    /// `SKILL.md` frontmatter names it. Returns the skill's URI, `skill://<name>/SKILL.md`.
    fn add_skill(&self, files: Vec<(String, PyBackedBytes)>) -> PyResult<String> {
        let files = files.into_iter().map(|(p, b)| (p, b.to_vec())).collect();
        let skill = Skill::new(files).map_err(to_py)?;
        let uri = skill.uri.clone();
        self.core.add_skill(skill);
        Ok(uri)
    }

    /// Registers completions for `argument` of a prompt (`ref/prompt`, by name) or a resource
    /// template (`ref/resource`, by `uriTemplate`): `invoker(value, context_arguments_json,
    /// context, reply)` answers a JSON array of strings.
    fn add_completion(&self, ref_type: &str, ref_name: &str, argument: &str, invoker: Py<PyAny>) {
        let key = CompletionKey {
            ref_type: ref_type.into(),
            ref_name: ref_name.into(),
            argument: argument.into(),
        };
        self.core
            .add_completion(key, handlers::completion(invoker, &self.handle));
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
        let asking = self.asking(method, params, session, timeout)?;
        match run_interruptibly(py, &self.handle, None, None, asking)? {
            Waited::Done(answers) => answers,
            Waited::TimedOut | Waited::Stopped => Err(to_py(crate::error::Error::Stopped)),
        }
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
        self.ensure_running()?;
        let asking = self.asking(method, params, session, timeout)?;
        Ok(call_back(&self.handle, asking, callback))
    }

    /// Sends a notification (`params` is JSON text) to one session or every initialized one;
    /// returns how many were sent.
    #[pyo3(signature = (method, params=None, session=None))]
    fn notify(&self, method: &str, params: Option<&str>, session: Option<&str>) -> PyResult<usize> {
        let params = params.map(args::json).transpose()?;
        Ok(self.core.notify(session, method, params))
    }

    /// Removes a tool, resource (or template) or prompt; returns whether it existed.
    fn remove(&self, kind: &str, name: &str) -> PyResult<bool> {
        Ok(match kind {
            "tool" => self.core.remove_tool(name),
            "resource" => self.core.remove_resource(name),
            "prompt" => self.core.remove_prompt(name),
            other => {
                return Err(ConfigError::new_err(format!(
                    "unknown kind {other:?} (tool, resource, prompt)"
                )))
            }
        })
    }

    /// Sends `notifications/message` (`data` is JSON text) to every initialized session;
    /// returns how many received it (after their log-level filters).
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &str, logger: Option<&str>) -> PyResult<usize> {
        let (level, data) = args::log(level, data)?;
        Ok(self.core.log(level, data, logger))
    }

    /// Waits (GIL released, interruptible) until a traffic record with `seq > since` exists or
    /// `timeout` seconds pass; returns whether one exists.
    fn wait_traffic(&self, py: Python<'_>, since: u64, timeout: f64) -> PyResult<bool> {
        let recorder = self.core.recorder.clone();
        let beyond = async move { recorder.wait_beyond(since).await };
        Ok(
            match wait_interruptibly(py, &self.handle, Some(deadline_after(timeout)), beyond)? {
                Waited::Done(()) => true,
                Waited::TimedOut | Waited::Stopped => self.core.recorder.len() > since,
            },
        )
    }

    /// Opens the test gate of `tool` (or returns the one open): from now on a task started for
    /// that tool is held for the test instead of running the handler.
    fn task_gate(&self, tool: &str) -> PyResult<super::tasks::TaskGate> {
        self.ensure_running()?;
        Ok(super::tasks::TaskGate::open(
            self.core.clone(),
            tool,
            self.handle.clone(),
        ))
    }

    /// The live tasks, oldest first, as a JSON array (see `tasks::info`).
    fn tasks(&self) -> String {
        let all = self.core.tasks.all();
        serde_json::Value::Array(all.iter().map(|t| super::tasks::info(t)).collect()).to_string()
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
        let Some(task) = self.core.tasks.all().into_iter().find(|t| &*t.id == id) else {
            return Ok(false);
        };
        let reached = super::tasks::reach(task, statuses);
        Ok(matches!(
            run_interruptibly(
                py,
                &self.handle,
                Some(deadline_after(timeout)),
                None,
                reached
            )?,
            Waited::Done(())
        ))
    }

    /// Names of the registered tools, in `tools/list` order.
    fn tool_names(&self) -> Vec<String> {
        self.core.registry().tools.keys().cloned().collect()
    }

    /// Stops every connection and the runtime; idempotent. Open SSE streams are closed and the
    /// HTTP port is free when this returns.
    fn stop(&self, py: Python<'_>) {
        self.shutdown.cancel();
        let http = self
            .http
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(running) = http {
            let _ = wait_detached(py, &self.handle, STOP_TIMEOUT, running.task);
        }
        let runtime = self
            .runtime
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(rt) = runtime {
            py.detach(|| rt.shutdown_timeout(STOP_TIMEOUT));
        }
        self.core.recorder.flush();
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

/// A Python number of seconds as a `Duration`, refusing negative, NaN and infinite values.
fn seconds(name: &str, v: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(v).map_err(|_| {
        ConfigError::new_err(format!("{name} must be a non-negative number of seconds"))
    })
}

impl Server {
    /// Asking the clients, bounded by `timeout` seconds, with its outcome as Python sees it:
    /// shared by `ask` and `ask_async`.
    fn asking(
        &self,
        method: &str,
        params: Option<&str>,
        session: Option<String>,
        timeout: f64,
    ) -> PyResult<impl std::future::Future<Output = PyResult<Vec<(String, String)>>> + Send + 'static>
    {
        let params = params.map(args::json).transpose()?;
        let core = self.core.clone();
        let method = method.to_string();
        let deadline = tokio::time::Instant::from_std(deadline_after(timeout));
        Ok(async move {
            let asked = core.ask_sessions(session.as_deref(), &method, params);
            let answers = tokio::time::timeout_at(deadline, asked)
                .await
                .map_err(|_| {
                    super::errors::ClientError::new_err(format!("no answer within {timeout} s"))
                })?;
            Ok(answers
                .into_iter()
                .map(|(id, answer)| {
                    let answer = answer.unwrap_or_else(|e| serde_json::json!({ "error": e }));
                    (id, answer.to_string())
                })
                .collect())
        })
    }

    fn ensure_running(&self) -> PyResult<()> {
        if self.shutdown.is_cancelled() {
            return Err(to_py(crate::error::Error::Stopped));
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(rt) = self.runtime.get_mut().ok().and_then(Option::take) {
            rt.shutdown_background(); // never wait here: the caller may be attached to Python
        }
    }
}
