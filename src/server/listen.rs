//! `subscriptions/listen` (2026-07-28): the stateless era's only way for a client to hear of
//! changes. A listen request opens a stream that never answers on its own: the server first
//! acknowledges the filter it honours (`notifications/subscriptions/acknowledged`), then sends
//! every matching notification tagged with the listen request's id
//! (`_meta["io.modelcontextprotocol/subscriptionId"]`). The stream ends when the client closes
//! it (HTTP: drops the response; stdio: `notifications/cancelled`), with nothing more sent, or
//! when the server ends it gracefully ([`Server::end_listeners`]), with the listen result.
//!
//! Listeners are registered with the [`Server`] like sessions (weak references, so a stream
//! that ended is forgotten without bookkeeping); the broadcasts that reach handshake sessions
//! (`Server::notify_list_changed`, `Server::notify_resource_updated`, runtime registration)
//! reach every listener whose filter asks for them, and nothing else does.

use super::context::RequestContext;
use super::registry::ListKind;
use super::sink::Sink;
use super::Server;
use crate::jsonrpc::{ErrorObject, Message, RequestId};
use crate::protocol::envelope::SUBSCRIPTION_ID;
use crate::protocol::methods::NotificationMethod;
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
    /// Reads `params.notifications` (required by the schema); a malformed filter is `-32602`
    /// naming the field, so a client never silently listens to less than it meant to.
    pub fn parse(params: &Map<String, Value>) -> Result<Self, ErrorObject> {
        let notifications = super::methods::required_object(params, "notifications")?;
        let flag = |key: &str| match notifications.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(ErrorObject::invalid_params(format!(
                "\"notifications.{key}\" must be a boolean, got {}",
                crate::jsonrpc::json_type(other)
            ))),
        };
        let strings = |key: &str| -> Result<Vec<String>, ErrorObject> {
            let mut out: Vec<String> = Vec::new();
            match notifications.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for item in items {
                        let Value::String(item) = item else {
                            return Err(ErrorObject::invalid_params(format!(
                                "\"notifications.{key}\" must be an array of strings"
                            )));
                        };
                        if !out.contains(item) {
                            out.push(item.clone());
                        }
                    }
                }
                Some(other) => {
                    return Err(ErrorObject::invalid_params(format!(
                        "\"notifications.{key}\" must be an array, got {}",
                        crate::jsonrpc::json_type(other)
                    )))
                }
            }
            Ok(out)
        };
        Ok(Self {
            tools_list_changed: flag("toolsListChanged")?,
            prompts_list_changed: flag("promptsListChanged")?,
            resources_list_changed: flag("resourcesListChanged")?,
            resource_subscriptions: strings("resourceSubscriptions")?,
            task_ids: strings("taskIds")?,
        })
    }

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
        self.open.lock().unwrap_or_else(|e| e.into_inner())
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
    fn open(&self, listener: &Arc<Listener>) -> bool {
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

impl Server {
    /// Ends the listen streams of connection `conn` (or all of them) gracefully: each one is
    /// answered with the listen result (`{"_meta":{subscriptionId},"resultType":"complete"}`),
    /// which tells the client the stream ended on purpose. Returns how many were ended.
    pub fn end_listeners(&self, conn: Option<&str>) -> usize {
        self.listeners.end(conn)
    }

    /// How many listen streams are open.
    pub fn listener_count(&self) -> usize {
        self.listeners.count()
    }
}

/// The listen stream a request's own session serves, if it serves one (a session extension).
#[derive(Default)]
struct Serving(Mutex<Option<Weak<Listener>>>);

/// Tells `session` of `event` the way its era delivers it: the session of a listen request
/// gets it on its stream, tagged, if its filter asks for it; a handshake-era session gets
/// `resources/updated` for a URI it subscribed to and every list change. For code that keeps
/// per-client state and must reach that one client (a catalog's timer), where
/// [`Server::notify_resource_updated`] would reach everyone. Returns whether it was sent.
pub fn tell(session: &super::session::Session, event: Event<'_>) -> bool {
    let serving = session
        .extension::<Serving>()
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner())
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

/// Serves `subscriptions/listen`: acknowledge, register, then wait. The handler never answers
/// while the stream is open; a client closing it cancels the request (nothing more is sent), a
/// graceful end answers with the listen result.
pub async fn listen(
    server: &Arc<Server>,
    ctx: RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let filter = Filter::parse(params)?;
    if !filter.task_ids.is_empty() && !super::tasks::client_declares_extension(&ctx) {
        return Err(super::tasks::extension_required(
            "Listening to tasks (notifications.taskIds)",
        ));
    }
    let listener = Arc::new(Listener {
        conn: ctx.session.id.clone(),
        id: ctx.request_id.clone(),
        filter,
        sink: ctx.sink.clone(),
        ended: CancellationToken::new(),
        cancelled: ctx.cancel.clone(),
    });
    // The stream carries only what its filter names: nothing a hook logs goes on it.
    let uris = listener.filter.resource_subscriptions.clone();
    ctx.session.update(|s| {
        s.log_filter = crate::protocol::LogFilter::Off;
        s.subscriptions = uris.iter().cloned().collect();
    });
    *ctx.session
        .extension::<Serving>()
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(Arc::downgrade(&listener));
    if !server.listeners.open(&listener) {
        return Err(ErrorObject::internal("the connection is closed"));
    }
    // `resourceSubscriptions` is the era's `resources/subscribe`: catalogs that act on a
    // subscription (review-lab's timer) see one, made by this stream's own session.
    let registry = server.registry();
    for uri in uris {
        for hook in &registry.on_subscribe {
            hook(server.clone(), ctx.session.clone(), uri.clone(), true);
        }
    }
    listener.ended.cancelled().await;
    Ok(json!({ "_meta": { SUBSCRIPTION_ID: listener.id } }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            recorder,
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
