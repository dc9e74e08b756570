//! The seams where behaviour can be changed from outside without touching the protocol code:
//! the points fault rules (and anything like them) plug into. There are three:
//!
//! - **inbound** ([`Hooks::inbound`]): a frame from the client, decoded and its era decided,
//!   before it is recorded and dispatched. It may pass, be dropped (never served, never answered),
//!   be answered with an error instead of being served, or be served late.
//! - **outbound** ([`Hooks::outbound`]): a frame on its way to a sink (every response,
//!   notification and server request), before it is recorded and handed to the transport. It
//!   may pass, be dropped (neither recorded nor sent), or be replaced by other text (none, one
//!   or more frames: a changed id, a cut frame, a duplicate), each recorded as sent.
//! - **transport** ([`Hooks::transport`]): an HTTP answer about to be sent (its status known),
//!   or a line about to be written to stdio. It may pass, or the connection is closed instead
//!   (an HTTP connection dropped without an answer, stdio's output closed).
//! - **auth** ([`Hooks::auth`]): a request to the auth lab (a step of a client's authorization
//!   flow). It may pass, or be answered late, with another status, an OAuth error, another
//!   consent, an expired token or a changed document.
//!
//! A server starts with no hooks; [`Seams::install`] puts them in place and [`Seams::clear`]
//! takes them out. While none are installed each seam is one relaxed atomic load (the
//! benchmarks' figures are taken so). Every sink carries its server's seams in its [`Wire`].

use crate::jsonrpc::{ErrorObject, Message};
use crate::protocol::{Era, Revision};
use crate::traffic::{FaultMark, TransportKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// What the inbound seam sees of a frame.
pub struct InboundFrame<'a> {
    /// The connection it came on (records' `conn`).
    pub conn: &'a str,
    /// The transport.
    pub transport: TransportKind,
    /// The era that serves it.
    pub era: Era,
    /// The revision its record names, when known.
    pub revision: Option<Revision>,
    /// Reads the client's `clientInfo.name`, when it gave one: called only by a hook that
    /// matches on it, so a frame does not pay for a lookup (a session lock and a copy) that
    /// no rule asks for.
    pub client: &'a (dyn Fn() -> Option<String> + 'a),
    /// The message.
    pub message: &'a Message,
}

/// An answer given instead of serving a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Instead {
    /// This JSON-RPC error.
    Error(ErrorObject),
    /// This result.
    Result(serde_json::Value),
}

/// What happens to an inbound frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// Served as usual.
    Pass,
    /// Not served and not answered (it stays on the record).
    Drop,
    /// A request answered with this error or result instead of being served (other messages:
    /// dropped).
    Answer(Instead),
    /// Served this much later (with an answer: a request answered with it, that late). The
    /// frame-ordered decisions (lifecycle, cancellation) are made at once; what is late is the
    /// serving and the answer.
    Delay(Duration, Option<Instead>),
    /// Served at once, its answer sent this much later (a delay after the handler).
    DelayAnswer(Duration),
    /// Over HTTP: this answer to the POST instead (a status such as 503, its headers and body);
    /// the frame is not served.
    Http(Arc<HttpAnswer>),
    /// A request held until `Signal` fires (the client cancelled it), then served and answered
    /// (a late response).
    AfterCancel(Signal),
}

/// A one-time signal between the seam that decides and the serving it releases.
#[derive(Debug, Clone, Default)]
pub struct Signal(pub Arc<tokio::sync::Notify>);

impl PartialEq for Signal {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// An HTTP answer given instead of serving a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAnswer {
    /// The status (`401`, `429`, `503`, …).
    pub status: u16,
    /// Its headers (`Retry-After`, `WWW-Authenticate`, …), as given.
    pub headers: Vec<(String, String)>,
    /// Its body (`text/plain` when not empty).
    pub body: String,
    /// The frame's session ends first (a session expired on cue: the answer is its `404`).
    pub end_session: bool,
    /// Over an auth lab's listener: the answer is this authorization challenge (its
    /// `WWW-Authenticate` built by the lab, which knows where its metadata is).
    pub challenge: Option<Challenge>,
}

/// A scripted authorization challenge on an MCP request (a fault rule's `challenge`): `401
/// invalid_token` (the token refused, as if expired or revoked) or `403 insufficient_scope`
/// naming a scope (step-up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// `invalid_token` (`401`) or `insufficient_scope` (`403`).
    pub error: ChallengeError,
    /// The scope the challenge names (default: the lab's).
    pub scope: Option<String>,
    /// Whether every access token issued so far ends too, and how (so the client's retry with
    /// the same token is refused as well): a token that dies mid-session.
    pub end: Option<TokenEnd>,
}

