//! What makes a fault rule meaningless (no action, actions that exclude each other, a count of
//! 0, an action where it cannot act), found when the rule is read, with the member it is about:
//! a rule either means what it says or is refused.

use super::{Direction, RuleSpec};
use crate::faults::action::{ChallengeError, DelayMs};
use crate::field_error::FieldError;
use crate::server::seams::AuthStep;

impl RuleSpec {
    /// What makes a rule meaningless, if anything does.
    pub fn check(&self) -> Result<(), FieldError> {
        let a = &self.action;
        let acts = a.error.is_some()
            || a.drop == Some(true)
            || a.delay_ms.is_some()
            || a.http_status.is_some()
            || a.result.is_some()
            || a.after_cancel == Some(true)
            || a.notify.is_some()
            || a.ask.is_some()
            || a.expire_session == Some(true)
            || a.http_change().is_some()
            || a.close_output == Some(true)
            || a.exit.is_some()
            || a.stderr.is_some()
            || a.change().is_some()
            || a.challenge.is_some()
            || a.oauth_error.is_some()
            || a.consent.is_some()
            || a.expired_token == Some(true);
        if !acts {
            return Err(FieldError::at(
                "action",
                "needs one of \"error\", \"drop\": true, \"delay_ms\", \"after_cancel\": true, \"http_status\", \"result\", \"notify\", \"ask\", \"expire_session\", \"close_output\", \"exit\", \"stderr\", a change to the HTTP answer (\"disconnect\", \"drip\", \"content_type\", \"swap_body\", \"close_stream\"), an auth action (\"challenge\", \"oauth_error\", \"consent\", \"expired_token\") or a change to the answer (\"wrong_id\", \"duplicate\", \"no_jsonrpc\", \"not_json\", \"truncate\", \"oversize\", \"set\", \"remove\")",
            ));
        }
        self.check_auth()?;
        let answers = [
            a.error.is_some(),
            a.drop == Some(true),
            a.http_status.is_some(),
            a.result.is_some(),
        ];
        if answers.iter().filter(|&&x| x).count() > 1 {
            return Err(FieldError::at(
                "action",
                "\"error\", \"drop\", \"http_status\" and \"result\" exclude each other",
            ));
        }
        if a.change().is_some() && (a.drop == Some(true) || a.http_status.is_some()) {
            return Err(FieldError::at(
                "action",
                "a change to the answer needs an answer: not with \"drop\" or \"http_status\"",
            ));
        }
        if a.after_cancel == Some(true) {
            let others = [
                a.error.is_some(),
                a.drop == Some(true),
                a.http_status.is_some(),
                a.result.is_some(),
                a.delay_ms.is_some(),
            ];
            if others.iter().any(|&x| x) {
                return Err(FieldError::at(
                    "action.after_cancel",
                    "holds the request until the client cancels it, then serves it: not with \"error\", \"drop\", \"http_status\", \"result\" or \"delay_ms\"",
                ));
            }
        }
        if a.notify.as_ref().is_some_and(|n| n.count == 0) {
            return Err(FieldError::at(
                "action.notify.count",
                "counts from 1, got 0",
            ));
        }
        if a.after_handler.is_some()
            && (a.delay_ms.is_none() || a.error.is_some() || a.result.is_some())
        {
            return Err(FieldError::at(
                "action.after_handler",
                "goes with \"delay_ms\" (the answer of the handler waits), not with \"error\" or \"result\"",
            ));
        }
        if let Some(DelayMs::Range([min, max])) = a.delay_ms {
            if min > max {
                return Err(FieldError::at(
                    "action.delay_ms",
                    format!("a range is [min, max], got [{min}, {max}]"),
                ));
            }
        }
        if a.result.as_ref().is_some_and(|r| !r.is_object()) {
            return Err(FieldError::at(
                "action.result",
                "must be an object (a JSON-RPC result)",
            ));
        }
        for pointer in a
            .set
            .iter()
            .flat_map(|s| s.keys())
            .chain(a.remove.iter().flatten())
        {
            if !pointer.starts_with('/') {
                let field = if a.set.as_ref().is_some_and(|s| s.contains_key(pointer)) {
                    "action.set"
                } else {
                    "action.remove"
                };
                return Err(FieldError::at(
                    field,
                    format!("{pointer:?} is not a JSON pointer (they start with \"/\": \"/result/nextCursor\")"),
                ));
            }
        }
        let http_ones = [
            a.http_status.is_some(),
            a.expire_session == Some(true),
            a.http_change().is_some(),
        ];
        if a.expire_session == Some(true)
            && (a.error.is_some()
                || a.result.is_some()
                || a.drop == Some(true)
                || a.http_status.is_some())
        {
            return Err(FieldError::at(
                "action.expire_session",
                "answers 404 instead of serving: not with \"error\", \"result\", \"drop\" or \"http_status\"",
            ));
        }
        if a.stream_only() && a.http_only() {
            return Err(FieldError::at(
                "action",
                "\"close_output\" and \"exit\" act on stdio, the HTTP actions on HTTP: not together",
            ));
        }
        if a.stderr.as_ref().is_some_and(|e| e.count == 0) {
            return Err(FieldError::at(
                "action.stderr.count",
                "counts from 1, got 0",
            ));
        }
        if a.drip.is_some_and(|d| d.bytes == 0) {
            return Err(FieldError::at("action.drip.bytes", "counts from 1, got 0"));
        }
        if http_ones[2] && (http_ones[0] || http_ones[1] || a.drop == Some(true)) {
            return Err(FieldError::at(
                "action",
                "a change to the HTTP answer needs the answer: not with \"http_status\", \"expire_session\" or \"drop\"",
            ));
        }
        let out = self.matches.direction == Some(Direction::Out);
        if out {
            let refused = [
                ("close_output", a.close_output.is_some()),
                ("exit", a.exit.is_some()),
                ("stderr", a.stderr.is_some()),
                ("expire_session", a.expire_session.is_some()),
                ("disconnect", a.disconnect.is_some()),
                ("drip", a.drip.is_some()),
                ("content_type", a.content_type.is_some()),
                ("swap_body", a.swap_body.is_some()),
                ("close_stream", a.close_stream.is_some()),
                ("error", a.error.is_some()),
                ("delay_ms", a.delay_ms.is_some()),
                ("after_cancel", a.after_cancel.is_some()),
                ("http_status", a.http_status.is_some()),
                ("notify", a.notify.is_some()),
                ("ask", a.ask.is_some()),
                ("result", a.result.is_some()),
            ];
            if let Some((name, _)) = refused.iter().find(|(_, on)| *on) {
                return Err(FieldError::at(
                    &format!("action.{name}"),
                    "answers a request from the client: not with \"direction\": \"out\" (an outgoing frame is dropped or changed)",
                ));
            }
            let m = &self.matches;
            for (name, on) in [
                ("name", m.name.is_some()),
                ("uri", m.uri.is_some()),
                ("client", m.client.is_some()),
            ] {
                if on {
                    return Err(FieldError::at(
                        &format!("match.{name}"),
                        "matches frames from the client only, not with \"direction\": \"out\"",
                    ));
                }
            }
        }
        if let Some(status) = a.http_status {
            if !(100..=599).contains(&status) {
                return Err(FieldError::at(
                    "action.http_status",
                    format!("must be an HTTP status (100-599), got {status}"),
                ));
            }
        } else if a.headers.is_some() || a.body.is_some() {
            return Err(FieldError::at(
                "action",
                "\"headers\" and \"body\" go with \"http_status\"",
            ));
        }
        let m = &self.matches;
        for (key, value) in [("match.nth", m.nth), ("match.every", m.every)] {
            if value == Some(0) {
                return Err(FieldError::at(key, "counts from 1, got 0"));
            }
        }
        if let Some(p) = m.probability {
            if !(0.0..=1.0).contains(&p) {
                return Err(FieldError::at(
                    "match.probability",
                    format!("must be between 0 and 1, got {p}"),
                ));
            }
        }
        if self.id.as_deref() == Some("") {
            return Err(FieldError::at("id", "must not be empty"));
        }
        Ok(())
    }
    /// What makes a rule about the auth lab meaningless: a step's actions on a frame, a frame's
    /// actions on a step, an action at a step that has no use for it.
    fn check_auth(&self) -> Result<(), FieldError> {
        let (a, m) = (&self.action, &self.matches);
        let Some(step) = m.auth else {
            for (name, on) in [
                ("oauth_error", a.oauth_error.is_some()),
                ("consent", a.consent.is_some()),
                ("expired_token", a.expired_token.is_some()),
            ] {
                if on {
                    return Err(FieldError::at(
                        &format!("action.{name}"),
                        "acts on a step of the auth lab: give \"match.auth\"",
                    ));
                }
            }
            for (name, on) in [("path", m.path.is_some()), ("grant", m.grant.is_some())] {
                if on {
                    return Err(FieldError::at(
                        &format!("match.{name}"),
                        "matches requests to the auth lab: give \"match.auth\" too",
                    ));
                }
            }
            if a.challenge.is_some()
                && (a.error.is_some()
                    || a.result.is_some()
                    || a.drop.is_some()
                    || a.http_status.is_some()
                    || a.expire_session.is_some())
            {
                return Err(FieldError::at(
                    "action.challenge",
                    "answers the request instead of serving it: not with \"error\", \"result\", \"drop\", \"http_status\" or \"expire_session\"",
                ));
            }
            if let Some(c) = &a.challenge {
                if c.end.is_some() && c.error != ChallengeError::InvalidToken {
                    return Err(FieldError::at(
                        "action.challenge.end",
                        "ends the tokens of an \"invalid_token\" challenge only",
                    ));
                }
                if c.error == ChallengeError::InsufficientScope && c.scope.is_none() {
                    return Err(FieldError::at(
                        "action.challenge.scope",
                        "an \"insufficient_scope\" challenge names the scope it asks for",
                    ));
                }
            }
            return Ok(());
        };
        for (name, on) in [
            ("direction", m.direction.is_some()),
            ("method", m.method.is_some()),
            ("name", m.name.is_some()),
            ("uri", m.uri.is_some()),
            ("conn", m.conn.is_some()),
            ("client", m.client.is_some()),
            ("era", m.era.is_some()),
            ("revision", m.revision.is_some()),
            ("transport", m.transport.is_some()),
        ] {
            if on {
                return Err(FieldError::at(
                    &format!("match.{name}"),
                    "matches MCP frames, not requests to the auth lab (\"match.auth\")",
                ));
            }
        }
        if m.grant.is_some() && step != AuthStep::Token {
            return Err(FieldError::at(
                "match.grant",
                "matches token requests: with \"auth\": \"token\"",
            ));
        }
        let allowed = [
            "http_status",
            "headers",
            "body",
            "delay_ms",
            "set",
            "remove",
            "not_json",
            "truncate",
            "oauth_error",
            "consent",
            "expired_token",
        ];
        let written = serde_json::to_value(a).unwrap_or_default();
        if let Some(name) = written
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .find(|k| !allowed.contains(&k.as_str()))
        {
            return Err(FieldError::at(
                &format!("action.{name}"),
                format!(
                    "does not act on a request to the auth lab (those take {})",
                    allowed.join(", ")
                ),
            ));
        }
        let only = [
            (
                "oauth_error",
                a.oauth_error.is_some(),
                &[AuthStep::Register, AuthStep::Authorize, AuthStep::Token][..],
                "\"register\", \"authorize\" or \"token\"",
            ),
            (
                "consent",
                a.consent.is_some(),
                &[AuthStep::Authorize][..],
                "\"authorize\"",
            ),
            (
                "expired_token",
                a.expired_token.is_some(),
                &[AuthStep::Token][..],
                "\"token\"",
            ),
        ];
        for (name, on, steps, said) in only {
            if on && !steps.contains(&step) {
                return Err(FieldError::at(
                    &format!("action.{name}"),
                    format!("acts at {said} only"),
                ));
            }
        }
        if let Some(status) = a.oauth_error.as_ref().and_then(|e| e.status) {
            if !(400..=599).contains(&status) {
                return Err(FieldError::at(
                    "action.oauth_error.status",
                    format!("an error's status is 400-599, got {status}"),
                ));
            }
        }
        let answers = [
            a.http_status.is_some(),
            a.oauth_error.is_some(),
            a.consent.is_some(),
        ];
        if answers.iter().filter(|&&x| x).count() > 1 {
            return Err(FieldError::at(
                "action",
                "\"http_status\", \"oauth_error\" and \"consent\" exclude each other",
            ));
        }
        Ok(())
    }
}
