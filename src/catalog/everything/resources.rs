//! Resources, templates, prompts and completions of the `everything` catalog: the static
//! documents under `demo://resource/static/document/`, the dynamic text/blob templates, the four
//! prompts, their completions, and the subscribe/unsubscribe log messages.

use crate::catalog::{object, session_id, starts_with, string_arg, user_text};
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::protocol::LogLevel;
use crate::server::handler::{complete_fn, prompt_fn, resource_fn, template_fn, HandlerError};
use crate::server::registry::{CompletionKey, Prompt, Registry, Resource, ResourceTemplate};
use base64::Engine;
use serde_json::{json, Value};
use std::sync::Arc;

/// Where the dynamic text resources live.
pub const TEXT_BASE: &str = "demo://resource/dynamic/text";
/// Where the dynamic blob resources live.
pub const BLOB_BASE: &str = "demo://resource/dynamic/blob";

/// Our own documents, under the reference's file names.
const DOCUMENTS: [(&str, &str); 7] = [
    ("architecture.md", include_str!("docs/architecture.md")),
    ("extension.md", include_str!("docs/extension.md")),
    ("features.md", include_str!("docs/features.md")),
    ("how-it-works.md", include_str!("docs/how-it-works.md")),
    ("instructions.md", include_str!("docs/instructions.md")),
    ("startup.md", include_str!("docs/startup.md")),
    ("structure.md", include_str!("docs/structure.md")),
];

/// `new Date().toLocaleTimeString()` in an en-US locale, e.g. `11:17:46 AM`.
fn local_time() -> String {
    chrono::Local::now().format("%-I:%M:%S %p").to_string()
}

/// The contents of a dynamic text resource.
pub fn text_resource(uri: &str, id: u64) -> Value {
    json!({ "uri": uri, "mimeType": "text/plain", "text": format!("Resource {id}: This is a plaintext resource created at {}", local_time()) })
}

/// The contents of a dynamic blob resource (the reference reports text/plain here too).
pub fn blob_resource(uri: &str, id: u64) -> Value {
    let text = format!(
        "Resource {id}: This is a base64 blob created at {}",
        local_time()
    );
    json!({ "uri": uri, "mimeType": "text/plain", "blob": base64::engine::general_purpose::STANDARD.encode(text) })
}

/// A positive integer id, as the reference accepts it (`Number(value)` is a positive integer).
fn positive_id(value: &str) -> Option<u64> {
    let n: f64 = value.trim().parse().ok()?;
    (n.is_finite() && n.fract() == 0.0 && n >= 1.0).then_some(n as u64)
}

/// Registers resources, templates, prompts, completions and the subscription log hook.
pub fn load(registry: &mut Registry) -> Result<(), Error> {
    for (file, text) in DOCUMENTS {
        let uri = format!("demo://resource/static/document/{file}");
        let contents = json!({ "uri": uri, "mimeType": "text/markdown", "text": text });
        let resource = Resource {
            definition: object(
                json!({ "uri": uri, "name": file, "mimeType": "text/markdown", "description": format!("Static document file exposed from /docs: {file}") }),
            ),
            handler: resource_fn(move |_, _| {
                let contents = contents.clone();
                async move { Ok(vec![contents]) }
            }),
        };
        registry.resources.insert(uri.clone(), resource);
    }
    for (kind, base, mime, what) in [
        ("Text", TEXT_BASE, "text/plain", "Plaintext dynamic resource fabricated from the {resourceId} variable, which must be an integer."),
        ("Blob", BLOB_BASE, "application/octet-stream", "Binary (base64) dynamic resource fabricated from the {resourceId} variable, which must be an integer."),
    ] {
        let uri_template = format!("{base}/{{resourceId}}");
        let blob = kind == "Blob";
        registry.templates.insert(
            uri_template.clone(),
            ResourceTemplate::new(
                json!({ "name": format!("Dynamic {kind} Resource"), "uriTemplate": uri_template, "mimeType": mime, "description": what }),
                template_fn(move |_, uri, vars| async move {
                    let id = vars.get("resourceId").and_then(Value::as_str).and_then(positive_id);
                    let Some(id) = id else {
                        return Err(HandlerError::Rpc(ErrorObject::new(-32603, format!("Unknown resource: {uri}"))));
                    };
                    Ok(vec![if blob { blob_resource(&uri, id) } else { text_resource(&uri, id) }])
                }),
            )?,
        );
        let key = CompletionKey { ref_type: "ref/resource".into(), ref_name: uri_template, argument: "resourceId".into() };
        registry.completions.insert(key, complete_fn(|_, _, value, _| async move { Ok(positive_id(&value).map(|_| vec![value]).unwrap_or_default()) }));
    }
    prompts(registry);
    registry
        .on_subscribe
        .push(Arc::new(|_server, session, uri, subscribed| {
            // The reference logs every (un)subscription, with a trailing space when there is no
            // session id (stdio).
            let from = session_id(&session)
                .map(|id| format!("from session {id}"))
                .unwrap_or_default();
            let data = if subscribed {
                format!("Received Subscribe Resource request for URI: {uri} {from}")
            } else {
                format!("Received Unsubscribe Resource request: {uri} {from}")
            };
            session.log_to(&session.sink, LogLevel::Info, Value::String(data), None);
        }));
    Ok(())
}

