//! The elicitation form of the reference server's `trigger-elicitation-request` (v2) and
//! `startElicitation` (v1), and the result both build from the client's answer.

use super::{js_string, pretty};
use serde_json::{json, Value};

/// The form both reference surfaces ask the user to fill (v2 `trigger-elicitation-request`,
/// v1 `startElicitation` as shipped in npm `2025.12.18`, with the SEP-1330 enums).
#[allow(clippy::approx_constant)] // the reference's default is the literal 3.14, not PI
pub fn form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "title": "String", "type": "string", "description": "Your full, legal name" },
            "check": { "title": "Boolean", "type": "boolean", "description": "Agree to the terms and conditions" },
            "firstLine": { "title": "String with default", "type": "string", "description": "Favorite first line of a story", "default": "It was a dark and stormy night." },
            "email": { "title": "String with email format", "type": "string", "format": "email", "description": "Your email address (will be verified, and never shared with anyone else)" },
            "homepage": { "type": "string", "format": "uri", "title": "String with uri format", "description": "Portfolio / personal website" },
            "birthdate": { "title": "String with date format", "type": "string", "format": "date", "description": "Your date of birth" },
            "integer": { "title": "Integer", "type": "integer", "description": "Your favorite integer (do not give us your phone number, pin, or other sensitive info)", "minimum": 1, "maximum": 100, "default": 42 },
            "number": { "title": "Number in range 1-1000", "type": "number", "description": "Favorite number (there are no wrong answers)", "minimum": 0, "maximum": 1000, "default": 3.14 },
            "untitledSingleSelectEnum": { "type": "string", "title": "Untitled Single Select Enum", "description": "Choose your favorite friend", "enum": ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"], "default": "Monica" },
            "untitledMultipleSelectEnum": { "type": "array", "title": "Untitled Multiple Select Enum", "description": "Choose your favorite instruments", "minItems": 1, "maxItems": 3, "items": { "type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"] }, "default": ["Guitar"] },
            "titledSingleSelectEnum": { "type": "string", "title": "Titled Single Select Enum", "description": "Choose your favorite hero", "oneOf": [
                { "const": "hero-1", "title": "Superman" }, { "const": "hero-2", "title": "Green Lantern" }, { "const": "hero-3", "title": "Wonder Woman" }
            ], "default": "hero-1" },
            "titledMultipleSelectEnum": { "type": "array", "title": "Titled Multiple Select Enum", "description": "Choose your favorite types of fish", "minItems": 1, "maxItems": 3, "items": { "anyOf": [
                { "const": "fish-1", "title": "Tuna" }, { "const": "fish-2", "title": "Salmon" }, { "const": "fish-3", "title": "Trout" }
            ] }, "default": ["fish-1"] },
            "legacyTitledEnum": { "type": "string", "title": "Legacy Titled Single Select Enum", "description": "Choose your favorite type of pet", "enum": ["pet-1", "pet-2", "pet-3", "pet-4", "pet-5"], "enumNames": ["Cats", "Dogs", "Birds", "Fish", "Reptiles"], "default": "pet-1" }
        },
        "required": ["name"]
    })
}

/// JavaScript truthiness of an optional JSON value (the reference tests its answers' fields
/// with `if (value)`).
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// The tool result for the client's answer: a headline per action, the user's inputs, and
/// `\nRaw result: <pretty JSON>`.
pub fn summary(result: &Value) -> Vec<Value> {
    let mut content = Vec::new();
    let text = |t: String| json!({ "type": "text", "text": t });
    match result.get("action").and_then(Value::as_str) {
        Some("accept") if result.get("content").is_some_and(|c| !c.is_null()) => {
            content.push(text("✅ User provided the requested information!".into()));
            let data = &result["content"];
            let mut lines = Vec::new();
            let fields: [(&str, &str, bool); 9] = [
                ("name", "Name", true),
                ("check", "Agreed to terms", false),
                ("color", "Favorite Color", true),
                ("email", "Email", true),
                ("homepage", "Homepage", true),
                ("birthdate", "Birthdate", true),
                ("integer", "Favorite Integer", false),
                ("number", "Favorite Number", false),
                ("petType", "Pet Type", true),
            ];
            for (key, label, needs_truthy) in fields {
                let v = data.get(key);
                if (needs_truthy && truthy(v)) || (!needs_truthy && v.is_some()) {
                    lines.push(format!(
                        "- {label}: {}",
                        v.map(js_string).unwrap_or_default()
                    ));
                }
            }
            content.push(text(format!("User inputs:\n{}", lines.join("\n"))));
        }
        Some("decline") => content.push(text(
            "❌ User declined to provide the requested information.".into(),
        )),
        Some("cancel") => content.push(text("⚠️ User cancelled the elicitation dialog.".into())),
        _ => {}
    }
    content.push(text(format!("\nRaw result: {}", pretty(result))));
    content
}
