//! A rule in force: what was written, compiled once (its URI pattern, its verdict, its change),
//! and what it has seen (its counts, its seeded draws).

use super::action::{ChallengeError, DelayMs, Disconnect};
use super::change::Change;
use super::rule::RuleSpec;
use crate::field_error::FieldError;
use crate::jsonrpc::{ErrorObject, Message};
use crate::lock::lock;
use crate::protocol::Era;
use crate::server::seams::{
    AuthRequest, AuthVerdict, Challenge, Edit, HttpAnswer, HttpShape, Inbound, InboundFrame,
    Instead, OutboundFrame, SendFirst, Signal, Verdict,
};
use crate::traffic::{FaultMark, TransportKind};
use regex::Regex;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A rule in force: what was written, and what it has seen.
pub struct Rule {
    /// Its id (as given, or `r<n>`).
    pub id: Arc<str>,
    /// The rule as written (with its id).
    pub spec: RuleSpec,
    /// `match.uri` compiled (`*` → any run of characters).
    uri: Option<Regex>,
    /// `match.path` compiled (a rule about the auth lab).
    path: Option<Regex>,
    /// What the rule does to a request to the auth lab it hits (a rule with `match.auth`; a
    /// range's delay is its placeholder, drawn per hit by [`Rule::auth_now`]).
    pub(super) auth: Option<AuthVerdict>,
    /// What the rule does to a frame it hits, built once.
    pub(super) verdict: Verdict,
    /// What it changes in the answer (direction `in`) or in the frame (`out`), if anything.
    pub(super) change: Option<Arc<Change>>,
    /// Frames its match let through so far (what `nth`, `first`, … count).
    pub(super) seen: AtomicU64,
    /// Frames it acted on.
    pub(super) hits: AtomicU64,
    /// The state of its seeded draw (`probability`).
    draw: Mutex<u64>,
    /// The state of its seeded delay draw (`delay_ms: [min, max]`), apart from `draw` so a
    /// rule's hits do not depend on whether it draws delays.
    delay_draw: Mutex<u64>,
}

impl Rule {
    /// The rule `spec` (checked) makes under `id`: its URI pattern compiled, its verdict and
    /// change built, nothing seen yet.
    pub fn compile(id: Arc<str>, spec: RuleSpec) -> Result<Self, FieldError> {
        let uri = match &spec.matches.uri {
            Some(pattern) => Some(glob(pattern)?),
            None => None,
        };
        let path = match &spec.matches.path {
            Some(pattern) => Some(glob(pattern)?),
            None => None,
        };
        let seed = spec.matches.seed.unwrap_or(0);
        let verdict = Self::verdict(&id, &spec);
        let change = Change::of(&spec.action).map(Arc::new);
        let auth = spec.matches.auth.map(|_| AuthVerdict {
            mark: verdict.mark.clone(),
            delay: match spec.action.delay_ms {
                Some(DelayMs::Fixed(ms) | DelayMs::Range([ms, _])) => {
                    Some(Duration::from_millis(ms))
                }
                None => None,
            },
            http: match &verdict.inbound {
                Inbound::Http(answer) => Some(answer.clone()),
                _ => None,
            },
            oauth_error: spec.action.oauth_error.as_ref().map(|e| {
                (
                    e.status.unwrap_or(400),
                    e.error.clone(),
                    e.error_description
                        .clone()
                        .unwrap_or_else(|| format!("{} (scripted by fault rule {id})", e.error)),
                )
            }),
            consent: spec.action.consent.as_ref().map(|c| c.consent()),
            expired_token: spec.action.expired_token == Some(true),
            edit: change.clone().map(|c| c as Arc<dyn Edit>),
        });
        Ok(Self {
            verdict,
            change,
            path,
            auth,
            id,
            spec,
            uri,
            seen: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            draw: Mutex::new(seed),
            delay_draw: Mutex::new(seed ^ 0x5DEE_CE66_D1A4_F87D),
        })
    }

