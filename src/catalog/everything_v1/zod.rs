//! v1's argument checks: zod v3's parsing of a tool's arguments against its input schema
//! (defaults, trimming, types, bounds, URLs), reported as zod v3's issue list.

use crate::catalog::js_string;
use crate::jsnum;
use serde_json::{json, Map, Value};

/// zod v3's name for the type of `v` (`getParsedType`).
fn zod_type(v: Option<&Value>) -> &'static str {
    match v {
        None => "undefined",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
    }
}

/// A zod v3 `invalid_type` issue.
fn invalid_type(expected: &str, got: Option<&Value>, path: Value) -> Value {
    let received = zod_type(got);
    let message = if got.is_none() {
        "Required".to_string()
    } else {
        format!("Expected {expected}, received {received}")
    };
    json!({ "code": "invalid_type", "expected": expected, "received": received, "path": path, "message": message })
}

/// Whether `s` parses as an absolute URL (it has a scheme), as zod's `.url()` needs.
fn looks_like_url(s: &str) -> bool {
    s.split_once(':').is_some_and(|(scheme, _)| {
        let mut chars = scheme.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Checks `args` against a v1 input schema the way its zod original parsed them, property by
/// property in schema order: defaults filled in, `trimmed` strings trimmed, extra keys kept.
/// Returns zod v3 issues (empty when the arguments are fine).
pub fn zod_issues(schema: &Value, args: &mut Map<String, Value>, trimmed: &[&str]) -> Vec<Value> {
    let mut issues = Vec::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return issues;
    };
    for (name, prop) in properties {
        if !args.contains_key(name) {
            if let Some(default) = prop.get("default") {
                args.insert(name.clone(), default.clone());
            }
        }
        if trimmed.contains(&name.as_str()) {
            if let Some(Value::String(s)) = args.get_mut(name) {
                *s = s.trim().to_string();
            }
        }
        let value = args.get(name);
        let path = json!([name]);
        if let Some(options) = prop.get("enum").and_then(Value::as_array) {
            match value {
                Some(v) if options.contains(v) => {}
                Some(Value::String(s)) => {
                    let expected: Vec<String> = options
                        .iter()
                        .map(|o| format!("'{}'", js_string(o)))
                        .collect();
                    issues.push(json!({
                        "received": s,
                        "code": "invalid_enum_value",
                        "options": options,
                        "path": path,
                        "message": format!("Invalid enum value. Expected {}, received '{s}'", expected.join(" | "))
                    }));
                }
                other => {
                    let expected: Vec<String> = options
                        .iter()
                        .map(|o| format!("'{}'", js_string(o)))
                        .collect();
                    issues.push(invalid_type(&expected.join(" | "), other, path));
                }
            }
            continue;
        }
        let expected = prop.get("type").and_then(Value::as_str).unwrap_or("any");
        match (expected, value) {
            ("number", Some(Value::Number(n))) => {
                let n = n.as_f64().unwrap_or_default();
                if let Some(min) = prop.get("minimum").and_then(Value::as_f64) {
                    if n < min {
                        issues.push(json!({ "code": "too_small", "minimum": jsnum::to_json(min), "type": "number", "inclusive": true, "exact": false,
                            "message": format!("Number must be greater than or equal to {}", jsnum::format(min)), "path": path }));
                        continue;
                    }
                }
                if let Some(max) = prop.get("maximum").and_then(Value::as_f64) {
                    if n > max {
                        issues.push(json!({ "code": "too_big", "maximum": jsnum::to_json(max), "type": "number", "inclusive": true, "exact": false,
                            "message": format!("Number must be less than or equal to {}", jsnum::format(max)), "path": path }));
                    }
                }
            }
            ("string", Some(Value::String(s))) => {
                if let Some(min) = prop.get("minLength").and_then(Value::as_u64) {
                    if (s.encode_utf16().count() as u64) < min {
                        issues.push(json!({ "code": "too_small", "minimum": min, "type": "string", "inclusive": true, "exact": false,
                            "message": format!("String must contain at least {min} character(s)"), "path": path }));
                    }
                }
            }
            ("boolean", Some(Value::Bool(_))) => {}
            ("object", Some(Value::Object(record))) => {
                // The only object argument in v1 is `zip`'s `files`: a record of URL strings.
                for (key, v) in record {
                    let path = json!([name, key]);
                    match v {
                        Value::String(s) if looks_like_url(s) => {}
                        Value::String(_) => issues.push(json!({ "validation": "url", "code": "invalid_string", "message": "Invalid url", "path": path })),
                        other => issues.push(invalid_type("string", Some(other), path)),
                    }
                }
            }
            ("any", _) => {}
            (_, got) => issues.push(invalid_type(expected, got, path)),
        }
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{object, schema};

    fn params(v: Value) -> Map<String, Value> {
        object(v)
    }

    #[test]
    fn zod_issues_match_zod_v3() {
        let input = schema(json!({ "message": { "type": "string" } }), &["message"]);
        let issues = zod_issues(&input, &mut Map::new(), &[]);
        assert_eq!(
            serde_json::to_string(&issues).unwrap(),
            r#"[{"code":"invalid_type","expected":"string","received":"undefined","path":["message"],"message":"Required"}]"#
        );
        let input = schema(
            json!({ "count": { "type": "number", "minimum": 1, "maximum": 10, "default": 3 } }),
            &[],
        );
        let mut args = Map::new();
        assert!(zod_issues(&input, &mut args, &[]).is_empty());
        assert_eq!(args["count"], 3);
        let issues = zod_issues(&input, &mut params(json!({ "count": 11 })), &[]);
        assert_eq!(
            issues[0]["message"],
            "Number must be less than or equal to 10"
        );
    }
}
