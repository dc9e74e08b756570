//! `initialize` and `ping`: version negotiation, capabilities, `serverInfo`, `instructions`.

use crate::jsonrpc::ErrorObject;
use crate::protocol::capabilities::server_capabilities;
use crate::protocol::envelope;
use crate::protocol::revision::negotiate;
use crate::protocol::Revision;
use crate::server::model::Server;
use crate::server::scope::ClientInfo;
use crate::server::session::{Phase, Session};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Answers `server/discover` (stateless era): the stateless revisions served, the
/// capabilities and the instructions. The server's identity is not a member: every stateless
/// result carries it in `_meta` (`server::completed::complete`).
pub fn discover(server: &Server) -> Result<Value, ErrorObject> {
    let mut result = Map::new();
    let versions = envelope::stateless_names(&server.config.revisions);
    result.insert("supportedVersions".into(), versions.into());
    result.insert(
        "capabilities".into(),
        declared_capabilities(server, Revision::V2026_07_28),
    );
    result.insert("instructions".into(), server.instructions().into());
    Ok(Value::Object(result))
}

/// The server's capabilities under `revision`, from what its registry holds.
fn declared_capabilities(server: &Server, revision: Revision) -> Value {
    let registry = server.registry();
    let tasks = registry
        .tools
        .values()
        .any(|t| t.task_support != crate::server::tasks::task::TaskSupport::Forbidden);
    server_capabilities(
        revision,
        &registry.extensions,
        &registry.handshake_extensions,
        tasks,
    )
}

/// Answers `ping`: an empty result, in any phase.
pub fn ping() -> Result<Value, ErrorObject> {
    Ok(Value::Object(Map::new()))
}

/// Answers `initialize` and moves the session to [`Phase::Initializing`]. A second
/// `initialize` on the same connection is refused with `-32600`.
pub fn initialize(
    server: &Server,
    session: &Session,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let state = session.state();
    if state.phase != Phase::New {
        return Err(ErrorObject::invalid_request(format!(
            "initialize was already received on this connection (negotiated {})",
            state.revision.map_or("?", |r| r.as_str())
        )));
    }
    // A peer that takes `initialize` with `{}` (the kit): what is missing is its own.
    let filled;
    let params = match server.config.dialect.filter(|d| d.lenient_handshake()) {
        Some(_) => {
            let mut p = params.clone();
            p.entry("protocolVersion")
                .or_insert_with(|| Revision::V2024_11_05.as_str().into());
            p.entry("capabilities")
                .or_insert_with(|| Value::Object(Map::new()));
            p.entry("clientInfo")
                .or_insert_with(|| serde_json::json!({ "name": "unknown", "version": "0" }));
            filled = p;
            &filled
        }
        None => params,
    };
    let requested = super::params::required_str(params, "protocolVersion")?;
    let capabilities = Value::Object(super::params::required_object(params, "capabilities")?);
    let client_info = super::params::required_object(params, "clientInfo")?;
    if !client_info.get("name").is_some_and(Value::is_string) {
        return Err(ErrorObject::invalid_params(
            "\"clientInfo.name\" must be a string",
        ));
    }
    let client_info = Value::Object(client_info);
    let Some(revision) = negotiate(requested, &server.config.revisions) else {
        return Err(ErrorObject::invalid_request(format!(
            "this server is pinned to the stateless era ({}); it does not serve initialize",
            server
                .config
                .revisions
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    session.update(|s| {
        s.phase = Phase::Initializing;
        s.revision = Some(revision);
        s.declared.client_info = Some(ClientInfo::Value(client_info));
        s.declared.client_capabilities = Arc::new(capabilities);
    });
    let mut result = Map::new();
    result.insert("protocolVersion".into(), revision.as_str().into());
    result.insert(
        "capabilities".into(),
        declared_capabilities(server, revision),
    );
    result.insert("serverInfo".into(), server.server_info(revision));
    result.insert("instructions".into(), server.instructions().into());
    Ok(Value::Object(result))
}