    /// How many frames it acted on.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// The rule as a listing shows it: as written, with its id and `hits`.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(&self.spec).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("hits".into(), self.hits().into());
        }
        v
    }

    /// Whether the members other than the counting ones hold for `frame` (whose `facts` were
    /// read once for every rule).
    pub(super) fn admits(&self, frame: &InboundFrame<'_>, facts: &Facts<'_>) -> bool {
        let m = &self.spec.matches;
        let over_http = matches!(frame.transport, TransportKind::Http | TransportKind::Sse);
        (over_http || !self.spec.action.http_only())
            && (!over_http || !self.spec.action.stream_only())
            && m.client
                .as_deref()
                .is_none_or(|want| (frame.client)().as_deref() == Some(want))
            && m.method
                .as_deref()
                .is_none_or(|want| facts.method == Some(want))
            && m.name
                .as_deref()
                .is_none_or(|want| facts.name == Some(want))
            && self
                .uri
                .as_ref()
                .is_none_or(|re| facts.uri.is_some_and(|u| re.is_match(u)))
            && m.conn.as_deref().is_none_or(|want| frame.conn == want)
            && m.era.is_none_or(|want| frame.era == want)
            && m.revision
                .as_deref()
                .is_none_or(|want| frame.revision.is_some_and(|r| r.as_str() == want))
            && m.transport.is_none_or(|want| frame.transport == want)
    }

    /// Whether the members other than the counting ones hold for a request to the auth lab.
    pub(super) fn admits_auth(&self, request: &AuthRequest<'_>) -> bool {
        let m = &self.spec.matches;
        m.auth == Some(request.step)
            && self
                .path
                .as_ref()
                .is_none_or(|re| re.is_match(request.path))
            && m.grant
                .as_deref()
                .is_none_or(|want| request.grant == Some(want))
    }

    /// Whether the members other than the counting ones hold for an outgoing `frame` (a rule
    /// of direction `out`: its method is a notification's or a server request's).
    pub(super) fn admits_out(&self, frame: &OutboundFrame<'_>) -> bool {
        let m = &self.spec.matches;
        m.method
            .as_deref()
            .is_none_or(|want| frame.summary.method.as_deref() == Some(want))
            && m.conn.as_deref().is_none_or(|want| frame.conn == want)
            && m.era
                .is_none_or(|want| frame.revision.map(Era::of) == Some(want))
            && m.revision
                .as_deref()
                .is_none_or(|want| frame.revision.is_some_and(|r| r.as_str() == want))
            && m.transport.is_none_or(|want| frame.transport == want)
    }

    /// The mark of a frame this rule acted on.
    pub(super) fn mark(&self) -> Option<Arc<FaultMark>> {
        self.verdict.mark.clone()
    }

    /// Counts one admitted frame; whether the rule acts on it (its counts and its draw).
    pub(super) fn fires(&self) -> bool {
        let m = &self.spec.matches;
        let n = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        let counted = m.nth.is_none_or(|k| n == k)
            && m.every.is_none_or(|k| n % k == 0)
            && m.first.is_none_or(|k| n <= k)
            && m.after.is_none_or(|k| n > k);
        counted && m.probability.is_none_or(|p| self.draw_unit() < p)
    }

    /// The next number in [0, 1) of the rule's seeded sequence (splitmix64).
    fn draw_unit(&self) -> f64 {
        next_unit(&self.draw)
    }

    /// What the rule does to a request to the auth lab it hit now: its verdict, with a range's
    /// delay drawn, as for a frame.
    pub(super) fn auth_now(&self) -> Option<AuthVerdict> {
        let mut verdict = self.auth.clone()?;
        if let Some(DelayMs::Range([min, max])) = self.spec.action.delay_ms {
            verdict.delay = Some(Duration::from_millis(self.drawn(min, max)));
        }
        Some(verdict)
    }

    /// A delay drawn from `[min, max]` (inclusive) by the rule's seeded delay sequence.
    fn drawn(&self, min: u64, max: u64) -> u64 {
        let span = (max - min) as f64;
        (min + (next_unit(&self.delay_draw) * (span + 1.0)).floor() as u64).min(max)
    }

    /// What the rule does to the frame it hit now: its verdict, with a range's delay drawn
    /// and a hold's signal made for this request.
    pub(super) fn verdict_now(&self) -> Verdict {
        let mut verdict = self.verdict.clone();
        match (&mut verdict.inbound, self.spec.action.delay_ms) {
            (
                Inbound::Delay(by, _) | Inbound::DelayAnswer(by),
                Some(DelayMs::Range([min, max])),
            ) => *by = Duration::from_millis(self.drawn(min, max)),
            (Inbound::AfterCancel(signal), _) => *signal = Signal::default(),
            _ => {}
        }
        verdict
    }
}

