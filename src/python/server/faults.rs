//! A [`PyServer`]'s fault rules, as Python adds, reads and removes them (each rule as its JSON
//! text: `python/everything_mcp/faults.py` is the Pythonic face).

use super::state::PyServer;
use crate::error::Error;
use crate::faults::{parse_file, RuleSpec};
use crate::python::errors::to_py;
use pyo3::prelude::*;

/// Adds the rule `rule` (JSON text); its id.
pub(super) fn add(server: &PyServer, rule: &str) -> PyResult<String> {
    let spec = RuleSpec::parse(rule).map_err(|e| to_py(Error::Fault(e.to_string())))?;
    let rule = server
        .core
        .faults
        .add(spec)
        .map_err(|e| to_py(Error::Fault(e.to_string())))?;
    Ok(rule.id.to_string())
}

/// Adds every rule of a fault file's text (all or none); their ids.
pub(super) fn load(server: &PyServer, text: &str) -> PyResult<Vec<String>> {
    let specs = parse_file(text).map_err(|e| to_py(Error::Fault(e)))?;
    let rules = server
        .core
        .faults
        .add_all(specs)
        .map_err(|e| to_py(Error::Fault(e.to_string())))?;
    Ok(rules.iter().map(|r| r.id.to_string()).collect())
}

/// Puts preset `name`'s rules in force, drawing from `seed`; their ids.
pub(super) fn add_preset(server: &PyServer, name: &str, seed: u64) -> PyResult<Vec<String>> {
    let rules = server
        .core
        .faults
        .add_preset(name, seed)
        .map_err(|e| to_py(Error::Fault(e.to_string())))?;
    Ok(rules.iter().map(|r| r.id.to_string()).collect())
}

/// The rules in force, each as its JSON text with its `hits`.
pub(super) fn list(server: &PyServer) -> Vec<String> {
    server
        .core
        .faults
        .rules()
        .iter()
        .map(|r| r.to_json().to_string())
        .collect()
}

/// How many frames rule `id` acted on (`None`: no such rule in force).
pub(super) fn hits(server: &PyServer, id: &str) -> Option<u64> {
    server.core.faults.get(id).map(|r| r.hits())
}
