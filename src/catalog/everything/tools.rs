//! The tools every session sees: `echo`, `get-annotated-message`, `get-env`,
//! `get-resource-links`, `get-resource-reference`, `get-structured-content`, `get-sum`,
//! `get-tiny-image`, `gzip-file-as-resource`, plus the timer tools from `timers.rs`.

use super::resources::{blob_resource, text_resource, BLOB_BASE, TEXT_BASE};
use super::shared::{annotations, definition, TINY_IMAGE};
use super::timers;
use crate::catalog::{string_arg, text_result, Options, DRAFT_07};
use crate::error::Error;
use crate::jsnum;
use crate::server::handler::{resource_fn, tool_fn, HandlerError};
use crate::server::registry::{Resource, Tool};
use base64::Engine;
use serde_json::{json, Value};
use std::io::Write;

/// Every always-visible tool, in the reference's order.
pub fn static_tools(options: &Options) -> Result<Vec<Tool>, Error> {
    Ok(vec![
        echo()?,
        get_annotated_message()?,
        get_env(options.expose_env)?,
        get_resource_links()?,
        get_resource_reference()?,
        get_structured_content()?,
        get_sum()?,
        get_tiny_image()?,
        gzip_file_as_resource()?,
        timers::toggle_simulated_logging(options)?,
        timers::toggle_subscriber_updates(options)?,
        timers::trigger_long_running_operation()?,
    ])
}

fn read_only() -> Value {
    annotations(true, false, true, false)
}

/// `echo`: `Echo: <message>`.
pub fn echo() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": { "message": { "type": "string", "description": "Message to echo" } },
        "required": ["message"]
    });
    definition(
        "echo",
        "Echo Tool",
        "Echoes back the input string",
        input,
        read_only(),
    )
    .serve(tool_fn(|_ctx, args| async move {
        Ok(text_result(format!(
            "Echo: {}",
            string_arg(&args, "message")
        )))
    }))
}

/// `get-sum`: `The sum of <a> and <b> is <a+b>.` with JavaScript number formatting.
pub fn get_sum() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": {
            "a": { "type": "number", "description": "First number" },
            "b": { "type": "number", "description": "Second number" }
        },
        "required": ["a", "b"]
    });
    definition(
        "get-sum",
        "Get Sum Tool",
        "Returns the sum of two numbers",
        input,
        read_only(),
    )
    .serve(tool_fn(|_ctx, args| async move {
        let num = |k: &str| {
            args.get(k)
                .and_then(Value::as_f64)
                .ok_or_else(|| HandlerError::failed(format!("{k} must be a number")))
        };
        let (a, b) = (num("a")?, num("b")?);
        Ok(text_result(crate::catalog::sum_text(a, b)))
    }))
}

fn get_annotated_message() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": {
            "messageType": { "type": "string", "enum": ["error", "success", "debug"], "description": "Type of message to demonstrate different annotation patterns" },
            "includeImage": { "type": "boolean", "default": false, "description": "Whether to include an example image" }
        },
        "required": ["messageType"]
    });
    definition(
        "get-annotated-message",
        "Get Annotated Message Tool",
        "Demonstrates how annotations can be used to provide metadata about content.",
        input,
        read_only(),
    )
    .serve(tool_fn(|_ctx, args| async move {
        let message_type = args.get("messageType").and_then(Value::as_str);
        let image = args.get("includeImage").and_then(Value::as_bool) == Some(true);
        Ok(crate::catalog::annotated_message(
            message_type.unwrap_or_default(),
            image.then_some(TINY_IMAGE),
        ))
    }))
}

fn get_env(expose_env: bool) -> Result<Tool, Error> {
    let input = json!({ "type": "object", "properties": {} });
    definition(
        "get-env",
        "Print Environment Tool",
        "Returns all environment variables, helpful for debugging MCP server configuration",
        input,
        read_only(),
    )
    .serve(tool_fn(move |_, _| async move {
        Ok(text_result(crate::catalog::env_json(expose_env)))
    }))
}

