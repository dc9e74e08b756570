//! Serving the app: the routes behind the front door ([`app`]), binding a listener and the
//! address clients are told, and the serve loop with idle-session expiry.

use super::negotiation::SESSION_HEADER;
use super::negotiation::VERSION_HEADER;
use super::state::HttpState;
use axum::http::{header, Method};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

async fn health() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"status":"ok"}"#,
    )
}
/// The whole HTTP app: `/mcp`, `/sse`, `/message`, `/health`, the control API and the lab page
/// (`/_control/`, `/_lab/`), behind the guard and CORS
/// ([`front`]).
pub fn app(state: Arc<HttpState>) -> Router {
    let mcp_headers = [SESSION_HEADER.clone(), VERSION_HEADER.clone()];
    let cors = CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers(mcp_headers);
    let kit = state
        .server
        .config
        .dialect
        .is_some_and(|d| d.sessionless_http());
    let mut routes = if kit {
        super::kit::routes(state.clone())
    } else {
        Router::new()
            .route(
                "/mcp",
                get(super::mcp::get)
                    .post(super::mcp::post)
                    .delete(super::mcp::delete),
            )
            .route("/sse", get(super::legacy_sse::get))
            .route("/message", axum::routing::post(super::legacy_sse::post))
            .route("/health", get(health))
            .with_state(state.clone())
    };
    if state.config.auth.mode == super::auth::AuthMode::Oauth {
        routes = routes.merge(super::auth::routes(state.clone()));
    }
    if state.config.control {
        routes = routes.merge(super::control::routes(state.clone()));
        if state.config.lab {
            routes = routes.merge(super::lab::routes());
        }
    }
    Router::new().fallback_service(super::front::Front {
        state,
        cors: Arc::new(cors),
        routes,
    })
}
/// Binds `host:port` (as [`bind`]) and returns the listener with the address clients are told
/// to use, which the Host guard must then accept: a wildcard bind (`0.0.0.0`, `::`) is
/// announced as loopback; a specific non-loopback address is added to `allow`'s hosts.
pub async fn listen(
    host: &str,
    port: u16,
    strict: bool,
    allow: &mut super::guard::Allowlist,
) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = bind(host, port, strict).await?;
    let bound = listener.local_addr()?;
    let ip = bound.ip();
    let reachable = if ip.is_unspecified() {
        let loopback: std::net::IpAddr = if ip.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        };
        SocketAddr::new(loopback, bound.port())
    } else {
        if !ip.is_loopback() {
            allow.hosts.push(if ip.is_ipv6() {
                format!("[{ip}]")
            } else {
                ip.to_string()
            });
        }
        bound
    };
    Ok((listener, reachable))
}
/// `http://host:port` for `addr`, IPv6 in brackets. Not `SocketAddr`'s own display: an IPv6
/// scope id (`%2`) has no place in a URL.
pub fn base_url(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("http://{a}"),
        SocketAddr::V6(a) => format!("http://[{}]:{}", a.ip(), a.port()),
    }
}
/// Binds `host:port`; when the port is taken (and `strict` is false), tries the next 20.
/// Port 0 asks the OS for a free one.
pub async fn bind(host: &str, port: u16, strict: bool) -> std::io::Result<TcpListener> {
    let tries = if strict || port == 0 { 1 } else { 21 };
    let mut last = None;
    for offset in 0..tries {
        let Some(p) = port.checked_add(offset) else {
            break;
        };
        match TcpListener::bind((host, p)).await {
            Ok(l) => return Ok(l),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::AddrInUse, "no free port")))
}
/// Serves `state` on `listener` until `state.shutdown` fires; then open streams end, the
/// sessions are closed, and this returns. Idle sessions are expired meanwhile.
pub async fn serve(listener: TcpListener, state: Arc<HttpState>) -> std::io::Result<()> {
    let reaper = tokio::spawn(expire_idle_sessions(state.clone()));
    let shutdown = state.shutdown.clone();
    let listener = super::peer::NamingListener(listener);
    let result = axum::serve(
        listener,
        app(state.clone()).into_make_service_with_connect_info::<super::peer::Peer>(),
    )
    .with_graceful_shutdown(async move { shutdown.cancelled().await })
    .await;
    reaper.abort();
    for s in state.sessions.drain() {
        s.end_streams();
        state.server.close_session(&s.core);
    }
    result
}
/// Ends sessions idle longer than the configured timeout.
async fn expire_idle_sessions(state: Arc<HttpState>) {
    let Some(idle) = state.config.session_idle_timeout else {
        return;
    };
    let every = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
    let mut timer = state.server.clock.timer();
    loop {
        timer.sleep(every).await;
        for s in state.sessions.take_idle(idle) {
            tracing::info!(session = %s.core.id, "session expired after {idle:?} idle");
            state.close(&s);
        }
    }
}
