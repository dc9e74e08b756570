//! `srv.auth`: the HTTP listener's auth lab (`docs/auth.md`) as a test sees it — the clients
//! registered, the tokens issued, a client registered by the test, tokens revoked or expired.

use super::state::PyServer;
use crate::python::args;
use crate::python::errors::ConfigError;
use crate::transport::http::auth::{AuthLab, Refused};
use pyo3::prelude::*;
use serde_json::Value;
use std::sync::Arc;

/// The listener's auth lab, or a `ConfigError` saying it is off.
fn lab(server: &PyServer) -> PyResult<Arc<AuthLab>> {
    crate::lock::lock(&server.http)
        .as_ref()
        .and_then(|running| running.state.auth.clone())
        .ok_or_else(|| {
            ConfigError::new_err(
                "the auth lab is off: start_http(auth=\"oauth\") (or \"bearer\") first",
            )
        })
}

/// The registered clients' metadata (without secrets), as JSON text.
pub(super) fn clients(server: &PyServer) -> PyResult<String> {
    Ok(serde_json::to_string(&lab(server)?.clients()).expect("JSON values"))
}

/// The tokens issued, as JSON text.
pub(super) fn tokens(server: &PyServer) -> PyResult<String> {
    Ok(serde_json::to_string(&lab(server)?.tokens()).expect("plain data"))
}

/// Registers a client from `metadata` (JSON text); the answer with its secret, as JSON text.
pub(super) fn register(server: &PyServer, metadata: &str) -> PyResult<String> {
    let Value::Object(metadata) = args::json(metadata)? else {
        return Err(ConfigError::new_err(
            "client metadata is a JSON object (RFC 7591)",
        ));
    };
    let client = lab(server)?
        .register(metadata)
        .map_err(ConfigError::new_err)?;
    Ok(Value::Object(client).to_string())
}

/// Ends the token `jti` (every token when `None`) as `why` (`revoked` or `expired`).
pub(super) fn end(server: &PyServer, jti: Option<&str>, why: &str) -> PyResult<usize> {
    let why = match why {
        "revoked" => Refused::Revoked,
        "expired" => Refused::Expired,
        other => {
            return Err(ConfigError::new_err(format!(
                "unknown end {other:?} (revoked, expired)"
            )))
        }
    };
    Ok(lab(server)?.end(jti, why))
}

/// Seeds the Client ID Metadata Document of `url` (`document`: JSON text).
pub(super) fn add_document(server: &PyServer, url: String, document: &str) -> PyResult<()> {
    let document = args::json(document)?;
    lab(server)?.add_client_document(url, document);
    Ok(())
}

/// Scripts the consent step's next `answers` (a JSON array); the rules' ids.
pub(super) fn consent(server: &PyServer, answers: &str) -> PyResult<Vec<String>> {
    lab(server)?;
    let Value::Array(answers) = args::json(answers)? else {
        return Err(ConfigError::new_err("the answers are a list"));
    };
    let rules = server
        .core
        .faults
        .add_consent(&answers)
        .map_err(|e| crate::python::errors::to_py(crate::error::Error::Fault(e.to_string())))?;
    Ok(rules.iter().map(|r| r.id.to_string()).collect())
}

/// Moves the resource to the lab's second authorization server; its issuer.
pub(super) fn migrate(server: &PyServer) -> PyResult<String> {
    Ok(lab(server)?.migrate())
}

/// Takes the auth lab, if the listener has one, back to the start.
pub(super) fn reset(server: &PyServer) {
    if let Ok(lab) = lab(server) {
        lab.reset();
    }
}