fn get_resource_links() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": { "count": { "type": "number", "minimum": 1, "maximum": 10, "default": 3, "description": "Number of resource links to return (1-10)" } }
    });
    definition(
            "get-resource-links",
            "Get Resource Links Tool",
            "Returns up to ten resource links that reference different types of resources",
            input,
            read_only(),
        ).serve(tool_fn(|_ctx, args| async move {
            let count = args.get("count").and_then(Value::as_f64).unwrap_or(3.0);
            let mut content = vec![
                json!({ "type": "text", "text": format!("Here are {} resource links to resources available in this server:", jsnum::format(count)) }),
            ];
            let mut id = 1u64;
            while (id as f64) <= count {
                // The reference names this `isOdd` though it is true for even ids: even ids are
                // Text, odd ids are Blob (both report text/plain).
                let text = id % 2 == 0;
                let (kind, uri) = if text {
                    ("Text", format!("{TEXT_BASE}/{id}"))
                } else {
                    ("Blob", format!("{BLOB_BASE}/{id}"))
                };
                content.push(json!({
                    "type": "resource_link",
                    "uri": uri,
                    "name": format!("{kind} Resource {id}"),
                    "description": format!("Resource {id}: plaintext resource"),
                    "mimeType": "text/plain"
                }));
                id += 1;
            }
            Ok(json!({ "content": content }))
        }))
}

fn get_resource_reference() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": {
            "resourceType": { "type": "string", "enum": ["Text", "Blob"], "default": "Text" },
            "resourceId": { "type": "number", "default": 1, "description": "ID of the text resource to fetch" }
        }
    });
    definition(
            "get-resource-reference",
            "Get Resource Reference Tool",
            "Returns a resource reference that can be used by MCP clients",
            input,
            read_only(),
        ).serve(tool_fn(|_ctx, args| async move {
            let kind = args
                .get("resourceType")
                .and_then(Value::as_str)
                .unwrap_or("Text")
                .to_string();
            let id_value = args.get("resourceId").cloned().unwrap_or(json!(1));
            let id = id_value.as_f64().unwrap_or(f64::NAN);
            if !(id.is_finite() && id.fract() == 0.0 && id >= 1.0) {
                return Err(HandlerError::failed(format!(
                    "Invalid resourceId: {}. Must be a finite positive integer.",
                    crate::catalog::js_string(&id_value)
                )));
            }
            let id = id as u64;
            let resource = if kind == "Blob" {
                blob_resource(&format!("{BLOB_BASE}/{id}"), id)
            } else {
                text_resource(&format!("{TEXT_BASE}/{id}"), id)
            };
            let uri = resource["uri"].as_str().unwrap_or_default().to_string();
            Ok(json!({ "content": [
                { "type": "text", "text": format!("Returning resource reference for Resource {id}:") },
                { "type": "resource", "resource": resource },
                { "type": "text", "text": format!("You can access this resource using the URI: {uri}") }
            ] }))
        }))
}

