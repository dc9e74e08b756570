//! The front door of the HTTP app: every request passes the DNS-rebinding guard ([`guard`])
//! first, and a browser's request (one with an `Origin`) gets CORS, before the routes see it.
//!
//! One plain service around the whole router instead of two `axum::middleware::from_fn` layers:
//! a `from_fn` layer wraps every route, and each request then cloned the boxed inner service,
//! boxed a `Next` and its own future, once per layer. Two layers cost every request 17 of its 88
//! allocations and about 5,000 instructions (callgrind, `tools/call echo` over HTTP); this
//! service clones the router (one `Arc`) and adds no allocation on the path of a request
//! without an `Origin`.
//!
//! [`guard`]: super::guard

use super::recording::{transport_of, Refusal};
use super::state::HttpState;
use crate::server::seams::{Transport, TransportEvent};
use axum::extract::Request;
use axum::http::header;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::future::RouteFuture;
use axum::Router;
use futures::future::{BoxFuture, Either};
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service, ServiceExt};
use tower_http::cors::CorsLayer;

/// The guard and CORS in front of `routes`; served as the app's only route (its fallback).
#[derive(Clone)]
pub struct Front {
    /// Whose allow-list the guard applies, and where its refusals are recorded.
    pub state: Arc<HttpState>,
    /// The CORS policy for browsers (shared: a clone copies its method and header lists).
    pub cors: Arc<CorsLayer>,
    /// The routes behind the door (`/mcp`, `/sse`, `/message`, `/health`).
    pub routes: Router,
}

/// What a request turns into: the routes' own future, or one boxed (a refusal answered once the
/// body is read, a body read for scope step-up, the routes behind CORS or the transport seam).
type FrontFuture =
    Either<RouteFuture<Infallible>, BoxFuture<'static, Result<Response, Infallible>>>;

impl Service<Request> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = FrontFuture;

    /// Always ready, as a `Router` is (it polls its routes when it calls them).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> FrontFuture {
        if request.uri().path().starts_with(super::apps_assets::PREFIX) {
            let uri = request.uri();
            let asset = super::apps_assets::respond(request.method(), uri.path(), uri.query());
            return Either::Right(Box::pin(std::future::ready(Ok(asset))));
        }
        let lab = self.state.auth.clone();
        let admitted = match (refuse(&self.state, &request), &lab) {
            (Some(refused), _) => Err(Box::new(refused)),
            (None, Some(lab)) => super::auth::resource::admission(&self.state, lab, &request),
            (None, None) => Ok(None),
        };
        let granted = match admitted {
            Ok(granted) => granted,
            Err(refused) => {
                let limit = self.state.server.config.max_message_bytes;
                return Either::Right(Box::pin(after_reading(request, limit, *refused)));
            }
        };
        if let Some(lab) = lab.filter(|lab| super::auth::resource::steps_up(lab, &request)) {
            let granted = granted.unwrap_or_default();
            return Either::Right(Box::pin(after_step_up(self.clone(), lab, request, granted)));
        }
        self.serve(request)
    }
}

impl Front {
    /// A request past the guards, its answer in the server's dialect when that changes HTTP
    /// answers (`super::dialect`).
    fn serve(&mut self, request: Request) -> FrontFuture {
        match self
            .state
            .server
            .config
            .dialect
            .filter(|d| super::dialect::rewrites(*d))
        {
            None => self.route(request),
            Some(dialect) => {
                let served = self.route(request);
                Either::Right(Box::pin(async move {
                    let response = match served {
                        Either::Left(f) => f.await?,
                        Either::Right(f) => f.await?,
                    };
                    Ok(super::dialect::spoken(dialect, response))
                }))
            }
        }
    }

    /// Through the transport seam while it is armed, behind CORS for a browser, else straight
    /// to the routes.
    fn route(&mut self, request: Request) -> FrontFuture {
        if self.state.server.seams.armed() {
            return Either::Right(Box::pin(through_transport_seam(self.clone(), request)));
        }
        // The kit's front answers CORS itself (`*`, its preflights `204`).
        let kit = self
            .state
            .server
            .config
            .dialect
            .is_some_and(|d| d.sessionless_http());
        if request.headers().contains_key(header::ORIGIN) && !kit {
            let cors = self.cors.layer(self.routes.clone());
            return Either::Right(Box::pin(cors.oneshot(request)));
        }
        Either::Left(self.routes.call(request))
    }
}

/// `refused` once the request's body is read: answering before it, the connection would close
/// with the body unread, and the kernel then resets it, which can destroy the answer on its way
/// (clients saw "server disconnected without sending a response" now and then).
async fn after_reading(
    request: Request,
    limit: usize,
    refused: Response,
) -> Result<Response, Infallible> {
    let _ = super::body::read_body(request.into_body(), limit).await;
    Ok(refused)
}

/// A request whose body the auth lab reads for scope step-up first (`403` when a tool it calls
/// needs a scope its token, `granted`, lacks), then served as any other.
async fn after_step_up(
    mut front: Front,
    lab: Arc<super::auth::AuthLab>,
    request: Request,
    granted: String,
) -> Result<Response, Infallible> {
    match super::auth::resource::step_up(&front.state, &lab, request, &granted).await {
        Ok(request) => front.serve(request).await,
        Err(refused) => Ok(refused),
    }
}

/// A request served while seams are armed: its answer passes the transport seam
/// ([`crate::server::seams`]) first, which may close the connection instead (the answer's body
/// then fails at once, so the client sees the connection end without a complete answer).
async fn through_transport_seam(
    mut front: Front,
    request: Request,
) -> Result<Response, Infallible> {
    let conn = request
        .headers()
        .get(&super::negotiation::SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_string();
    let served = async {
        if request.headers().contains_key(header::ORIGIN) {
            front
                .cors
                .layer(front.routes.clone())
                .oneshot(request)
                .await
        } else {
            front.routes.call(request).await
        }
    };
    // A fault rule that hit this exchange's frame may change its answer on the way out.
    let (served, shape) = crate::server::seams::shaping(served).await;
    let mut response = served?;
    if let Some(shape) = shape {
        response = super::shaping::apply(&shape, response, &front.state.server.clock).await;
    }
    let event = TransportEvent::HttpAnswer {
        conn: &conn,
        status: response.status().as_u16(),
    };
    if front.state.server.seams.transport(&event) == Transport::Close {
        let (parts, _) = response.into_parts();
        let broken = futures::stream::once(async {
            Err::<axum::body::Bytes, _>(std::io::Error::other("closed by a transport seam"))
        });
        return Ok(Response::from_parts(
            parts,
            axum::body::Body::from_stream(broken),
        ));
    }
    Ok(response)
}

/// The guard: `403` (recorded) for a request whose `Host` or `Origin` is not allowed.
fn refuse(state: &Arc<HttpState>, request: &Request) -> Option<Response> {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    // The kit's front allows any origin (its CORS is `*`); the Host check stays.
    let kit = state
        .server
        .config
        .dialect
        .is_some_and(|d| d.sessionless_http());
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .filter(|_| !kit);
    let reason = state.config.allow.refusal(host, origin)?;
    let path = request.uri().path();
    let transport = transport_of(path);
    Some(Refusal::new(StatusCode::FORBIDDEN, reason).respond(
        state,
        transport,
        None,
        (request.method(), path, headers),
        b"",
    ))
}
