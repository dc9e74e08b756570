//! Arguments the Python layer passes as text (it JSON-encodes values before crossing), parsed
//! once here so every binding refuses the same mistake with the same exception.

use super::errors::ConfigError;
use crate::protocol::LogLevel;
use pyo3::prelude::*;
use serde_json::Value;

/// JSON text from Python; anything else is a `ConfigError`.
pub fn json(text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| ConfigError::new_err(format!("not JSON: {e}")))
}

/// A definition given as JSON text that must be an object (`what`: "a resource", ...).
pub fn object(text: &str, what: &str) -> PyResult<serde_json::Map<String, Value>> {
    match json(text)? {
        Value::Object(m) => Ok(m),
        _ => Err(ConfigError::new_err(format!(
            "{what} definition must be an object"
        ))),
    }
}

/// A `notifications/message` level and payload: the level by its RFC 5424 name, the data as
/// JSON text (text that is not JSON is sent as a string).
pub fn log(level: &str, data: &str) -> PyResult<(LogLevel, Value)> {
    let level = level.parse().map_err(ConfigError::new_err)?;
    let data = serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.to_string()));
    Ok((level, data))
}
