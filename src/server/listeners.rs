//! The open `subscriptions/listen` streams of a server (2026-07-28) and who hears a broadcast:
//! a [`Listener`] per stream with its [`Filter`], the server's [`Listeners`], and [`tell`] for
//! code that must reach one client in its era's way. Listeners are registered with the server
//! like sessions (weak references, so a stream that ended is forgotten without bookkeeping);
//! the broadcasts that reach handshake sessions reach every listener whose filter asks for
//! them, and nothing else does. The request that opens a stream is served in `listen.rs`.

use super::session::Session;
use super::sink::Sink;
use crate::jsonrpc::{Message, RequestId};
use crate::lock::lock;
use crate::protocol::envelope::SUBSCRIPTION_ID;
use crate::protocol::method_names::{ListKind, NotificationMethod};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use tokio_util::sync::CancellationToken;

/// What one listen stream asked for (`params.notifications`): the schema's `SubscriptionFilter`.
/// Every kind is opt-in, so anything absent or `false` is never sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `toolsListChanged`: `notifications/tools/list_changed`.
    pub tools_list_changed: bool,
    /// `promptsListChanged`: `notifications/prompts/list_changed`.
    pub prompts_list_changed: bool,
    /// `resourcesListChanged`: `notifications/resources/list_changed`.
    pub resources_list_changed: bool,
    /// `resourceSubscriptions`: the URIs whose `notifications/resources/updated` the client
    /// wants (the era's replacement for `resources/subscribe`), in the order sent, without
    /// repeats.
    pub resource_subscriptions: Vec<String>,
    /// `taskIds` (the tasks extension, SEP-2663): the tasks whose `notifications/tasks` the
    /// client wants, in the order sent, without repeats.
    pub task_ids: Vec<String>,
}

impl Filter {
    /// The filter as the acknowledgement reports it: what will be honoured, so `false` flags
    /// and an empty URI list are left out (as the Python SDK acknowledges). This server
    /// honours every kind: its lists change at runtime and every resource can be subscribed.
    pub fn honoured(&self) -> Value {
        let mut out = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools_list_changed),
            ("promptsListChanged", self.prompts_list_changed),
            ("resourcesListChanged", self.resources_list_changed),
        ] {
            if on {
                out.insert(key.into(), true.into());
            }
        }
        if !self.resource_subscriptions.is_empty() {
            out.insert(
                "resourceSubscriptions".into(),
                self.resource_subscriptions.clone().into(),
            );
        }
        if !self.task_ids.is_empty() {
            out.insert("taskIds".into(), self.task_ids.clone().into());
        }
        Value::Object(out)
    }

    /// Whether `event` passes the filter.
    pub fn wants(&self, event: Event<'_>) -> bool {
        match event {
            Event::ListChanged(ListKind::Tools) => self.tools_list_changed,
            Event::ListChanged(ListKind::Prompts) => self.prompts_list_changed,
            Event::ListChanged(ListKind::Resources) => self.resources_list_changed,
            Event::ResourceUpdated(uri) => self.resource_subscriptions.iter().any(|u| u == uri),
            Event::Task(id, _) => self.task_ids.iter().any(|t| t == id),
        }
    }
}

/// A change a listener may be told of: exactly the notifications a `SubscriptionFilter` can
/// name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// A list changed (`notifications/{tools,prompts,resources}/list_changed`).
    ListChanged(ListKind),
    /// A resource changed (`notifications/resources/updated`).
    ResourceUpdated(&'a str),
    /// A stateless task changed (`notifications/tasks`): its id and its `DetailedTask`.
    Task(&'a str, &'a Map<String, Value>),
}

impl Event<'_> {
    /// The notification for a listener whose subscription id is `id`.
    fn notification(self, id: &RequestId) -> Message {
        let meta = json!({ SUBSCRIPTION_ID: id });
        match self {
            Event::ListChanged(kind) => {
                Message::notification(kind.notification(), Some(json!({ "_meta": meta })))
            }
            Event::ResourceUpdated(uri) => Message::notification(
                NotificationMethod::ResourceUpdated.as_str(),
                Some(json!({ "_meta": meta, "uri": uri })),
            ),
            Event::Task(_, task) => {
                let mut params = task.clone();
                params.insert("_meta".into(), meta);
                Message::notification(
                    NotificationMethod::Tasks.as_str(),
                    Some(Value::Object(params)),
                )
            }
        }
    }
}

