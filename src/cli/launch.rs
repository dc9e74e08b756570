//! The server a serving command describes ([`launch`]): built from its flags on a runtime of its
//! own, its fault files and presets in force, its HTTP listener (or a stdio server's control
//! port) bound; then announced on stderr ([`Launched::announce`]), served
//! ([`Launched::serving`], [`Launched::run_until`]) and stopped ([`Launched::stop`]).

use super::invocation::{Serve, Transport};
use crate::error::Error;
use crate::options::{self, HttpOptions, ServerOptions};
use crate::server::Server;
use crate::transport::{http, stdio};
use serde_json::Value;
use std::future::Future;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The port `http` and `sse` bind without `--port` or `$PORT`: the reference server's.
pub const DEFAULT_PORT: u16 = 3001;

/// Records a server with the lab page keeps in memory unless `--keep-traffic` says otherwise
/// (within `--keep-traffic-bytes`): the page and `GET /_control/report` read them.
pub const LAB_KEEP_TRAFFIC: usize = 100_000;

/// How long stopping waits for the transports to let go (stdio's last answers, the port).
pub const STOP_TIMEOUT: Duration = Duration::from_secs(1);

/// A launched server: what [`launch`] started, until [`Launched::stop`].
pub struct Launched {
    /// Runs the server's tasks.
    runtime: Runtime,
    /// The protocol core.
    server: Arc<Server>,
    /// Cancelled to stop every transport.
    shutdown: CancellationToken,
    /// The HTTP listener (`http`, `sse`, a stdio server's control port): where it is and its
    /// serving task, awaited when stopping so the port is free when the process ends.
    http: Option<(SocketAddr, JoinHandle<std::io::Result<()>>)>,
    /// What the command serves.
    transport: Transport,
}

