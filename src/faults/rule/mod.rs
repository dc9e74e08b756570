//! The fault rule format: a match, an action and an optional id, as JSON. Python's
//! `srv.faults.add(match=..., action=...)`, the CLI's `--faults FILE` and the control API all
//! read this one shape (`docs/faults.md`), e.g.
//! `{"match": {"method": "tools/call", "name": "echo", "nth": 2}, "action": {"error": {"code": -32000, "message": "boom"}}}`.
//!
//! Unknown members are refused, naming the member and where it is, so a typo never turns a rule
//! into one that silently matches everything; a rule that means nothing is refused too
//! ([`check`]).

mod check;

use super::action::Action;
use crate::field_error::FieldError;
use crate::protocol::Era;
use crate::server::seams::AuthStep;
use crate::traffic::TransportKind;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Which way the frames a rule applies to go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Frames from the client (the default), matched before they are served; an action on the
    /// answer changes the answer to the request.
    #[default]
    In,
    /// Frames to the client (responses, notifications, server requests), matched on their way
    /// out, before they are recorded and sent.
    Out,
}

/// Which frames a rule applies to. Every member given must hold; none given: every frame from
/// the client. The counting members (`nth`, `every`, `first`, `after`) and `probability` apply
/// to the frames the other members let through, in the order they arrive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// Frames from the client (`in`, the default) or to it (`out`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// The JSON-RPC method (`tools/call`, `notifications/cancelled`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The tool's or prompt's name (`params.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The resource URI (`params.uri`); `*` matches any run of characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The connection (a record's `conn`: the `Mcp-Session-Id` over HTTP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn: Option<String>,
    /// The client's `clientInfo.name` (from `initialize`, or a 2026-07-28 request's `_meta`);
    /// frames from the client only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The era serving the frame (`handshake` or `stateless`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<Era>,
    /// The revision the frame's record names (`2025-11-25`, `2026-07-28`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The transport (`stdio`, `http`, `sse`, `memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportKind>,
    /// A step of the auth lab's authorization flow instead of a frame (`challenge`,
    /// `protected_resource`, `authorization_server`, `register`, `authorize`, `token`): the
    /// rule acts on those requests (docs/auth.md, "Auth faults").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthStep>,
    /// With `auth`: the request's path (`*` matches any run of characters), to tell one
    /// metadata URL from another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// With `auth: "token"`: the `grant_type` (`authorization_code`, `refresh_token`,
    /// `client_credentials`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    /// Only the nth matching frame (from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u64>,
    /// Every nth matching frame (the nth, the 2nth, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
    /// Only the first N matching frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
    /// Only the matching frames after the first N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u64>,
    /// The chance (0 to 1) that a matching frame is hit, drawn from `seed`: the same seed hits
    /// the same frames on every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// The seed of `probability` (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// One fault rule as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// The rule's id (given, or assigned when it is added: `r1`, `r2`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Which frames it applies to (absent: every frame from the client).
    #[serde(default, rename = "match")]
    pub matches: Match,
    /// What it does to them.
    pub action: Action,
}

impl RuleSpec {
    /// Reads one rule from JSON text; the error names the member and the problem.
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let spec: Self = crate::field_error::from_json(text)?;
        spec.check()?;
        Ok(spec)
    }
}

/// Reads a fault file: a JSON array of rules, or `{"rules": [...]}`. An error names the line
/// of the rule (or of the syntax error) and the problem.
pub fn parse_file(text: &str) -> Result<Vec<RuleSpec>, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wrapped<'a> {
        #[serde(borrow)]
        rules: Vec<&'a RawValue>,
    }
    let syntax = |e: serde_json::Error| format!("line {}, column {}: {e}", e.line(), e.column());
    let whole: &RawValue = serde_json::from_str(text).map_err(syntax)?;
    let rules = match whole.get().as_bytes().first() {
        Some(b'[') => serde_json::from_str::<Vec<&RawValue>>(whole.get()).map_err(syntax)?,
        Some(b'{') => {
            serde_json::from_str::<Wrapped<'_>>(whole.get())
                .map_err(|e| format!("line {}: {e}", line_of(text, whole.get())))?
                .rules
        }
        _ => {
            return Err(format!(
                "line {}: a fault file is a JSON array of rules, or {{\"rules\": [...]}}",
                line_of(text, whole.get())
            ))
        }
    };
    rules
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            let line = line_of(text, raw.get());
            RuleSpec::parse(raw.get()).map_err(|e| format!("line {line}, rule {}: {e}", i + 1))
        })
        .collect()
}

/// The line (from 1) of `text` on which `part`, a slice of it, starts.
fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_s_shapes_are_read() {
        for text in [
            r#"{"match": {"method": "tools/call", "name": "echo", "nth": 2}, "action": {"error": {"code": -32000, "message": "boom"}}}"#,
            r#"{"match": {"method": "tools/list"}, "action": {"delay_ms": 500}}"#,
            r#"{"match": {"method": "tools/call", "first": 1}, "action": {"drop": true}}"#,
        ] {
            RuleSpec::parse(text).unwrap();
        }
    }

    #[test]
    fn a_bad_rule_names_its_member() {
        let e = RuleSpec::parse(r#"{"match": {"methd": "x"}, "action": {"drop": true}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("match.methd: unknown field `methd`"), "{e}");
        let e =
            RuleSpec::parse(r#"{"match": {"nth": "2"}, "action": {"drop": true}}"#).unwrap_err();
        assert_eq!(e.field, "match.nth");
        let e = e.to_string();
        assert!(e.starts_with("match.nth: invalid type"), "{e}");
        let e = RuleSpec::parse(r#"{"action": {}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("action: needs one of"), "{e}");
    }

    #[test]
    fn a_bad_file_names_the_line() {
        let text = "[\n  {\"action\": {\"drop\": true}},\n  {\"action\": {\"dorp\": true}}\n]";
        let e = parse_file(text).unwrap_err();
        assert!(
            e.starts_with("line 3, rule 2: action.dorp: unknown field"),
            "{e}"
        );
        let e = parse_file("[\n  {\"action\": \n").unwrap_err();
        assert!(e.starts_with("line 3, column 0: EOF"), "{e}");
        let rules = parse_file(r#"{"rules": [{"action": {"delay_ms": 5}}]}"#).unwrap();
        assert_eq!(
            rules[0].action.delay_ms,
            Some(super::super::action::DelayMs::Fixed(5))
        );
    }
}
