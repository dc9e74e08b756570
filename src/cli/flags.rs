//! Every flag of the `stdio`, `http` and `sse` commands, written once, for both the native
//! command and `python -m everything_mcp` (which hands these commands to the core).
//!
//! A flag that sets a server or HTTP option is a field named after the option
//! ([`ServerOptions`](crate::options::ServerOptions), [`HttpOptions`](crate::options::HttpOptions)):
//! the flags given are serialized under those names and read by the options' own parser, so a
//! flag adds no second list of options to keep in step. A test checks that every option has
//! its flag. Defaults are the options' own, appended to each flag's help from
//! [`crate::options::defaults`] ([`with_defaults`]).

use crate::catalog;
use crate::protocol::{EraChoice, Revision};
use clap::builder::PossibleValuesParser;
use clap::{ArgAction, Args};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Log levels `--log-level` takes (and `warning`, read as `warn`).
pub const LOG_LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// The flags of every serving command: one per server option, and those only the command line
/// has (the log level, the fault files and presets).
#[derive(Args, Debug, Clone, Default, Serialize)]
pub struct ServerFlags {
    /// append every frame in and out to FILE as JSON lines
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<PathBuf>,
    /// keep the newest N records in memory for the control API's GET /_control/traffic
    /// (default: 0, none; 100,000 with the lab page)
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_traffic: Option<usize>,
    /// and no more than BYTES of them: the oldest are dropped first, and counted
    /// (GET /_control/traffic/stats)
    #[arg(long, value_name = "BYTES", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_traffic_bytes: Option<usize>,
    /// put a named fault preset in force (repeatable): flaky-network, slow-server,
    /// version-skew, ignore-cancel
    #[arg(long = "faults-preset", value_name = "NAME", action = ArgAction::Append)]
    #[serde(skip)]
    pub faults_preset: Vec<String>,
    /// the seed of the presets that draw (default: 0)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64))]
    #[serde(skip)]
    pub faults_seed: Option<u64>,
    /// put the fault rules of FILE in force (a JSON array of rules, or {"rules": [...]};
    /// docs/faults.md)
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub faults: Option<PathBuf>,
    /// diagnostics on stderr: off, error, warn, info, debug, trace (default: warn)
    #[arg(long, value_name = "LEVEL", value_parser = log_level, default_value = "warn",
          hide_default_value = true)]
    #[serde(skip)]
    pub log_level: String,
    /// speak like this peer where peers differ: python-sdk, typescript-sdk, reference
    /// (docs/dialects.md)
    #[arg(long, value_name = "NAME",
          value_parser = PossibleValuesParser::new(crate::protocol::Dialect::NAMES))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// accept only this protocol revision, repeatable (default: all)
    #[arg(long = "revision", value_name = "REV", action = ArgAction::Append,
          value_parser = PossibleValuesParser::new(Revision::ALL.map(|r| r.as_str())))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Vec<String>>,
    /// serve the handshake era (2024-11-05 … 2025-11-25), the stateless era (2026-07-28) or
    /// both side by side; narrows --revision
    #[arg(long, value_parser = PossibleValuesParser::new(EraChoice::NAMES))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    /// items per */list page (default: one page)
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<usize>,
    /// largest accepted frame or HTTP body in bytes; larger ones are refused
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_message_bytes: Option<usize>,
    /// most server-to-client requests awaiting an answer per connection (default: 1024); one
    /// more fails at once, naming this option
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_pending_requests: Option<usize>,
    /// most tasks kept at once (default: 10000); a task-augmented call beyond it is refused
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tasks: Option<usize>,
    /// most open subscriptions/listen streams in all (default: 1024)
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_listen_streams: Option<usize>,
    /// serverInfo.name
    #[arg(long = "server-name", value_name = "NAME")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// serverInfo.title (default: ours, none with a --server-name of your own)
    #[arg(long = "server-title", value_name = "TITLE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// serverInfo.version
    #[arg(long = "server-version", value_name = "VERSION")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// the instructions of the initialize result (default: the catalog's)
    #[arg(long, value_name = "TEXT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// threads of the server's runtime
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_threads: Option<usize>,
    /// interval of every periodic catalog timer (and of the everything catalog's task stages
    /// and polls), instead of the reference's 1-15 s
    #[arg(long = "tick-ms", value_name = "MS", value_parser = millis)]
    #[serde(skip_serializing_if = "unset_tick")]
    pub tick: Option<Millis>,
    /// review-lab: seconds from a subscription to the update ($MCP_TEST_UPDATE_DELAY_SECONDS)
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_delay: Option<f64>,
    /// review-lab: also send resources/list_changed with the update
    /// ($MCP_TEST_SEND_LIST_CHANGED=true)
    #[arg(long = "send-list-changed", overrides_with = "no_send_list_changed")]
    #[serde(skip)]
    pub send_list_changed: bool,
    /// review-lab: do not send resources/list_changed with the update
    #[arg(long = "no-send-list-changed", overrides_with = "send_list_changed")]
    #[serde(skip)]
    pub no_send_list_changed: bool,
    /// apps catalog: who sees the views' _meta.ui and the app-only tools: gate (a host that
    /// declared the UI extension), always, off
    #[arg(long, value_parser = ["gate", "always", "off"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apps: Option<String>,
    /// get-env/printEnv show secret-looking variables instead of <redacted>
    #[arg(long)]
    #[serde(skip_serializing_if = "is_false")]
    pub expose_env: bool,
    /// how long a task is kept after it is created or settles, in seconds
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_ttl: Option<f64>,
    /// the pollInterval suggested to clients polling a task, in seconds
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_poll_interval: Option<f64>,
    /// the clock every timer runs on: real, or manual, moved only by
    /// POST /_control/clock/advance (docs/clock.md)
    #[arg(long, value_parser = ["real", "manual"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// catalogs to serve, comma-separated or repeated
    #[arg(long = "catalog", value_name = "NAMES", action = ArgAction::Append, value_delimiter = ',',
          value_parser = PossibleValuesParser::new(catalog::names()))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalogs: Option<Vec<String>>,
}