/// Starts what `serve` describes: diagnostics at its level, the server with its options (a
/// server that keeps no traffic in memory unless asked, or unless the lab page, which reads
/// it, is served), its fault rules, and its listener. Nothing is announced yet.
pub fn launch(serve: &Serve) -> Result<Launched, Error> {
    crate::logging::init(&serve.server.log_level)?;
    let mut given = serve.server.options();
    if let Some(replay) = &serve.replay {
        given.insert("replay".into(), Value::Object(replay.options()));
    }
    if !given.contains_key("keep_traffic") {
        let listens = serve.transport != Transport::Stdio || serve.stdio.control_port.is_some();
        let lab = listens && serve.http.lab() != Some(false);
        let keep = if lab { LAB_KEEP_TRAFFIC } else { 0 };
        given.insert("keep_traffic".into(), Value::from(keep));
    }
    let options: ServerOptions = options::parse(given).map_err(|e| Error::Config(e.to_string()))?;
    let server = options.server()?;
    if let Some(path) = &serve.server.faults {
        let named = |e: String| Error::Config(format!("--faults {}: {e}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| named(e.to_string()))?;
        let rules = crate::faults::parse_file(&text)
            .map_err(|e| named(format!("invalid fault rule: {e}")))?;
        server
            .faults
            .add_all(rules)
            .map_err(|e| named(format!("invalid fault rule: {e}")))?;
    }
    let seed = serve.server.faults_seed.unwrap_or(0);
    for preset in &serve.server.faults_preset {
        server
            .faults
            .add_preset(preset, seed)
            .map_err(|e| Error::Fault(e.to_string()))?;
    }
    let runtime = options.runtime()?;
    let shutdown = CancellationToken::new();
    let listener = match serve.transport {
        Transport::Stdio => {
            // This server owns the process's stdio: a fault rule's `exit` may end the process.
            server.faults.allow_exit();
            serve.stdio.control_port.map(|port| {
                // The control API of a stdio server: its HTTP listener, on loopback only.
                let control = HttpOptions {
                    strict_port: true,
                    control_token: serve.stdio.control_token.clone(),
                    ..HttpOptions::default()
                };
                (control, Some("127.0.0.1".to_string()), port)
            })
        }
        Transport::Http | Transport::Sse => {
            let http: HttpOptions =
                options::parse(serve.http.options()).map_err(|e| Error::Config(e.to_string()))?;
            let port = serve.http.port.unwrap_or_else(default_port);
            Some((http, serve.http.host.clone(), port))
        }
    };
    let http = match listener {
        Some((options, host, port)) => {
            let bound = runtime.block_on(options.listen(host.as_deref(), port))?;
            let addr = bound.addr;
            let (_state, serving) = bound.start(server.clone(), shutdown.child_token());
            Some((addr, runtime.spawn(serving)))
        }
        None => None,
    };
    Ok(Launched {
        runtime,
        server,
        shutdown,
        http,
        transport: serve.transport,
    })
}

/// `$PORT`, or the reference's 3001.
fn default_port() -> u16 {
    std::env::var("PORT")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(DEFAULT_PORT)
}

impl Launched {
    /// The protocol core (the binding installs its report source here).
    pub fn server(&self) -> &Arc<Server> {
        &self.server
    }

    /// The runtime's handle.
    pub fn handle(&self) -> &Handle {
        self.runtime.handle()
    }

    /// Cancelled to stop every transport.
    pub fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// `http://host:port` of the HTTP listener, if there is one.
    pub fn base_url(&self) -> Option<String> {
        self.http.as_ref().map(|(addr, _)| http::base_url(*addr))
    }

    /// Tells stderr where the server is, one JSON line a test (in any language) waits for:
    /// `{"event": "listening", ...}` for `http` and `sse`, `{"event": "control", ...}` for a
    /// stdio server's control port; a person at a terminal running `stdio` gets a hint.
    pub fn announce(&self) {
        match (self.transport, self.base_url()) {
            (Transport::Stdio, Some(base)) => {
                event_line(&[("event", "control"), ("url", &format!("{base}/_control/"))]);
            }
            (Transport::Stdio, None) => {}
            (transport, Some(base)) => {
                let (name, url) = match transport {
                    Transport::Sse => ("sse", format!("{base}/sse")),
                    _ => ("http", format!("{base}/mcp")),
                };
                event_line(&[
                    ("event", "listening"),
                    ("transport", name),
                    ("url", &url),
                    ("base_url", &base),
                ]);
            }
            (_, None) => {}
        }
        if self.transport == Transport::Stdio && std::io::stdin().is_terminal() {
            eprintln!(
                "everything-mcp: serving MCP on stdio; type JSON-RPC lines or connect a client (Ctrl-D to end)"
            );
        }
    }

    /// Serves until the command is done: stdio until stdin ends, HTTP until [`Self::shutdown`]
    /// is cancelled. Runs on [`Self::handle`].
    pub fn serving(&self) -> Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'static>> {
        match self.transport {
            Transport::Stdio => Box::pin(stdio::serve_stdio(
                self.server.clone(),
                self.shutdown.child_token(),
            )),
            Transport::Http | Transport::Sse => {
                let stop = self.shutdown.clone();
                Box::pin(async move {
                    stop.cancelled().await;
                    Ok(())
                })
            }
        }
    }

    /// Serves until done or until `interrupted` ends (then gives stdio [`STOP_TIMEOUT`] to
    /// finish its answers), and stops.
    pub fn run_until(self, interrupted: impl Future<Output = ()> + Send) -> std::io::Result<()> {
        let mut serving = self.runtime.spawn(self.serving());
        let served = self.runtime.block_on(async {
            tokio::select! {
                done = &mut serving => Some(done),
                () = interrupted => None,
            }
        });
        let result = match served {
            Some(done) => done.unwrap_or(Ok(())),
            None => {
                self.shutdown.cancel();
                let drained = self
                    .runtime
                    .block_on(async { tokio::time::timeout(STOP_TIMEOUT, &mut serving).await });
                if drained.is_err() {
                    serving.abort();
                }
                Ok(())
            }
        };
        self.stop();
        result
    }

    /// Ends every transport, waits (bounded) for the HTTP listener to let go of its port, then
    /// for the runtime; every record is on disk when it returns.
    pub fn stop(self) {
        self.shutdown.cancel();
        if let Some((_, task)) = self.http {
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(STOP_TIMEOUT, task).await });
        }
        self.runtime.shutdown_timeout(STOP_TIMEOUT);
        self.server.recorder.flush();
    }
}

/// One JSON object of string members on stderr, spaced as Python's `json.dumps` spaces it (what
/// the CLI always printed).
fn event_line(members: &[(&str, &str)]) {
    let body: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}: {}", Value::from(*k), Value::from(*v)))
        .collect();
    eprintln!("{{{}}}", body.join(", "));
}
