//! Replay: a server that answers from recorded traffic (`--record` files) instead of a catalog.
//! A request is matched with a recorded one (by method and params, under [`Settings`]), and
//! gets what it got then: the notifications and requests to the client the server sent while
//! serving it, then its answer; what followed the answer follows it again. A request with no
//! recorded answer gets a `-32099` error naming the closest recorded request and how it
//! differs ([`responder::NOT_RECORDED`]). The core around it is the usual one: transports,
//! eras, the recorder, fault rules and the control API work on a replaying server as on any
//! other.
//!
//! - [`recording`]: the records read back, as episodes.
//! - [`matching`]: how a live request is compared with a recorded one.
//! - [`responder`]: the answers.
//! - [`upstream`]: a connection to a real server (a command or a URL), for recording.
//! - [`passing`]: requests passed to it, and their answers written as new episodes.
//! - [`verify`]: a recording's client side sent to a live server, its answers compared.

pub mod matching;
pub mod passing;
pub mod recording;
pub mod responder;
pub mod upstream;
pub mod verify;

use crate::server::registry::Registry;
pub use matching::Settings;
pub use recording::Recording;
pub use responder::{Passes, Replay, Upstreaming, NOT_RECORDED};
use std::sync::Arc;

/// The registry of a server replaying `replay`: no definitions, the replay answering every
/// request and following every client notification.
pub fn registry(replay: &Arc<Replay>) -> Registry {
    let mut registry = Registry {
        responder: Some(Arc::new(responder::Responding(replay.clone()))),
        ..Registry::default()
    };
    let on_notification = replay.clone();
    registry
        .on_notification
        .push(Arc::new(move |server, session, method, params| {
            responder::on_notification(&on_notification, &server, &session, method, params);
        }));
    let on_initialized = replay.clone();
    registry
        .on_initialized
        .push(Arc::new(move |server, session| {
            let method = "notifications/initialized";
            responder::on_notification(&on_initialized, &server, &session, method, None);
        }));
    registry
}
