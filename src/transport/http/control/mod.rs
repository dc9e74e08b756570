//! The control API (`/_control/`, `docs/control-api.md`): a small JSON API on the HTTP
//! listener that lets a test suite in any language script the server as a Python test does —
//! fault rules, canned tools, resources and prompts, notifications, triggers, the clock, the
//! traffic and its report, a reset. It sits behind the same Host/Origin guard as `/mcp`; with a token configured every
//! call must carry `Authorization: Bearer <token>`. A body the API cannot take is answered
//! `400` with `{"error": {"field", "message"}}`, and the server goes on serving. One module per
//! concept: [`faults`], [`canned`], [`notify`], [`clock`], [`traffic`], [`report`],
//! [`triggers`], [`auth`]; [`reply`] is how every one of them answers.

mod auth;
mod canned;
mod clock;
mod faults;
mod limits;
mod notify;
mod reply;
mod report;
mod traffic;
mod triggers;

use super::state::HttpState;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{middleware, Router};
use reply::answer;
use serde_json::json;
use std::sync::Arc;

/// The API's version (`GET /_control/` says it): a change that breaks a caller raises it.
pub const API_VERSION: u32 = 1;

/// Every endpoint, as `GET /_control/` lists them.
const ENDPOINTS: &[&str] = &[
    "GET /_control/",
    "GET /_control/faults",
    "POST /_control/faults",
    "DELETE /_control/faults",
    "GET /_control/faults/{id}",
    "DELETE /_control/faults/{id}",
    "POST /_control/faults/presets/{name}?seed=N",
    "POST /_control/tools",
    "DELETE /_control/tools/{name}",
    "POST /_control/resources",
    "DELETE /_control/resources?uri=URI",
    "POST /_control/prompts",
    "DELETE /_control/prompts/{name}",
    "GET /_control/clock",
    "POST /_control/clock/advance",
    "GET /_control/traffic?since=SEQ",
    "GET /_control/traffic/stream?since=SEQ",
    "GET /_control/traffic/stats",
    "GET /_control/limits",
    "GET /_control/report",
    "GET /_control/triggers",
    "POST /_control/triggers/{name}",
    "POST /_control/notify",
    "POST /_control/ask",
    "POST /_control/reset",
    "GET /_control/auth/clients",
    "POST /_control/auth/clients",
    "GET /_control/auth/tokens",
    "POST /_control/auth/tokens/revoke",
    "POST /_control/auth/tokens/expire",
    "POST /_control/auth/documents",
    "POST /_control/auth/consent",
    "POST /_control/auth/migrate",
];

/// The control API's routes, to be merged at the root of the app.
pub fn routes(state: Arc<HttpState>) -> Router {
    Router::new()
        .route("/_control", get(index))
        .route("/_control/", get(index))
        .route(
            "/_control/faults",
            get(faults::list_faults)
                .post(faults::add_fault)
                .delete(faults::clear_faults),
        )
        .route(
            "/_control/faults/{id}",
            get(faults::one_fault).delete(faults::remove_fault),
        )
        .route("/_control/faults/presets/{name}", post(faults::add_preset))
        .route("/_control/tools", post(canned::add_tool))
        .route("/_control/tools/{name}", delete(canned::remove_tool))
        .route(
            "/_control/resources",
            post(canned::add_resource).delete(canned::remove_resource),
        )
        .route("/_control/prompts", post(canned::add_prompt))
        .route("/_control/prompts/{name}", delete(canned::remove_prompt))
        .route("/_control/clock", get(clock::get_clock))
        .route("/_control/clock/advance", post(clock::advance))
        .route("/_control/traffic", get(traffic::traffic))
        .route("/_control/traffic/stream", get(traffic::stream))
        .route("/_control/traffic/stats", get(traffic::stats))
        .route("/_control/limits", get(limits::limits))
        .route("/_control/report", get(report::report))
        .route("/_control/triggers", get(triggers::list))
        .route("/_control/triggers/{name}", post(triggers::fire))
        .route("/_control/notify", post(notify::notify))
        .route("/_control/ask", post(notify::ask))
        .route("/_control/reset", post(reset))
        .route(
            "/_control/auth/clients",
            get(auth::clients).post(auth::register),
        )
        .route("/_control/auth/tokens", get(auth::tokens))
        .route("/_control/auth/documents", post(auth::add_document))
        .route("/_control/auth/consent", post(auth::consent))
        .route("/_control/auth/migrate", post(auth::migrate))
        .route("/_control/auth/tokens/revoke", post(auth::revoke))
        .route("/_control/auth/tokens/expire", post(auth::expire))
        .route(
            "/_control/{*rest}",
            delete(unknown).get(unknown).post(unknown),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), bounded_body))
        .route_layer(middleware::from_fn_with_state(state.clone(), token_check))
        .with_state(state)
}

/// Every control call's body is read first, within `max_message_bytes` (`413` past it, in the
/// API's error shape): a test suite's mistake is refused, not buffered.
async fn bounded_body(
    State(state): State<Arc<HttpState>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let server = &state.server;
    match super::body::buffered(request, server.config.max_message_bytes, &server.limit_hits).await
    {
        Ok(request) => next.run(request).await,
        Err(refused) => answer(
            refused.status,
            json!({ "error": { "field": "", "message": refused.message } }),
        ),
    }
}

/// `GET /_control/`: what is served, and the API's version.
async fn index(State(state): State<Arc<HttpState>>) -> Response {
    let identity = &state.server.config;
    answer(
        StatusCode::OK,
        json!({
            "api": API_VERSION,
            "server": { "name": identity.name, "version": identity.version },
            "clock": state.server.clock.kind().as_str(),
            "endpoints": ENDPOINTS,
        }),
    )
}

/// `POST /_control/reset`: back to the start — no fault rules, none of the canned items this
/// listener registered (clients get `list_changed`), no traffic kept, and a manual clock's
/// `elapsed` at zero again (`204`).
async fn reset(State(state): State<Arc<HttpState>>) -> Response {
    canned::remove_all(&state);
    state.server.reset();
    if let Some(lab) = &state.auth {
        lab.reset();
    }
    StatusCode::NO_CONTENT.into_response()
}
/// Anything else under `/_control/`: `404` naming what there is.
async fn unknown() -> Response {
    answer(
        StatusCode::NOT_FOUND,
        json!({ "error": { "field": "", "message": "no such control endpoint: GET /_control/ lists them" } }),
    )
}
/// Every control call passes here first: without the configured token it is refused.
async fn token_check(
    State(state): State<Arc<HttpState>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    match refusal(&state, request.headers()) {
        Some(refused) => refused,
        None => next.run(request).await,
    }
}
/// The refusal of a call without the configured token (`401`, with `WWW-Authenticate:
/// Bearer`); `None` when the call may go on.
fn refusal(state: &HttpState, headers: &HeaderMap) -> Option<Response> {
    let token = state.config.control_token.as_ref()?;
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given == Some(token.as_str()) {
        return None;
    }
    let mut refused = answer(
        StatusCode::UNAUTHORIZED,
        json!({ "error": { "field": "", "message": "the control API needs Authorization: Bearer <the --control-token>" } }),
    );
    refused.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    Some(refused)
}
