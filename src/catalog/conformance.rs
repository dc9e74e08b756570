//! The fixtures the official conformance suite (`@modelcontextprotocol/conformance`) calls in
//! the handshake era, with the texts of the suite's own reference server: tools `test_*`,
//! resources `test://…`, prompts `test_*_prompt…`.

use super::{js_string, object, schema, string_arg, text_result, Options};
use crate::error::Error;
use crate::protocol::LogLevel;
use crate::server::context::RequestContext;
use crate::server::handler::{prompt_fn, resource_fn, template_fn, tool_fn, HandlerError};
use crate::server::registry::{Prompt, Registry, Resource, ResourceTemplate, Tool};
use serde_json::{json, Value};
use std::time::Duration;

/// A 1×1 red PNG (the suite's test image).
pub const TEST_IMAGE_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A tiny WAV file (the suite's test audio).
pub const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The pause between the steps of the logging and progress fixtures.
const STEP: Duration = Duration::from_millis(50);

/// Registers every fixture.
pub fn load(registry: &mut Registry, _options: &Options) -> Result<(), Error> {
    for tool in tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for resource in resources() {
        registry
            .resources
            .insert(resource.uri().to_string(), resource);
    }
    let template = template()?;
    registry
        .templates
        .insert("test://template/{id}/data".into(), template);
    for prompt in prompts() {
        registry.prompts.insert(prompt.name().to_string(), prompt);
    }
    Ok(())
}

/// A tool with no arguments.
fn plain(name: &str, description: &str) -> Value {
    json!({ "name": name, "description": description, "inputSchema": schema(json!({}), &[]) })
}

fn image() -> Value {
    json!({ "type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png" })
}

/// `Elicitation completed: action=…, content=…` / `User response: …`, or the error text.
fn elicitation_text(prefix: &str, answer: Result<Value, crate::jsonrpc::ErrorObject>) -> Value {
    match answer {
        Ok(r) => {
            let action = r
                .get("action")
                .map_or_else(|| "undefined".into(), js_string);
            let content = r
                .get("content")
                .filter(|c| !c.is_null())
                .cloned()
                .unwrap_or_else(|| json!({}));
            text_result(format!("{prefix}: action={action}, content={content}"))
        }
        Err(e) => text_result(format!("Elicitation not supported or error: {}", e.message)),
    }
}

fn tools() -> Result<Vec<Tool>, Error> {
    let mut tools = vec![
        Tool::new(
            plain("test_simple_text", "Tests simple text content response"),
            tool_fn(|_, _| async { Ok(text_result("This is a simple text response for testing.".into())) }),
        )?,
        Tool::new(
            plain("test_image_content", "Tests image content response"),
            tool_fn(|_, _| async { Ok(json!({ "content": [image()] })) }),
        )?,
        Tool::new(
            plain("test_audio_content", "Tests audio content response"),
            tool_fn(|_, _| async {
                Ok(json!({ "content": [{ "type": "audio", "data": TEST_AUDIO_BASE64, "mimeType": "audio/wav" }] }))
            }),
        )?,
        Tool::new(
            plain("test_embedded_resource", "Tests embedded resource content response"),
            tool_fn(|_, _| async {
                let resource = json!({ "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content." });
                Ok(json!({ "content": [{ "type": "resource", "resource": resource }] }))
            }),
        )?,
        Tool::new(
            plain("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)"),
            tool_fn(|_, _| async {
                let resource = json!({ "uri": "test://mixed-content-resource", "mimeType": "application/json", "text": r#"{"test":"data","value":123}"# });
                Ok(json!({ "content": [
                    { "type": "text", "text": "Multiple content types test:" },
                    image(),
                    { "type": "resource", "resource": resource }
                ] }))
            }),
        )?,
        Tool::new(
            plain("test_tool_with_logging", "Tests tool that emits log messages during execution"),
            tool_fn(|ctx, _| async move {
                for (i, text) in ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate() {
                    if i > 0 {
                        pause(&ctx, STEP).await?;
                    }
                    ctx.log(LogLevel::Info, json!(text), None);
                }
                Ok(text_result("Tool with logging executed successfully".into()))
            }),
        )?,
        Tool::new(
            plain("test_tool_with_progress", "Tests tool that reports progress notifications"),
            tool_fn(|ctx, _| async move {
                for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        pause(&ctx, STEP).await?;
                    }
                    ctx.progress(step, Some(100.0), Some(&format!("Completed step {step} of 100")));
                }
                let token = ctx.progress_token().map_or_else(|| "0".into(), js_string);
                Ok(text_result(token))
            }),
        )?,
        Tool::new(
            plain("test_error_handling", "Tests error response handling"),
            tool_fn(|_, _| async { Err(HandlerError::failed("This tool intentionally returns an error for testing")) }),
        )?,
        Tool::new(
            plain(
                "test_reconnection",
                "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects.",
            ),
            tool_fn(|ctx, _| async move {
                ctx.close_stream();
                pause(&ctx, Duration::from_millis(100)).await?;
                Ok(text_result("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.".into()))
            }),
        )?,
        Tool::new(
            json!({
                "name": "test_sampling",
                "description": "Tests server-initiated sampling (LLM completion request)",
                "inputSchema": schema(json!({ "prompt": { "type": "string", "description": "The prompt to send to the LLM" } }), &["prompt"])
            }),
            tool_fn(|ctx, args| async move {
                let prompt = args.get("prompt").cloned().unwrap_or_default();
                let params = json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }], "maxTokens": 100 });
                Ok(match ctx.sample(params).await {
                    Ok(r) => {
                        let text = r.pointer("/content/text").or_else(|| r.pointer("/message/content/text")).and_then(Value::as_str);
                        text_result(format!("LLM response: {}", text.filter(|t| !t.is_empty()).unwrap_or("No response")))
                    }
                    Err(e) => text_result(format!("Sampling not supported or error: {}", e.message)),
                })
            }),
        )?,
        Tool::new(
            json!({
                "name": "test_elicitation",
                "description": "Tests server-initiated elicitation (user input request)",
                "inputSchema": schema(json!({ "message": { "type": "string", "description": "The message to show the user" } }), &["message"])
            }),
            tool_fn(|ctx, args| async move {
                let params = json!({
                    "message": args.get("message").cloned().unwrap_or_default(),
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "response": { "type": "string", "description": "User's response" } },
                        "required": ["response"]
                    }
                });
                Ok(elicitation_text("User response", ctx.elicit(params).await))
            }),
        )?,
        Tool::new(
            plain("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034"),
            tool_fn(|ctx, _| async move {
                let params = json!({
                    "message": "Please review and update the form fields with defaults",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "description": "User name", "default": "John Doe" },
                            "age": { "type": "integer", "description": "User age", "default": 30 },
                            "score": { "type": "number", "description": "User score", "default": 95.5 },
                            "status": { "type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active" },
                            "verified": { "type": "boolean", "description": "Verification status", "default": true }
                        },
                        "required": []
                    }
                });
                Ok(elicitation_text("Elicitation completed", ctx.elicit(params).await))
            }),
        )?,
        Tool::new(
            plain("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330"),
            tool_fn(|ctx, _| async move {
                let params = json!({
                    "message": "Please select options from the enum fields",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "untitledSingle": { "type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"] },
                            "titledSingle": {
                                "type": "string",
                                "description": "Select one option with titles",
                                "oneOf": [
                                    { "const": "value1", "title": "First Option" },
                                    { "const": "value2", "title": "Second Option" },
                                    { "const": "value3", "title": "Third Option" }
                                ]
                            },
                            "legacyEnum": {
                                "type": "string",
                                "description": "Select one option (legacy)",
                                "enum": ["opt1", "opt2", "opt3"],
                                "enumNames": ["Option One", "Option Two", "Option Three"]
                            },
                            "untitledMulti": {
                                "type": "array",
                                "description": "Select multiple options",
                                "minItems": 1,
                                "maxItems": 3,
                                "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
                            },
                            "titledMulti": {
                                "type": "array",
                                "description": "Select multiple options with titles",
                                "minItems": 1,
                                "maxItems": 3,
                                "items": { "anyOf": [
                                    { "const": "value1", "title": "First Choice" },
                                    { "const": "value2", "title": "Second Choice" },
                                    { "const": "value3", "title": "Third Choice" }
                                ] }
                            }
                        },
                        "required": []
                    }
                });
                Ok(elicitation_text("Elicitation completed", ctx.elicit(params).await))
            }),
        )?,
    ];
    tools.push(Tool::new(
        json!({
            "name": "json_schema_2020_12_tool",
            "description": "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            "inputSchema": json_schema_2020_12()
        }),
        tool_fn(|_, args| async move {
            Ok(text_result(format!("JSON Schema 2020-12 tool called with: {}", Value::Object(args))))
        }),
    )?);
    Ok(tools)
}