/// One open listen stream.
pub struct Listener {
    /// The connection it arrived on (a stdio connection, one HTTP POST), so a connection that
    /// ends can end its own streams and no one else's.
    pub conn: Arc<str>,
    /// The listen request's id: the subscription id every frame of the stream carries.
    pub id: RequestId,
    /// What the client asked for.
    pub filter: Filter,
    /// Where the stream's frames go (the POST's SSE stream, the stdio connection).
    sink: Sink,
    /// Fired to end the stream gracefully: the handler then answers with the listen result.
    ended: CancellationToken,
    /// The listen request's cancellation (the client closed the stream, the connection
    /// ended). Checked before each delivery: it fires at once, while the handler that holds
    /// this listener notices only when its task runs next, and nothing may be sent for a
    /// cancelled request in between.
    cancelled: CancellationToken,
}

impl Listener {
    /// A stream for listen request `id` of connection `conn`, sending what `filter` asks for
    /// on `sink` until `cancelled` fires (or it is ended gracefully).
    pub fn new(
        conn: Arc<str>,
        id: RequestId,
        filter: Filter,
        sink: Sink,
        cancelled: CancellationToken,
    ) -> Self {
        Self {
            conn,
            id,
            filter,
            sink,
            ended: CancellationToken::new(),
            cancelled,
        }
    }

    /// Resolves when the stream is ended gracefully ([`Listeners::end`]).
    pub async fn ended(&self) {
        self.ended.cancelled().await;
    }

    /// Makes this the stream `session` serves, so [`tell`] reaches the client on it.
    pub fn serve_on(self: &Arc<Self>, session: &Session) {
        *lock(&session.extension::<Serving>().0) = Some(Arc::downgrade(self));
    }

    /// Sends `event` if the filter asks for it; whether it was sent.
    fn deliver(&self, event: Event<'_>) -> bool {
        self.filter.wants(event)
            && !self.cancelled.is_cancelled()
            && self.sink.send(&event.notification(&self.id))
    }
}

/// The open listen streams of a server.
#[derive(Default)]
pub struct Listeners {
    /// Weak, so a stream that ended (its handler dropped the listener) needs no unregistering.
    open: Mutex<Vec<Weak<Listener>>>,
}

impl Listeners {
    fn lock(&self) -> MutexGuard<'_, Vec<Weak<Listener>>> {
        lock(&self.open)
    }

    /// The streams still open.
    fn live(&self) -> Vec<Arc<Listener>> {
        self.lock()
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|l| !l.cancelled.is_cancelled())
            .collect()
    }

    /// Registers `listener` and sends its acknowledgement as one step, so a broadcast either
    /// happened before the stream existed (not delivered) or comes after the ack, never before.
    pub fn open(&self, listener: &Arc<Listener>) -> bool {
        let mut open = self.lock();
        let ack = Message::notification(
            NotificationMethod::SubscriptionsAcknowledged.as_str(),
            Some(json!({
                "_meta": { SUBSCRIPTION_ID: listener.id },
                "notifications": listener.filter.honoured(),
            })),
        );
        if !listener.sink.send(&ack) {
            return false;
        }
        open.retain(|l| l.strong_count() > 0);
        open.push(Arc::downgrade(listener));
        true
    }

    /// Sends `event` to every stream that asked for it; how many got it.
    pub fn broadcast(&self, event: Event<'_>) -> usize {
        self.live().iter().filter(|l| l.deliver(event)).count()
    }

    /// Whether an open stream names task `id` in its filter: a task's update is built into a
    /// notification only then (most tasks have no listener, and building the `DetailedTask`
    /// copies its result).
    pub fn want_task(&self, id: &str) -> bool {
        self.live()
            .iter()
            .any(|l| l.filter.task_ids.iter().any(|t| t == id))
    }

    /// How many streams are open.
    pub fn count(&self) -> usize {
        self.lock()
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|l| !l.cancelled.is_cancelled())
            .count()
    }

    /// Ends the streams of connection `conn` (every stream: `None`) gracefully; how many.
    pub fn end(&self, conn: Option<&str>) -> usize {
        let ending: Vec<_> = self
            .live()
            .into_iter()
            .filter(|l| conn.is_none_or(|c| &*l.conn == c))
            .collect();
        for l in &ending {
            l.ended.cancel();
        }
        ending.len()
    }
}

/// The listen stream a session stands for, if it stands for one (a session extension).
#[derive(Default)]
struct Serving(Mutex<Option<Weak<Listener>>>);

