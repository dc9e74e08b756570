//! The conformance suite's resources (`test://static-text`, …), its template
//! (`test://template/{id}/data`) and its prompts (`test_simple_prompt`, …).

use super::shared::{image, TEST_IMAGE_BASE64};
use crate::catalog::{object, string_arg};
use crate::error::Error;
use crate::server::handler::{prompt_fn, resource_fn, template_fn};
use crate::server::registry::{Prompt, Resource, ResourceTemplate};
use serde_json::{json, Value};

/// A resource whose read always returns `contents`.
pub(super) fn fixed_resource(definition: Value, contents: Value) -> Resource {
    Resource {
        definition: object(definition),
        handler: resource_fn(move |_, _| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        }),
    }
}

pub(super) fn resources() -> Vec<Resource> {
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

pub(super) fn template() -> Result<ResourceTemplate, Error> {
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

pub(super) fn prompts() -> Vec<Prompt> {
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