/// The input schema of `json_schema_2020_12_tool`, listed verbatim (SEP-1613, SEP-2106).
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

/// Waits `d` unless the request is cancelled first.
async fn pause(ctx: &RequestContext, d: Duration) -> Result<(), HandlerError> {
    tokio::select! {
        () = ctx.cancelled() => Err(HandlerError::failed("cancelled")),
        () = tokio::time::sleep(d) => Ok(()),
    }
}

/// A resource whose read always returns `contents`.
fn fixed_resource(definition: Value, contents: Value) -> Resource {
    Resource {
        definition: object(definition),
        handler: resource_fn(move |_, _| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        }),
    }
}

fn resources() -> Vec<Resource> {
    vec![
        fixed_resource(
            json!({ "uri": "test://static-text", "name": "static-text", "title": "Static Text Resource", "description": "A static text resource for testing", "mimeType": "text/plain" }),
            json!({ "uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource." }),
        ),
        fixed_resource(
            json!({ "uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource", "description": "A static binary resource (image) for testing", "mimeType": "image/png" }),
            json!({ "uri": "test://static-binary", "mimeType": "image/png", "blob": TEST_IMAGE_BASE64 }),
        ),
        fixed_resource(
            json!({ "uri": "test://watched-resource", "name": "watched-resource", "title": "Watched Resource", "description": "A resource for subscribe/unsubscribe tests", "mimeType": "text/plain" }),
            json!({ "uri": "test://watched-resource", "mimeType": "text/plain", "text": "Watched resource content" }),
        ),
    ]
}

