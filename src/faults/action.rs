//! A fault rule's action as written: what happens to a frame it hits (an answer instead, a drop,
//! a delay, a hold, an HTTP status), what it changes in the answer, and what it sends first.

pub use crate::server::seams::{ChallengeError, TokenEnd};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A delay: fixed, or a range to draw from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DelayMs {
    /// This many milliseconds.
    Fixed(u64),
    /// Between these (inclusive), drawn per frame.
    Range([u64; 2]),
}

/// The JSON-RPC error an `error` action answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorAction {
    /// The error's code.
    pub code: i64,
    /// The error's message.
    pub message: String,
    /// The error's `data`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// What a rule does to a frame it hits: answer an error instead of serving it, drop it (never
/// served, never answered), serve it late, or (over HTTP) answer the POST with a status instead.
/// `delay_ms` may come with `error` (the error, late); `error`, `drop` and `http_status`
/// exclude each other.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// Answer this error instead of serving the request (a notification is dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorAction>,
    /// Wait this long before serving (or answering `error`): a number of milliseconds, or
    /// `[min, max]`, drawn per frame from the rule's seeded sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<DelayMs>,
    /// With `delay_ms`: the handler runs at once and its answer waits (a delay after the
    /// handler) instead of the serving starting late.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_handler: Option<bool>,
    /// Hold the request until the client cancels it, then serve it and answer (a late
    /// response); the cancellation itself is not applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_cancel: Option<bool>,
    /// Neither serve nor answer the frame (`true`; `false` is no action).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<bool>,
    /// Over HTTP (Streamable HTTP and legacy SSE's POSTs): answer the POST with this status
    /// instead of serving the frame (a rule with it matches no other transport's frames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// With `http_status`: the answer's headers (`{"Retry-After": "2"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// With `http_status`: the answer's body (`text/plain`; default empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Answer this result instead of serving the request (an `isError` tool result, one that
    /// breaks the tool's `outputSchema` or the protocol's schema, a canned page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The answer (or the frame, going out) carries another id than the request's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong_id: Option<bool>,
    /// The answer (or the frame) is sent twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<bool>,
    /// The answer (or the frame) lacks `"jsonrpc": "2.0"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_jsonrpc: Option<bool>,
    /// The answer (or the frame) is replaced by this text, which is not JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_json: Option<String>,
    /// The answer (or the frame) is cut to its first this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<usize>,
    /// The answer (or the frame) is padded to at least this many bytes (a padding member in
    /// its result's, params' or error data's `_meta`), still valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversize: Option<usize>,
    /// JSON pointers into the answer (or the frame) and the values to put there:
    /// `{"/result/protocolVersion": "2025-03-26"}`, `{"/params/progress": 0}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<std::collections::BTreeMap<String, Value>>,
    /// JSON pointers into the answer (or the frame) to take out:
    /// `["/result/capabilities/tools"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
    /// Over HTTP: the frame's session ends and the request is answered `404` (a session that
    /// expired on cue); the frame is not served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_session: Option<bool>,
    /// Over HTTP: the connection is dropped before the answer's body (`"before_body"`) or in
    /// the middle of it (`"mid_body"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnect: Option<Disconnect>,
    /// Over HTTP: the answer's body is sent `bytes` at a time, `every_ms` apart (on the clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drip: Option<Drip>,
    /// Over HTTP: the answer's `Content-Type` is this instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Over HTTP: JSON where an SSE stream was due, and an SSE stream where JSON was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_body: Option<bool>,
    /// Over Streamable HTTP: the POST's SSE stream is closed after its priming event, before
    /// the answer, which is kept for a reconnection with `Last-Event-ID` (`"replay"`) or never
    /// sent (`"no_replay"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_stream: Option<Replay>,
    /// The answer's `nextCursor` is the cursor the request came with (a page that repeats its
    /// cursor: a client that follows it loops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_cursor: Option<bool>,
    /// A `notifications/progress` for the request's `progressToken` sent after its answer (a
    /// progress that arrives after the response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_after: Option<bool>,
    /// A raw line (not JSON: a stray log line, garbage) written before the answer (or the
    /// frame, going out), as a frame of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stray_line: Option<String>,
    /// Over stdio: the connection's output is closed; nothing more is written to it (the
    /// request's answer neither). The CLI's stdio closes the process's stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_output: Option<bool>,
    /// Over stdio: the process exits with this code when the frame arrives (a server that
    /// crashes mid-request); only `python -m everything_mcp stdio` (a server that owns its
    /// process) exits, an in-process server closes the connection's output instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// Before the frame is served, the server writes this line to its stderr, `count` times
    /// (a server that floods stderr).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<StderrAction>,
    /// Before the frame is served, send the client this notification, `count` times (a
    /// `list_changed` storm), on the frame's connection (over HTTP: the POST's own stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify: Option<NotifyAction>,
    /// Before the frame is served, send the client this request, whatever capabilities it
    /// declared (a `sampling/createMessage` to a client without `sampling`); its answer is
    /// recorded, and nothing waits for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<AskAction>,
    /// Over an auth lab's listener: the MCP request is answered with this authorization
    /// challenge (`401 invalid_token`, or `403 insufficient_scope` naming a scope) instead of
    /// being served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<ChallengeAction>,
    /// With `match.auth` (`register`, `token`, `authorize`): this OAuth error instead of the
    /// answer (at `/authorize`, a redirect carrying it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_error: Option<OauthErrorAction>,
    /// With `match.auth: "authorize"`: the consent step's answer (`"deny"`, `"wrong_code"`,
    /// `"wrong_state"`, `"replay"`, `"page"`, `"approve"`, or `{"scope": "mcp:basic"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<ConsentAction>,
    /// With `match.auth: "token"`: the access token issued is already expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_token: Option<bool>,
}

