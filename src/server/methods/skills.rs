//! The skills extension's methods (SEP-2640, `io.modelcontextprotocol/skills`): `skills/list`,
//! `skills/get` and `resources/directory/read`, answered from the registry's skills
//! ([`crate::server::skills::Skill`]). They are routed only while a skill is served (the
//! registry then declares the extension) and only in the stateless era; the skills' files are
//! ordinary resources, so `resources/read` serves them in both eras.

use super::params::required_str;
use crate::jsonrpc::ErrorObject;
use crate::server::model::Server;
use crate::server::pagination::page;
use serde_json::{json, Map, Value};

/// `skills/list`: every skill's entry, paginated like `resources/list`. A page holds whole
/// entries, so a skill's manifest is never split across pages.
pub fn list(server: &Server, params: &Map<String, Value>) -> Result<Value, ErrorObject> {
    let registry = server.registry();
    let entries: Vec<Value> = registry.skills.values().map(|s| s.entry()).collect();
    paged(server, "skills", "skills", entries, params)
}

/// `skills/get`: the entry of the skill whose `SKILL.md` URI is `params.uri`; `-32602` for a
/// URI that names no served skill (the extension's rule).
pub fn get(server: &Server, params: &Map<String, Value>) -> Result<Value, ErrorObject> {
    let uri = required_str(params, "uri")?;
    let registry = server.registry();
    let skill = registry.skills.get(uri).ok_or_else(|| {
        ErrorObject::invalid_params(format!("Skill not found: {uri}"))
            .with_data(json!({ "uri": uri }))
    })?;
    Ok(json!({ "skill": skill.entry() }))
}

/// `resources/directory/read`: the direct children of a skill directory (`skill://<name>` or a
/// subdirectory), paginated like `resources/list`; subdirectories carry `inode/directory`.
/// Any other URI, a file's included, is `-32602`.
pub fn read_directory(server: &Server, params: &Map<String, Value>) -> Result<Value, ErrorObject> {
    let uri = required_str(params, "uri")?;
    let registry = server.registry();
    let children = registry
        .skills
        .values()
        .find_map(|s| s.directory(uri))
        .ok_or_else(|| {
            ErrorObject::invalid_params(format!("Not a directory: {uri}"))
                .with_data(json!({ "uri": uri }))
        })?;
    // The cursor names the directory, so one from another directory is refused.
    let list = format!("directory {uri}");
    paged(
        server,
        &list,
        "resources",
        children.into_iter().map(Value::Object).collect(),
        params,
    )
}

/// `{<key>: [the page params.cursor asks for], nextCursor?}`, pages of the server's page size;
/// `list` names the list in its cursors.
fn paged(
    server: &Server,
    list: &str,
    key: &str,
    mut items: Vec<Value>,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let p = page(list, items.len(), params, server.config.page_size)?;
    items.truncate(p.end);
    let mut result = Map::new();
    result.insert(key.into(), items.drain(p.start..).collect());
    if let Some(cursor) = p.next_cursor {
        result.insert("nextCursor".into(), cursor.into());
    }
    Ok(Value::Object(result))
}
