//! v1's automatic per-session timers, started at `initialized`: a
//! `notifications/resources/updated` for every subscribed resource every 10 s, and a random log
//! message every 15 s.

use crate::catalog::{clock_seed, every, random_log, session_id};
use crate::jsonrpc::Message;
use crate::server::session::Session;
use crate::server::Server;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The reference interval of the subscription-update timer.
const UPDATE_INTERVAL: Duration = Duration::from_secs(10);
/// The reference interval of the random-log timer.
const LOG_INTERVAL: Duration = Duration::from_secs(15);

/// Starts both timers for `session`; they stop when it closes.
pub fn start(server: &Server, session: &Arc<Session>) {
    every(
        session,
        server.tick(UPDATE_INTERVAL),
        session.closed.clone(),
        |session| {
            let mut uris: Vec<String> = session.state().subscriptions.into_iter().collect();
            uris.sort();
            for uri in uris {
                session.sink.send(&Message::notification(
                    "notifications/resources/updated",
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    );

    let mut seed = clock_seed();
    every(
        session,
        server.tick(LOG_INTERVAL),
        session.closed.clone(),
        move |session| {
            let (level, text) = random_log(&mut seed);
            let data = match session_id(session) {
                Some(id) => format!("{text} - SessionId {id}"),
                None => text.to_string(),
            };
            session.log_to(&session.sink, level, Value::String(data), None);
        },
    );
}
