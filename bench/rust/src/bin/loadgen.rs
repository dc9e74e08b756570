//! `loadgen`: an MCP-aware load generator for the HTTP and stdio transports.
//!
//! Modes: `http` (echo `tools/call` throughput and latency over keep-alive connections; with
//! `--stateless`, as a 2026-07-28 client: no handshake, every POST carries the 2026 headers and
//! the `_meta` envelope, and only a `resultType: "complete"` answer counts as a success),
//! `initialize` (session creation rate; the sessions are left open so the caller can
//! measure memory per idle session) and `stdio` (pipelined echo calls to a child process).
//! In the HTTP modes, `--bearer TOKEN` sends `Authorization: Bearer TOKEN` on every request, for
//! a server behind the auth lab's bearer mode (`--auth bearer --token TOKEN`).
//! `--tool NAME` calls another echo-shaped tool (`{"message"}` in, its text out), e.g. a Python
//! one registered beside the built-in `echo` (`bench.python_handlers`).
//! It prints exactly one JSON object on stdout; diagnostics go to stderr.

use std::collections::HashMap;
use std::fmt::Display;
use std::process::{ExitCode, Stdio};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// mimalloc, as in the server: the load generator shares the machine's two cores with the server; it allocates little and fast.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter, Lines};
use tokio::net::TcpStream;
use tokio::process::{ChildStdin, ChildStdout, Command};

/// Any error; they all end up as one line on stderr.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The handshake's first request; it uses id 0, so the calls count from 1.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"loadgen","version":"1"}}}"#;
/// The notification that completes the handshake.
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// Shown when the command line makes no sense.
const USAGE: &str = "usage: loadgen http --url URL --connections C (--duration S [--warmup S] | --count N) [--no-handshake | --stateless] [--message T] [--tool NAME] [--bearer TOKEN]\n       loadgen initialize --url URL --connections C --count K [--bearer TOKEN]\n       loadgen stdio --count N [--warmup W] -- CMD ARGS...";

/// Request ids for `tools/call`, unique across all workers.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Set once the first failed request has been described on stderr (later ones are only counted).
static ERROR_REPORTED: AtomicBool = AtomicBool::new(false);

/// Describes the first failure on stderr, so a broken run is diagnosable without flooding it.
fn report_once(what: impl Display) {
    if !ERROR_REPORTED.swap(true, Ordering::Relaxed) {
        eprintln!("loadgen: first error: {what}");
    }
}

/// The command line, split once: the mode word, `--name value` options, and what follows `--`.
struct Args {
    mode: String,
    opts: HashMap<String, String>,
    no_handshake: bool,
    /// `--stateless`: speak the 2026-07-28 era (no handshake, the envelope on every request).
    stateless: bool,
    command: Vec<String>,
}

impl Args {
    /// Parses by hand; the grammar is too small to be worth an argument-parsing crate.
    fn parse() -> Result<Self, BoxError> {
        let mut it = std::env::args().skip(1);
        let mode = it.next().ok_or(USAGE)?;
        let (mut opts, mut no_handshake, mut command) = (HashMap::new(), false, Vec::new());
        let mut stateless = false;
        while let Some(arg) = it.next() {
            match arg.strip_prefix("--") {
                Some("") => {
                    command = it.by_ref().collect();
                }
                Some("no-handshake") => no_handshake = true,
                Some("stateless") => stateless = true,
                Some(name) => {
                    let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                    opts.insert(name.to_string(), value);
                }
                None => return Err(format!("unexpected argument {arg:?}\n{USAGE}").into()),
            }
        }
        Ok(Self {
            mode,
            opts,
            no_handshake,
            stateless,
            command,
        })
    }

    /// The value of `--name`, or `default` when it is absent (`None` makes it required).
    fn get<T: FromStr>(&self, name: &str, default: Option<T>) -> Result<T, BoxError> {
        match self.opts.get(name) {
            Some(v) => v
                .parse()
                .map_err(|_| format!("bad value for --{name}: {v:?}").into()),
            None => default.ok_or_else(|| format!("--{name} is required\n{USAGE}").into()),
        }
    }
}

/// The body of one echo `tools/call` of `tool` (`--tool`, default `echo`); `tool` and `message`
/// are already JSON-encoded.
fn echo_call(id: u64, tool: &str, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{tool},"arguments":{{"message":{message}}}}}}}"#
    )
}

