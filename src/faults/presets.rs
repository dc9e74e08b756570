//! Named presets: ready-made rules for the failures clients meet most (`docs/faults.md`), with
//! a seed for the ones that draw. A preset's rules are ordinary rules, with ids `<name>-<n>`.

use super::rule::RuleSpec;
use crate::field_error::FieldError;
use serde_json::{json, Value};

/// The presets, with what each does.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "flaky-network",
        "about 1 in 5 tools/call answered 503 with Retry-After: 1, about 1 in 10 served 1.5 s late (seeded)",
    ),
    ("slow-server", "every request served 500 ms late"),
    (
        "version-skew",
        "server/discover refused with -32022, naming 2025-11-25 only: a 2026-07-28 client must fall back to the handshake",
    ),
    (
        "ignore-cancel",
        "notifications/cancelled ignored: a cancelled request runs on and is answered (a late response)",
    ),
    (
        "session-expiry",
        "over HTTP, the handshake era's session expires on every 3rd tools/call (answered 404): the client must start a new session",
    ),
    (
        "pagination-bugs",
        "with page_size set: tools/list's later pages repeat their cursor, resources/list's first page ends with nextCursor \"\", prompts/list never ends, resources/templates/list refuses its second page's valid cursor",
    ),
    (
        "auth-2025-03-26",
        "with the auth lab: no protected resource metadata (404, and not named by the challenge), as a 2025-03-26 server: a client falls back to the authorization server's metadata at the origin",
    ),
    (
        "auth-2025-03-26-no-metadata",
        "as auth-2025-03-26, and no authorization server metadata, and no iss in the authorization response either: a client falls back to /authorize, /token and /register at the origin",
    ),
];

/// The rules of preset `name`, drawing from `seed`; an unknown name is refused, naming the
/// presets there are.
pub fn rules(name: &str, seed: u64) -> Result<Vec<RuleSpec>, FieldError> {
    let written: Vec<Value> = match name {
        "flaky-network" => vec![
            json!({ "match": { "method": "tools/call", "probability": 0.2, "seed": seed },
                    "action": { "http_status": 503, "headers": { "Retry-After": "1" }, "body": "flaky-network: try again" } }),
            json!({ "match": { "method": "tools/call", "probability": 0.1, "seed": seed.wrapping_add(1) },
                    "action": { "delay_ms": 1500 } }),
        ],
        "slow-server" => vec![json!({ "action": { "delay_ms": 500 } })],
        "version-skew" => vec![json!({
            "match": { "method": "server/discover" },
            "action": { "error": {
                "code": -32022,
                "message": "Unsupported protocol version: 2026-07-28",
                "data": { "supported": ["2025-11-25"], "requested": "2026-07-28" }
            } }
        })],
        "ignore-cancel" => vec![json!({
            "match": { "method": "notifications/cancelled" },
            "action": { "drop": true }
        })],
        "session-expiry" => vec![json!({
            "match": { "method": "tools/call", "era": "handshake", "every": 3 },
            "action": { "expire_session": true }
        })],
        "pagination-bugs" => vec![
            json!({ "match": { "method": "tools/list", "after": 1 }, "action": { "repeat_cursor": true } }),
            json!({ "match": { "method": "resources/list", "first": 1 },
                    "action": { "set": { "/result/nextCursor": "" } } }),
            json!({ "match": { "method": "prompts/list" },
                    "action": { "result": { "prompts": [], "nextCursor": "more" } } }),
            json!({ "match": { "method": "resources/templates/list", "after": 1 },
                    "action": { "error": { "code": -32602, "message": "Invalid params: invalid cursor" } } }),
        ],
        "auth-2025-03-26" => legacy_auth(),
        "auth-2025-03-26-no-metadata" => {
            let mut rules = legacy_auth();
            rules.push(json!({ "match": { "auth": "authorization_server" },
                               "action": { "http_status": 404 } }));
            // Such a server knows no RFC 9207 either (and its client no issuer to compare with).
            rules.push(json!({ "match": { "auth": "authorize" },
                               "action": { "remove": ["/iss"] } }));
            rules
        }
        _ => {
            let known: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            return Err(FieldError::at(
                "preset",
                format!(
                    "unknown fault preset {name:?} (known: {})",
                    known.join(", ")
                ),
            ));
        }
    };
    written
        .into_iter()
        .enumerate()
        .map(|(i, mut rule)| {
            rule["id"] = json!(format!("{name}-{}", i + 1));
            RuleSpec::parse(&rule.to_string())
        })
        .collect()
}

/// A 2025-03-26 server's authorization, before protected resource metadata: none served, none
/// named by the challenge.
fn legacy_auth() -> Vec<Value> {
    vec![
        json!({ "match": { "auth": "protected_resource" }, "action": { "http_status": 404 } }),
        json!({ "match": { "auth": "challenge" }, "action": { "remove": ["/resource_metadata"] } }),
    ]
}

/// The rules that script the consent step's next answers: the nth answer acts on the nth
/// authorization request from now on (`"approve"`, the default, needs no rule). An answer is
/// written as a rule's `consent` is: `"deny"`, `"wrong_code"`, `"wrong_state"`, `"replay"`,
/// `"page"`, `"approve"` or `{"scope": "mcp:basic"}`.
pub fn consent(answers: &[Value]) -> Result<Vec<RuleSpec>, FieldError> {
    answers
        .iter()
        .enumerate()
        .filter(|(_, answer)| answer.as_str() != Some("approve"))
        .map(|(i, answer)| {
            let rule = json!({ "match": { "auth": "authorize", "nth": i + 1 },
                               "action": { "consent": answer } });
            RuleSpec::parse(&rule.to_string()).map_err(|e| {
                // The position is in the rule made here, not in anything the caller wrote.
                let message = match e.message.rfind(" at line ") {
                    Some(at) => e.message[..at].to_string(),
                    None => e.message,
                };
                FieldError::at(&format!("answers[{i}]"), message)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_made_of_valid_rules_and_an_unknown_one_names_them() {
        for (name, _) in PRESETS {
            assert!(!rules(name, 7).unwrap().is_empty(), "{name}");
        }
        let e = rules("chaos", 0).unwrap_err().to_string();
        assert!(e.contains("unknown fault preset \"chaos\" (known: flaky-network, slow-server, version-skew, ignore-cancel, session-expiry, pagination-bugs, auth-2025-03-26, auth-2025-03-26-no-metadata)"), "{e}");
    }
}
