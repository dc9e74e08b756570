//! Reading a request's params: required and optional members, each refused with `-32602`
//! naming it.

use crate::jsonrpc::ErrorObject;
use serde_json::{Map, Value};

/// A required string parameter, or `-32602` naming it.
pub fn required_str<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, ErrorObject> {
    match crate::field::get(params, key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be a string, got {}",
            crate::jsonrpc::json_type(other)
        ))),
        None => Err(ErrorObject::invalid_params(format!(
            "missing required \"{key}\""
        ))),
    }
}

/// A required object parameter, or `-32602` naming it.
pub fn required_object(
    params: &Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params.get(key) {
        None | Some(Value::Null) => Err(ErrorObject::invalid_params(format!(
            "missing required \"{key}\""
        ))),
        Some(_) => optional_object(params, key),
    }
}

/// An optional object parameter (absent → empty), or `-32602` naming it; taken out of
/// `params` rather than copied.
pub fn take_optional_object(
    params: &mut Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match crate::field::get_mut(params, key) {
        Some(Value::Object(m)) => Ok(std::mem::take(m)),
        _ => optional_object(params, key),
    }
}

/// An optional object parameter (absent → empty), or `-32602` naming it.
pub fn optional_object(
    params: &Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be an object, got {}",
            crate::jsonrpc::json_type(other)
        ))),
    }
}