/// The next number in [0, 1) of the seeded sequence whose state is `state` (splitmix64).
fn next_unit(state: &Mutex<u64>) -> f64 {
    {
        let mut state = lock(state);
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Rule {
    /// What the seam does to a frame a rule written as `spec` hit, marked with its id.
    fn verdict(id: &Arc<str>, spec: &RuleSpec) -> Verdict {
        let a = &spec.action;
        let error = a.error.as_ref().map(|e| {
            let error = ErrorObject::new(e.code, e.message.clone());
            match &e.data {
                Some(d) => error.with_data(d.clone()),
                None => error,
            }
        });
        let instead = match (error, &a.result) {
            (Some(error), _) => Some(Instead::Error(error)),
            (None, Some(result)) => Some(Instead::Result(result.clone())),
            (None, None) => None,
        };
        let inbound = match (a.delay_ms, instead) {
            _ if a.drop == Some(true) => Inbound::Drop,
            _ if a.http_status.is_some() => Inbound::Http(Arc::new(HttpAnswer {
                status: a.http_status.unwrap_or(500),
                headers: a
                    .headers
                    .iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                body: a.body.clone().unwrap_or_default(),
                end_session: false,
                challenge: None,
            })),
            _ if a.challenge.is_some() => {
                let c = a.challenge.as_ref().expect("checked");
                Inbound::Http(Arc::new(HttpAnswer {
                    status: match c.error {
                        ChallengeError::InvalidToken => 401,
                        ChallengeError::InsufficientScope => 403,
                    },
                    headers: Vec::new(),
                    body: String::new(),
                    end_session: false,
                    challenge: Some(Challenge {
                        error: c.error,
                        scope: c.scope.clone(),
                        end: c.end,
                    }),
                }))
            }
            _ if a.expire_session == Some(true) => Inbound::Http(Arc::new(HttpAnswer {
                status: 404,
                headers: Vec::new(),
                body: a.body.clone().unwrap_or_default(),
                end_session: true,
                challenge: None,
            })),
            // A range's placeholder: the delay is drawn per frame (`RuleSet::inbound`).
            (Some(DelayMs::Fixed(ms) | DelayMs::Range([ms, _])), None)
                if a.after_handler == Some(true) =>
            {
                Inbound::DelayAnswer(Duration::from_millis(ms))
            }
            (Some(DelayMs::Fixed(ms) | DelayMs::Range([ms, _])), instead) => {
                Inbound::Delay(Duration::from_millis(ms), instead)
            }
            _ if a.after_cancel == Some(true) => Inbound::AfterCancel(Signal::default()),
            (None, Some(instead)) => Inbound::Answer(instead),
            (None, None) => Inbound::Pass,
        };
        let mark = FaultMark {
            rule: id.clone(),
            action: a.kind(),
        };
        let first = (a.notify.is_some()
            || a.ask.is_some()
            || a.stderr.is_some()
            || a.exit.is_some()
            || a.close_output == Some(true))
        .then(|| {
            Arc::new(SendFirst {
                notify: a
                    .notify
                    .as_ref()
                    .map(|n| (n.method.clone(), n.params.clone(), n.count)),
                ask: a.ask.as_ref().map(|q| (q.method.clone(), q.params.clone())),
                stderr: a.stderr.as_ref().map(|e| (e.line.clone(), e.count)),
                exit: a.exit,
                close_output: a.close_output == Some(true),
            })
        });
        let http = a.http_change().map(|_| {
            Arc::new(HttpShape {
                disconnect: a.disconnect.map(|d| d == Disconnect::MidBody),
                drip: a
                    .drip
                    .map(|d| (d.bytes.max(1), Duration::from_millis(d.every_ms))),
                content_type: a.content_type.clone(),
                swap_body: a.swap_body == Some(true),
                close_stream: a.close_stream.is_some(),
            })
        });
        Verdict {
            inbound,
            mark: Some(Arc::new(mark)),
            first,
            http,
        }
    }
}

/// A URI pattern as a regex: `*` is any run of characters, the rest literal.
fn glob(pattern: &str) -> Result<Regex, FieldError> {
    let body: Vec<String> = pattern.split('*').map(regex::escape).collect();
    Regex::new(&format!("^{}$", body.join(".*")))
        .map_err(|e| FieldError::at("match", format!("{pattern:?} is not a usable pattern: {e}")))
}

/// What the rules match a frame on, read from it once rather than by each rule (a `name`
/// lookup in the params per rule is a hash and a compare each: 100 rules are 100 of them).
pub(super) struct Facts<'a> {
    /// The method.
    method: Option<&'a str>,
    /// `params.name`.
    pub(super) name: Option<&'a str>,
    /// `params.uri`.
    uri: Option<&'a str>,
}

impl<'a> Facts<'a> {
    /// The facts of `message`.
    pub(super) fn of(message: &'a Message) -> Self {
        let (method, params) = match message {
            Message::Request(r) => (Some(r.method.as_str()), r.params.as_ref()),
            Message::Notification(n) => (Some(n.method.as_str()), n.params.as_ref()),
            _ => (None, None),
        };
        let param = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
        Self {
            method,
            name: param("name"),
            uri: param("uri"),
        }
    }
}
