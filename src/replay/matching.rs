//! How a live request is compared with a recorded one: as JSON values (`{"id", "method",
//! "params"}`, `_meta` inside params), member by member, except under the paths a replay
//! ignores. Paths are JSON Pointers (RFC 6901) into the request, where a `*` segment stands for
//! any member or element: `/id`, `/params/_meta`, `/params/arguments/timestamp`,
//! `/params/messages/*/content`.

use serde::Serialize;
use serde_json::{Map, Value};

/// The paths ignored unless told otherwise: the id (a client numbers its requests as it
/// pleases) and `_meta` (progress tokens, the stateless envelope, trace ids).
pub const DEFAULT_IGNORE: [&str; 2] = ["/id", "/params/_meta"];

/// How a replay matches live requests with recorded ones.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The paths of a request left out of the comparison (JSON Pointers, `*` for any segment).
    pub ignore: Ignore,
    /// Whether requests must come in the recorded order (per recorded connection), rather
    /// than in any order.
    pub in_order: bool,
    /// Whether a request whose recorded answers were all given gets the last of them again
    /// (a client that polls more often than the recorded one), rather than an error.
    pub repeat: bool,
}

/// One difference between a recorded value and a live one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// Where: a JSON Pointer into the request (or the answer).
    pub path: String,
    /// The recorded value there (absent: it was not there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Value>,
    /// The live value there (absent: it is not there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub got: Option<Value>,
}

/// Paths to leave out of a comparison.
#[derive(Debug, Clone, Default)]
pub struct Ignore(Vec<Vec<String>>);

impl Ignore {
    /// Ignores each of `paths` (JSON Pointers, `*` for any segment). A path that is not a
    /// pointer (it does not start with `/`) is an error naming it.
    pub fn new<S: AsRef<str>>(paths: &[S]) -> Result<Self, String> {
        paths
            .iter()
            .map(|p| {
                let p = p.as_ref();
                if !p.starts_with('/') {
                    return Err(format!(
                        "ignored path {p:?} is not a JSON Pointer (it must start with \"/\", e.g. \"/params/_meta\")"
                    ));
                }
                Ok(p[1..]
                    .split('/')
                    .map(|s| s.replace("~1", "/").replace("~0", "~"))
                    .collect())
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether `path` (segments) is ignored.
    fn covers(&self, path: &[String]) -> bool {
        self.0.iter().any(|ignored| {
            ignored.len() <= path.len() && ignored.iter().zip(path).all(|(i, p)| i == "*" || i == p)
        })
    }
}

/// The differences between `recorded` and `live`, outside `ignore`, the first `limit` of them.
pub fn differences(
    recorded: &Value,
    live: &Value,
    ignore: &Ignore,
    limit: usize,
) -> Vec<Difference> {
    let mut found = Vec::new();
    walk(
        &mut Vec::new(),
        Some(recorded),
        Some(live),
        ignore,
        limit,
        &mut found,
    );
    found
}

/// Whether `recorded` and `live` agree outside `ignore`.
pub fn agree(recorded: &Value, live: &Value, ignore: &Ignore) -> bool {
    differences(recorded, live, ignore, 1).is_empty()
}

fn walk(
    path: &mut Vec<String>,
    recorded: Option<&Value>,
    live: Option<&Value>,
    ignore: &Ignore,
    limit: usize,
    found: &mut Vec<Difference>,
) {
    if found.len() >= limit || ignore.covers(path) {
        return;
    }
    match (recorded, live) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys = a.keys().chain(b.keys().filter(|k| !a.contains_key(*k)));
            for key in keys.cloned().collect::<Vec<_>>() {
                path.push(key.clone());
                walk(path, a.get(&key), b.get(&key), ignore, limit, found);
                path.pop();
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            for i in 0..a.len().max(b.len()) {
                path.push(i.to_string());
                walk(path, a.get(i), b.get(i), ignore, limit, found);
                path.pop();
            }
        }
        (a, b) if a == b || numbers_equal(a, b) => {}
        (a, b) => found.push(Difference {
            path: pointer(path),
            recorded: a.cloned(),
            got: b.cloned(),
        }),
    }
}

/// Numbers compare by value (`1` and `1.0` are one number to a JSON reader).
fn numbers_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        _ => false,
    }
}

/// `path` as a JSON Pointer.
fn pointer(path: &[String]) -> String {
    if path.is_empty() {
        return String::new();
    }
    path.iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// A live request as it is matched: `{"id", "method", "params"}`, `_meta` inside params.
pub fn live_request(
    id: &Value,
    method: &str,
    params: &Map<String, Value>,
    meta: Option<Map<String, Value>>,
) -> Value {
    let mut params = params.clone();
    if let Some(meta) = meta {
        params.insert("_meta".into(), Value::Object(meta));
    }
    let mut request = Map::new();
    request.insert("id".into(), id.clone());
    request.insert("method".into(), method.into());
    request.insert("params".into(), Value::Object(params));
    Value::Object(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ignored_paths_and_wildcards() {
        let ignore = Ignore::new(&["/id", "/params/items/*/at"]).unwrap();
        let a = json!({"id": 1, "params": {"items": [{"at": 1, "v": "x"}]}});
        let b = json!({"id": 2, "params": {"items": [{"at": 2, "v": "y"}]}});
        assert_eq!(
            differences(&a, &b, &ignore, 10),
            vec![Difference {
                path: "/params/items/0/v".into(),
                recorded: Some(json!("x")),
                got: Some(json!("y")),
            }]
        );
        assert!(Ignore::new(&["params"]).is_err());
    }

    #[test]
    fn missing_members_and_numbers() {
        let ignore = Ignore::default();
        let a = json!({"a": 1.0, "b": true});
        let b = json!({"a": 1, "c": null});
        let found = differences(&a, &b, &ignore, 10);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, "/b");
        assert_eq!(found[0].got, None);
        assert_eq!(found[1].path, "/c");
        assert_eq!(found[1].recorded, None);
    }
}