/// The authorization challenge a `challenge` action answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChallengeAction {
    /// `invalid_token` (`401`) or `insufficient_scope` (`403`).
    pub error: ChallengeError,
    /// The scope it names: for `insufficient_scope`, required; for `invalid_token`, the lab's
    /// scopes when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// With `invalid_token`: every access token issued so far ends too, `expired` or
    /// `revoked`, so a retry with the same token is refused as well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<TokenEnd>,
}

/// The OAuth error an `oauth_error` action answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OauthErrorAction {
    /// The `error` code (`invalid_grant`, `invalid_client_metadata`, `access_denied`, …).
    pub error: String,
    /// The `error_description` (default: says the error was scripted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_description: Option<String>,
    /// The status (default `400`; `invalid_client` is usually `401`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// A consent step's answer, as a rule writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, try_from = "Value")]
pub enum ConsentAction {
    /// A named answer.
    Named(ConsentName),
    /// Approved with only these scopes (space-separated).
    Scope {
        /// The scopes the user left ticked.
        scope: String,
    },
}

/// The named answers of the consent step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsentName {
    /// Approved (what the lab does by default).
    Approve,
    /// Denied (`error=access_denied`).
    Deny,
    /// A code the server never issued.
    WrongCode,
    /// Another `state` than the request's.
    WrongState,
    /// The previous redirect again (a replayed callback).
    Replay,
    /// Answered by a person on the consent page.
    Page,
}

/// What a consent answer may be, for the message that refuses another.
const CONSENT_ANSWERS: &str = "\"approve\", \"deny\", \"wrong_code\", \"wrong_state\", \"replay\", \"page\" or {\"scope\": \"mcp:basic\"}";

impl TryFrom<Value> for ConsentAction {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        let refused = || format!("{value} is not a consent answer: {CONSENT_ANSWERS}");
        match &value {
            Value::String(_) => serde_json::from_value(value.clone())
                .map(Self::Named)
                .map_err(|_| refused()),
            Value::Object(o) if o.len() == 1 => match o.get("scope").and_then(Value::as_str) {
                Some(scope) if !scope.trim().is_empty() => Ok(Self::Scope {
                    scope: scope.to_string(),
                }),
                Some(_) => Err("{\"scope\": ...} names at least one scope".into()),
                None => Err(refused()),
            },
            _ => Err(refused()),
        }
    }
}

impl ConsentAction {
    /// The seam's form.
    pub fn consent(&self) -> crate::server::seams::Consent {
        use crate::server::seams::Consent;
        match self {
            Self::Scope { scope } => Consent::Approve(Some(scope.clone())),
            Self::Named(ConsentName::Approve) => Consent::Approve(None),
            Self::Named(ConsentName::Deny) => Consent::Deny,
            Self::Named(ConsentName::WrongCode) => Consent::WrongCode,
            Self::Named(ConsentName::WrongState) => Consent::WrongState,
            Self::Named(ConsentName::Replay) => Consent::Replay,
            Self::Named(ConsentName::Page) => Consent::Page,
        }
    }
}