/// Tells `session` of `event` the way its era delivers it: the session that stands for a listen
/// stream gets it on that stream, tagged, if its filter asks for it; a handshake-era session gets
/// `resources/updated` for a URI it subscribed to and every list change. For code that keeps
/// per-client state and must reach that one client (a catalog's timer), where
/// [`Server::notify_resource_updated`] would reach everyone. Returns whether it was sent.
pub fn tell(session: &Session, event: Event<'_>) -> bool {
    let serving = session
        .extension::<Serving>()
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_ref()
        .and_then(Weak::upgrade);
    if let Some(listener) = serving {
        return listener.deliver(event);
    }
    let note = match event {
        Event::Task(..) => return false, // the handshake era announces tasks itself
        Event::ListChanged(kind) => Message::notification(kind.notification(), None),
        Event::ResourceUpdated(uri) => {
            if !session.read(|s| s.subscriptions.contains(uri)) {
                return false;
            }
            Message::notification(
                NotificationMethod::ResourceUpdated.as_str(),
                Some(json!({ "uri": uri })),
            )
        }
    };
    session.sink.send(&note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::ErrorObject;

    fn filter(notifications: Value) -> Result<Filter, ErrorObject> {
        let params = json!({ "notifications": notifications });
        Filter::parse(params.as_object().unwrap())
    }

    #[test]
    fn the_ack_reports_only_what_is_honoured() {
        let f = filter(json!({
            "toolsListChanged": true,
            "promptsListChanged": false,
            "resourceSubscriptions": [],
        }))
        .unwrap();
        assert_eq!(f.honoured(), json!({ "toolsListChanged": true }));
        let f = filter(json!({ "resourceSubscriptions": ["a://x", "a://x", "b://y"] })).unwrap();
        assert_eq!(
            f.honoured(),
            json!({ "resourceSubscriptions": ["a://x", "b://y"] })
        );
    }

    #[test]
    fn filtering_is_exact() {
        let f = filter(json!({ "promptsListChanged": true, "resourceSubscriptions": ["a://x"] }))
            .unwrap();
        assert!(f.wants(Event::ListChanged(ListKind::Prompts)));
        assert!(!f.wants(Event::ListChanged(ListKind::Tools)));
        assert!(!f.wants(Event::ListChanged(ListKind::Resources)));
        assert!(f.wants(Event::ResourceUpdated("a://x")));
        assert!(!f.wants(Event::ResourceUpdated("a://xy")));
    }

    #[test]
    fn a_malformed_filter_is_invalid_params() {
        for bad in [
            json!(null),
            json!([]),
            json!({ "toolsListChanged": "yes" }),
            json!({ "resourceSubscriptions": "a://x" }),
            json!({ "resourceSubscriptions": [1] }),
        ] {
            let e = filter(bad.clone()).unwrap_err();
            assert_eq!(e.code, crate::jsonrpc::code::INVALID_PARAMS, "{bad}");
        }
        assert_eq!(filter(json!({})).unwrap(), Filter::default());
    }

    #[test]
    fn the_ack_leads_and_a_cancelled_or_dropped_stream_hears_nothing() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Arc<str>>();
        let recorder = Arc::new(crate::traffic::Recorder::new(None, None).unwrap());
        let sink = Sink::new(
            Arc::new(tx),
            crate::server::seams::Wire::bare(recorder),
            crate::traffic::TransportKind::Memory,
            "m".into(),
        );
        let listeners = Listeners::default();
        let cancelled = CancellationToken::new();
        let listener = Arc::new(Listener {
            conn: "m".into(),
            id: RequestId::String("l".into()),
            filter: filter(json!({ "toolsListChanged": true })).unwrap(),
            sink,
            ended: CancellationToken::new(),
            cancelled: cancelled.clone(),
        });
        assert_eq!(listeners.broadcast(Event::ListChanged(ListKind::Tools)), 0);
        assert!(listeners.open(&listener));
        let next = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<Arc<str>>| {
            serde_json::from_str::<Value>(&rx.try_recv().unwrap()).unwrap()["method"].clone()
        };
        assert_eq!(next(&mut rx), "notifications/subscriptions/acknowledged");
        assert_eq!(
            listeners.broadcast(Event::ListChanged(ListKind::Prompts)),
            0
        );
        assert_eq!(listeners.broadcast(Event::ListChanged(ListKind::Tools)), 1);
        assert_eq!(next(&mut rx), "notifications/tools/list_changed");
        assert_eq!((listeners.count(), listeners.end(Some("other"))), (1, 0));
        cancelled.cancel();
        assert_eq!(listeners.broadcast(Event::ListChanged(ListKind::Tools)), 0);
        assert_eq!(listeners.count(), 0);
        drop(listener);
        assert!(listeners.live().is_empty());
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn events_carry_the_subscription_id_with_its_type() {
        let note = Event::ResourceUpdated("a://x").notification(&RequestId::from(7_i64));
        assert_eq!(
            note.to_value(),
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": { "_meta": { SUBSCRIPTION_ID: 7 }, "uri": "a://x" },
            })
        );
    }
}