/// The errors of an authorization challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeError {
    /// `401`: the token is refused.
    InvalidToken,
    /// `403`: the token lacks a scope.
    InsufficientScope,
}

/// How tokens end on a `challenge`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenEnd {
    /// As if their lifetime were over.
    Expired,
    /// Revoked.
    Revoked,
}

/// How the resource says an access token expired (its `401`'s `error_description`).
pub const TOKEN_EXPIRED: &str = "the access token has expired";

/// How the resource says an access token was revoked.
pub const TOKEN_REVOKED: &str = "the access token was revoked";

impl ChallengeError {
    /// The challenge's `error`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidToken => "invalid_token",
            Self::InsufficientScope => "insufficient_scope",
        }
    }
}

impl Challenge {
    /// Why the request is refused, as the auth lab words its own refusals: `the access token
    /// has expired` (or `was revoked`, `was refused`), or `insufficient_scope: the request needs
    /// SCOPE`.
    pub fn description(&self) -> String {
        match (self.error, self.end) {
            (ChallengeError::InvalidToken, Some(TokenEnd::Expired)) => TOKEN_EXPIRED.into(),
            (ChallengeError::InvalidToken, Some(TokenEnd::Revoked)) => TOKEN_REVOKED.into(),
            (ChallengeError::InvalidToken, None) => {
                "the access token was refused (scripted)".into()
            }
            (ChallengeError::InsufficientScope, _) => format!(
                "insufficient_scope: the request needs {}",
                self.scope.as_deref().unwrap_or("another scope")
            ),
        }
    }
}

/// Where a request to the auth lab goes: the steps of a client's authorization flow, which
/// fault rules with `match.auth` act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthStep {
    /// The `401` an MCP request without a good token gets (its `WWW-Authenticate`).
    Challenge,
    /// The protected resource's metadata (RFC 9728), at any of its URLs.
    ProtectedResource,
    /// The authorization server's metadata (RFC 8414 or OpenID discovery), at any of its URLs.
    AuthorizationServer,
    /// Dynamic client registration (`POST /register`).
    Register,
    /// The authorization request (`GET /authorize`): the consent step.
    Authorize,
    /// The token request (`POST /token`), any grant.
    Token,
}

/// What the auth seam sees of a request to the auth lab.
pub struct AuthRequest<'a> {
    /// The step.
    pub step: AuthStep,
    /// The request's path.
    pub path: &'a str,
    /// At the token endpoint: the `grant_type` asked for.
    pub grant: Option<&'a str>,
}

/// What the consent step answers an authorization request (a fault rule's `consent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consent {
    /// Approved: with only these scopes when given (the user unticked the others).
    Approve(Option<String>),
    /// Denied: the redirect carries `error=access_denied`.
    Deny,
    /// Approved, but the redirect carries a code the server never issued.
    WrongCode,
    /// Approved, but the redirect carries another `state` than the request's.
    WrongState,
    /// The previous authorization's redirect again, its code already used (a replayed
    /// callback).
    Replay,
    /// Answered by a person on the consent page.
    Page,
}

/// Changes a fault rule makes to a document the auth lab answers (JSON members set or taken
/// out, text not JSON, a cut): the fault layer's changes, seen through this seam.
pub trait Edit: Send + Sync + std::fmt::Debug {
    /// The text `text` becomes (the first of the frames the change makes).
    fn apply(&self, text: &str) -> String;
}

/// What the auth hooks decided for a request to the auth lab.
#[derive(Debug, Clone)]
pub struct AuthVerdict {
    /// Who decided it (the records' `fault`).
    pub mark: Option<Arc<FaultMark>>,
    /// Answered this much later (a slow endpoint).
    pub delay: Option<Duration>,
    /// This HTTP answer instead (`429`, `500`, `404`, with headers and body).
    pub http: Option<Arc<HttpAnswer>>,
    /// This OAuth error instead: its status, `error` and `error_description` (at `/authorize`,
    /// a redirect carrying them).
    pub oauth_error: Option<(u16, String, String)>,
    /// The consent step's answer.
    pub consent: Option<Consent>,
    /// The access token issued is already expired (its `expires_in` says otherwise).
    pub expired_token: bool,
    /// The answer changed on its way out (at `/authorize` and in the challenge: its
    /// parameters, as a JSON object).
    pub edit: Option<Arc<dyn Edit>>,
}

