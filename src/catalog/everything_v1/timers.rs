//! v1's automatic per-session timers, started at `initialized`: a
//! `notifications/resources/updated` for every subscribed resource every 10 s, and a random log
//! message every 15 s.

use crate::catalog::{clock_seed, every, random_log, session_id, Options};
use crate::clock::Clock;
use crate::jsonrpc::Message;
use crate::protocol::method_names::NotificationMethod;
use crate::server::session::Session;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The reference interval of the subscription-update timer.
const UPDATE_INTERVAL: Duration = Duration::from_secs(10);
/// The reference interval of the random-log timer.
const LOG_INTERVAL: Duration = Duration::from_secs(15);

/// The two timers' intervals: the reference's, or the configured tick.
#[derive(Clone, Copy)]
pub struct Intervals {
    /// Between two rounds of `notifications/resources/updated`.
    update: Duration,
    /// Between two random log messages.
    log: Duration,
}

impl Intervals {
    /// The intervals `options` ask for.
    pub fn new(options: &Options) -> Self {
        Self {
            update: options.tick(UPDATE_INTERVAL),
            log: options.tick(LOG_INTERVAL),
        }
    }
}

/// Starts both timers for `session`; they stop when it closes.
pub fn start(clock: &Clock, session: &Arc<Session>, intervals: Intervals) {
    every(
        clock,
        session,
        intervals.update,
        session.closed.clone(),
        |session| {
            let mut uris: Vec<String> = session.state().subscriptions.into_iter().collect();
            uris.sort();
            for uri in uris {
                session.sink.send(&Message::notification(
                    NotificationMethod::ResourceUpdated.as_str(),
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    );

    let mut seed = clock_seed();
    every(
        clock,
        session,
        intervals.log,
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
