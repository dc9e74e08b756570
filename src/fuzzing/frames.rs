//! `frames`: newline-separated frames on one connection of a server that serves every catalog
//! in both eras (JSON-RPC decoding, the stateless envelope, `_meta`, every method's params).
//! Each line the server writes must be JSON-RPC.

use super::{assert_json_rpc, runtime};
use crate::server::Server;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long a connection's answers are read for at most once its input has ended (the server
/// ends the connection then; a handler that waits on a timer is not waited for).
const SETTLE: Duration = Duration::from_millis(200);

/// The server every input talks to (one per process: building the catalogs per input would be
/// most of the work).
fn server() -> &'static Arc<Server> {
    static SERVER: OnceLock<Arc<Server>> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options = crate::options::ServerOptions {
            catalogs: ["everything", "conformance", "review-lab", "skills", "apps"]
                .map(String::from)
                .to_vec(),
            keep_traffic: Some(1000),
            max_message_bytes: 64 * 1024,
            tick: Some(crate::options::Seconds(0.001)),
            ..Default::default()
        };
        options.server().expect("the fuzzed server")
    })
}

/// The target: `data` split into lines, each sent as a frame on a fresh connection.
pub fn frames(data: &[u8]) {
    let server = server();
    runtime().block_on(async {
        let mut conn =
            crate::transport::memory::connect(server, &tokio::runtime::Handle::current());
        let to_server = conn.to_server.take().expect("a new connection");
        for line in data.split(|&b| b == b'\n') {
            if to_server.send(line.to_vec()).is_err() {
                break;
            }
        }
        drop(to_server);
        let _ = tokio::time::timeout(SETTLE, async {
            while let Some(frame) = conn.from_server.recv().await {
                assert_json_rpc(&frame);
            }
        })
        .await;
        conn.shutdown.cancel();
    });
}
