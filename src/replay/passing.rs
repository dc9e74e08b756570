//! Passing requests to the real server (record modes with an `upstream`): which connection to
//! it serves a live session ([`Links`]), forwarding one request and passing what comes back to
//! the live client ([`forward`]), and writing the new episodes to the recording
//! ([`EpisodeWriter`]).

use super::upstream::{Back, Target, Upstream};
use crate::jsonrpc::{ErrorObject, Message, RequestId};
use crate::lock::lock;
use crate::server::context::RequestContext;
use crate::server::model::Server;
use crate::server::scope::ClientInfo;
use crate::server::session::{Phase, Session};
use crate::traffic::{FrameMeta, FrameSummary, Recorder};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The connections to the real server: one per live handshake-era session (its handshake is
/// the upstream's), one shared by every stateless request (each carries its own envelope).
pub struct Links {
    /// Where the real server is.
    target: Target,
    /// The stateless era's connection, once one was needed.
    shared: Mutex<Option<Arc<Upstream>>>,
}

/// A live session's connection to the real server (a session extension).
#[derive(Default)]
struct SessionLink(Mutex<Option<Arc<Upstream>>>);

impl Links {
    /// Connections to `target`, made when first needed.
    pub fn new(target: Target) -> Self {
        Self {
            target,
            shared: Mutex::new(None),
        }
    }

    /// The connection that serves `ctx`'s request: the session's (made, and its handshake
    /// done from what the live client declared, unless `initialize` itself is being passed on),
    /// or the stateless era's shared one.
    pub async fn of(&self, ctx: &RequestContext) -> Result<Arc<Upstream>, ErrorObject> {
        let refused = |e: String| ErrorObject::internal(format!("the upstream server: {e}"));
        if ctx.session.phase() == Phase::Stateless {
            let mut shared = lock(&self.shared);
            if let Some(up) = &*shared {
                return Ok(up.clone());
            }
            let up = Upstream::connect(&self.target, None).map_err(refused)?;
            *shared = Some(up.clone());
            return Ok(up);
        }
        let link = ctx.session.extension::<SessionLink>();
        if let Some(up) = lock(&link.0).clone() {
            return Ok(up);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let up = Upstream::connect(&self.target, Some(tx)).map_err(refused)?;
        *lock(&link.0) = Some(up.clone());
        relay_unsolicited(&ctx.server, &ctx.session, &up, rx);
        if ctx.method != "initialize" {
            // The live session's handshake was replayed: the real server gets one made of what
            // the client declared in it.
            let (_, mut answers) = up.call("initialize", Some(handshake_params(&ctx.session)));
            while let Some(back) = answers.recv().await {
                if let Back::Answer(answer) = back {
                    answer?;
                    break;
                }
            }
            up.notify("notifications/initialized", None);
        }
        Ok(up)
    }

    /// Passes a live client notification on to the session's connection, if it has one.
    pub fn notify(&self, session: &Session, method: &str, params: Option<&Value>) {
        if let Some(up) = lock(&session.extension::<SessionLink>().0).clone() {
            up.notify(method, params.cloned());
        }
    }
}

/// Passes what the real server sends `session` outside any request (its list changes, its
/// requests after `initialized`) on to the live client, until the session ends.
fn relay_unsolicited(
    server: &Arc<Server>,
    session: &Arc<Session>,
    up: &Arc<Upstream>,
    mut rx: mpsc::UnboundedReceiver<Back>,
) {
    let (session, up, _server) = (session.clone(), up.clone(), server.clone());
    tokio::spawn(async move {
        loop {
            let back = tokio::select! {
                b = rx.recv() => b,
                () = session.closed.cancelled() => None,
            };
            match back {
                None => break,
                Some(Back::Notify(method, params)) => {
                    session.sink.send(&Message::notification(method, params));
                }
                Some(Back::Ask(id, method, params)) => {
                    let got = session.request(&session.sink, &method, params).await;
                    up.reply(id, got);
                }
                Some(Back::Answer(_)) => {}
            }
        }
        // The session is over: so is its connection to the real server.
        let link = session.extension::<SessionLink>();
        lock(&link.0).take();
    });
}

/// The `initialize` params of a session whose handshake was replayed: the revision it
/// settled on, and the capabilities and identity its client declared.
fn handshake_params(session: &Session) -> Value {
    let state = session.state();
    let client_info = match &state.declared.client_info {
        Some(ClientInfo::Value(v)) => v.clone(),
        Some(ClientInfo::Sent(v)) => (**v).clone(),
        None => json!({ "name": "everything-mcp replay", "version": env!("CARGO_PKG_VERSION") }),
    };
    json!({
        "protocolVersion": session.revision().as_str(),
        "capabilities": *state.declared.client_capabilities,
        "clientInfo": client_info,
    })
}

/// Forwards `ctx`'s request (`params`, `_meta` in them) on `up`, passes what comes back to the
/// live client as it arrives (notifications, requests to it and its answers), and yields the
/// answer; `writer` writes the whole exchange as a new episode. A cancelled live request is
/// cancelled upstream too.
pub async fn forward(
    ctx: &RequestContext,
    up: &Arc<Upstream>,
    params: Map<String, Value>,
    writer: Option<&EpisodeWriter>,
) -> Result<Value, ErrorObject> {
    let episode = writer.map(|w| w.begin(ctx, &params));
    let (id, mut rx) = up.call(&ctx.method, Some(Value::Object(params)));
    let cancelled = || {
        up.cancel(&id);
        Err(ErrorObject::internal("the request was cancelled"))
    };
    loop {
        let back = tokio::select! {
            b = rx.recv() => b,
            () = ctx.cancelled() => return cancelled(),
        };
        let Some(back) = back else {
            return Err(ErrorObject::internal(
                "the upstream server closed the connection",
            ));
        };
        match back {
            Back::Answer(answer) => {
                if let Some(e) = &episode {
                    e.answer(&answer);
                }
                return answer;
            }
            Back::Notify(method, params) => {
                let message = Message::notification(method, params);
                if let Some(e) = &episode {
                    e.sent(&message);
                }
                ctx.sink.send(&message);
            }
            Back::Ask(upstream_id, method, params) => {
                let asked = episode.as_ref().map(|e| e.ask(&method, params.clone()));
                let got = tokio::select! {
                    got = ctx.session.request(&ctx.sink, &method, params) => got,
                    () = ctx.cancelled() => return cancelled(),
                };
                if let (Some(e), Some(asked)) = (&episode, asked) {
                    e.answered(asked, &got);
                }
                up.reply(upstream_id, got);
            }
        }
    }
}

/// Appends new episodes (requests answered by the real server while replaying) to the
/// recording, as traffic records a later replay reads: each on a connection of its own
/// (`upstream-N`), its frames in the order they passed.
pub struct EpisodeWriter {
    /// Writes the records (appending: a new run in the file).
    recorder: Recorder,
    /// Numbers the episodes' connections.
    next: AtomicU64,
}

/// One episode being written.
pub struct Writing<'a> {
    /// The writer.
    writer: &'a EpisodeWriter,
    /// The episode's connection.
    conn: Arc<str>,
    /// The live request's id (its answer's).
    id: RequestId,
    /// The live request's transport.
    meta: (FrameMeta, FrameMeta),
}

impl EpisodeWriter {
    /// Appends to `path`.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            recorder: Recorder::new(Some(path), None)?,
            next: AtomicU64::new(1),
        })
    }

    /// Writes `ctx`'s request (`params` with its `_meta`).
    fn begin(&self, ctx: &RequestContext, params: &Map<String, Value>) -> Writing<'_> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let conn: Arc<str> = format!("upstream-{n}").into();
        let transport = ctx.session.transport;
        let revision = Some(ctx.scope.revision);
        let inbound = FrameMeta::inbound(transport, conn.clone()).with_revision(revision);
        let outbound = FrameMeta::outbound(transport, conn.clone()).with_revision(revision);
        let request = Message::request(
            ctx.request_id.clone(),
            ctx.method.clone(),
            Some(Value::Object(params.clone())),
        );
        self.recorder.record(
            &inbound,
            request.to_json(),
            FrameSummary::of_message(&request),
        );
        Writing {
            writer: self,
            conn,
            id: ctx.request_id.clone(),
            meta: (inbound, outbound),
        }
    }
}

