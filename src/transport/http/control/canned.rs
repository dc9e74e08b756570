//! The control API's canned items (`POST /_control/tools`, `resources`, `prompts`, see
//! [`crate::catalog::canned`]) and their removal. Each registration sends the clients
//! `list_changed`; the listener remembers what it registered, so a reset takes out exactly
//! those.

use super::reply::{answer, bad, missing, not_utf8};
use crate::field_error::FieldError;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

/// What a canned item's registration answers: `201` with its key, or the `400` naming the
/// field at fault.
fn registered(key: (&str, String), built: Result<(), FieldError>) -> Response {
    match built {
        Ok(()) => answer(StatusCode::CREATED, json!({ key.0: key.1 })),
        Err(e) => bad(&e.field, e.message),
    }
}

/// `POST /_control/tools` (`{"name", "description", "inputSchema", "results": [...]}`):
/// registers a canned tool, `201` with its name. A tool of that name is replaced.
pub async fn add_tool(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return not_utf8();
    };
    match crate::catalog::canned::tool(text) {
        Ok(tool) => {
            let name = tool.name().to_string();
            state.server.add_tool(tool);
            state.canned().tools.insert(name.clone());
            registered(("name", name), Ok(()))
        }
        Err(e) => registered(("name", String::new()), Err(e)),
    }
}

/// `DELETE /_control/tools/{name}`: `204` (clients get `list_changed`), or `404`.
pub async fn remove_tool(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
) -> Response {
    state.canned().tools.shift_remove(&name);
    if state.server.remove_tool(&name) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        missing("name", format!("no tool {name:?} is registered"))
    }
}

/// `POST /_control/resources` (`{"uri", "name", "mimeType", "text"}`, or `"results"` of
/// `resources/read` results): registers a canned resource, `201` with its URI.
pub async fn add_resource(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return not_utf8();
    };
    match crate::catalog::canned::resource(text) {
        Ok(resource) => {
            let uri = resource.uri().to_string();
            state.server.add_resource(resource);
            state.canned().resources.insert(uri.clone());
            registered(("uri", uri), Ok(()))
        }
        Err(e) => registered(("uri", String::new()), Err(e)),
    }
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
    state.canned().resources.shift_remove(&uri);
    if state.server.remove_resource(&uri) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        missing("uri", format!("no resource {uri:?} is registered"))
    }
}

/// `POST /_control/prompts` (`{"name", "description", "arguments", "results": [...]}` of
/// `prompts/get` results): registers a canned prompt, `201` with its name.
pub async fn add_prompt(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return not_utf8();
    };
    match crate::catalog::canned::prompt(text) {
        Ok(prompt) => {
            let name = prompt.name().to_string();
            state.server.add_prompt(prompt);
            state.canned().prompts.insert(name.clone());
            registered(("name", name), Ok(()))
        }
        Err(e) => registered(("name", String::new()), Err(e)),
    }
}

/// `DELETE /_control/prompts/{name}`: `204` (clients get `list_changed`), or `404`.
pub async fn remove_prompt(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
) -> Response {
    state.canned().prompts.shift_remove(&name);
    if state.server.remove_prompt(&name) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        missing("name", format!("no prompt {name:?} is registered"))
    }
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
