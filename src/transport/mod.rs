//! Transports move frames between a client and the [`Server`]. The stream transports (stdio,
//! in-memory, the relay) read frames, hand them to [`drive`], and write what the connection's
//! sink produces; the HTTP transports ([`http`]) take one frame per request instead.

pub mod http;
pub mod memory;
pub mod relay;
pub mod stdio;

use crate::server::dispatch::Work;
use crate::server::exchange::Origin;
use crate::server::session::Session;
use crate::server::Server;
use futures::{Stream, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long in-flight requests may still finish (and be answered) after the client closed
/// its side, before they are cancelled. Keeps `printf '…' | everything-mcp` useful while the
/// process still exits within 100 ms of EOF.
pub const CLOSE_GRACE: Duration = Duration::from_millis(50);

/// How long, at most, the requests read before the client closed wait for their first run
/// before [`CLOSE_GRACE`] starts: a request is never cancelled unrun because the machine was busy
/// (a loaded CI host stalled the process past the grace before an `echo` ran, and lost its
/// answer).
pub const FIRST_RUN_LIMIT: Duration = Duration::from_secs(5);

/// One frame as read from the wire.
#[derive(Debug)]
pub enum Inbound {
    /// A complete frame.
    Frame(Vec<u8>),
    /// A frame larger than the server's limit: only its first bytes were kept.
    Oversized {
        /// The first bytes of the frame (for the record).
        prefix: Vec<u8>,
        /// Its full size in bytes.
        size: usize,
    },
}

/// At the end of a stdio client's input: a server whose dialect's peer outlives its stdin while
/// a timer of its runs (the reference) goes on serving those timers until `shutdown`.
async fn outlive_input(server: &Server, session: &Session, shutdown: &CancellationToken) {
    let outlives = server
        .config
        .dialect
        .is_some_and(|d| d.outlives_stdin_with_timers());
    if outlives
        && session.transport == crate::traffic::TransportKind::Stdio
        && session
            .extension::<crate::server::session::RunningTimers>()
            .any()
    {
        shutdown.cancelled().await;
    }
}

/// Serves one connection: feeds every frame of `frames` to the server until the stream ends
/// (the client closed) or `shutdown` fires, then lets in-flight requests run once (within
/// [`FIRST_RUN_LIMIT`]) and finish for at most [`CLOSE_GRACE`], cancels the rest and closes the
/// session.
pub async fn drive<S>(
    server: Arc<Server>,
    session: Arc<Session>,
    frames: S,
    shutdown: CancellationToken,
) where
    S: Stream<Item = Inbound>,
{
    let mut frames = std::pin::pin!(frames);
    let tasks = TaskTracker::new();
    // Held by each request until its first poll returned.
    let unrun = TaskTracker::new();
    loop {
        let inbound = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            inbound = frames.next() => match inbound {
                Some(i) => i,
                None => {
                    outlive_input(&server, &session, &shutdown).await;
                    break;
                }
            },
        };
        let work = match inbound {
            Inbound::Frame(bytes) => server.receive(&session, &session.sink, &bytes, None),
            Inbound::Oversized { prefix, size } => {
                server.receive_oversized(Origin::Connection(&session), &prefix, size, None)
            }
        };
        match work {
            // An HTTP answer is for HTTP frames only (a fault rule's `http_status` matches no
            // others).
            Work::Nothing | Work::Http(_) => {}
            Work::Reply(out) => {
                session.sink.send_outgoing(&out);
            }
            Work::Task(mut fut) => {
                let sink = session.sink.clone();
                let first_run = unrun.token();
                tasks.spawn(async move {
                    let first = futures::poll!(fut.as_mut());
                    drop(first_run);
                    let answer = match first {
                        std::task::Poll::Ready(answer) => answer,
                        std::task::Poll::Pending => fut.await,
                    };
                    if let Some(out) = answer {
                        sink.send_outgoing(&out);
                    }
                });
            }
        }
    }
    unrun.close();
    let _ = tokio::time::timeout(FIRST_RUN_LIMIT, unrun.wait()).await;
    // A listen stream never ends on its own: end this connection's gracefully (each answers
    // with its listen result), so they finish within the grace like any other request.
    server.end_listeners(Some(&session.id));
    tasks.close();
    let _ = tokio::time::timeout(CLOSE_GRACE, tasks.wait()).await;
    server.close_session(&session);
    let _ = tokio::time::timeout(CLOSE_GRACE, tasks.wait()).await;
}
