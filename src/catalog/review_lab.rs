//! The resource-subscription lab for CLI agents: `test://review/status` moves from version 1 to
//! version 2 a while after it is subscribed to, and subscribers are told.
//!
//! The version is **per session**: every session starts at version 1, and only its own
//! `resources/subscribe` starts its timer (`catalog::Options::update_delay`). When the timer fires
//! the session's resource becomes version 2 and that session alone is sent
//! `notifications/resources/updated` (if it is still subscribed) and, with
//! `catalog::Options::send_list_changed`, `notifications/resources/list_changed`. Unsubscribing
//! before the delay elapses cancels the update; closing the session stops the timer.
//!
//! In the stateless era (2026-07-28) there is no session: a `subscriptions/listen` whose
//! `resourceSubscriptions` name the status URI is the subscription (ending the stream before
//! the delay cancels the update), the update is sent on that stream (tagged with its
//! subscription id), and the version belongs to the client: its stdio connection (every
//! request on it), or over HTTP, where a request has no connection, its `clientInfo.name`.
//!
//! Each step is also written to stderr as one human-readable line (`[resources/read] ...`), so
//! a person watching an agent's session can follow what the server saw and sent.

use super::{text_result, Options};
use crate::catalog::builder::tool;
use crate::error::Error;
use crate::server::handler::{resource_fn, tool_fn};
use crate::server::listeners::{tell, Event};
use crate::server::registry::{ListKind, Registry, Resource, Tool};
use crate::server::scope::ClientInfo;
use crate::server::session::{Phase, Session};
use crate::traffic::TransportKind;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The watched resource.
pub const STATUS_URI: &str = "test://review/status";

/// The tool that returns the same text as the resource.
pub const STATUS_TOOL: &str = "get_review_status";

/// The resource text before the simulated review.
pub const PENDING_TEXT: &str =
    "status: pending\nversion: 1\nmessage: Waiting for simulated review result.";

/// The resource text after the simulated review.
pub const REVIEWED_TEXT: &str =
    "status: reviewed\nversion: 2\nmessage: Simulated review result is now available.";

/// One session's view of the review: its version and its pending update, if any.
#[derive(Default)]
struct ReviewState(Mutex<ReviewInner>);

#[derive(Default)]
struct ReviewInner {
    /// Whether the update happened (version 2).
    reviewed: bool,
    /// Cancels the pending update (a child of the session's `closed` token).
    pending: Option<CancellationToken>,
}

/// The stateless era's review states, by client (see [`Clients::state`]).
#[derive(Default)]
struct Clients(Mutex<HashMap<String, Arc<ReviewState>>>);

impl Clients {
    /// The review state of `session`'s client (`client`: as its request declared it): the
    /// session's own in the handshake era; in the stateless era, where a connection holds no
    /// declarations, the one of its stdio connection (shared by all its requests) or, over
    /// HTTP, of its `clientInfo.name`.
    fn state(&self, session: &Session, client: Option<ClientInfo>) -> Arc<ReviewState> {
        if session.phase() != Phase::Stateless {
            return session.extension::<ReviewState>();
        }
        let key = match session.transport {
            TransportKind::Http | TransportKind::Sse => {
                let name = client.as_ref().and_then(ClientInfo::name);
                format!("client {}", name.as_deref().unwrap_or("?"))
            }
            TransportKind::Stdio | TransportKind::Memory => session.id.to_string(),
        };
        let mut clients = crate::lock::lock(&self.0);
        clients.entry(key).or_default().clone()
    }
}

impl ReviewState {
    fn version(&self) -> u8 {
        if crate::lock::lock(&self.0).reviewed {
            2
        } else {
            1
        }
    }
}

/// The resource text of `version`.
fn status_text(version: u8) -> &'static str {
    if version >= 2 {
        REVIEWED_TEXT
    } else {
        PENDING_TEXT
    }
}