impl Writing<'_> {
    /// Writes a frame the server sent.
    fn sent(&self, message: &Message) {
        let recorder = &self.writer.recorder;
        recorder.record(
            &self.meta.1,
            message.to_json(),
            FrameSummary::of_message(message),
        );
    }

    /// Writes a request the server sent the client; returns its id in the episode.
    fn ask(&self, method: &str, params: Option<Value>) -> RequestId {
        let id = RequestId::String(format!(
            "{}-{}",
            self.conn,
            self.writer.next.fetch_add(1, Ordering::Relaxed)
        ));
        self.sent(&Message::request(id.clone(), method, params));
        id
    }

    /// Writes the client's answer to request `id`.
    fn answered(&self, id: RequestId, answer: &Result<Value, ErrorObject>) {
        let message = outcome(id, answer);
        let recorder = &self.writer.recorder;
        recorder.record(
            &self.meta.0,
            message.to_json(),
            FrameSummary::of_message(&message),
        );
    }

    /// Writes the request's answer.
    fn answer(&self, answer: &Result<Value, ErrorObject>) {
        self.sent(&outcome(self.id.clone(), answer));
        self.writer.recorder.flush();
    }
}

/// A response (or error response) to `id`.
fn outcome(id: RequestId, answer: &Result<Value, ErrorObject>) -> Message {
    match answer {
        Ok(v) => Message::response(id, v.clone()),
        Err(e) => Message::error(Some(id), e.clone()),
    }
}
