//! The control API's fault rules: `/_control/faults`, one rule by id, and the presets.

use super::reply::{answer, bad, missing, not_utf8};
use crate::faults::RuleSpec;
use crate::field_error::FieldError;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// `GET /_control/faults`: the rules in force, in order, with their hits.
pub async fn list_faults(State(state): State<Arc<HttpState>>) -> Response {
    let rules: Vec<Value> = state
        .server
        .faults
        .rules()
        .iter()
        .map(|r| r.to_json())
        .collect();
    answer(StatusCode::OK, json!({ "rules": rules }))
}

/// `POST /_control/faults`: a rule in the file format, `201` with its id and the rule; or a
/// whole fault file (a JSON array of rules, or `{"rules": [...]}`), its rules in force together
/// or none (as Python's `srv.faults.load_text`), `201` with their ids.
pub async fn add_fault(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return not_utf8();
    };
    let refused = |e: FieldError| bad(&e.field, e.message);
    if is_file(text) {
        let specs = match crate::faults::parse_file(text) {
            Ok(specs) => specs,
            Err(e) => return bad("rules", e),
        };
        return match state.server.faults.add_all(specs) {
            Ok(rules) => {
                let ids: Vec<&str> = rules.iter().map(|r| &*r.id).collect();
                answer(StatusCode::CREATED, json!({ "ids": ids }))
            }
            Err(e) => refused(e),
        };
    }
    let spec = match RuleSpec::parse(text) {
        Ok(spec) => spec,
        Err(e) => return refused(e),
    };
    match state.server.faults.add(spec) {
        Ok(rule) => answer(
            StatusCode::CREATED,
            json!({ "id": &*rule.id, "rule": rule.to_json() }),
        ),
        Err(e) => refused(e),
    }
}

/// Whether a body is a fault file rather than one rule: an array, or an object whose only
/// member is `rules`.
fn is_file(text: &str) -> bool {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(_)) => true,
        Ok(Value::Object(m)) => m.len() == 1 && m.contains_key("rules"),
        _ => false,
    }
}

/// `DELETE /_control/faults`: every rule out (`{"removed": n}`).
pub async fn clear_faults(State(state): State<Arc<HttpState>>) -> Response {
    let removed = state.server.faults.clear();
    answer(StatusCode::OK, json!({ "removed": removed }))
}

/// `GET /_control/faults/{id}`: one rule with its hits, or `404`.
pub async fn one_fault(State(state): State<Arc<HttpState>>, Path(id): Path<String>) -> Response {
    match state.server.faults.get(&id) {
        Some(rule) => answer(StatusCode::OK, rule.to_json()),
        None => no_rule(&id),
    }
}

/// `DELETE /_control/faults/{id}`: `204`, or `404` when no such rule is in force.
pub async fn remove_fault(State(state): State<Arc<HttpState>>, Path(id): Path<String>) -> Response {
    if state.server.faults.remove(&id) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        no_rule(&id)
    }
}

/// `404` for a rule id not in force.
fn no_rule(id: &str) -> Response {
    missing("id", format!("no fault rule {id:?} is in force"))
}

/// `POST /_control/faults/presets/{name}?seed=N`'s query.
#[derive(Deserialize)]
pub struct Seed {
    /// The seed of the preset's draws (default 0).
    #[serde(default)]
    seed: u64,
}

/// `POST /_control/faults/presets/{name}?seed=N`: a named preset's rules in force, `201` with
/// their ids; an unknown name is `400` naming the known ones.
pub async fn add_preset(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    query: Result<Query<Seed>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(Seed { seed })) = query else {
        return bad("seed", "must be a whole number");
    };
    match state.server.faults.add_preset(&name, seed) {
        Ok(rules) => {
            let ids: Vec<&str> = rules.iter().map(|r| &*r.id).collect();
            answer(StatusCode::CREATED, json!({ "ids": ids }))
        }
        Err(e) => bad(&e.field, e.message),
    }
}