/// How an HTTP answer is changed on its way out (a fault rule's HTTP changes): the transport
/// applies it to the response of the exchange whose frame a rule hit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HttpShape {
    /// The connection is dropped: before any byte of the body (`false`) or halfway (`true`).
    pub disconnect: Option<bool>,
    /// The body is sent this many bytes at a time, with this pause between (on the clock).
    pub drip: Option<(usize, Duration)>,
    /// The answer's `Content-Type` is this instead.
    pub content_type: Option<String>,
    /// A JSON body is sent as an SSE stream, and an SSE stream's answer as a JSON body.
    pub swap_body: bool,
    /// An SSE stream is closed after its first event (the priming one), before the answer.
    pub close_stream: bool,
}

tokio::task_local! {
    /// The shape a rule gave the HTTP exchange being served on this task, if any (set by
    /// [`shape_exchange`] inside a [`shaping`] scope).
    static HTTP_SHAPE: std::cell::RefCell<Option<Arc<HttpShape>>>;
}

/// Serves `exchange` (an HTTP request) in a scope where the inbound seam can shape its answer;
/// its output and the shape a rule gave it.
pub async fn shaping<F: std::future::Future>(exchange: F) -> (F::Output, Option<Arc<HttpShape>>) {
    HTTP_SHAPE
        .scope(std::cell::RefCell::new(None), async move {
            let out = exchange.await;
            let shape = HTTP_SHAPE.with(|s| s.borrow_mut().take());
            (out, shape)
        })
        .await
}

/// Gives the HTTP exchange being served on this task `shape` (nothing outside a [`shaping`]
/// scope: another transport's frame).
pub fn shape_exchange(shape: Arc<HttpShape>) {
    let _ = HTTP_SHAPE.try_with(|s| *s.borrow_mut() = Some(shape));
}

/// What the inbound hooks decided for a frame, and the mark its record carries when a fault
/// rule decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// What happens to the frame.
    pub inbound: Inbound,
    /// Who decided it (a record's `fault`), if anyone.
    pub mark: Option<Arc<FaultMark>>,
    /// What is sent to the client before the frame is served, if anything.
    pub first: Option<Arc<SendFirst>>,
    /// How the HTTP answer of the frame's exchange is changed, if it is.
    pub http: Option<Arc<HttpShape>>,
}

/// Frames sent to the client before a frame from it is served (on its connection, over HTTP
/// the POST's own stream), each recorded with the deciding rule's mark.
#[derive(Debug, Clone, PartialEq)]
pub struct SendFirst {
    /// Notifications: a method, its params and how many times (a `list_changed` storm).
    pub notify: Option<(String, Option<serde_json::Value>, u32)>,
    /// A request, whatever the client declared: a method and its params. Its answer is
    /// recorded; nothing waits for it.
    pub ask: Option<(String, Option<serde_json::Value>)>,
    /// A line written to the server's stderr, and how many times.
    pub stderr: Option<(String, u32)>,
    /// The process exits with this code (a server that owns its process; others close the
    /// connection's output).
    pub exit: Option<i32>,
    /// The connection's output is closed: nothing more is written to it.
    pub close_output: bool,
}

impl Verdict {
    /// Served as usual, unmarked.
    pub const PASS: Self = Self {
        inbound: Inbound::Pass,
        mark: None,
        first: None,
        http: None,
    };

    /// `inbound`, unmarked.
    pub fn unmarked(inbound: Inbound) -> Self {
        Self {
            inbound,
            ..Self::PASS
        }
    }
}

/// What the outbound seam sees of a frame.
pub struct OutboundFrame<'a> {
    /// The connection it goes to.
    pub conn: &'a str,
    /// The transport.
    pub transport: TransportKind,
    /// The revision its record names, when known.
    pub revision: Option<Revision>,
    /// What it is (its kind, method, id).
    pub summary: &'a crate::traffic::FrameSummary,
    /// The frame's wire text.
    pub text: &'a str,
}

/// What happens to an outbound frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outbound {
    /// Recorded and sent.
    Pass,
    /// Neither recorded nor sent.
    Drop,
    /// These frames instead, each recorded and sent (none: as `Drop`, but recorded as sent).
    Replace(Vec<Arc<str>>),
}

/// What the outbound hooks decided for a frame, and the mark its records carry when a fault
/// rule decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutVerdict {
    /// What happens to the frame.
    pub outbound: Outbound,
    /// Who decided it (a record's `fault`), if anyone.
    pub mark: Option<Arc<FaultMark>>,
}

impl OutVerdict {
    /// Sent as it is, unmarked.
    pub const PASS: Self = Self {
        outbound: Outbound::Pass,
        mark: None,
    };
}

