//! The skills extension's methods (SEP-2640, `io.modelcontextprotocol/skills`): `skills/list`,
//! `skills/get` and `resources/directory/read`, answered from the registry's skills
//! ([`crate::server::skills::Skill`]). They are routed only while a skill is served (the
//! registry then declares the extension) and only in the stateless era; the skills' files are
//! ordinary resources, so `resources/read` serves them in both eras.

use super::required_str;
use crate::jsonrpc::ErrorObject;
use crate::protocol::shape::{shaped, Shape};
use crate::server::context::RequestContext;
use crate::server::pagination::{list_page, page};
use crate::server::Server;
use serde_json::{json, Map, Value};

/// `skills/list`: every skill's entry, paginated like `resources/list`. An entry is never
/// split across pages (a page holds whole entries).
pub fn list(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let registry = server.registry();
    let entries: Vec<Map<String, Value>> = registry
        .skills
        .values()
        .map(|s| match s.entry() {
            Value::Object(m) => m,
            _ => Map::new(),
        })
        .collect();
    // `Shape::Resource` removes nothing a skill entry has: the entries are shown as built.
    list_page(
        "skills",
        entries.iter(),
        params,
        server.config.page_size,
        Shape::Resource,
        ctx.revision,
    )
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
pub fn read_directory(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
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
    let page = page(
        &format!("directory {uri}"),
        children.len(),
        params,
        server.config.page_size,
    )?;
    let mut result = Map::new();
    let items = children[page.start..page.end]
        .iter()
        .map(|c| shaped(Shape::Resource, c, ctx.revision));
    result.insert("resources".into(), Value::Array(items.collect()));
    if let Some(cursor) = page.next_cursor {
        result.insert("nextCursor".into(), cursor.into());
    }
    Ok(Value::Object(result))
}
