//! Scripted faults: rules that make the server misbehave exactly when a test says
//! (`docs/faults.md`). A rule is a match (which frames), an action (what happens to them) and
//! its counts; the live set of a server is [`Faults`], which plugs into the server's inbound
//! seam ([`crate::server::seams`]) while it holds a rule and leaves it untouched otherwise.
//!
//! The rules are evaluated in the order they were added; the first that hits a frame decides
//! what happens to it. A rule's counting members (`nth`, `first`, …) count the frames its
//! other members let through, whether or not an earlier rule hit them.

pub mod rule;

use crate::jsonrpc::{ErrorObject, Message};
use crate::lock::lock;
use crate::server::seams::{Hooks, HttpAnswer, Inbound, InboundFrame, Seams, Verdict};
use crate::traffic::{FaultMark, TransportKind};
use regex::Regex;
pub use rule::{parse_file, Action, Match, RuleError, RuleSpec};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// A rule in force: what was written, and what it has seen.
pub struct Rule {
    /// Its id (as given, or `r<n>`).
    pub id: Arc<str>,
    /// The rule as written (with its id).
    pub spec: RuleSpec,
    /// `match.uri` compiled (`*` → any run of characters).
    uri: Option<Regex>,
    /// What the rule does to a frame it hits, built once.
    verdict: Verdict,
    /// Frames its match let through so far (what `nth`, `first`, … count).
    seen: AtomicU64,
    /// Frames it acted on.
    hits: AtomicU64,
    /// The state of its seeded draw (`probability`).
    draw: Mutex<u64>,
}

impl Rule {
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

    /// Whether the members other than the counting ones hold for `frame`.
    fn admits(
        &self,
        frame: &InboundFrame<'_>,
        method: Option<&str>,
        params: Option<&Value>,
    ) -> bool {
        let m = &self.spec.matches;
        let param = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
        let over_http = matches!(frame.transport, TransportKind::Http | TransportKind::Sse);
        (over_http || self.spec.action.http_status.is_none())
            && m.method.as_deref().is_none_or(|want| method == Some(want))
            && m.name
                .as_deref()
                .is_none_or(|want| param("name") == Some(want))
            && self
                .uri
                .as_ref()
                .is_none_or(|re| param("uri").is_some_and(|u| re.is_match(u)))
            && m.conn.as_deref().is_none_or(|want| frame.conn == want)
            && m.era.is_none_or(|want| frame.era == want)
            && m.revision
                .as_deref()
                .is_none_or(|want| frame.revision.is_some_and(|r| r.as_str() == want))
            && m.transport.is_none_or(|want| frame.transport == want)
    }

    /// Counts one admitted frame; whether the rule acts on it (its counts and its draw).
    fn fires(&self) -> bool {
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
        let mut state = lock(&self.draw);
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

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
        let inbound = match (a.delay_ms, error) {
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
            })),
            (Some(ms), error) => Inbound::Delay(Duration::from_millis(ms), error),
            (None, Some(error)) => Inbound::Answer(error),
            (None, None) => Inbound::Pass,
        };
        let mark = FaultMark {
            rule: id.clone(),
            action: a.kind(),
        };
        Verdict {
            inbound,
            mark: Some(Arc::new(mark)),
        }
    }
}

/// A server's fault rules. It arms the server's seams while it holds a rule, so a server
/// without rules pays nothing for them.
pub struct Faults {
    /// The seams it plugs into.
    seams: Arc<Seams>,
    /// The rules, in order: a snapshot replaced on every change (frames read it without
    /// waiting on a change).
    rules: RwLock<Arc<Vec<Arc<Rule>>>>,
    /// Numbers the rules added without an id.
    next_id: AtomicU64,
}

impl Faults {
    /// An empty rule set for the server whose seams are `seams`.
    pub fn new(seams: Arc<Seams>) -> Arc<Self> {
        Arc::new(Self {
            seams,
            rules: RwLock::default(),
            next_id: AtomicU64::new(1),
        })
    }

    /// Adds a rule (checked again here, whatever its source); an id already in use is refused.
    pub fn add(self: &Arc<Self>, mut spec: RuleSpec) -> Result<Arc<Rule>, RuleError> {
        spec.check()?;
        let uri = match &spec.matches.uri {
            Some(pattern) => Some(glob(pattern)?),
            None => None,
        };
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        let id: Arc<str> = match &spec.id {
            Some(id) if rules.iter().any(|r| &*r.id == id) => {
                return Err(RuleError::at(
                    "id",
                    format!("a rule {id:?} is already in force"),
                ));
            }
            Some(id) => id.as_str().into(),
            None => loop {
                let n = self.next_id.fetch_add(1, Ordering::Relaxed);
                let id = format!("r{n}");
                if !rules.iter().any(|r| *r.id == *id) {
                    break id.into();
                }
            },
        };
        spec.id = Some(id.to_string());
        let seed = spec.matches.seed.unwrap_or(0);
        let rule = Arc::new(Rule {
            verdict: Rule::verdict(&id, &spec),
            id,
            spec,
            uri,
            seen: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            draw: Mutex::new(seed),
        });
        let mut next = Vec::clone(&rules);
        next.push(rule.clone());
        *rules = Arc::new(next);
        if rules.len() == 1 {
            self.seams.install(self.clone());
        }
        Ok(rule)
    }

    /// Takes the rule `id` out; whether there was one.
    pub fn remove(&self, id: &str) -> bool {
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        let next: Vec<Arc<Rule>> = rules.iter().filter(|r| &*r.id != id).cloned().collect();
        let removed = next.len() < rules.len();
        *rules = Arc::new(next);
        if rules.is_empty() {
            self.seams.clear();
        }
        removed
    }

    /// Takes every rule out.
    pub fn clear(&self) {
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        *rules = Arc::default();
        self.seams.clear();
    }

    /// The rules in force, in order.
    pub fn rules(&self) -> Arc<Vec<Arc<Rule>>> {
        self.rules.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The rule `id`, if it is in force.
    pub fn get(&self, id: &str) -> Option<Arc<Rule>> {
        self.rules().iter().find(|r| &*r.id == id).cloned()
    }
}

impl Hooks for Faults {
    fn inbound(&self, frame: &InboundFrame<'_>) -> Verdict {
        let (method, params) = match frame.message {
            Message::Request(r) => (Some(r.method.as_str()), r.params.as_ref()),
            Message::Notification(n) => (Some(n.method.as_str()), n.params.as_ref()),
            _ => (None, None),
        };
        let mut decided: Option<&Verdict> = None;
        let rules = self.rules();
        for rule in rules.iter() {
            if !rule.admits(frame, method, params) || !rule.fires() {
                continue;
            }
            if decided.is_none() {
                rule.hits.fetch_add(1, Ordering::Relaxed);
                decided = Some(&rule.verdict);
            }
        }
        decided.cloned().unwrap_or(Verdict::PASS)
    }
}

/// A URI pattern as a regex: `*` is any run of characters, the rest literal.
fn glob(pattern: &str) -> Result<Regex, RuleError> {
    let body: Vec<String> = pattern.split('*').map(regex::escape).collect();
    Regex::new(&format!("^{}$", body.join(".*")))
        .map_err(|e| RuleError::at("match.uri", format!("not a usable pattern: {e}")))
}