/// Where a `disconnect` drops the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disconnect {
    /// After the status and headers, before any byte of the body.
    BeforeBody,
    /// Halfway through the body.
    MidBody,
}

/// How a `drip` sends a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drip {
    /// Bytes per piece (at least 1).
    pub bytes: usize,
    /// The pause between pieces.
    pub every_ms: u64,
}

/// Whether the answer of a closed stream is replayed on reconnection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replay {
    /// Kept in the session's event store: a `GET` with `Last-Event-ID` receives it.
    Replay,
    /// Never sent.
    NoReplay,
}

/// The lines a `stderr` action writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StderrAction {
    /// The line.
    pub line: String,
    /// How many times (default 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u32,
}

/// The notifications a `notify` action sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyAction {
    /// The notification's method (`notifications/tools/list_changed`).
    pub method: String,
    /// Its params, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// How many are sent (default 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u32,
}

/// The request an `ask` action sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskAction {
    /// The request's method (`sampling/createMessage`, `roots/list`, `elicitation/create`).
    pub method: String,
    /// Its params, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// `count`'s default.
fn one() -> u32 {
    1
}

/// Whether `count` is its default (left out of a listing).
fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Action {
    /// The action's name in a rule listing and a record's mark (`error`, `drop`, `delay`,
    /// `result`, `duplicate`, …): what answers instead, else the first change to the answer,
    /// else the delay.
    pub fn kind(&self) -> &'static str {
        if self.error.is_some() {
            "error"
        } else if self.http_status.is_some() {
            "http_status"
        } else if self.drop == Some(true) {
            "drop"
        } else if self.after_cancel == Some(true) {
            "after_cancel"
        } else if self.result.is_some() {
            "result"
        } else if let Some(change) = self.change() {
            change
        } else if self.expire_session == Some(true) {
            "expire_session"
        } else if let Some(http) = self.http_change() {
            http
        } else if self.exit.is_some() {
            "exit"
        } else if self.close_output == Some(true) {
            "close_output"
        } else if self.stderr.is_some() {
            "stderr"
        } else if self.notify.is_some() {
            "notify"
        } else if self.ask.is_some() {
            "ask"
        } else if self.challenge.is_some() {
            "challenge"
        } else if self.oauth_error.is_some() {
            "oauth_error"
        } else if self.consent.is_some() {
            "consent"
        } else if self.expired_token == Some(true) {
            "expired_token"
        } else {
            "delay"
        }
    }

    /// The first change this action makes to the HTTP answer, by name.
    pub fn http_change(&self) -> Option<&'static str> {
        [
            ("disconnect", self.disconnect.is_some()),
            ("drip", self.drip.is_some()),
            ("content_type", self.content_type.is_some()),
            ("swap_body", self.swap_body == Some(true)),
            ("close_stream", self.close_stream.is_some()),
        ]
        .into_iter()
        .find_map(|(name, on)| on.then_some(name))
    }

    /// Whether the action applies over HTTP only (a rule with it matches no other transport).
    pub fn http_only(&self) -> bool {
        self.http_status.is_some()
            || self.expire_session == Some(true)
            || self.http_change().is_some()
            || self.challenge.is_some()
    }

    /// Whether the action applies over stdio (and in-memory connections) only.
    pub fn stream_only(&self) -> bool {
        self.close_output == Some(true) || self.exit.is_some()
    }

    /// The first change this action makes to an answer or an outgoing frame, by name.
    pub fn change(&self) -> Option<&'static str> {
        [
            ("wrong_id", self.wrong_id == Some(true)),
            ("duplicate", self.duplicate == Some(true)),
            ("no_jsonrpc", self.no_jsonrpc == Some(true)),
            ("not_json", self.not_json.is_some()),
            ("truncate", self.truncate.is_some()),
            ("oversize", self.oversize.is_some()),
            ("set", self.set.is_some()),
            ("remove", self.remove.is_some()),
            ("stray_line", self.stray_line.is_some()),
            ("repeat_cursor", self.repeat_cursor == Some(true)),
            ("progress_after", self.progress_after == Some(true)),
        ]
        .into_iter()
        .find_map(|(name, on)| on.then_some(name))
    }
}
