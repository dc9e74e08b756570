//! Built-in surfaces, selectable by name and combinable. Each catalog adds its tools,
//! resources and prompts to a registry, which the caller hands to `Server::new`: the core
//! knows no catalog, and the settings only catalogs read live here ([`Options`]), not in
//! `ServerConfig`.

pub mod apps;
pub mod builder;
pub mod canned;
pub mod conformance;
pub mod data_url;
pub mod elicitation;
pub mod everything;
pub mod everything_v1;
pub mod review_lab;
pub mod roots;
pub mod skills;

use crate::error::Error;
use crate::jsnum;
use crate::protocol::LogLevel;
use crate::server::registry::Registry;
use crate::server::session::Session;
use crate::traffic::TransportKind;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// The `$schema` the reference's zod-to-json-schema puts on tool input and output schemas
/// (both surfaces).
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

/// Settings that only catalogs read (the core never does): each catalog takes what it needs
/// when it is loaded and captures it in its handlers and hooks.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `get-env` / `printEnv` show secret-looking variables instead of `<redacted>`.
    pub expose_env: bool,
    /// When set, every periodic timer of the catalogs (simulated logs, subscription updates,
    /// roots sync, `simulate-research-query`'s stages, the `*-async` tools' polls) uses this
    /// interval instead of the reference's 1–15 s, so tests need not wait.
    pub tick: Option<Duration>,
    /// `review-lab`: how long after a subscription the watched resource changes
    /// (`MCP_TEST_UPDATE_DELAY_SECONDS` in the reference lab).
    pub update_delay: Duration,
    /// `review-lab`: also send `notifications/resources/list_changed` with the update
    /// (`MCP_TEST_SEND_LIST_CHANGED=true` in the reference lab).
    pub send_list_changed: bool,
    /// `apps`: who sees the views' `_meta.ui` (`gate`: a host that declared the extension).
    pub apps: apps::AppsMode,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            expose_env: false,
            tick: None,
            update_delay: Duration::from_secs(5),
            send_list_changed: false,
            apps: apps::AppsMode::default(),
        }
    }
}

impl Options {
    /// The interval of a periodic timer whose reference interval is `reference`: the configured
    /// `tick` if there is one.
    pub fn tick(&self, reference: Duration) -> Duration {
        self.tick.unwrap_or(reference)
    }
}

/// Adds one catalog's tools, resources, prompts and hooks to a registry.
pub type Load = fn(&mut Registry, &Options) -> Result<(), Error>;

/// Every catalog, by the name `--catalog` and `Server(catalogs=...)` take, in the order the
/// docs list them.
pub const CATALOGS: &[(&str, Load)] = &[
    ("everything", everything::load),
    ("everything-v1", everything_v1::load),
    ("conformance", conformance::load),
    ("review-lab", review_lab::load),
    ("skills", skills::load),
    ("apps", |registry, options| {
        apps::load(registry, options.apps)
    }),
    ("none", |_, _| Ok(())),
];

/// The catalog names, in [`CATALOGS`] order.
pub fn names() -> impl Iterator<Item = &'static str> {
    CATALOGS.iter().map(|(name, _)| *name)
}

/// Adds catalog `name` to `registry`.
pub fn load(name: &str, registry: &mut Registry, options: &Options) -> Result<(), Error> {
    let Some((_, load)) = CATALOGS.iter().find(|(n, _)| *n == name) else {
        let known: Vec<_> = names().collect();
        return Err(Error::Config(format!(
            "unknown catalog {name:?} (known: {})",
            known.join(", ")
        )));
    };
    load(registry, options)
}

/// A registry holding the catalogs `names`, loaded in that order.
pub fn registry<S: AsRef<str>>(names: &[S], options: &Options) -> Result<Registry, Error> {
    let mut registry = Registry::default();
    for name in names {
        load(name.as_ref(), &mut registry, options)?;
    }
    Ok(registry)
}