/// What the transport seam sees: an answer about to leave.
pub enum TransportEvent<'a> {
    /// An HTTP response of `status` to a request on connection `conn` (`-` for none).
    HttpAnswer {
        /// The connection (session id, or the TCP connection's name).
        conn: &'a str,
        /// The status about to be sent.
        status: u16,
    },
    /// A line about to be written to stdio (or another byte stream).
    StreamWrite {
        /// The connection.
        conn: &'a str,
    },
}

/// What happens at the transport seam.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Sent as usual.
    Pass,
    /// The connection is closed instead.
    Close,
}

/// Behaviour plugged into the seams. Every method passes by default.
pub trait Hooks: Send + Sync {
    /// An inbound frame before dispatch (and before it is recorded, so its record can carry
    /// the verdict's mark).
    fn inbound(&self, _frame: &InboundFrame<'_>) -> Verdict {
        Verdict::PASS
    }

    /// An outbound frame before it is recorded and delivered.
    fn outbound(&self, _frame: &OutboundFrame<'_>) -> OutVerdict {
        OutVerdict::PASS
    }

    /// An answer about to leave through the transport.
    fn transport(&self, _event: &TransportEvent<'_>) -> Transport {
        Transport::Pass
    }

    /// A request to the auth lab, before it is served.
    fn auth(&self, _request: &AuthRequest<'_>) -> Option<AuthVerdict> {
        None
    }
}

/// A server's seams: the installed hooks, if any.
#[derive(Default)]
pub struct Seams {
    /// Whether hooks are installed: the one thing a seam reads while none are.
    armed: AtomicBool,
    /// The hooks.
    hooks: RwLock<Option<Arc<dyn Hooks>>>,
}

impl Seams {
    /// Puts `hooks` in place (replacing any).
    pub fn install(&self, hooks: Arc<dyn Hooks>) {
        *self.hooks.write().unwrap_or_else(|e| e.into_inner()) = Some(hooks);
        self.armed.store(true, Ordering::Release);
    }

    /// Takes the hooks out: every seam passes again.
    pub fn clear(&self) {
        self.armed.store(false, Ordering::Release);
        *self.hooks.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The installed hooks, if any.
    fn hooks(&self) -> Option<Arc<dyn Hooks>> {
        if !self.armed.load(Ordering::Relaxed) {
            return None;
        }
        self.hooks.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The inbound seam.
    pub fn inbound(&self, frame: &InboundFrame<'_>) -> Verdict {
        self.hooks().map_or(Verdict::PASS, |h| h.inbound(frame))
    }

    /// The outbound seam.
    pub fn outbound(&self, frame: &OutboundFrame<'_>) -> OutVerdict {
        self.hooks().map_or(OutVerdict::PASS, |h| h.outbound(frame))
    }

    /// The transport seam.
    pub fn transport(&self, event: &TransportEvent<'_>) -> Transport {
        self.hooks().map_or(Transport::Pass, |h| h.transport(event))
    }

    /// The auth seam.
    pub fn auth(&self, request: &AuthRequest<'_>) -> Option<AuthVerdict> {
        self.hooks().and_then(|h| h.auth(request))
    }

    /// Whether any hooks are installed (a caller that must build what a seam sees checks first).
    pub fn armed(&self) -> bool {
        self.armed.load(Ordering::Relaxed)
    }
}

/// What every outgoing frame passes on its way out: the outbound seam, then the recorder. A
/// server builds one; each of its sinks shares it through one pointer (`Arc<Wire>`), so a sink
/// clone (several per request) touches one shared count, as it did when a sink held only the
/// recorder: a second count, shared by every worker thread, cost the 16-connection HTTP figures
/// a few percent that instruction counts do not show.
pub struct Wire {
    /// Every frame in and out.
    pub recorder: Arc<crate::traffic::Recorder>,
    /// The server's seams.
    pub seams: Arc<Seams>,
    /// The peer whose way of writing a message every frame takes (the TypeScript SDK's member
    /// order), if any.
    pub dialect: Option<crate::protocol::Dialect>,
    /// The server's bounds, read where a sink's owner is about to hold something more (a
    /// session's requests to its client).
    pub limits: super::limits::Limits,
    /// Where those bounds count what they refuse (the server's `limit_hits`).
    pub hits: Arc<super::limits::LimitHits>,
}

impl Wire {
    /// A wire recording on `recorder`, with no hooks (a sink outside any server: tests).
    pub fn bare(recorder: Arc<crate::traffic::Recorder>) -> Arc<Self> {
        Arc::new(Self {
            recorder,
            seams: Arc::default(),
            dialect: None,
            limits: Default::default(),
            hits: Arc::default(),
        })
    }
}
