//! v1's resources, template, prompts and completions: the static resources
//! `test://static/resource/1..=100` (odd ids text, even ids blob) and their template, the
//! `resources/list` paging with `btoa` cursors, the three prompts and their completions.

use super::shared::{fail, TINY_IMAGE};
use crate::catalog::{js_string, object, starts_with, user_text};
use crate::error::Error;
use crate::jsonrpc::{code, ErrorObject};
use crate::server::handler::{complete_fn, prompt_fn, resource_fn, template_fn};
use crate::server::pagination::Page;
use crate::server::registry::{CompletionKey, Prompt, Registry, Resource, ResourceTemplate};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// How many static resources there are (`test://static/resource/1..=100`).
pub const RESOURCE_COUNT: usize = 100;
/// `resources/list` page size.
pub const PAGE_SIZE: usize = 10;

/// Registers the static resources, their template, the prompts, the completions and the
/// resource pager.
pub fn load(registry: &mut Registry) -> Result<(), Error> {
    for id in 1..=RESOURCE_COUNT {
        let resource = static_resource(id);
        registry
            .resources
            .insert(resource.uri().to_string(), resource);
    }
    let template = template()?;
    registry.templates.insert(
        template
            .definition
            .get("uriTemplate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        template,
    );
    for prompt in prompts() {
        registry.prompts.insert(prompt.name().to_string(), prompt);
    }
    completions(registry);
    registry.resource_pager = Some(Arc::new(resource_page));
    Ok(())
}

/// The URI of static resource `id` (1-based).
pub fn resource_uri(id: usize) -> String {
    format!("test://static/resource/{id}")
}

/// Resource `id` (1..=100) as v1 builds it: `{uri, name, mimeType, text|blob}`. The 0-based
/// index decides: even index (odd id) → text, odd index (even id) → blob.
pub fn resource_object(id: usize) -> Value {
    let uri = resource_uri(id);
    let name = format!("Resource {id}");
    if id % 2 == 1 {
        json!({ "uri": uri, "name": name, "mimeType": "text/plain",
                "text": format!("Resource {id}: This is a plaintext resource") })
    } else {
        json!({ "uri": uri, "name": name, "mimeType": "application/octet-stream",
                "blob": STANDARD.encode(format!("Resource {id}: This is a base64 blob")) })
    }
}

/// A listed static resource; its list entry carries the content inline (a v1 quirk).
fn static_resource(id: usize) -> Resource {
    let contents = resource_object(id);
    Resource {
        definition: object(contents.clone()),
        handler: resource_fn(move |_, _| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        }),
    }
}

/// `test://static/resource/{id}`: the same contents for 1..=100, else `Unknown resource`.
fn template() -> Result<ResourceTemplate, Error> {
    let uri_template = "test://static/resource/{id}";
    ResourceTemplate::new(
        json!({
            "uriTemplate": uri_template,
            "name": "Static Resource",
            "description": "A static resource with a numeric ID"
        }),
        template_fn(|_, uri, vars| async move {
            let id = vars
                .get("id")
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<usize>().ok())
                .filter(|id| (1..=RESOURCE_COUNT).contains(id) && resource_uri(*id) == uri);
            match id {
                Some(id) => Ok(vec![resource_object(id)]),
                None => Err(fail(format!("Unknown resource: {uri}"))),
            }
        }),
    )
}

/// v1's `resources/list` paging: 10 per page, cursor `btoa(String(startIndex))`. A cursor
/// that decodes to a non-number restarts at 0; one that is not base64 is a `-32603`.
pub fn resource_page(len: usize, params: &Map<String, Value>) -> Result<Page, ErrorObject> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => {
            let bytes = STANDARD.decode(c).map_err(|_| {
                ErrorObject::new(
                    code::INTERNAL_ERROR,
                    "Failed to execute 'atob' on 'Window': The string to be decoded is not correctly encoded.",
                )
            })?;
            String::from_utf8_lossy(&bytes)
                .trim()
                .parse::<usize>()
                .unwrap_or(0)
        }
        Some(other) => js_parse_int(&js_string(other)).map_or(0, |n| n.max(0) as usize),
    };
    let start = start.min(len);
    let end = (start + PAGE_SIZE).min(len);
    Ok(Page {
        start,
        end,
        next_cursor: (end < len).then(|| STANDARD.encode(end.to_string())),
    })
}