/// The same call as a stateless (2026-07-28) request: the envelope in `params._meta`.
fn stateless_echo_call(id: u64, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":{message}}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"loadgen","version":"1"}}}}}}}}"#
    )
}

/// The headers of a stateless `tools/call echo`: the version, and the method and name the
/// 2026 HTTP rules mirror from the body.
fn stateless_headers() -> SessionHeaders {
    vec![
        (
            HeaderName::from_static("mcp-protocol-version"),
            HeaderValue::from_static("2026-07-28"),
        ),
        (
            HeaderName::from_static("mcp-method"),
            HeaderValue::from_static("tools/call"),
        ),
        (
            HeaderName::from_static("mcp-name"),
            HeaderValue::from_static("echo"),
        ),
    ]
}

/// Where the server listens, split from the URL once, and the credentials it asks for.
struct Target {
    authority: String,
    host: HeaderValue,
    path: String,
    /// `Authorization: Bearer TOKEN` from `--bearer`, built once: a request only clones it (a
    /// reference count), so an A/B with and without it measures the server's check, not the
    /// client formatting the header.
    authorization: Option<HeaderValue>,
}

impl Target {
    /// The server of `--url` (`http://host:port/path` only: the benchmarks never use TLS),
    /// with `--bearer` when given.
    fn from_args(args: &Args) -> Result<Arc<Self>, BoxError> {
        let url: String = args.get("url", None)?;
        let rest = url
            .strip_prefix("http://")
            .ok_or("only http:// URLs are supported")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        let host = HeaderValue::from_str(authority)?;
        let authorization = match args.opts.get("bearer") {
            Some(token) => Some(
                HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| format!("bad value for --bearer: {token:?}"))?,
            ),
            None => None,
        };
        Ok(Arc::new(Self {
            authority: authority.into(),
            host,
            path: path.into(),
            authorization,
        }))
    }
}

/// A finished HTTP exchange, with the whole body read.
struct Reply {
    status: StatusCode,
    session: Option<HeaderValue>,
    body: Bytes,
}

impl Reply {
    /// A JSON-RPC success: status 200 and a response object carrying `"result"`, not a tool's
    /// `"isError":true` one (a Python handler that raised answers that way).
    fn ok(&self) -> bool {
        let payload = response_payload(&self.body);
        self.status == StatusCode::OK
            && contains(payload, b"\"result\"")
            && !contains(payload, b"\"isError\":true")
    }

    /// A success that also carries `marker` (a stateless result's `"resultType":"complete"`).
    fn ok_with(&self, marker: Option<&[u8]>) -> bool {
        self.ok() && marker.is_none_or(|m| contains(response_payload(&self.body), m))
    }

    /// Status and the start of the body, for error messages.
    fn describe(&self) -> String {
        let head = &self.body[..self.body.len().min(200)];
        format!(
            "status {} body {:?}",
            self.status,
            String::from_utf8_lossy(head)
        )
    }
}

/// Whether `needle` occurs in `hay`; the bodies are small, so a naive scan is enough.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The JSON-RPC response inside a body: the body itself for `application/json`, or for
/// SSE the `data:` line holding an object with `"id"` (priming events have empty data).
fn response_payload(body: &[u8]) -> &[u8] {
    if body.trim_ascii_start().starts_with(b"{") {
        return body;
    }
    body.split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .map(<[u8]>::trim_ascii)
        .find(|data| data.starts_with(b"{") && contains(data, b"\"id\""))
        .unwrap_or_default()
}

/// One keep-alive HTTP/1.1 connection owned by one worker, reopened when the server closes it.
struct Conn {
    target: Arc<Target>,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    /// Connects up front, so a refused connection is fatal before any measurement starts.
    async fn open(target: &Arc<Target>) -> Result<Self, BoxError> {
        let sender = Some(connect(&target.authority).await?);
        Ok(Self {
            target: target.clone(),
            sender,
        })
    }

