//! A task as each era writes it. The handshake era (2025-11-25, SEP-1686) nests the task in
//! `CreateTaskResult.task`, names its durations `ttl`/`pollInterval` and serves the outcome
//! through `tasks/result`; the tasks extension (2026-07-28, SEP-2663) flattens
//! `CreateTaskResult` (`resultType: "task"`), names them `ttlMs`/`pollIntervalMs` and inlines the
//! outcome or the pending `inputRequests` in `tasks/get` (a `DetailedTask`).

use super::task::{Status, Task, TaskEra};
use serde_json::{Map, Value};

/// The `Task` object of `task`'s era: the fields every response about it carries.
pub fn task(task: &Task) -> Map<String, Value> {
    let state = task.state();
    let ms = |d: std::time::Duration| Value::from(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut out = Map::new();
    out.insert("taskId".into(), (*task.id).into());
    out.insert("status".into(), state.status.as_str().into());
    match task.era {
        TaskEra::Handshake => {
            out.insert("ttl".into(), ms(task.ttl));
            out.insert("createdAt".into(), task.created_at.clone().into());
            out.insert("lastUpdatedAt".into(), state.last_updated_at.clone().into());
            out.insert("pollInterval".into(), ms(task.poll_interval));
        }
        TaskEra::Stateless => {
            out.insert("createdAt".into(), task.created_at.clone().into());
            out.insert("lastUpdatedAt".into(), state.last_updated_at.clone().into());
            out.insert("ttlMs".into(), ms(task.ttl));
            out.insert("pollIntervalMs".into(), ms(task.poll_interval));
        }
    }
    if let Some(m) = &state.status_message {
        out.insert("statusMessage".into(), m.clone().into());
    }
    out
}

/// The answer to the request that created the task.
pub fn create_result(t: &Task) -> Value {
    match t.era {
        TaskEra::Handshake => {
            let mut out = Map::new();
            out.insert("task".into(), Value::Object(task(t)));
            Value::Object(out)
        }
        TaskEra::Stateless => {
            let mut out = Map::new();
            out.insert("resultType".into(), "task".into());
            out.extend(task(t));
            Value::Object(out)
        }
    }
}

/// The task with what its status carries (stateless era's `DetailedTask`: the result when
/// completed, the error when failed, the outstanding `inputRequests` when waiting for input).
/// The handshake era's `tasks/get` is the bare task.
pub fn detailed(t: &Task) -> Map<String, Value> {
    let mut out = task(t);
    if t.era == TaskEra::Handshake {
        return out;
    }
    let state = t.state();
    match (state.status, &state.outcome) {
        (Status::Completed, Some(Ok(result))) => {
            out.insert("result".into(), result.clone());
        }
        (Status::Failed, Some(Err(error))) => {
            out.insert(
                "error".into(),
                serde_json::to_value(error).unwrap_or_default(),
            );
        }
        (Status::InputRequired, _) => {
            let requests: Map<String, Value> = state
                .inputs
                .iter()
                .map(|(k, p)| (k.clone(), p.request.clone()))
                .collect();
            out.insert("inputRequests".into(), Value::Object(requests));
        }
        _ => {}
    }
    out
}
