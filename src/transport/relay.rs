//! The relay socket: lets a separate stdio process (`python -m everything_mcp.relay SOCKET`,
//! spawned by an MCP client) reach a server running inside another process (a test). Each
//! connection on the Unix socket is one stdio connection of the server, so Python-registered
//! tools, traffic capture and triggers work for stdio clients too.

use super::stdio::serve_io;
use crate::server::Server;
use crate::traffic::TransportKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;

/// Listens on a fresh Unix socket in `dir` and serves every connection until `shutdown` fires.
/// Returns the socket's path.
pub fn listen(
    server: Arc<Server>,
    dir: &Path,
    shutdown: CancellationToken,
) -> std::io::Result<PathBuf> {
    let path = dir.join(format!(
        "everything-mcp-{}.sock",
        uuid::Uuid::new_v4().simple()
    ));
    let listener = UnixListener::bind(&path)?;
    let cleanup = path.clone();
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => break,
                a = listener.accept() => a,
            };
            match accepted {
                Ok((stream, _)) => {
                    let (read, write) = stream.into_split();
                    let server = server.clone();
                    let stop = shutdown.child_token();
                    tokio::spawn(async move {
                        if let Err(e) =
                            serve_io(server, read, write, TransportKind::Stdio, stop).await
                        {
                            tracing::debug!("relay connection ended: {e}");
                        }
                    });
                }
                Err(e) => tracing::warn!("relay socket: accept failed: {e}"),
            }
        }
        let _ = std::fs::remove_file(&cleanup);
    });
    Ok(path)
}