impl ServerFlags {
    /// The server options given, by name (the rest take the core's defaults): what
    /// [`crate::options::parse`] reads. The review lab's environment variables stand in for
    /// their flags.
    pub fn options(&self) -> Map<String, Value> {
        let mut given = to_map(self);
        let list_changed = match (self.send_list_changed, self.no_send_list_changed) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => std::env::var("MCP_TEST_SEND_LIST_CHANGED")
                .ok()
                .map(|v| v.eq_ignore_ascii_case("true")),
        };
        if let Some(on) = list_changed {
            given.insert("send_list_changed".into(), on.into());
        }
        if self.update_delay.is_none() {
            let delay = std::env::var("MCP_TEST_UPDATE_DELAY_SECONDS").ok();
            if let Some(delay) = delay.and_then(|d| d.trim().parse::<f64>().ok()) {
                given.insert("update_delay".into(), delay.into());
            }
        }
        given
    }
}

/// The flags of the HTTP listener (`http`, `sse`): its address and one per HTTP option.
#[derive(Args, Debug, Clone, Default, Serialize)]
pub struct HttpFlags {
    /// address to bind
    #[arg(long)]
    #[serde(skip)]
    pub host: Option<String>,
    /// port to bind; 0 picks a free one (default: $PORT or 3001)
    #[arg(long, value_parser = port)]
    #[serde(skip)]
    pub port: Option<u16>,
    /// fail if the port is busy instead of trying the next 20
    #[arg(long)]
    #[serde(skip_serializing_if = "is_false")]
    pub strict_port: bool,
    /// answer POSTed requests with application/json instead of an SSE stream
    #[arg(long)]
    #[serde(skip_serializing_if = "is_false")]
    pub json_response: bool,
    /// also accept this Host (DNS-rebinding guard; repeatable; * for any)
    #[arg(long = "allow-host", value_name = "HOST", action = ArgAction::Append)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_hosts: Option<Vec<String>>,
    /// also accept this Origin, e.g. https://app.example (repeatable; * for any)
    #[arg(long = "allow-origin", value_name = "ORIGIN", action = ArgAction::Append)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_origins: Option<Vec<String>>,
    /// most concurrent sessions
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<usize>,
    /// end sessions idle this many seconds; 0 never
    #[arg(long = "session-timeout", value_name = "SECONDS", value_parser = seconds,
          allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_idle_timeout: Option<f64>,
    /// SSE events kept per session for Last-Event-ID resumption
    #[arg(long = "event-store", value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_store_capacity: Option<usize>,
    /// and no more than BYTES of them per session (default: 16 MiB)
    #[arg(long, value_name = "BYTES", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_store_bytes: Option<usize>,
    /// bytes an SSE stream's reader may fall behind before the stream is dropped (default:
    /// 16 MiB)
    #[arg(long, value_name = "BYTES", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_buffer_bytes: Option<usize>,
    /// most live SSE streams per session (default: 256); one more gets 503
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_streams_per_session: Option<usize>,
    /// most live SSE streams in all (default: 10000); one more gets 503
    #[arg(long, value_name = "N", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_streams: Option<usize>,
    /// most bytes of records one control API traffic read answers (default: 16 MiB); the rest
    /// with the next since
    #[arg(long, value_name = "BYTES", value_parser = count)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_read_bytes: Option<usize>,
    /// the reconnection delay sent with each POST stream's first event, in seconds
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sse_retry: Option<f64>,
    /// interval of keepalive comments on open SSE streams, in seconds
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keepalive: Option<f64>,
    /// answer GET /mcp with 405 instead of opening a standalone SSE stream
    #[arg(long = "no-standalone-stream", action = ArgAction::SetFalse)]
    #[serde(skip_serializing_if = "is_true")]
    pub standalone_stream: bool,
    /// do not serve the control API at /_control/ (docs/control-api.md)
    #[arg(long = "no-control", action = ArgAction::SetFalse)]
    #[serde(skip_serializing_if = "is_true")]
    pub control: bool,
    /// every control API call must carry Authorization: Bearer TOKEN
    #[arg(long, value_name = "TOKEN")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_token: Option<String>,
    /// protect the MCP endpoints: static bearer tokens (--token), or OAuth with the built-in
    /// authorization server (docs/auth.md)
    #[arg(long, value_parser = ["none", "bearer", "oauth"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// with --auth bearer: a token accepted (repeatable)
    #[arg(long = "token", value_name = "T", action = ArgAction::Append)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Vec<String>>,
    /// with --auth oauth: a scope the server knows and asks for (repeatable)
    #[arg(long = "scope", value_name = "S", action = ArgAction::Append)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    /// with --auth oauth: access tokens' lifetime in seconds
    #[arg(long, value_name = "S", value_parser = seconds,
          allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_ttl: Option<f64>,
    /// with --auth oauth: calling TOOL needs SCOPE beyond the --scope ones (403
    /// insufficient_scope: scope step-up; repeatable)
    #[arg(long = "tool-scope", value_name = "TOOL=SCOPE", action = ArgAction::Append, value_parser = tool_scope)]
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "as_map")]
    pub tool_scopes: Vec<(String, Value)>,
    /// with --auth oauth: the issuer's path after the listener's base (/tenant1): its metadata
    /// is found by path insertion, its endpoints are under it
    #[arg(long, value_name = "PATH")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer_path: Option<String>,
    /// with --auth oauth: serve the protected resource's metadata at this path too, and name
    /// it in the 401 challenge
    #[arg(long, value_name = "PATH")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_metadata_path: Option<String>,
    /// with --auth oauth: a pre-registered client: ID:SECRET (client credentials, HTTP Basic)
    /// or its metadata as JSON with its client_id (repeatable)
    #[arg(long = "client", value_name = "ID:SECRET|JSON", action = ArgAction::Append, value_parser = client)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<Vec<Value>>,
    /// with --auth oauth: the Client ID Metadata Document of the client whose id is URL, read
    /// from FILE (repeatable; only loopback URLs are fetched)
    #[arg(long = "client-document", value_name = "URL=FILE", action = ArgAction::Append,
          value_parser = client_document)]
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "as_map")]
    pub client_documents: Vec<(String, Value)>,
    /// with --auth oauth: approve authorization requests at once (auto, the default) or ask a
    /// person on a page
    #[arg(long, value_parser = ["auto", "page"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consent: Option<String>,
    /// serve the live lab page at /_lab/ (default: when bound to loopback; docs/report.md);
    /// it keeps the newest 100,000 records in memory (within --keep-traffic-bytes) unless
    /// --keep-traffic says otherwise
    #[arg(long = "lab", overrides_with = "no_lab")]
    #[serde(skip)]
    pub lab_on: bool,
    /// do not serve the live lab page
    #[arg(long = "no-lab", overrides_with = "lab_on")]
    #[serde(skip)]
    pub no_lab: bool,
}

