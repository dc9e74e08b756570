//! The redirect back to the client that ends an authorization request: with a code (its
//! `state` and our `iss`, RFC 9207), or with an error; as the consent step answered it,
//! headless or on the page, and as a fault rule's change to its parameters makes it.

use super::exchange::{redact, Exchange};
use super::lab::{AuthLab, Code, Pending};
use super::random::random_token;
use super::resource::edited;
use crate::lock::lock;
use crate::server::seams::{Consent, Edit};
use axum::response::Response;
use std::time::Duration;

/// How long a code may wait to be redeemed (on the server's clock).
const CODE_TTL: Duration = Duration::from_secs(60);

/// The redirect that answers `pending` as `answer` says (any but the page and a replay).
pub fn answered(
    lab: &AuthLab,
    exchange: Exchange<'_>,
    pending: Pending,
    answer: Consent,
) -> Response {
    let mut back = Back {
        lab,
        at: pending.issuer,
        redirect_uri: pending.redirect_uri.clone(),
        state: pending.state.clone(),
    };
    let scope = match &answer {
        Consent::Deny => {
            return back.error(exchange, "access_denied", "the user denied the request");
        }
        Consent::Approve(Some(picked)) => match lab.grant_scope(Some(picked)) {
            Some(scope) => scope,
            None => {
                return back.error(
                    exchange,
                    "invalid_scope",
                    "a picked scope is not one this server knows",
                )
            }
        },
        _ => pending.scope.clone(),
    };
    let code = random_token();
    if answer != Consent::WrongCode {
        lock(&lab.codes).insert(
            code.clone(),
            Code {
                client_id: pending.client_id,
                redirect_uri: pending.redirect_uri,
                challenge: pending.challenge,
                resource: pending.resource,
                scope,
                expires: lab.clock.wall() + CODE_TTL,
            },
        );
    }
    if answer == Consent::WrongState {
        back.state = Some(format!(
            "tampered-{}",
            back.state.as_deref().unwrap_or_default()
        ));
    }
    back.with(exchange, &[("code", &code)], true)
}

/// Where the answer goes back to: the client's redirect URI, with its `state` and our `iss`.
pub(super) struct Back<'a> {
    /// The lab.
    pub(super) lab: &'a AuthLab,
    /// Which of its authorization servers answers (its issuer is the `iss`).
    pub(super) at: usize,
    /// The client's redirect URI.
    pub(super) redirect_uri: String,
    /// The request's `state`, sent back as it came.
    pub(super) state: Option<String>,
}

impl Back<'_> {
    /// A redirect carrying `error`.
    pub(super) fn error(&self, exchange: Exchange<'_>, error: &str, description: &str) -> Response {
        self.with(
            exchange,
            &[("error", error), ("error_description", description)],
            false,
        )
    }

    /// A redirect carrying `pairs`, then `state` and `iss`, as a fault rule's change to its
    /// parameters makes them; kept for a replay when it carries a code (`kept`).
    fn with(&self, exchange: Exchange<'_>, pairs: &[(&str, &str)], kept: bool) -> Response {
        let mut all: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if let Some(state) = &self.state {
            all.push(("state".into(), state.clone()));
        }
        all.push(("iss".into(), self.lab.issuer(self.at).to_string()));
        if let Some(edit) = exchange.fault.as_ref().and_then(|f| f.edit.clone()) {
            all = edited(&all, edit.as_ref() as &dyn Edit);
        }
        let query = serde_urlencoded::to_string(&all).unwrap_or_default();
        let joint = if self.redirect_uri.contains('?') {
            '&'
        } else {
            '?'
        };
        let location = format!("{}{joint}{query}", self.redirect_uri);
        let shown: Vec<(&str, String)> = all
            .iter()
            .map(|(k, v)| (k.as_str(), if k == "code" { redact(v) } else { v.clone() }))
            .collect();
        let shown = format!(
            "{}{joint}{}",
            self.redirect_uri,
            serde_urlencoded::to_string(&shown).unwrap_or_default()
        );
        if kept {
            *lock(&self.lab.last_redirect) = Some((location.clone(), shown.clone()));
        }
        exchange.redirect(&location, shown)
    }
}