fn get_structured_content() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": { "location": { "type": "string", "enum": ["New York", "Chicago", "Los Angeles"], "description": "Choose city" } },
        "required": ["location"]
    });
    let output = json!({
        "type": "object",
        "properties": {
            "temperature": { "type": "number", "description": "Temperature in celsius" },
            "conditions": { "type": "string", "description": "Weather conditions description" },
            "humidity": { "type": "number", "description": "Humidity percentage" }
        },
        "required": ["temperature", "conditions", "humidity"],
        "additionalProperties": false,
        "$schema": DRAFT_07
    });
    let def = definition(
        "get-structured-content",
        "Get Structured Content Tool",
        "Returns structured content along with an output schema for client data validation",
        input,
        read_only(),
    );
    def.with("outputSchema", output).serve(tool_fn(|_ctx, args| async move {
            let weather = match args.get("location").and_then(Value::as_str) {
                Some("New York") => {
                    json!({ "temperature": 33, "conditions": "Cloudy", "humidity": 82 })
                }
                Some("Chicago") => {
                    json!({ "temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82 })
                }
                _ => json!({ "temperature": 73, "conditions": "Sunny / Clear", "humidity": 48 }),
            };
            Ok(
                json!({ "content": [{ "type": "text", "text": weather.to_string() }], "structuredContent": weather }),
            )
        }))
}

fn get_tiny_image() -> Result<Tool, Error> {
    definition(
        "get-tiny-image",
        "Get Tiny Image Tool",
        "Returns a tiny MCP logo image.",
        json!({ "type": "object", "properties": {} }),
        read_only(),
    )
    .serve(tool_fn(|_ctx, _| async move {
        Ok(json!({ "content": [
                { "type": "text", "text": "Here's the image you requested:" },
                { "type": "image", "data": TINY_IMAGE, "mimeType": "image/png" },
                { "type": "text", "text": "The image above is the MCP logo." }
            ] }))
    }))
}

/// The reference's default `data` URL of `gzip-file-as-resource`.
const GZIP_DEFAULT_URL: &str =
    "https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md";

/// gzip as Node's `zlib.gzipSync` writes it (mtime 0, OS byte 3).
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::GzBuilder::new()
        .operating_system(3)
        .write(Vec::new(), flate2::Compression::default());
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

fn gzip_file_as_resource() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "default": "README.md.gz", "description": "Name of the output file" },
            "data": { "type": "string", "format": "uri", "default": GZIP_DEFAULT_URL, "description": "URL or data URI of the file content to compress" },
            "outputType": {
                "type": "string",
                "enum": ["resourceLink", "resource"],
                "default": "resourceLink",
                "description": "How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object."
            }
        }
    });
    definition(
            "gzip-file-as-resource",
            "GZip File as Resource Tool",
            "Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.",
            input,
            annotations(false, false, true, true),
        ).serve(tool_fn(|ctx, args| async move {
            let name = args.get("name").and_then(Value::as_str).unwrap_or("README.md.gz").to_string();
            let url = args.get("data").and_then(Value::as_str).unwrap_or(GZIP_DEFAULT_URL).to_string();
            let output = args.get("outputType").and_then(Value::as_str).unwrap_or("resourceLink").to_string();
            let scheme = url.split(':').next().unwrap_or_default().to_ascii_lowercase();
            let content = match scheme.as_str() {
                "data" => crate::catalog::data_url::bytes(&url).ok_or_else(|| "malformed data: URL".to_string()),
                "http" | "https" => super::fetch::fetch(&url, &super::fetch::Limits::from_env()).await,
                _ => Err(format!("Unsupported URL protocol for {url}. Only http, https, and data URLs are supported.")),
            }
            .map_err(|e| HandlerError::failed(format!("Error processing file {url}: {e}")))?;
            let blob = base64::engine::general_purpose::STANDARD.encode(gzip(&content));
            let uri = format!("demo://resource/session/{name}");
            let contents = json!({ "uri": uri, "mimeType": "application/gzip", "blob": blob });
            if !ctx.scope.revision.has_handshake() {
                // The stateless era has no session to keep the resource for a later read: a
                // link would point at nothing, so the file comes inline, and the answer says why.
                let mut content = vec![json!({ "type": "resource", "resource": contents })];
                if output != "resource" {
                    let why = format!("Returned inline instead of as a resource link: protocol {} has no session in which {uri} could be kept for a later read.", ctx.scope.revision);
                    content.push(json!({ "type": "text", "text": why }));
                }
                return Ok(json!({ "content": content }));
            }
            let stored = contents.clone();
            ctx.session.add_own_resource(Resource {
                definition: crate::catalog::object(json!({ "uri": uri, "name": name, "mimeType": "application/gzip" })),
                handler: resource_fn(move |_, _| {
                    let stored = stored.clone();
                    async move { Ok(vec![stored]) }
                }),
            });
            Ok(if output == "resource" {
                json!({ "content": [{ "type": "resource", "resource": contents }] })
            } else {
                json!({ "content": [{ "type": "resource_link", "name": name, "uri": uri, "mimeType": "application/gzip" }] })
            })
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_matches_node() {
        let out = base64::engine::general_purpose::STANDARD.encode(gzip(b"Hello world"));
        assert_eq!(out, "H4sIAAAAAAAAA/NIzcnJVyjPL8pJAQBSntaLCwAAAA==");
    }
}
