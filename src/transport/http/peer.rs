//! Names a client's TCP connection for the records. A stateless-era client has no session, so
//! without this every POST would be a "connection" of its own in the traffic; naming the TCP
//! connection (`http-<n>`, handed to handlers as axum connect info) groups a client's requests
//! the way a stdio pipe groups them.

use crate::traffic::HttpMeta;
use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};

/// Numbers TCP connections process-wide: names stay unique even with several servers in one
/// test process, so records merged from two servers cannot confuse their clients.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// One accepted TCP connection, as handlers see it (`ConnectInfo<Peer>`).
#[derive(Debug, Clone)]
pub struct Peer {
    /// The name records use for the stateless requests of this connection (`http-<n>`).
    /// Shared: every request on the connection carries a clone.
    pub conn: Arc<str>,
    /// The client's address, for diagnostics.
    pub addr: SocketAddr,
    /// The traffic metadata of this connection's last stateless POST, shared by the next one's
    /// record when its headers are the same ([`super::recording::http_meta_reusing`], as a session's POSTs
    /// share theirs): a client's requests on one connection mostly are, and a shared record
    /// is one allocation of about 1 KB less per request on the tape.
    pub last_post_meta: Arc<Mutex<Option<Arc<HttpMeta>>>>,
}

impl Peer {
    /// A newly accepted connection from `addr`.
    fn accepted(addr: SocketAddr) -> Self {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Self {
            conn: format!("http-{n}").into(),
            addr,
            last_post_meta: Arc::default(),
        }
    }
}

/// A TCP listener whose connections are named ([`Peer`]) and have `TCP_NODELAY` set: an SSE
/// answer leaves in two writes (headers + priming event, then the message), and without
/// `TCP_NODELAY` Nagle holds the second until the client's delayed ACK, ~40 ms per request.
pub struct NamingListener(pub TcpListener);

impl Listener for NamingListener {
    type Io = TcpStream;
    type Addr = Peer;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // axum's own accept loop, which rides out transient errors (e.g. too many open files).
        let (tcp, addr) = Listener::accept(&mut self.0).await;
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY: {e}");
        }
        (tcp, Peer::accepted(addr))
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        let addr = self.0.local_addr()?;
        Ok(Peer {
            conn: "http-listener".into(),
            addr,
            last_post_meta: Arc::default(),
        })
    }
}

/// Called once per accepted connection by `into_make_service_with_connect_info`.
impl Connected<IncomingStream<'_, NamingListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, NamingListener>) -> Self {
        stream.remote_addr().clone()
    }
}
