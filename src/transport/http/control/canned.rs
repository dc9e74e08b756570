//! The control API's canned items (`POST /_control/tools`, `resources`, `prompts`, see
//! [`crate::catalog::canned`]) and their removal. Each registration sends the clients
//! `list_changed`; the listener remembers what it registered, so a reset takes out exactly
//! those.

use super::reply::{answer, bad, missing, not_utf8};
use crate::catalog::canned;
use crate::field_error::FieldError;
use crate::server::Server;
use crate::transport::http::state::CannedItems;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use indexmap::IndexSet;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

/// Registers the canned item `body` describes: built by `build`, put in force by `add` (which
/// returns its key); `201 {field: key}`, or the `400` naming the member at fault.
fn register<T>(
    body: &[u8],
    field: &str,
    build: fn(&str) -> Result<T, FieldError>,
    add: impl FnOnce(T) -> String,
) -> Response {
    let Ok(text) = std::str::from_utf8(body) else {
        return not_utf8();
    };
    match build(text) {
        Ok(item) => answer(StatusCode::CREATED, json!({ field: add(item) })),
        Err(e) => bad(&e.field, e.message),
    }
}

/// Takes out the `what` (`tool`, …) registered as `key` (named by `field` in a `404`): `204`
/// (clients get `list_changed`), or `404`. The listener forgets it as one of its own.
fn unregister(
    state: &HttpState,
    (what, field, key): (&str, &str, &str),
    remove: fn(&Server, &str) -> bool,
    own: fn(&mut CannedItems) -> &mut IndexSet<String>,
) -> Response {
    own(&mut state.canned()).shift_remove(key);
    if remove(&state.server, key) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        missing(field, format!("no {what} {key:?} is registered"))
    }
}

/// `POST /_control/tools` (`{"name", "description", "inputSchema", "results": [...]}`):
/// registers a canned tool, `201` with its name. A tool of that name is replaced.
pub async fn add_tool(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    register(&body, "name", canned::tool, |tool| {
        let name = tool.name().to_string();
        state.server.add_tool(tool);
        state.canned().tools.insert(name.clone());
        name
    })
}

/// `DELETE /_control/tools/{name}`: `204` (clients get `list_changed`), or `404`.
pub async fn remove_tool(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
) -> Response {
    unregister(&state, ("tool", "name", &name), Server::remove_tool, |c| {
        &mut c.tools
    })
}

/// `POST /_control/resources` (`{"uri", "name", "mimeType", "text"}`, or `"results"` of
/// `resources/read` results): registers a canned resource, `201` with its URI.
pub async fn add_resource(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    register(&body, "uri", canned::resource, |resource| {
        let uri = resource.uri().to_string();
        state.server.add_resource(resource);
        state.canned().resources.insert(uri.clone());
        uri
    })
}

/// `DELETE /_control/resources?uri=URI`'s query (a URI does not fit a path segment).
#[derive(Deserialize)]
pub struct Uri {
    /// The resource's URI.
    uri: String,
}

/// `DELETE /_control/resources?uri=URI`: `204` (clients get `list_changed`), or `404`.
pub async fn remove_resource(
    State(state): State<Arc<HttpState>>,
    query: Result<Query<Uri>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(Uri { uri })) = query else {
        return bad("uri", "is required: DELETE /_control/resources?uri=URI");
    };
    unregister(
        &state,
        ("resource", "uri", &uri),
        Server::remove_resource,
        |c| &mut c.resources,
    )
}

/// `POST /_control/prompts` (`{"name", "description", "arguments", "results": [...]}` of
/// `prompts/get` results): registers a canned prompt, `201` with its name.
pub async fn add_prompt(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    register(&body, "name", canned::prompt, |prompt| {
        let name = prompt.name().to_string();
        state.server.add_prompt(prompt);
        state.canned().prompts.insert(name.clone());
        name
    })
}

/// `DELETE /_control/prompts/{name}`: `204` (clients get `list_changed`), or `404`.
pub async fn remove_prompt(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
) -> Response {
    unregister(
        &state,
        ("prompt", "name", &name),
        Server::remove_prompt,
        |c| &mut c.prompts,
    )
}

/// Takes out every canned item this listener registered (a reset); how many there were.
pub fn remove_all(state: &HttpState) -> usize {
    let taken = std::mem::take(&mut *state.canned());
    let server = &state.server;
    let mut removed = 0;
    for name in &taken.tools {
        removed += usize::from(server.remove_tool(name));
    }
    for uri in &taken.resources {
        removed += usize::from(server.remove_resource(uri));
    }
    for name in &taken.prompts {
        removed += usize::from(server.remove_prompt(name));
    }
    removed
}
