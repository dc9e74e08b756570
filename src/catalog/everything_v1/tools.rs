//! v1's tools, in its `tools/list` order: `echo`, `add`, `longRunningOperation`, `printEnv`,
//! `getTinyImage`, `annotatedMessage`, `getResourceReference`, `getResourceLinks`,
//! `structuredContent`, `zip`, plus the ones that ask the client from `client_tools.rs`
//! (`sampleLLM`, `listRoots`, `startElicitation`).

use super::client_tools;
use super::resources::{resource_object, resource_uri, RESOURCE_COUNT};
use super::shared::{fail, number, v1_tool, TINY_IMAGE};
use super::zip::zip_store;
use crate::catalog::builder::tool;
use crate::catalog::{schema, string_arg, text_result, Options, DRAFT_07};
use crate::error::Error;
use crate::jsnum;
use crate::server::handler::tool_fn;
use crate::server::registry::Tool;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

/// Every tool, in v1's order; `listRoots` and `startElicitation` only for clients with the
/// capability.
pub fn tools(options: &Options) -> Result<Vec<Tool>, Error> {
    Ok(vec![
        echo()?,
        add()?,
        long_running_operation()?,
        print_env(options.expose_env)?,
        client_tools::sample_llm()?,
        get_tiny_image()?,
        annotated_message()?,
        get_resource_reference()?,
        get_resource_links()?,
        structured_content()?,
        zip()?,
        client_tools::list_roots()?.requiring("roots"),
        client_tools::start_elicitation()?.requiring("elicitation"),
    ])
}

fn echo() -> Result<Tool, Error> {
    v1_tool(
        tool("echo")
            .description("Echoes back the input")
            .input(schema(
                json!({ "message": { "type": "string", "description": "Message to echo" } }),
                &["message"],
            )),
        &[],
        tool_fn(|_, args| async move {
            Ok(text_result(format!(
                "Echo: {}",
                string_arg(&args, "message")
            )))
        }),
    )
}

fn add() -> Result<Tool, Error> {
    v1_tool(
        tool("add").description("Adds two numbers").input(schema(
            json!({
                "a": { "type": "number", "description": "First number" },
                "b": { "type": "number", "description": "Second number" }
            }),
            &["a", "b"],
        )),
        &[],
        tool_fn(|_, args| async move {
            let (a, b) = (number(&args, "a"), number(&args, "b"));
            Ok(text_result(crate::catalog::sum_text(a, b)))
        }),
    )
}

fn long_running_operation() -> Result<Tool, Error> {
    v1_tool(tool("longRunningOperation").description("Demonstrates a long running operation with progress updates").input(schema(json!({
                "duration": { "type": "number", "default": 10, "description": "Duration of the operation in seconds" },
                "steps": { "type": "number", "default": 5, "description": "Number of steps in the operation" }
            }), &[])), &[], tool_fn(|ctx, args| async move {
            let (duration, steps) = (number(&args, "duration"), number(&args, "steps"));
            crate::catalog::long_running_operation(&ctx, duration, steps)
                .await
                .ok_or_else(|| fail("cancelled"))
        }))
}

fn print_env(expose_env: bool) -> Result<Tool, Error> {
    v1_tool(
        tool("printEnv")
            .description(
                "Prints all environment variables, helpful for debugging MCP server configuration",
            )
            .input(schema(json!({}), &[])),
        &[],
        tool_fn(move |_, _| async move { Ok(text_result(crate::catalog::env_json(expose_env))) }),
    )
}

fn get_tiny_image() -> Result<Tool, Error> {
    v1_tool(
        tool("getTinyImage")
            .description("Returns the MCP_TINY_IMAGE")
            .input(schema(json!({}), &[])),
        &[],
        tool_fn(|_, _| async move {
            Ok(json!({ "content": [
                { "type": "text", "text": "This is a tiny image:" },
                { "type": "image", "data": TINY_IMAGE, "mimeType": "image/png" },
                { "type": "text", "text": "The image above is the MCP tiny image." }
            ] }))
        }),
    )
}

fn annotated_message() -> Result<Tool, Error> {
    v1_tool(tool("annotatedMessage").description("Demonstrates how annotations can be used to provide metadata about content").input(schema(json!({
                "messageType": { "type": "string", "enum": ["error", "success", "debug"], "description": "Type of message to demonstrate different annotation patterns" },
                "includeImage": { "type": "boolean", "default": false, "description": "Whether to include an example image" }
            }), &["messageType"])), &[], tool_fn(|_, args| async move {
            let image = args.get("includeImage").and_then(Value::as_bool) == Some(true);
            Ok(crate::catalog::annotated_message(
                &string_arg(&args, "messageType"),
                image.then_some(TINY_IMAGE),
            ))
        }))
}