fn template() -> Result<ResourceTemplate, Error> {
    let uri_template = "test://template/{id}/data";
    ResourceTemplate::new(
        json!({
            "uriTemplate": uri_template,
            "name": "template",
            "title": "Resource Template",
            "description": "A resource template with parameter substitution",
            "mimeType": "application/json"
        }),
        template_fn(|_, uri, vars| async move {
            let id = vars
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let text =
                json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
                    .to_string();
            Ok(vec![
                json!({ "uri": uri, "mimeType": "application/json", "text": text }),
            ])
        }),
    )
}

/// A user message with one content block.
fn user(content: Value) -> Value {
    json!({ "role": "user", "content": content })
}

fn prompts() -> Vec<Prompt> {
    let arg = |name: &str, description: &str| json!({ "name": name, "description": description, "required": true });
    vec![
        Prompt {
            definition: object(
                json!({ "name": "test_simple_prompt", "title": "Simple Test Prompt", "description": "A simple prompt without arguments" }),
            ),
            handler: prompt_fn(|_, _| async {
                Ok(
                    json!({ "messages": [user(json!({ "type": "text", "text": "This is a simple prompt for testing." }))] }),
                )
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "test_prompt_with_arguments",
                "title": "Prompt With Arguments",
                "description": "A prompt with required arguments",
                "arguments": [arg("arg1", "First test argument"), arg("arg2", "Second test argument")]
            })),
            handler: prompt_fn(|_, args| async move {
                let get = |k: &str| string_arg(&args, k);
                let text = format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    get("arg1"),
                    get("arg2")
                );
                Ok(json!({ "messages": [user(json!({ "type": "text", "text": text }))] }))
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "test_prompt_with_embedded_resource",
                "title": "Prompt With Embedded Resource",
                "description": "A prompt that includes an embedded resource",
                "arguments": [arg("resourceUri", "URI of the resource to embed")]
            })),
            handler: prompt_fn(|_, args| async move {
                let uri = args.get("resourceUri").cloned().unwrap_or_default();
                let resource = json!({ "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing." });
                Ok(json!({ "messages": [
                    user(json!({ "type": "resource", "resource": resource })),
                    user(json!({ "type": "text", "text": "Please process the embedded resource above." }))
                ] }))
            }),
        },
        Prompt {
            definition: object(
                json!({ "name": "test_prompt_with_image", "title": "Prompt With Image", "description": "A prompt that includes image content" }),
            ),
            handler: prompt_fn(|_, _| async {
                Ok(
                    json!({ "messages": [user(image()), user(json!({ "type": "text", "text": "Please analyze the image above." }))] }),
                )
            }),
        },
    ]
}