/// Writes one line to stderr in a single write, so lines from concurrent sessions (and the
/// core's own diagnostics) do not interleave.
fn trace(line: std::fmt::Arguments<'_>) {
    let mut text = line.to_string();
    text.push('\n');
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// The name of the trigger that sends every pending update now ([`Registry::triggers`]).
pub const UPDATE_TRIGGER: &str = "review-lab.update";

/// The updates scheduled and not yet sent, server-wide, so a test (or a person at the lab
/// page) can send them now instead of waiting for the delay: each is woken through its own
/// `Notify`, held weakly (an update that was sent or cancelled drops it).
#[derive(Default)]
struct Scheduled(Mutex<Vec<std::sync::Weak<tokio::sync::Notify>>>);

impl Scheduled {
    /// Wakes every update still waiting; how many there were.
    fn fire_all(&self) -> usize {
        let waiting = std::mem::take(&mut *crate::lock::lock(&self.0));
        waiting
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .map(|wake| wake.notify_one())
            .count()
    }

    /// Keeps `wake` among the waiting updates (and forgets the ones already gone).
    fn add(&self, wake: &Arc<tokio::sync::Notify>) {
        let mut waiting = crate::lock::lock(&self.0);
        waiting.retain(|w| w.strong_count() > 0);
        waiting.push(Arc::downgrade(wake));
    }
}

/// Registers this catalog.
pub fn load(registry: &mut Registry, options: &Options) -> Result<(), Error> {
    let clients = Arc::new(Clients::default());
    let scheduled = Arc::new(Scheduled::default());
    let all = scheduled.clone();
    registry.triggers.insert(
        UPDATE_TRIGGER.to_string(),
        Arc::new(move |_server| all.fire_all()),
    );
    registry
        .resources
        .insert(STATUS_URI.to_string(), status_resource(clients.clone()));
    let tool = status_tool(clients.clone())?;
    registry.tools.insert(tool.name().to_string(), tool);
    registry.on_initialized.push(Arc::new(|_server, session| {
        let client = session
            .read(|s| s.declared.client_info.as_ref().and_then(ClientInfo::name))
            .unwrap_or_else(|| "?".into());
        trace(format_args!(
            "[initialize] client connected session={} client={client}",
            session.id
        ));
    }));
    let (delay, list_changed) = (options.update_delay, options.send_list_changed);
    registry
        .on_subscribe
        .push(Arc::new(move |server, session, uri, subscribed| {
            let client = session.read(|s| s.declared.client_info.clone());
            let state = clients.state(&session, client);
            let update = Update {
                delay,
                list_changed,
                clock: server.clock.clone(),
                scheduled: scheduled.clone(),
            };
            on_subscribe(session, state, uri, subscribed, update);
        }));
    Ok(())
}

/// `test://review/status`: the requesting session's version of the review.
fn status_resource(clients: Arc<Clients>) -> Resource {
    let definition = json!({
        "uri": STATUS_URI,
        "name": "review-status",
        "title": "Simulated review status",
        "description": "Status of a simulated review. Per session: version 1 until the session subscribes, version 2 once the update delay has passed (subscribers get notifications/resources/updated).",
        "mimeType": "text/plain"
    });
    let Value::Object(definition) = definition else {
        unreachable!("a JSON object literal")
    };
    Resource {
        definition,
        handler: resource_fn(move |ctx, uri| {
            let version = clients.state(&ctx.session, ctx.client_info()).version();
            async move {
                trace(format_args!(
                    "[resources/read] uri={uri} version={version} session={}",
                    ctx.session.id
                ));
                Ok(vec![json!({
                    "uri": uri,
                    "mimeType": "text/plain",
                    "text": status_text(version)
                })])
            }
        }),
    }
}

/// `get_review_status`: the resource's text for the calling session.
fn status_tool(clients: Arc<Clients>) -> Result<Tool, Error> {
    let definition = tool(STATUS_TOOL)
        .title("Get review status")
        .description("Returns the current text of test://review/status for this session (the same text resources/read returns).")
        .no_input();
    definition.serve(tool_fn(move |ctx, _args| {
        let version = clients.state(&ctx.session, ctx.client_info()).version();
        async move {
            trace(format_args!(
                "[tools/call] name={STATUS_TOOL} version={version} session={}",
                ctx.session.id
            ));
            Ok(text_result(status_text(version).to_string()))
        }
    }))
}

/// When and how the watched resource changes after a subscription.
struct Update {
    /// How long after the subscription.
    delay: Duration,
    /// Also send `notifications/resources/list_changed`.
    list_changed: bool,
    /// The server's clock, which the delay runs on.
    clock: crate::clock::Clock,
    /// Where the update waits to be sent early ([`UPDATE_TRIGGER`]).
    scheduled: Arc<Scheduled>,
}

/// Starts (on subscribe) or cancels (on unsubscribe) the session's pending update, which
/// comes `update.delay` after the subscription (with `list_changed`, a resource list change
/// too).
fn on_subscribe(
    session: Arc<Session>,
    state: Arc<ReviewState>,
    uri: String,
    subscribed: bool,
    update: Update,
) {
    if uri != STATUS_URI {
        return;
    }
    let mut inner = crate::lock::lock(&state.0);
    if !subscribed {
        trace(format_args!(
            "[resources/unsubscribe] uri={uri} session={}",
            session.id
        ));
        if let Some(pending) = inner.pending.take() {
            pending.cancel();
            trace(format_args!(
                "[resource/update] cancelled pending update uri={uri} session={}",
                session.id
            ));
        }
        return;
    }
    trace(format_args!(
        "[resources/subscribe] uri={uri} session={}",
        session.id
    ));
    if inner.reviewed || inner.pending.is_some() {
        // Already at version 2, or an update is on its way: nothing more to schedule.
        return;
    }
    let stop = session.closed.child_token();
    inner.pending = Some(stop.clone());
    drop(inner);
    trace(format_args!(
        "[resource/update] scheduled uri={uri} version=2 in={:.3}s session={}",
        update.delay.as_secs_f64(),
        session.id
    ));
    // The task holds neither the session nor the server: it ends when the session closes, and
    // a closed session's memory is freed right away.
    let weak = Arc::downgrade(&session);
    // Set now, so a manual clock advanced right after the subscription fires it; the timer is
    // kept until the update is sent.
    let mut timer = update.clock.timer();
    let due = timer.sleep(update.delay);
    let list_changed = update.list_changed;
    let wake = Arc::new(tokio::sync::Notify::new());
    update.scheduled.add(&wake);
    tokio::spawn(async move {
        tokio::select! {
            () = stop.cancelled() => return,
            () = due => {}
            () = wake.notified() => {}
        }
        update_now(weak, state, uri, stop, list_changed);
        drop(timer);
    });
}

/// Moves the session to version 2 and tells it (unless the update was cancelled).
fn update_now(
    session: std::sync::Weak<Session>,
    state: Arc<ReviewState>,
    uri: String,
    stop: CancellationToken,
    list_changed: bool,
) {
    let Some(session) = session.upgrade() else {
        return;
    };
    {
        let mut inner = crate::lock::lock(&state.0);
        // An unsubscribe (or close) that raced the timer wins: it cancelled under this lock.
        if stop.is_cancelled() {
            return;
        }
        inner.pending = None;
        inner.reviewed = true;
    }
    trace(format_args!(
        "[resource/update] uri={uri} version=2 session={}",
        session.id
    ));
    // Only to this client: its listen stream (tagged, filtered) or its subscribed session.
    if tell(&session, Event::ResourceUpdated(&uri)) {
        trace(format_args!(
            "[notification/send] notifications/resources/updated uri={uri} session={}",
            session.id
        ));
    }
    if list_changed && tell(&session, Event::ListChanged(ListKind::Resources)) {
        trace(format_args!(
            "[notification/send] {} session={}",
            ListKind::Resources.notification(),
            session.id
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use crate::server::{Server, ServerConfig};
    use crate::transport::memory::{self, MemoryConnection};

    const WAIT: Duration = Duration::from_secs(5);

    fn lab(delay: Duration, send_list_changed: bool) -> Arc<Server> {
        let options = catalog::Options {
            update_delay: delay,
            send_list_changed,
            ..catalog::Options::default()
        };
        let registry = catalog::registry(&["review-lab"], &options).unwrap();
        Server::new(ServerConfig::default(), registry).unwrap()
    }

    fn send(conn: &MemoryConnection, v: Value) {
        conn.to_server
            .as_ref()
            .unwrap()
            .send(v.to_string().into_bytes())
            .unwrap();
    }

    async fn recv(conn: &mut MemoryConnection) -> Value {
        let text = tokio::time::timeout(WAIT, conn.from_server.recv())
            .await
            .expect("timed out")
            .expect("closed");
        serde_json::from_str(&text).unwrap()
    }

    async fn request(conn: &mut MemoryConnection, id: i64, method: &str, params: Value) -> Value {
        send(
            conn,
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        );
        recv(conn).await
    }

    async fn open(server: &Arc<Server>) -> MemoryConnection {
        let mut conn = memory::connect(server, &tokio::runtime::Handle::current());
        let params = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } });
        request(&mut conn, 0, "initialize", params).await;
        send(
            &conn,
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        );
        conn
    }

    async fn read_text(conn: &mut MemoryConnection, id: i64) -> String {
        let r = request(conn, id, "resources/read", json!({ "uri": STATUS_URI })).await;
        r["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[tokio::test]
    async fn subscribe_updates_only_that_session() {
        let server = lab(Duration::from_millis(20), true);
        let mut a = open(&server).await;
        let mut b = open(&server).await;
        assert_eq!(read_text(&mut a, 1).await, PENDING_TEXT);
        let r = request(
            &mut a,
            2,
            "resources/subscribe",
            json!({ "uri": STATUS_URI }),
        )
        .await;
        assert_eq!(r["result"], json!({}));
        let updated = recv(&mut a).await;
        assert_eq!(updated["method"], "notifications/resources/updated");
        assert_eq!(updated["params"], json!({ "uri": STATUS_URI }));
        let listed = recv(&mut a).await;
        assert_eq!(listed["method"], "notifications/resources/list_changed");
        assert_eq!(read_text(&mut a, 3).await, REVIEWED_TEXT);
        // The other session saw nothing and is still at version 1.
        assert_eq!(read_text(&mut b, 1).await, PENDING_TEXT);
    }

    #[tokio::test]
    async fn unsubscribe_cancels_and_close_stops_the_timer() {
        let server = lab(Duration::from_millis(200), false);
        let mut a = open(&server).await;
        request(
            &mut a,
            1,
            "resources/subscribe",
            json!({ "uri": STATUS_URI }),
        )
        .await;
        request(
            &mut a,
            2,
            "resources/unsubscribe",
            json!({ "uri": STATUS_URI }),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(
            a.from_server.try_recv().is_err(),
            "no notification expected"
        );
        assert_eq!(read_text(&mut a, 3).await, PENDING_TEXT);

        request(
            &mut a,
            4,
            "resources/subscribe",
            json!({ "uri": STATUS_URI }),
        )
        .await;
        a.to_server = None; // the client hangs up with the update pending
        let deadline = tokio::time::Instant::now() + WAIT;
        while server.session_count() > 0 {
            assert!(tokio::time::Instant::now() < deadline, "session leaked");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn the_update_trigger_sends_every_pending_update_now() {
        // An hour's delay: only the trigger can send the update within the test's wait.
        let server = lab(Duration::from_secs(3600), false);
        let mut a = open(&server).await;
        assert_eq!(
            server.trigger(UPDATE_TRIGGER),
            Some(0),
            "nothing pending yet"
        );
        request(
            &mut a,
            1,
            "resources/subscribe",
            json!({ "uri": STATUS_URI }),
        )
        .await;
        assert_eq!(server.trigger(UPDATE_TRIGGER), Some(1));
        let updated = recv(&mut a).await;
        assert_eq!(updated["method"], "notifications/resources/updated");
        assert_eq!(read_text(&mut a, 2).await, REVIEWED_TEXT);
        assert_eq!(server.trigger(UPDATE_TRIGGER), Some(0), "already sent");
        assert_eq!(server.trigger("no-such-trigger"), None);
        assert_eq!(server.trigger_names(), vec![UPDATE_TRIGGER.to_string()]);
    }
}