impl HttpFlags {
    /// The HTTP options given, by name (the rest take the core's defaults).
    pub fn options(&self) -> Map<String, Value> {
        let mut given = to_map(self);
        if let Some(lab) = self.lab() {
            given.insert("lab".into(), lab.into());
        }
        given
    }

    /// `--lab` / `--no-lab`, the last given; `None`: neither.
    pub fn lab(&self) -> Option<bool> {
        match (self.lab_on, self.no_lab) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

/// The flags only `stdio` has: its control API's listener.
#[derive(Args, Debug, Clone, Default)]
pub struct StdioFlags {
    /// also serve the control API on 127.0.0.1:N (0: any free port; announced on stderr)
    #[arg(long, value_name = "N", value_parser = port)]
    pub control_port: Option<u16>,
    /// with --control-port: every control API call must carry Authorization: Bearer TOKEN
    #[arg(long = "control-token", value_name = "TOKEN")]
    pub control_token: Option<String>,
}

/// The flags only `replay` has: the recordings, where to serve them, and how requests are
/// matched (fields named after [`ReplayOptions`](crate::options::ReplayOptions)'s).
#[derive(Args, Debug, Clone, Default, Serialize)]
pub struct ReplayFlags {
    /// the recordings to answer from (--record files), read in this order
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// serve Streamable HTTP at /mcp (and legacy SSE at /sse) instead of stdio
    #[arg(long, conflicts_with = "sse")]
    #[serde(skip)]
    pub http: bool,
    /// serve the legacy HTTP+SSE transport at /sse (and Streamable HTTP at /mcp) instead of stdio
    #[arg(long)]
    #[serde(skip)]
    pub sse: bool,
    /// on stdio: also serve the control API on 127.0.0.1:N (0: any free port; announced on
    /// stderr)
    #[arg(long, value_name = "N", value_parser = port)]
    #[serde(skip)]
    pub control_port: Option<u16>,
    /// also leave this path of a request out of the matching (a JSON Pointer, `*` for any
    /// segment; repeatable), besides /id and /params/_meta
    #[arg(long, value_name = "PATH", action = ArgAction::Append)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<String>,
    /// match ids and _meta too (only --ignore paths are left out)
    #[arg(long)]
    #[serde(skip)]
    pub exact: bool,
    /// any: a request takes the first unused recording that matches it; recorded: requests
    /// must come in the recorded order
    #[arg(long, value_parser = ["any", "recorded"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// answer a request whose recorded answers were all given with an error, rather than the
    /// last of them again
    #[arg(long = "no-repeat", action = ArgAction::SetFalse, default_value_t = true)]
    #[serde(skip_serializing_if = "is_true")]
    pub repeat: bool,
    /// the real server to record from: a command line (spoken to over stdio) or a Streamable
    /// HTTP URL
    #[arg(long, value_name = "URL|CMD")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// when the real server is asked: none (never), once (when the recording does not exist
    /// yet), new_episodes (for what the recording lacks, appended), all (always, written anew)
    #[arg(long, value_name = "MODE", value_parser = ["none", "once", "new_episodes", "all"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_mode: Option<String>,
}

impl ReplayFlags {
    /// The replay options given, by name: `--ignore` adds to the default paths unless
    /// `--exact`.
    pub fn options(&self) -> Map<String, Value> {
        let mut given = to_map(self);
        if !self.exact && !self.ignore.is_empty() {
            let defaults = crate::replay::matching::DEFAULT_IGNORE
                .iter()
                .map(|p| p.to_string());
            let ignore: Vec<String> = defaults.chain(self.ignore.iter().cloned()).collect();
            given.insert("ignore".into(), ignore.into());
        }
        if self.exact {
            given.insert("ignore".into(), self.ignore.clone().into());
        }
        given
    }
}

/// The flags of `verify`.
#[derive(Args, Debug, Clone, Default)]
pub struct VerifyFlags {
    /// the recordings whose client side is sent again
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// the live server: a command line (spoken to over stdio) or a Streamable HTTP URL
    #[arg(long, value_name = "URL|CMD", required = true)]
    pub upstream: String,
    /// leave this path of an answer out of the comparison (a JSON Pointer into {"result": …}
    /// or {"error": …}, `*` for any segment; repeatable); /result/_meta always is
    #[arg(long, value_name = "PATH", action = ArgAction::Append)]
    pub ignore: Vec<String>,
    /// print the outcome as JSON ({"requests", "differ": [{"seq", "conn", "method",
    /// "differences"}]})
    #[arg(long)]
    pub json: bool,
}

/// A whole number of milliseconds, written out as seconds (the `tick` option's unit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Millis(f64);

fn to_map(flags: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(flags) {
        Ok(Value::Object(map)) => map,
        _ => unreachable!("flags serialize to an object"),
    }
}

/// `--tick-ms` absent or 0: the reference's timers.
fn unset_tick(tick: &Option<Millis>) -> bool {
    tick.is_none_or(|t| t.0 == 0.0)
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Pairs given one flag at a time (`--tool-scope a=b --tool-scope c=d`) as the object the
/// option takes; a later pair wins.
fn as_map<S: Serializer>(pairs: &[(String, Value)], s: S) -> Result<S::Ok, S::Error> {
    let map: BTreeMap<&str, &Value> = pairs.iter().map(|(k, v)| (k.as_str(), v)).collect();
    map.serialize(s)
}

/// A non-negative integer.
fn count(value: &str) -> Result<usize, String> {
    value
        .trim()
        .parse::<usize>()
        .map_err(|_| format!("expected a whole number >= 0, got {value:?}"))
}

fn port(value: &str) -> Result<u16, String> {
    let n = count(value)?;
    u16::try_from(n).map_err(|_| format!("expected a port 0-65535, got {n}"))
}

fn seconds(value: &str) -> Result<f64, String> {
    value
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("expected a number of seconds, got {value:?}"))
}

/// Milliseconds as seconds (0 leaves the option unset: [`unset_tick`]).
fn millis(value: &str) -> Result<Millis, String> {
    count(value).map(|n| Millis(n as f64 / 1000.0))
}

fn log_level(value: &str) -> Result<String, String> {
    let level = value.to_ascii_lowercase();
    let level = if level == "warning" {
        "warn".into()
    } else {
        level
    };
    if LOG_LEVELS.contains(&level.as_str()) {
        Ok(level)
    } else {
        Err(format!(
            "invalid level {value:?} (choose from {})",
            LOG_LEVELS.join(", ")
        ))
    }
}

/// `TOOL=SCOPE`.
fn tool_scope(value: &str) -> Result<(String, Value), String> {
    match value.split_once('=') {
        Some((tool, scope)) if !tool.is_empty() && !scope.is_empty() => {
            Ok((tool.into(), scope.into()))
        }
        _ => Err(format!("expected TOOL=SCOPE, got {value:?}")),
    }
}

/// A pre-registered client: its metadata as JSON, or `ID:SECRET` (a confidential client of the
/// client credentials grant, authenticating with HTTP Basic).
fn client(value: &str) -> Result<Value, String> {
    if value.trim_start().starts_with('{') {
        let client: Value =
            serde_json::from_str(value).map_err(|e| format!("not JSON client metadata: {e}"))?;
        return match client {
            Value::Object(_) => Ok(client),
            _ => Err("client metadata is a JSON object".into()),
        };
    }
    match value.split_once(':') {
        Some((id, secret)) if !id.is_empty() && !secret.is_empty() => Ok(serde_json::json!({
            "client_id": id,
            "client_secret": secret,
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic",
        })),
        _ => Err(format!(
            "expected ID:SECRET or JSON client metadata, got {value:?}"
        )),
    }
}

/// `URL=FILE`: a Client ID Metadata Document read from FILE, for the client whose id is URL.
fn client_document(value: &str) -> Result<(String, Value), String> {
    let Some((url, path)) = value
        .split_once('=')
        .filter(|(u, p)| !u.is_empty() && !p.is_empty())
    else {
        return Err(format!("expected URL=FILE, got {value:?}"));
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let document = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok((url.into(), document))
}

/// `command` with each option's default (the core's, [`crate::options::defaults`]) appended to
/// its flag's help, where the help does not say it already.
pub fn with_defaults(command: clap::Command) -> clap::Command {
    let mut defaults = crate::options::defaults::<crate::options::ServerOptions>();
    defaults.extend(crate::options::defaults::<crate::options::HttpOptions>());
    defaults.insert("host".into(), crate::transport::http::DEFAULT_HOST.into());
    let ids: Vec<String> = command
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    ids.into_iter().fold(command, |command, id| {
        let Some(shown) = defaults.get(&id).and_then(shown_default) else {
            return command;
        };
        command.mut_arg(id, |arg| {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if help.contains("default") {
                arg
            } else {
                arg.help(format!("{help} (default: {shown})"))
            }
        })
    })
}

/// A default as help shows it; `None` for one not worth showing (unset, empty, off).
fn shown_default(value: &Value) -> Option<String> {
    match value {
        Value::Null | Value::Bool(false) => None,
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) => Some(
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(","),
        ),
        Value::Object(map) if map.is_empty() => None,
        Value::Number(n) if n.as_u64().is_some_and(|n| n >= 10_000) => {
            Some(thousands(n.as_u64().unwrap_or_default()))
        }
        // Seconds as people write them: 5, not 5.0.
        Value::Number(n) => Some(match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        }),
        other => Some(other.to_string()),
    }
}

/// `67108864` as `67,108,864`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