fn prompts(registry: &mut Registry) {
    let arg = |name: &str, description: Option<&str>, required: bool| {
        let mut a = json!({ "name": name, "required": required });
        if let Some(d) = description {
            a["description"] = d.into();
        }
        a
    };
    let list = [
        Prompt {
            definition: object(
                json!({ "name": "simple-prompt", "title": "Simple Prompt", "description": "A prompt with no arguments" }),
            ),
            handler: prompt_fn(|_, _| async {
                Ok(
                    json!({ "messages": [user_text("This is a simple prompt without arguments.".into())] }),
                )
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "args-prompt",
                "title": "Arguments Prompt",
                "description": "A prompt with two arguments, one required and one optional",
                "arguments": [arg("city", Some("Name of the city"), true), arg("state", None, false)]
            })),
            handler: prompt_fn(|_, args| async move {
                let city = args.get("city").and_then(Value::as_str).unwrap_or_default();
                let text = match args.get("state").and_then(Value::as_str) {
                    Some(state) => format!("What's weather in {city}, {state}?"),
                    None => format!("What's weather in {city}?"),
                };
                Ok(json!({ "messages": [user_text(text)] }))
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "completable-prompt",
                "title": "Team Management",
                "description": "First argument choice narrows values for second argument.",
                "arguments": [
                    arg("department", Some("Choose the department."), true),
                    arg("name", Some("Choose a team member to lead the selected department."), true)
                ]
            })),
            handler: prompt_fn(|_, args| async move {
                let get = |k: &str| string_arg(&args, k);
                Ok(
                    json!({ "messages": [user_text(format!("Please promote {} to the head of the {} team.", get("name"), get("department")))] }),
                )
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "resource-prompt",
                "title": "Resource Prompt",
                "description": "A prompt that includes an embedded resource reference",
                "arguments": [arg("resourceType", Some("Type of resource to fetch"), true), arg("resourceId", Some("ID of the text resource to fetch"), true)]
            })),
            handler: prompt_fn(|_, args| async move {
                let kind = args
                    .get("resourceType")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let raw_id = args
                    .get("resourceId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                if kind != "Text" && kind != "Blob" {
                    return Err(HandlerError::Rpc(ErrorObject::new(
                        -32603,
                        format!("Invalid resourceType: {kind}. Must be Text or Blob."),
                    )));
                }
                let Some(id) = positive_id(&raw_id) else {
                    return Err(HandlerError::Rpc(ErrorObject::new(
                        -32603,
                        format!("Invalid resourceId: {raw_id}. Must be a finite positive integer."),
                    )));
                };
                let resource = if kind == "Blob" {
                    blob_resource(&format!("{BLOB_BASE}/{id}"), id)
                } else {
                    text_resource(&format!("{TEXT_BASE}/{id}"), id)
                };
                Ok(json!({ "messages": [
                    user_text(format!("This prompt includes the {kind} resource with id: {id}. Please analyze the following resource:")),
                    { "role": "user", "content": { "type": "resource", "resource": resource } }
                ] }))
            }),
        },
    ];
    for p in list {
        registry.prompts.insert(p.name().to_string(), p);
    }
    let key = |prompt: &str, arg: &str| CompletionKey {
        ref_type: "ref/prompt".into(),
        ref_name: prompt.into(),
        argument: arg.into(),
    };
    registry.completions.insert(
        key("completable-prompt", "department"),
        complete_fn(|_, _, value, _| async move {
            Ok(starts_with(
                &["Engineering", "Sales", "Marketing", "Support"],
                &value,
            ))
        }),
    );
    registry.completions.insert(
        key("completable-prompt", "name"),
        complete_fn(|_, _, value, context| async move {
            let names: &[&str] = match context.get("department").and_then(Value::as_str) {
                Some("Engineering") => &["Alice", "Bob", "Charlie"],
                Some("Sales") => &["David", "Eve", "Frank"],
                Some("Marketing") => &["Grace", "Henry", "Iris"],
                Some("Support") => &["John", "Kim", "Lee"],
                _ => &[],
            };
            Ok(starts_with(names, &value))
        }),
    );
    registry.completions.insert(
        key("resource-prompt", "resourceType"),
        complete_fn(|_, _, value, _| async move { Ok(starts_with(&["Text", "Blob"], &value)) }),
    );
    registry.completions.insert(
        key("resource-prompt", "resourceId"),
        complete_fn(|_, _, value, _| async move {
            Ok(positive_id(&value).map(|_| vec![value]).unwrap_or_default())
        }),
    );
}