/// A `CallToolResult` with one text block.
pub fn text_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// The map inside a `json!({...})` literal (empty for anything else): definitions are
/// written as JSON literals and stored as maps.
pub fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A string argument, empty when absent (arguments were checked against their schema).
pub fn string_arg(args: &Map<String, Value>, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A user `PromptMessage` with one text block.
pub fn user_text(text: String) -> Value {
    json!({ "role": "user", "content": { "type": "text", "text": text } })
}

/// Prefix completion over fixed values (case-sensitive `startsWith`, as the reference).
pub fn starts_with(values: &[&str], prefix: &str) -> Vec<String> {
    values
        .iter()
        .filter(|v| v.starts_with(prefix))
        .map(|v| (*v).to_string())
        .collect()
}

/// An object input schema with these `properties` and `required` names.
pub fn schema(properties: Value, required: &[&str]) -> Value {
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    s.insert("properties".into(), properties);
    if !required.is_empty() {
        s.insert("required".into(), json!(required));
    }
    Value::Object(s)
}

/// The reference's sum sentence (`get-sum` and v1 `add`), numbers printed the JavaScript way.
pub fn sum_text(a: f64, b: f64) -> String {
    format!(
        "The sum of {} and {} is {}.",
        jsnum::format(a),
        jsnum::format(b),
        jsnum::format(a + b)
    )
}

/// The content of the reference's annotated message (`get-annotated-message`, v1
/// `annotatedMessage`): one text block annotated by `message_type` (`error`, `success`, anything
/// else reads as debug), then, if `image` (base64 PNG) is given, that image annotated for the user.
pub fn annotated_message(message_type: &str, image: Option<&str>) -> Value {
    let (text, priority, audience) = match message_type {
        "error" => (
            "Error: Operation failed",
            json!(1),
            json!(["user", "assistant"]),
        ),
        "success" => (
            "Operation completed successfully",
            json!(0.7),
            json!(["user"]),
        ),
        _ => (
            "Debug: Cache hit ratio 0.95, latency 150ms",
            json!(0.3),
            json!(["assistant"]),
        ),
    };
    let mut content = vec![
        json!({ "type": "text", "text": text, "annotations": { "priority": priority, "audience": audience } }),
    ];
    if let Some(image) = image {
        content.push(json!({ "type": "image", "data": image, "mimeType": "image/png", "annotations": { "priority": 0.5, "audience": ["user"] } }));
    }
    json!({ "content": content })
}

/// The reference's long-running operation (`trigger-long-running-operation`, v1
/// `longRunningOperation`): `steps` progress notifications spread over `duration` seconds,
/// then the closing text result; `None` if the request was cancelled first.
pub async fn long_running_operation(
    ctx: &crate::server::context::RequestContext,
    duration: f64,
    steps: f64,
) -> Option<Value> {
    let pause =
        std::time::Duration::try_from_secs_f64(if steps > 0.0 { duration / steps } else { 0.0 })
            .unwrap_or_default();
    let mut step = 1.0;
    let mut timer = ctx.server.clock.timer();
    while step <= steps {
        tokio::select! {
            () = ctx.cancelled() => return None,
            () = timer.sleep(pause) => {}
        }
        ctx.progress(step, Some(steps), None);
        step += 1.0;
    }
    Some(text_result(format!(
        "Long running operation completed. Duration: {} seconds, Steps: {}.",
        jsnum::format(duration),
        jsnum::format(steps)
    )))
}

/// Whether an environment variable's name looks like it holds a secret (`get-env`, v1
/// `printEnv`): it contains TOKEN, SECRET, KEY, PASSWORD, CREDENTIAL or AUTH, in any case.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["TOKEN", "SECRET", "KEY", "PASSWORD", "CREDENTIAL", "AUTH"]
        .iter()
        .any(|w| upper.contains(w))
}

