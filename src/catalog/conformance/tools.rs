//! The conformance suite's tools (`test_simple_text`, `test_image_content`, …), in its order.

use super::shared::{elicitation_text, image, pause, plain, STEP, TEST_AUDIO_BASE64};
use crate::catalog::builder::tool;
use crate::catalog::{js_string, schema, text_result};
use crate::error::Error;
use crate::protocol::LogLevel;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Tool;
use serde_json::{json, Value};
use std::time::Duration;

/// Every tool.
pub(super) fn tools() -> Result<Vec<Tool>, Error> {
    let mut tools = vec![
        plain("test_simple_text", "Tests simple text content response").serve(tool_fn(|_, _| async { Ok(text_result("This is a simple text response for testing.".into())) }))?,
        plain("test_image_content", "Tests image content response").serve(tool_fn(|_, _| async { Ok(json!({ "content": [image()] })) }))?,
        plain("test_audio_content", "Tests audio content response").serve(tool_fn(|_, _| async {
                Ok(json!({ "content": [{ "type": "audio", "data": TEST_AUDIO_BASE64, "mimeType": "audio/wav" }] }))
            }))?,
        plain("test_embedded_resource", "Tests embedded resource content response").serve(tool_fn(|_, _| async {
                let resource = json!({ "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content." });
                Ok(json!({ "content": [{ "type": "resource", "resource": resource }] }))
            }))?,
        plain("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)").serve(tool_fn(|_, _| async {
                let resource = json!({ "uri": "test://mixed-content-resource", "mimeType": "application/json", "text": r#"{"test":"data","value":123}"# });
                Ok(json!({ "content": [
                    { "type": "text", "text": "Multiple content types test:" },
                    image(),
                    { "type": "resource", "resource": resource }
                ] }))
            }))?,
        plain("test_tool_with_logging", "Tests tool that emits log messages during execution").serve(tool_fn(|ctx, _| async move {
                for (i, text) in ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate() {
                    if i > 0 {
                        pause(&ctx, STEP).await?;
                    }
                    ctx.log(LogLevel::Info, json!(text), None);
                }
                Ok(text_result("Tool with logging executed successfully".into()))
            }))?,
        plain("test_tool_with_progress", "Tests tool that reports progress notifications").serve(tool_fn(|ctx, _| async move {
                for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        pause(&ctx, STEP).await?;
                    }
                    ctx.progress(step, Some(100.0), Some(&format!("Completed step {step} of 100")));
                }
                let token = ctx.progress_token().map_or_else(|| "0".into(), |t| js_string(&t));
                Ok(text_result(token))
            }))?,
        plain("test_error_handling", "Tests error response handling").serve(tool_fn(|_, _| async { Err(HandlerError::failed("This tool intentionally returns an error for testing")) }))?,
        plain(
                "test_reconnection",
                "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects.",
            ).serve(tool_fn(|ctx, _| async move {
                ctx.close_stream();
                pause(&ctx, Duration::from_millis(100)).await?;
                Ok(text_result("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.".into()))
            }))?,
        tool("test_sampling").description("Tests server-initiated sampling (LLM completion request)").input(schema(json!({ "prompt": { "type": "string", "description": "The prompt to send to the LLM" } }), &["prompt"])).serve(tool_fn(|ctx, args| async move {
                let prompt = args.get("prompt").cloned().unwrap_or_default();
                let params = json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }], "maxTokens": 100 });
                Ok(match ctx.sample(params).await {
                    Ok(r) => {
                        let text = r.pointer("/content/text").or_else(|| r.pointer("/message/content/text")).and_then(Value::as_str);
                        text_result(format!("LLM response: {}", text.filter(|t| !t.is_empty()).unwrap_or("No response")))
                    }
                    Err(e) => text_result(format!("Sampling not supported or error: {}", e.message)),
                })
            }))?,
        tool("test_elicitation").description("Tests server-initiated elicitation (user input request)").input(schema(json!({ "message": { "type": "string", "description": "The message to show the user" } }), &["message"])).serve(tool_fn(|ctx, args| async move {
                let params = json!({
                    "message": args.get("message").cloned().unwrap_or_default(),
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "response": { "type": "string", "description": "User's response" } },
                        "required": ["response"]
                    }
                });
                Ok(elicitation_text("User response", ctx.elicit(params).await))
            }))?,
        plain("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034").serve(tool_fn(|ctx, _| async move {
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
            }))?,
        plain("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330").serve(tool_fn(|ctx, _| async move {
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
            }))?,
    ];
    tools.push(
        tool("json_schema_2020_12_tool")
            .description(
                "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            )
            .input(json_schema_2020_12())
            .serve(tool_fn(|_, args| async move {
                Ok(text_result(format!(
                    "JSON Schema 2020-12 tool called with: {}",
                    Value::Object(args)
                )))
            }))?,
    );
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
