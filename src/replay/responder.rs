//! The replaying server's answers: each live request is matched with a recorded [`Episode`],
//! what the server sent while serving it is sent again in order (its requests to the client
//! asked again, the client's answers matched in turn), then its recorded answer; what followed
//! the answer is sent after it, as far apart as it was recorded (on the server's clock, so a
//! test clock moves it).

use super::matching::{agree, differences, live_request, Difference, Ignore, Settings};
use super::passing::{self, EpisodeWriter, Links};
use super::recording::{Episode, Recording, Sent, Step};
use crate::jsonrpc::{ErrorObject, Message, RequestId};
use crate::lock::lock;
use crate::server::context::RequestContext;
use crate::server::handler::BoxFuture;
use crate::server::model::{Responder, Server};
use crate::server::session::Session;
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The code of every answer a replay cannot give (a request not recorded, recorded answers
/// used up, a request out of the recorded order, a client answer the recording does not
/// have): the last of JSON-RPC's server-defined codes, which nothing else here uses.
pub const NOT_RECORDED: i64 = -32099;

/// How many differences an error names at most.
const DIFFERENCES_SHOWN: usize = 10;

/// The shortest wait before a frame that followed an answer: enough for the answer to leave
/// first on a connection without streams.
const AFTER_AT_LEAST: Duration = Duration::from_millis(1);

/// Frames recorded this soon after a client notification were the server's reaction to it:
/// replayed at once, in frame order. Later ones (a timer's) keep their recorded distance.
const AT_ONCE: Duration = Duration::from_millis(10);

/// A recording being replayed: its episodes and which of them were used.
pub struct Replay {
    /// What is replayed.
    recording: Recording,
    /// How requests are matched.
    settings: Settings,
    /// Which episodes and triggers were used.
    used: Mutex<Used>,
    /// The real server requests are passed to, when recording (`upstream`).
    upstream: Option<Upstreaming>,
}

/// Passing requests to a real server while replaying (record modes with an `upstream`).
pub struct Upstreaming {
    /// The connections to it.
    pub links: Links,
    /// Which requests go there.
    pub passes: Passes,
}

/// Which requests a replay passes to the real server.
pub enum Passes {
    /// All of them (record modes `once` with no recording yet, and `all`): the server's own
    /// recorder writes the recording.
    Everything,
    /// Those the recording has no answer for (`new_episodes`), each written to the recording
    /// as a new episode.
    Unmatched(Box<EpisodeWriter>),
}

/// What a replay has given out so far.
struct Used {
    /// Per episode: answered already.
    episodes: Vec<bool>,
    /// Per trigger: followed already.
    triggers: Vec<bool>,
}

/// The recorded connection a live session replays, once its first request matched one
/// (a session extension): its later requests prefer that connection's episodes.
#[derive(Default)]
struct Bound(Mutex<Option<Arc<str>>>);

/// Why a request has no recorded answer.
enum Miss {
    /// Nothing recorded matches it.
    NotRecorded,
    /// What matches was used, and `repeat` is off.
    UsedUp(usize),
    /// The next recorded request is another (order `recorded`).
    OutOfOrder(usize),
}

impl Replay {
    /// A replay of `recording` matched as `settings` say, passing requests to `upstream` as it
    /// says.
    pub fn new(recording: Recording, settings: Settings, upstream: Option<Upstreaming>) -> Self {
        let used = Used {
            episodes: vec![false; recording.episodes.len()],
            triggers: vec![false; recording.triggers.len()],
        };
        Self {
            recording,
            settings,
            used: Mutex::new(used),
            upstream,
        }
    }

    /// What is replayed.
    pub fn recording(&self) -> &Recording {
        &self.recording
    }

    /// The episode for `live` (method `method`) on a session bound to `bound`: the first
    /// unused match, the bound connection's first (or, in recorded order, the next one); when
    /// every match was used, the last of them again (`repeat`).
    fn choose(
        &self,
        bound: Option<&str>,
        live: &Value,
        method: &str,
    ) -> Result<usize, ErrorObject> {
        let episodes = &self.recording.episodes;
        let ignore = &self.settings.ignore;
        let mut used = lock(&self.used);
        let rank = |i: &usize| (bound.is_some_and(|b| *episodes[*i].conn != *b), *i);
        let fits =
            |i: usize| episodes[i].method == method && agree(&episodes[i].request, live, ignore);
        let matching: Vec<usize> = (0..episodes.len()).filter(|&i| fits(i)).collect();
        let fresh = if self.settings.in_order {
            match (0..episodes.len())
                .filter(|&i| !used.episodes[i])
                .min_by_key(rank)
            {
                Some(i) if fits(i) => Some(i),
                Some(i) => return Err(self.miss(Miss::OutOfOrder(i), live, method)),
                None => None,
            }
        } else {
            matching
                .iter()
                .copied()
                .filter(|&i| !used.episodes[i])
                .min_by_key(rank)
        };
        if let Some(i) = fresh {
            used.episodes[i] = true;
            return Ok(i);
        }
        match matching.iter().copied().max_by_key(|i| (!rank(i).0, *i)) {
            Some(last) if self.settings.repeat => Ok(last),
            Some(last) => Err(self.miss(Miss::UsedUp(last), live, method)),
            None => Err(self.miss(Miss::NotRecorded, live, method)),
        }
    }

    /// Whether episode `i` binds a session to its connection (a handshake opens one).
    fn binds(&self, i: usize) -> bool {
        self.recording.episodes[i].method == "initialize"
    }

    /// The error for a request without a recorded answer, naming the closest recorded request
    /// and how it differs.
    fn miss(&self, miss: Miss, live: &Value, method: &str) -> ErrorObject {
        let episodes = &self.recording.episodes;
        let ignore = &self.settings.ignore;
        let closest = match miss {
            Miss::UsedUp(i) | Miss::OutOfOrder(i) => Some(i),
            Miss::NotRecorded => (0..episodes.len()).min_by_key(|&i| {
                let apart = differences(&episodes[i].request, live, ignore, 1000).len();
                (usize::from(episodes[i].method != method), apart, i)
            }),
        };
        let diff = closest
            .map(|i| differences(&episodes[i].request, live, ignore, DIFFERENCES_SHOWN))
            .unwrap_or_default();
        let (reason, message) = match (&miss, closest) {
            (Miss::NotRecorded, None) => (
                "not_recorded",
                format!("no recorded answer for {method}: the recording has no requests"),
            ),
            (Miss::NotRecorded, Some(i)) => (
                "not_recorded",
                format!(
                    "no recorded answer for {method}: the closest recorded request (seq {}, {}) differs at {}",
                    episodes[i].seq,
                    episodes[i].method,
                    paths(&diff)
                ),
            ),
            (Miss::UsedUp(_), _) => (
                "used_up",
                format!("every recorded answer to this {method} was given already (repeat is off)"),
            ),
            (Miss::OutOfOrder(i), _) => (
                "out_of_order",
                format!(
                    "{method} is not the next recorded request: that is {} (seq {})",
                    episodes[*i].method, episodes[*i].seq
                ),
            ),
        };
        let mut data = Map::new();
        data.insert("replay".into(), reason.into());
        data.insert("method".into(), method.into());
        if let Some(i) = closest {
            data.insert("closest".into(), closest_value(&episodes[i]));
            data.insert("differences".into(), json!(diff));
        }
        ErrorObject::new(NOT_RECORDED, message).with_data(Value::Object(data))
    }

    /// After the client answered step `at` of episode `current` with `got`: the episode to
    /// go on with, `current` when its recorded answer agrees, else another recording of the
    /// same request whose steps so far and answer here agree (taking its place), or the error
    /// saying the recording has no such answer.
    fn settle(
        &self,
        current: usize,
        at: usize,
        live: &Value,
        got: &Result<Value, ErrorObject>,
    ) -> Result<usize, ErrorObject> {
        let episodes = &self.recording.episodes;
        let got = outcome_value(got);
        let ignore = Ignore::new(&["/result/_meta"]).unwrap_or_default();
        let answered = |i: usize| match episodes[i].steps.get(at).map(|s| &s.sent) {
            Some(Sent::Ask {
                answer: Some(a), ..
            }) => agree(&outcome_value(a), &got, &ignore),
            _ => false,
        };
        if answered(current) {
            return Ok(current);
        }
        let mut used = lock(&self.used);
        let same = |i: usize| {
            episodes[i].method == episodes[current].method
                && agree(&episodes[i].request, live, &self.settings.ignore)
        };
        if let Some(other) =
            (0..episodes.len()).find(|&i| !used.episodes[i] && same(i) && answered(i))
        {
            used.episodes[current] = false;
            used.episodes[other] = true;
            return Ok(other);
        }
        let (method, recorded) = match episodes[current].steps.get(at).map(|s| &s.sent) {
            Some(Sent::Ask { method, answer, .. }) => {
                (method.clone(), answer.as_ref().map(outcome_value))
            }
            _ => (String::new(), None),
        };
        let diff = recorded
            .map(|r| differences(&r, &got, &ignore, DIFFERENCES_SHOWN))
            .unwrap_or_default();
        Err(ErrorObject::new(
            NOT_RECORDED,
            format!(
                "the client's answer to {method} differs from the recording at {}",
                paths(&diff)
            ),
        )
        .with_data(json!({
            "replay": "answer_differs",
            "method": episodes[current].method,
            "closest": closest_value(&episodes[current]),
            "differences": diff,
        })))
    }

    /// Sends `steps` (what followed an answer or a notification) on `session`, each as long
    /// after the one before as recorded; stops when the session ends.
    fn follow(server: &Arc<Server>, session: &Arc<Session>, steps: Vec<Step>) {
        if steps.is_empty() {
            return;
        }
        let (server, session) = (server.clone(), session.clone());
        tokio::spawn(async move {
            for step in steps {
                tokio::select! {
                    () = server.clock.sleep(step.delay.max(AFTER_AT_LEAST)) => {}
                    () = session.closed.cancelled() => return,
                }
                let sink = session.sink.clone();
                match step.sent {
                    Sent::Notify { method, params } => {
                        sink.send(&Message::notification(method, params));
                    }
                    Sent::Ask { method, params, .. } => {
                        let _ = session.request(&sink, &method, params).await;
                    }
                }
            }
        });
    }

    /// A client notification arrived on `session`: what followed the first unused recording
    /// of it (the bound connection's first) is sent after it.
    fn notified(
        &self,
        server: &Arc<Server>,
        session: &Arc<Session>,
        method: &str,
        params: Option<&Value>,
    ) {
        if let Some(up) = &self.upstream {
            up.links.notify(session, method, params);
        }
        let bound = lock(&session.extension::<Bound>().0).clone();
        let triggers = &self.recording.triggers;
        let chosen = {
            let mut used = lock(&self.used);
            let found = (0..triggers.len())
                .filter(|&i| !used.triggers[i] && triggers[i].method == method)
                .min_by_key(|&i| (bound.as_ref().is_some_and(|b| *triggers[i].conn != **b), i));
            if let Some(i) = found {
                used.triggers[i] = true;
            }
            found
        };
        let Some(i) = chosen else { return };
        // What the server sent at once in reaction (a list_changed after `initialized`) is
        // sent at once here too, in frame order, before the client's next frame is served.
        let steps = &triggers[i].after;
        let at_once = steps
            .iter()
            .take_while(|s| s.delay < AT_ONCE && matches!(s.sent, Sent::Notify { .. }))
            .count();
        for step in &steps[..at_once] {
            if let Sent::Notify { method, params } = &step.sent {
                session
                    .sink
                    .send(&Message::notification(method.clone(), params.clone()));
            }
        }
        Self::follow(server, session, steps[at_once..].to_vec());
    }

    /// Serves request `ctx` (params `params`): from the recording, or from the real server
    /// (everything, or what the recording lacks); an `initialize` answer sets the session's
    /// revision to the one it names.
    async fn serve(
        self: Arc<Self>,
        ctx: RequestContext,
        params: Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let answer = match &self.upstream {
            Some(
                up @ Upstreaming {
                    passes: Passes::Everything,
                    ..
                },
            ) => self.pass(up, &ctx, params, None).await,
            Some(
                up @ Upstreaming {
                    passes: Passes::Unmatched(writer),
                    ..
                },
            ) => match self.replay(&ctx, params.clone()).await {
                Err(e) if e.code == NOT_RECORDED => self.pass(up, &ctx, params, Some(writer)).await,
                other => other,
            },
            None => self.replay(&ctx, params).await,
        };
        if ctx.method == "initialize" {
            let revision = match &answer {
                Ok(result) => result["protocolVersion"]
                    .as_str()
                    .and_then(|v| v.parse().ok()),
                Err(_) => None,
            };
            if let Some(revision) = revision {
                ctx.session.update(|s| s.revision = Some(revision));
            }
        }
        answer
    }

    /// Passes `ctx`'s request to the real server (see [`passing::forward`]).
    async fn pass(
        &self,
        up: &Upstreaming,
        ctx: &RequestContext,
        mut params: Map<String, Value>,
        writer: Option<&EpisodeWriter>,
    ) -> Result<Value, ErrorObject> {
        let link = up.links.of(ctx).await?;
        if let Some(meta) = &ctx.meta {
            params.insert("_meta".into(), Value::Object(meta.to_map()));
        }
        passing::forward(ctx, &link, params, writer).await
    }

    /// Serves request `ctx` (params `params`) from the recording: see the module's doc.
    async fn replay(
        &self,
        ctx: &RequestContext,
        params: Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let meta = ctx.meta.as_ref().map(|m| m.to_map());
        let live_token = meta.as_ref().and_then(|m| m.get("progressToken")).cloned();
        let live = live_request(&id_value(&ctx.request_id), &ctx.method, &params, meta);
        let bound = ctx.session.extension::<Bound>();
        let was = lock(&bound.0).clone();
        let mut current = self.choose(was.as_deref(), &live, &ctx.method)?;
        let episodes = &self.recording.episodes;
        if was.is_none() && self.binds(current) {
            *lock(&bound.0) = Some(episodes[current].conn.clone());
        }
        let mut at = 0;
        while let Some(step) = episodes[current].steps.get(at) {
            let sink = match step.standalone {
                true => ctx.session.sink.clone(),
                false => ctx.sink.clone(),
            };
            match &step.sent {
                Sent::Notify { method, params } => {
                    let params = with_token(params, &episodes[current], live_token.as_ref());
                    sink.send(&Message::notification(method.clone(), params));
                }
                Sent::Ask { method, params, .. } => {
                    let got = tokio::select! {
                        got = ctx.session.request(&sink, method, params.clone()) => got,
                        () = ctx.cancelled() => return Err(ErrorObject::internal("the request was cancelled")),
                    };
                    current = self.settle(current, at, &live, &got)?;
                }
            }
            at += 1;
        }
        Self::follow(&ctx.server, &ctx.session, episodes[current].after.clone());
        match &episodes[current].answer {
            Some(answer) => answer.clone(),
            None => {
                // Never answered in the recording (cancelled, or a stream still open when it
                // ended): held the same way, until the client cancels it or goes.
                ctx.cancelled().await;
                Err(ErrorObject::internal("the request was cancelled"))
            }
        }
    }
}

/// The replay as the registry's responder.
pub struct Responding(pub Arc<Replay>);

impl Responder for Responding {
    fn answer(
        &self,
        ctx: RequestContext,
        params: Map<String, Value>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        Box::pin(self.0.clone().serve(ctx, params))
    }
}

/// The hooks a replay needs besides its responder: a client notification is followed by what
/// followed it in the recording.
pub fn on_notification(
    replay: &Arc<Replay>,
    server: &Arc<Server>,
    session: &Arc<Session>,
    method: &str,
    params: Option<&Value>,
) {
    replay.notified(server, session, method, params);
}

/// A progress notification's params naming the live request's `progressToken` where the
/// recorded one named the recorded request's.
fn with_token(params: &Option<Value>, episode: &Episode, live: Option<&Value>) -> Option<Value> {
    let (Some(Value::Object(p)), Some(recorded), Some(live)) =
        (params, &episode.progress_token, live)
    else {
        return params.clone();
    };
    if p.get("progressToken") != Some(recorded) {
        return params.clone();
    }
    let mut p = p.clone();
    p.insert("progressToken".into(), live.clone());
    Some(Value::Object(p))
}

/// An answer as compared: `{"result": …}` or `{"error": …}`.
fn outcome_value(answer: &Result<Value, ErrorObject>) -> Value {
    match answer {
        Ok(result) => json!({ "result": result }),
        Err(error) => json!({ "error": error }),
    }
}

/// What an error says of the recorded request it names.
fn closest_value(episode: &Episode) -> Value {
    let (file, conn) = episode.conn.split_once(':').unwrap_or(("", &episode.conn));
    json!({
        "seq": episode.seq,
        "conn": conn,
        "file": file.split('#').next().and_then(|f| f.parse::<u64>().ok()),
        "request": episode.request,
    })
}

/// The paths of `diff`, for a message.
fn paths(diff: &[Difference]) -> String {
    match diff.len() {
        0 => "nothing the matching compares".into(),
        _ => diff
            .iter()
            .map(|d| {
                if d.path.is_empty() {
                    "/".to_string()
                } else {
                    d.path.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// An id as JSON.
fn id_value(id: &RequestId) -> Value {
    serde_json::to_value(id).unwrap_or(Value::Null)
}
