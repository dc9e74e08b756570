//! The options groups of [`crate::options`] as Python passes and reads them: keyword arguments
//! taken whole (one generic extraction for every option), and `_core.DEFAULTS`,
//! `_core.SERVER_OPTIONS`, `_core.HTTP_OPTIONS` written out from the same types.

use super::errors::ConfigError;
use crate::options::{self, Group, HttpOptions, OptionError, ServerOptions};
use crate::transport::http::DEFAULT_HOST;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple};
use serde_json::{Map, Number, Value};
use std::path::PathBuf;

/// `kwargs` as the options group `G`. `callable` names what was called (`Server()`) in the
/// `TypeError` an unknown option or a value of the wrong type raises, as Python's own keyword
/// arguments do; `None` is the default, as an omitted option is.
pub fn extract<G: Group>(callable: &str, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<G> {
    let known = options::names::<G>();
    let mut given = Map::new();
    for (name, value) in kwargs.into_iter().flatten() {
        let name: String = name.extract()?;
        if !known.contains(&name) {
            // Refused as unknown by `parse`, whatever its value.
            given.insert(name, Value::Null);
            continue;
        }
        let value = to_json(&value).map_err(|problem| match problem {
            Problem::Type(text) => {
                PyTypeError::new_err(format!("{callable} argument '{name}': {text}"))
            }
            Problem::NotFinite => ConfigError::new_err(format!(
                "invalid configuration: {name} must be a finite number"
            )),
        })?;
        given.insert(name, value);
    }
    options::parse(given).map_err(|e| {
        PyTypeError::new_err(match e {
            OptionError::Unknown { name, known } => format!(
                "{callable} got an unexpected keyword argument '{name}' (its options: {})",
                known.join(", ")
            ),
            OptionError::Invalid { name, message } => {
                format!("{callable} argument '{name}': {message}")
            }
        })
    })
}

/// Why a Python value is no option value.
enum Problem {
    /// Not of a JSON-like type (the text says which type it was).
    Type(String),
    /// A NaN or infinite float.
    NotFinite,
}

/// A Python value as JSON: `None`, `bool`, `int`, `float`, `str`, a path (`os.PathLike`, as its
/// text), a sequence (not text) or a `dict` with text keys.
fn to_json(value: &Bound<'_, PyAny>) -> Result<Value, Problem> {
    let unsupported = || {
        let type_name = value
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        Problem::Type(format!("unsupported type {type_name}"))
    };
    if value.is_none() {
        Ok(Value::Null)
    } else if let Ok(b) = value.cast::<PyBool>() {
        Ok(Value::Bool(b.is_true()))
    } else if value.is_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<i64>() {
            Ok(n.into())
        } else if let Ok(n) = value.extract::<u64>() {
            Ok(n.into())
        } else {
            Err(Problem::Type(format!("integer {value} is too large")))
        }
    } else if let Ok(f) = value.cast::<PyFloat>() {
        Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or(Problem::NotFinite)
    } else if let Ok(s) = value.cast::<PyString>() {
        Ok(Value::String(s.to_string()))
    } else if let Ok(d) = value.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d {
            let k: String = k.extract().map_err(|_| unsupported())?;
            map.insert(k, to_json(&v)?);
        }
        Ok(Value::Object(map))
    } else if value.hasattr("__fspath__").unwrap_or(false) {
        let path: PathBuf = value.extract().map_err(|_| unsupported())?;
        Ok(Value::String(path.to_string_lossy().into_owned()))
    } else if value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyTuple>()
        || value.cast::<PySequence>().is_ok() && !value.is_instance_of::<pyo3::types::PyBytes>()
    {
        let items = value.try_iter().map_err(|_| unsupported())?;
        let mut array = Vec::new();
        for item in items {
            array.push(to_json(&item.map_err(|_| unsupported())?)?);
        }
        Ok(Value::Array(array))
    } else {
        Err(unsupported())
    }
}

/// A JSON value as Python's `None`, `bool`, `int`, `float`, `str`, `list` or `dict`.
fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// `_core.DEFAULTS`: every option's default by name (both groups, and the listener's `host`),
/// durations in seconds, `None` where the default is "unset" (no tick, one page, ...).
pub fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let mut all = options::defaults::<ServerOptions>();
    all.insert("host".into(), DEFAULT_HOST.into());
    all.extend(options::defaults::<HttpOptions>());
    Ok(to_python(py, &Value::Object(all))?.cast_into::<PyDict>()?)
}

/// The names of group `G`'s options, in field order (`_core.SERVER_OPTIONS`, ...).
pub fn names<G: Group>(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(py, options::names::<G>())
}