/// The static resource with this numeric id, if it is an integer in 1..=100.
fn resource_by_number(n: f64) -> Option<usize> {
    (n.fract() == 0.0 && (1.0..=RESOURCE_COUNT as f64).contains(&n)).then_some(n as usize)
}

fn get_resource_reference() -> Result<Tool, Error> {
    v1_tool(tool("getResourceReference").description("Returns a resource reference that can be used by MCP clients").input(schema(json!({
                "resourceId": { "type": "number", "minimum": 1, "maximum": 100, "description": "ID of the resource to reference (1-100)" }
            }), &["resourceId"])), &[], tool_fn(|_, args| async move {
            let n = number(&args, "resourceId");
            let id = resource_by_number(n).ok_or_else(|| {
                fail(format!(
                    "Resource with ID {} does not exist",
                    jsnum::format(n)
                ))
            })?;
            let mut resource = resource_object(id);
            if let Some(r) = resource.as_object_mut() {
                r.shift_remove("name");
            }
            Ok(json!({ "content": [
                { "type": "text", "text": format!("Returning resource reference for Resource {id}:") },
                { "type": "resource", "resource": resource },
                { "type": "text", "text": format!("You can access this resource using the URI: {}", resource_uri(id)) }
            ] }))
        }))
}

fn get_resource_links() -> Result<Tool, Error> {
    v1_tool(tool("getResourceLinks").description("Returns multiple resource links that reference different types of resources").input(schema(json!({
                "count": { "type": "number", "minimum": 1, "maximum": 10, "default": 3, "description": "Number of resource links to return (1-10)" }
            }), &[])), &[], tool_fn(|_, args| async move {
            let count = number(&args, "count");
            let mut content = vec![json!({ "type": "text", "text": format!(
                "Here are {} resource links to resources available in this server (see full output in tool response if your client does not support resource_link yet):",
                jsnum::format(count)
            ) })];
            let mut id = 1;
            while (id as f64) <= count {
                let text = id % 2 == 1;
                content.push(json!({
                    "type": "resource_link",
                    "uri": resource_uri(id),
                    "name": format!("Resource {id}"),
                    "description": format!("Resource {id}: {}", if text { "plaintext resource" } else { "binary blob resource" }),
                    "mimeType": if text { "text/plain" } else { "application/octet-stream" }
                }));
                id += 1;
            }
            Ok(json!({ "content": content }))
        }))
}

fn structured_content() -> Result<Tool, Error> {
    v1_tool(tool("structuredContent").description("Returns structured content along with an output schema for client data validation").input(schema(json!({
                "location": { "type": "string", "minLength": 1, "description": "City name or zip code" }
            }), &["location"])).with("outputSchema", json!({
                "type": "object",
                "properties": {
                    "temperature": { "type": "number", "description": "Temperature in celsius" },
                    "conditions": { "type": "string", "description": "Weather conditions description" },
                    "humidity": { "type": "number", "minimum": 0, "maximum": 100, "description": "Humidity percentage" }
                },
                "required": ["temperature", "conditions", "humidity"],
                "additionalProperties": false,
                "$schema": DRAFT_07
            })), &["location"], tool_fn(|_, _| async move {
            let weather =
                json!({ "temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65 });
            Ok(json!({
                "content": [{ "type": "text", "text": weather.to_string() }],
                "structuredContent": weather
            }))
        }))
}

fn zip() -> Result<Tool, Error> {
    v1_tool(tool("zip").description("Compresses the provided resource files (mapping of name to URI, which can be a data URI) to a zip file, which it returns as a data URI resource link.").input(schema(json!({
                "files": {
                    "type": "object",
                    "additionalProperties": { "type": "string", "format": "uri", "description": "URL of the file to include in the zip" },
                    "description": "Mapping of file names to URLs to include in the zip"
                }
            }), &["files"])), &[], tool_fn(|_, args| async move {
            let mut files = Vec::new();
            for (name, url) in args
                .get("files")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let url = url.as_str().unwrap_or_default();
                let data = crate::catalog::data_url::bytes(url)
                    .ok_or("fetch failed")
                    .map_err(|e| fail(format!("Error fetching file {url}: {e}")))?;
                files.push((name.clone(), data));
            }
            let uri = format!(
                "data:application/zip;base64,{}",
                STANDARD.encode(zip_store(&files))
            );
            Ok(
                json!({ "content": [{ "type": "resource_link", "name": "files.zip", "mimeType": "application/zip", "uri": uri }] }),
            )
        }))
}