/// The process environment as `JSON.stringify(process.env, null, 2)`; secret-looking values
/// read `<redacted>` unless `expose` (`--expose-env`). Non-UTF-8 names and values are printed
/// lossily rather than refused.
pub fn env_json(expose: bool) -> String {
    let env: Map<String, Value> = std::env::vars_os()
        .map(|(k, v)| {
            let k = k.to_string_lossy().into_owned();
            let v = if !expose && looks_secret(&k) {
                "<redacted>".to_string()
            } else {
                v.to_string_lossy().into_owned()
            };
            (k, Value::String(v))
        })
        .collect();
    pretty(&Value::Object(env))
}

/// `JSON.stringify(value, null, 2)`.
pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A JSON value as JavaScript's `String(value)` prints it (strings bare, numbers the JS way).
pub fn js_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), jsnum::format),
        other => other.to_string(),
    }
}

/// Runs `tick` every `interval` on `clock` until `stop` fires or the session is gone: the
/// periodic timers of the catalogs (simulated logs, subscription updates), which belong to
/// their session. The first sleep is set before this returns, so a manual clock advanced right
/// after the tool call that started the timer fires it.
pub fn every(
    clock: &crate::clock::Clock,
    session: &std::sync::Arc<Session>,
    interval: std::time::Duration,
    stop: tokio_util::sync::CancellationToken,
    mut tick: impl FnMut(&Session) + Send + 'static,
) {
    let weak = std::sync::Arc::downgrade(session);
    let mut timer = clock.timer();
    let mut next = timer.sleep(interval);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                // Stop first: a clock advanced past the next tick after the timer was stopped,
                // before this task ran, makes both ready, and an unbiased select could tick once
                // more (tests/test_clock.py saw a ninth log message, once, under load).
                biased;
                () = stop.cancelled() => return,
                () = &mut next => {}
            }
            let Some(session) = weak.upgrade() else {
                return;
            };
            tick(&session);
            next = timer.sleep(interval);
        }
    });
}

/// The reference's eight simulated log messages, shared by both of its surfaces (its
/// `Alert level-message` typo included).
pub const RANDOM_LOGS: [(LogLevel, &str); 8] = [
    (LogLevel::Debug, "Debug-level message"),
    (LogLevel::Info, "Info-level message"),
    (LogLevel::Notice, "Notice-level message"),
    (LogLevel::Warning, "Warning-level message"),
    (LogLevel::Error, "Error-level message"),
    (LogLevel::Critical, "Critical-level message"),
    (LogLevel::Alert, "Alert level-message"),
    (LogLevel::Emergency, "Emergency-level message"),
];

/// A random entry of [`RANDOM_LOGS`], advancing a small xorshift generator.
pub fn random_log(seed: &mut u64) -> (LogLevel, &'static str) {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    RANDOM_LOGS[(*seed % 8) as usize]
}

/// A nonzero seed for [`random_log`], from the clock and the process id.
pub fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    (nanos ^ u64::from(std::process::id())) | 1
}

/// The session id where the reference server has one (HTTP and SSE; not stdio), else `None`.
pub fn session_id(session: &Session) -> Option<&str> {
    match session.transport {
        TransportKind::Http | TransportKind::Sse => Some(&session.id),
        TransportKind::Stdio | TransportKind::Memory => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{looks_secret, sum_text};

    /// Built-in tools compile their schemas on first use (`Tool::builtin`): every one must.
    #[test]
    fn every_built_in_tool_schema_compiles() {
        let options = super::Options::default();
        for name in super::names() {
            let registry = super::registry(&[name.to_string()], &options).unwrap();
            for (tool, def) in &registry.tools {
                assert!(
                    def.validator.get().is_ok(),
                    "{name}: {tool}: {:?}",
                    def.validator.get().err()
                );
            }
        }
    }

    #[test]
    fn secret_names() {
        assert!(
            looks_secret("GITHUB_TOKEN") && looks_secret("my_api_key") && !looks_secret("HOME")
        );
        assert!(looks_secret("my_api_token") && looks_secret("GH_AUTH"));
    }

    #[test]
    fn sums_print_the_javascript_way() {
        assert_eq!(sum_text(1.0, 2.5), "The sum of 1 and 2.5 is 3.5.");
    }
}
