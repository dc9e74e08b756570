//! [`FieldError`]: why a JSON document a caller wrote (a fault rule, a canned tool) is refused,
//! naming the member at fault by its path — what the Python error's text says and what the
//! control API answers as `{"field", "message"}`.

use serde::de::DeserializeOwned;

/// A member at fault (its path, `match.nth`; empty for the document as a whole) and the
/// problem. Shown as `path: problem`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The member's path (`match.nth`, `action.error.code`, `results[1]`), or empty.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl FieldError {
    /// A problem with `field`.
    pub fn at(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

/// Reads a `T` from JSON `text`; a refusal names the member's path (a missing member by its
/// own path, not its parent's).
pub fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, FieldError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next());
        let field = match (path.as_str(), missing) {
            (".", Some(name)) => name.to_string(),
            (".", None) => String::new(),
            (_, Some(name)) => format!("{path}.{name}"),
            (_, None) => path,
        };
        FieldError::at(&field, message)
    })?;
    de.end().map_err(|e| FieldError::at("", e.to_string()))?;
    Ok(value)
}