    /// POSTs `body` with the MCP headers (and the target's `Authorization`) plus `extra`, and
    /// reads the whole response. A reused connection that turns out to be closed is replaced
    /// and the request retried once.
    async fn post(
        &mut self,
        body: &Bytes,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<Reply, BoxError> {
        for attempt in 0.. {
            let fresh = match self.sender.as_mut() {
                Some(s) => s.ready().await.is_err(),
                None => true,
            };
            if fresh {
                self.sender = Some(connect(&self.target.authority).await?);
            }
            let mut req = Request::post(&self.target.path)
                .header(HOST, self.target.host.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream");
            if let Some(value) = &self.target.authorization {
                req = req.header(AUTHORIZATION, value.clone());
            }
            for (name, value) in extra {
                req = req.header(name, value);
            }
            let req = req.body(Full::new(body.clone()))?;
            let sender = self.sender.as_mut().expect("connected above");
            match sender.send_request(req).await {
                Ok(resp) => {
                    let status = resp.status();
                    let session = resp.headers().get("mcp-session-id").cloned();
                    let body = resp.into_body().collect().await;
                    let body = body.inspect_err(|_| self.sender = None)?;
                    return Ok(Reply {
                        status,
                        session,
                        body: body.to_bytes(),
                    });
                }
                Err(_) if !fresh && attempt == 0 => self.sender = None,
                Err(e) => {
                    self.sender = None;
                    return Err(e.into());
                }
            }
        }
        unreachable!("the loop returns on its second attempt")
    }
}

/// Opens a TCP connection (no Nagle delay) and runs the HTTP/1.1 client handshake on it.
async fn connect(authority: &str) -> Result<SendRequest<Full<Bytes>>, BoxError> {
    let tcp = TcpStream::connect(authority).await?;
    tcp.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

/// Headers every request after the handshake carries.
type SessionHeaders = Vec<(HeaderName, HeaderValue)>;

/// initialize + notifications/initialized on `conn`. Returns the session headers for
/// later requests and the latency of the initialize request.
async fn handshake(conn: &mut Conn) -> Result<(SessionHeaders, Duration), BoxError> {
    let start = Instant::now();
    let reply = conn
        .post(&Bytes::from_static(INITIALIZE.as_bytes()), &[])
        .await?;
    let latency = start.elapsed();
    if !reply.ok() {
        return Err(format!("initialize failed: {}", reply.describe()).into());
    }
    let headers = session_headers(reply.session);
    let reply = conn
        .post(&Bytes::from_static(INITIALIZED.as_bytes()), &headers)
        .await?;
    if !matches!(reply.status, StatusCode::OK | StatusCode::ACCEPTED) {
        return Err(format!("notifications/initialized failed: {}", reply.describe()).into());
    }
    Ok((headers, latency))
}

/// The protocol version header, plus the session id when the server issued one.
fn session_headers(session: Option<HeaderValue>) -> SessionHeaders {
    let mut headers = vec![(
        HeaderName::from_static("mcp-protocol-version"),
        HeaderValue::from_static("2025-11-25"),
    )];
    headers.extend(session.map(|s| (HeaderName::from_static("mcp-session-id"), s)));
    headers
}

/// What one worker measured: latencies of successful requests in microseconds, and failures.
#[derive(Default)]
struct Stats {
    latencies_us: Vec<u32>,
    errors: u64,
}

impl Stats {
    /// Records one finished request (its latency only when it succeeded, i.e. answered with a
    /// result carrying `marker`, if given).
    fn record(
        &mut self,
        result: Result<Reply, BoxError>,
        latency: Duration,
        marker: Option<&[u8]>,
    ) {
        match result {
            Ok(reply) if reply.ok_with(marker) => self.latencies_us.push(micros(latency)),
            Ok(reply) => {
                report_once(reply.describe());
                self.errors += 1;
            }
            Err(e) => {
                report_once(e);
                self.errors += 1;
            }
        }
    }
}

/// A duration in whole microseconds, saturating (a u32 holds over an hour).
fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// Merges the workers' stats; the latencies come back sorted for `percentile`.
async fn join_all(workers: Vec<tokio::task::JoinHandle<Stats>>) -> Result<Stats, BoxError> {
    let mut all = Stats::default();
    for w in workers {
        let s = w.await?;
        all.latencies_us.extend(s.latencies_us);
        all.errors += s.errors;
    }
    all.latencies_us.sort_unstable();
    Ok(all)
}

/// The `p`-quantile (0..=1) of sorted microsecond latencies, in milliseconds.
fn percentile(sorted_us: &[u32], p: f64) -> f64 {
    let Some(last) = sorted_us.len().checked_sub(1) else {
        return 0.0;
    };
    let rank = ((p * sorted_us.len() as f64).ceil() as usize)
        .saturating_sub(1)
        .min(last);
    round3(f64::from(sorted_us[rank]) / 1000.0)
}

/// Three decimals are plenty for the report and keep the JSON readable.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// `http` mode: C workers, one connection each, looping echo calls. With `--duration`, only
/// requests that finish inside [warmup, warmup + duration] count; with `--count N`, the workers
/// share a budget of N calls and all of them count (the memory benchmark needs exact totals).
async fn http_mode(args: &Args) -> Result<Value, BoxError> {
    let target = Target::from_args(args)?;
    let connections: usize = args.get("connections", None)?;
    let budget: Option<u64> = args
        .get::<u64>("count", Some(0))
        .map(|n| (n > 0).then_some(n))?;
    let (warmup, duration) = match budget {
        Some(_) => (Duration::ZERO, Duration::from_secs(3600)),
        None => (
            Duration::from_secs_f64(args.get("warmup", Some(1.0))?),
            Duration::from_secs_f64(args.get("duration", None)?),
        ),
    };
    let message: Arc<str> =
        serde_json::to_string(&args.get("message", Some("hello".to_string()))?)?.into();
    let tool: Arc<str> =
        serde_json::to_string(&args.get("tool", Some("echo".to_string()))?)?.into();
    let stateless = args.stateless;
    if stateless && &*tool != "\"echo\"" {
        return Err("--tool is for the handshake era only".into());
    }
    let headers = Arc::new(if stateless {
        stateless_headers()
    } else if args.no_handshake {
        session_headers(None)
    } else {
        handshake(&mut Conn::open(&target).await?).await?.0
    });
    let mut conns = Vec::with_capacity(connections);
    for _ in 0..connections {
        conns.push(Conn::open(&target).await?);
    }
    let taken = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let window_start = started + warmup;
    let window_end = window_start + duration;
    let workers = conns.into_iter().map(|mut conn| {
        let (headers, message, taken) = (headers.clone(), message.clone(), taken.clone());
        let tool = tool.clone();
        tokio::spawn(async move {
            let mut stats = Stats::default();
            while Instant::now() < window_end
                && budget.is_none_or(|n| taken.fetch_add(1, Ordering::Relaxed) < n)
            {
                let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
                let body = Bytes::from(if stateless {
                    stateless_echo_call(id, &message)
                } else {
                    echo_call(id, &tool, &message)
                });
                let start = Instant::now();
                let result = conn.post(&body, &headers).await;
                let end = Instant::now();
                if result.is_err() {
                    // The server is gone or refusing: do not spin on reconnects.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                if (window_start..=window_end).contains(&end) {
                    let marker: Option<&[u8]> =
                        stateless.then_some(br#""resultType":"complete""#.as_slice());
                    stats.record(result, end - start, marker);
                } else if let Err(e) = result {
                    report_once(e);
                }
            }
            stats
        })
    });
    let stats = join_all(workers.collect()).await?;
    let lat = &stats.latencies_us;
    let seconds = match budget {
        Some(_) => started.elapsed().as_secs_f64(),
        None => duration.as_secs_f64(),
    };
    Ok(json!({
        "mode": "http", "stateless": stateless, "connections": connections, "requests": lat.len(), "errors": stats.errors,
        "seconds": round3(seconds), "rps": round3(lat.len() as f64 / seconds),
        "p50_ms": percentile(lat, 0.5), "p90_ms": percentile(lat, 0.9),
        "p99_ms": percentile(lat, 0.99), "max_ms": percentile(lat, 1.0),
    }))
}

/// `initialize` mode: K full handshakes spread over C connections; the sessions are
/// deliberately left open.
async fn initialize_mode(args: &Args) -> Result<Value, BoxError> {
    let target = Target::from_args(args)?;
    let connections: usize = args.get("connections", None)?;
    let count: u64 = args.get("count", None)?;
    let mut conns = Vec::with_capacity(connections);
    for _ in 0..connections {
        conns.push(Conn::open(&target).await?);
    }
    let taken = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers = conns.into_iter().map(|mut conn| {
        let taken = taken.clone();
        tokio::spawn(async move {
            let mut stats = Stats::default();
            while taken.fetch_add(1, Ordering::Relaxed) < count {
                match handshake(&mut conn).await {
                    Ok((_, latency)) => stats.latencies_us.push(micros(latency)),
                    Err(e) => {
                        report_once(e);
                        stats.errors += 1;
                    }
                }
            }
            stats
        })
    });
    let stats = join_all(workers.collect()).await?;
    let seconds = start.elapsed().as_secs_f64();
    let lat = &stats.latencies_us;
    Ok(json!({
        "mode": "initialize", "connections": connections, "sessions": lat.len(), "errors": stats.errors,
        "seconds": round3(seconds), "per_second": round3(lat.len() as f64 / seconds),
        "p50_ms": percentile(lat, 0.5), "p99_ms": percentile(lat, 0.99),
    }))
}

/// The child's stdout, read line by line (newline-delimited JSON-RPC).
type ChildLines = Lines<BufReader<ChildStdout>>;

/// Writes echo calls `first..first + n` from a separate task while this one reads the
/// responses; returns stdin (for the next batch) and the (ok, error) counts.
async fn pipelined_batch(
    mut stdin: BufWriter<ChildStdin>,
    lines: &mut ChildLines,
    first: u64,
    n: u64,
    message: Arc<str>,
) -> Result<(BufWriter<ChildStdin>, u64, u64), BoxError> {
    let writer = tokio::spawn(async move {
        for id in first..first + n {
            let mut line = echo_call(id, "\"echo\"", &message);
            line.push('\n');
            stdin.write_all(line.as_bytes()).await?;
        }
        stdin.flush().await?;
        Ok::<_, std::io::Error>(stdin)
    });
    let (mut ok, mut errors) = (0, 0);
    while ok + errors < n {
        let line = lines
            .next_line()
            .await?
            .ok_or("the server closed its stdout")?;
        // Responses carry "id"; notifications (and server requests, which carry "method") do not count.
        if !line.contains("\"id\"") || line.contains("\"method\"") {
            continue;
        }
        if line.contains("\"result\"") {
            ok += 1;
        } else {
            report_once(&line);
            errors += 1;
        }
    }
    Ok((writer.await??, ok, errors))
}

/// `stdio` mode: handshake, W warm-up calls, then N pipelined calls timed until the
/// last response; then stdin is closed and the child reaped (killed after 5 s).
async fn stdio_mode(args: &Args) -> Result<Value, BoxError> {
    let count: u64 = args.get("count", None)?;
    let warmup: u64 = args.get("warmup", Some(1000))?;
    let message: Arc<str> =
        serde_json::to_string(&args.get("message", Some("hello".to_string()))?)?.into();
    let (program, rest) = args.command.split_first().ok_or(USAGE)?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))?;
    let mut stdin = BufWriter::with_capacity(1 << 16, child.stdin.take().expect("piped"));
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    stdin
        .write_all(format!("{INITIALIZE}\n").as_bytes())
        .await?;
    stdin.flush().await?;
    loop {
        let line = lines
            .next_line()
            .await?
            .ok_or("the server exited before answering initialize")?;
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v.get("id") == Some(&json!(0)) {
            if v.get("result").is_none() {
                return Err(format!("initialize failed: {line}").into());
            }
            break;
        }
    }
    stdin
        .write_all(format!("{INITIALIZED}\n").as_bytes())
        .await?;
    stdin.flush().await?;
    let (stdin, _, _) = pipelined_batch(stdin, &mut lines, 1, warmup, message.clone()).await?;
    let start = Instant::now();
    let (stdin, ok, errors) =
        pipelined_batch(stdin, &mut lines, warmup + 1, count, message).await?;
    let seconds = start.elapsed().as_secs_f64();
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .is_err()
    {
        eprintln!("loadgen: the server did not exit within 5 s of stdin closing; killing it");
        child.kill().await?;
    }
    Ok(json!({
        "mode": "stdio", "requests": ok, "errors": errors,
        "seconds": round3(seconds), "rps": round3(ok as f64 / seconds),
    }))
}

/// Dispatches on the mode; the single JSON result line is the only thing on stdout.
#[tokio::main]
async fn main() -> ExitCode {
    let result = match Args::parse() {
        Ok(args) => match args.mode.as_str() {
            "http" => http_mode(&args).await,
            "initialize" => initialize_mode(&args).await,
            "stdio" => stdio_mode(&args).await,
            other => Err(format!("unknown mode {other:?}\n{USAGE}").into()),
        },
        Err(e) => Err(e),
    };
    match result {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}