/// JavaScript's `parseInt(s, 10)`: optional whitespace and sign, then the leading digits.
pub fn js_parse_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (sign, digits) = match t.as_bytes().first() {
        Some(b'-') => (-1, &t[1..]),
        Some(b'+') => (1, &t[1..]),
        _ => (1, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end]
        .parse::<i64>()
        .ok()
        .map(|n| n.saturating_mul(sign))
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt {
            definition: object(
                json!({ "name": "simple_prompt", "description": "A prompt without arguments" }),
            ),
            handler: prompt_fn(|_, _| async {
                Ok(
                    json!({ "messages": [user_text("This is a simple prompt without arguments.".into())] }),
                )
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "complex_prompt",
                "description": "A prompt with arguments",
                "arguments": [
                    { "name": "temperature", "description": "Temperature setting", "required": true },
                    { "name": "style", "description": "Output style", "required": false }
                ]
            })),
            handler: prompt_fn(|_, args| async move {
                let arg = |k: &str| {
                    args.get(k)
                        .map_or_else(|| "undefined".to_string(), js_string)
                };
                Ok(json!({ "messages": [
                    user_text(format!("This is a complex prompt with arguments: temperature={}, style={}", arg("temperature"), arg("style"))),
                    { "role": "assistant", "content": { "type": "text", "text": "I understand. You've provided a complex prompt with temperature and style arguments. How would you like me to proceed?" } },
                    { "role": "user", "content": { "type": "image", "data": TINY_IMAGE, "mimeType": "image/png" } }
                ] }))
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "resource_prompt",
                "description": "A prompt that includes an embedded resource reference",
                "arguments": [{ "name": "resourceId", "description": "Resource ID to include (1-100)", "required": true }]
            })),
            handler: prompt_fn(|_, args| async move {
                let raw = args
                    .get("resourceId")
                    .map_or_else(|| "undefined".to_string(), js_string);
                let id = js_parse_int(&raw)
                    .filter(|n| (1..=RESOURCE_COUNT as i64).contains(n))
                    .ok_or_else(|| {
                        fail(format!(
                            "Invalid resourceId: {raw}. Must be a number between 1 and 100."
                        ))
                    })?;
                Ok(json!({ "messages": [
                    user_text(format!("This prompt includes Resource {id}. Please analyze the following resource:")),
                    { "role": "user", "content": { "type": "resource", "resource": resource_object(id as usize) } }
                ] }))
            }),
        },
    ]
}

/// v1's completion values by argument name (the prompt name is ignored).
const PROMPT_COMPLETIONS: [(&str, &[&str]); 3] = [
    ("style", &["casual", "formal", "technical", "friendly"]),
    ("temperature", &["0", "0.5", "0.7", "1.0"]),
    ("resourceId", &["1", "2", "3", "4", "5"]),
];

/// Resource ids offered for `ref/resource` completion.
const RESOURCE_ID_COMPLETIONS: &[&str] = &["1", "2", "3", "4", "5"];

fn prefix_completer(values: &'static [&'static str]) -> crate::server::handler::CompleteFn {
    complete_fn(move |_, _, value, _| async move { Ok(starts_with(values, &value)) })
}

fn completions(registry: &mut Registry) {
    for prompt in ["simple_prompt", "complex_prompt", "resource_prompt"] {
        for (argument, values) in PROMPT_COMPLETIONS {
            registry.completions.insert(
                CompletionKey {
                    ref_type: "ref/prompt".into(),
                    ref_name: prompt.into(),
                    argument: argument.into(),
                },
                prefix_completer(values),
            );
        }
    }
    registry.completions.insert(
        CompletionKey {
            ref_type: "ref/resource".into(),
            ref_name: "test://static/resource/{id}".into(),
            argument: "id".into(),
        },
        prefix_completer(RESOURCE_ID_COMPLETIONS),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::object;
    use crate::jsonrpc::code;

    fn params(v: Value) -> Map<String, Value> {
        object(v)
    }

    #[test]
    fn pages_with_btoa_cursors() {
        let p = resource_page(100, &Map::new()).unwrap();
        assert_eq!(
            (p.start, p.end, p.next_cursor.as_deref()),
            (0, 10, Some("MTA="))
        );
        let p = resource_page(100, &params(json!({ "cursor": "OTA=" }))).unwrap();
        assert_eq!((p.start, p.end, p.next_cursor), (90, 100, None));
        // Not a number after decoding: restart at 0. Not base64: -32603.
        let p = resource_page(100, &params(json!({ "cursor": "YWJj" }))).unwrap();
        assert_eq!(p.start, 0);
        let e = resource_page(100, &params(json!({ "cursor": "!!" }))).unwrap_err();
        assert_eq!(e.code, code::INTERNAL_ERROR);
    }

    #[test]
    fn resources_alternate_text_and_blob() {
        assert_eq!(
            resource_object(1)["text"],
            "Resource 1: This is a plaintext resource"
        );
        assert_eq!(
            resource_object(2)["blob"],
            "UmVzb3VyY2UgMjogVGhpcyBpcyBhIGJhc2U2NCBibG9i"
        );
        assert_eq!(resource_object(2)["mimeType"], "application/octet-stream");
    }

    #[test]
    fn parse_int() {
        assert_eq!(js_parse_int(" 5abc"), Some(5));
        assert_eq!(js_parse_int("abc"), None);
    }
}
