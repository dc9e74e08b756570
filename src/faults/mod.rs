//! Scripted faults: rules that make the server misbehave exactly when a test says
//! (`docs/faults.md`). A rule is a match (which frames), an action (what happens to them) and
//! its counts. The live set of a server is [`Faults`], whose snapshot ([`RuleSet`]) plugs into
//! the server's inbound and outbound seams ([`crate::server::seams`]) while it holds a rule and
//! leaves them untouched otherwise. A rule that changes the answer to a request it hit
//! ([`change`]) leaves the change waiting for that answer at the outbound seam ([`Answers`]).
//!
//! The rules are evaluated in the order they were added; the first that hits a frame decides
//! what happens to it. A rule's counting members (`nth`, `first`, …) count the frames its
//! other members let through, whether or not an earlier rule hit them.

pub mod change;
pub mod presets;
pub mod rule;

use crate::field_error::FieldError;
use crate::jsonrpc::RequestId;
use crate::jsonrpc::{ErrorObject, Message};
use crate::lock::lock;
use crate::protocol::Era;
use crate::server::seams::{
    Hooks, HttpAnswer, Inbound, InboundFrame, Instead, OutVerdict, Outbound, OutboundFrame, Seams,
    Verdict,
};
use crate::traffic::{FaultMark, Kind, TransportKind};
use change::Change;
use regex::Regex;
pub use rule::{parse_file, Action, Direction, Match, RuleSpec};
use serde_json::Value;
use std::collections::HashMap;
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
    /// What the rule does to a frame it hits, built once.
    verdict: Verdict,
    /// What it changes in the answer (direction `in`) or in the frame (`out`), if anything.
    change: Option<Arc<Change>>,
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

    /// Whether the members other than the counting ones hold for `frame` (whose `facts` were
    /// read once for every rule).
    fn admits(&self, frame: &InboundFrame<'_>, facts: &Facts<'_>) -> bool {
        let m = &self.spec.matches;
        let over_http = matches!(frame.transport, TransportKind::Http | TransportKind::Sse);
        (over_http || self.spec.action.http_status.is_none())
            && m.client
                .as_deref()
                .is_none_or(|want| frame.client == Some(want))
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

    /// Whether the members other than the counting ones hold for an outgoing `frame` (a rule
    /// of direction `out`: its method is a notification's or a server request's).
    fn admits_out(&self, frame: &OutboundFrame<'_>) -> bool {
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
    fn mark(&self) -> Option<Arc<FaultMark>> {
        self.verdict.mark.clone()
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
            })),
            (Some(ms), instead) => Inbound::Delay(Duration::from_millis(ms), instead),
            (None, Some(instead)) => Inbound::Answer(instead),
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
    /// The rules in force: a snapshot, replaced on every change and installed into the seams
    /// as their hooks (a frame reads it through the seams' one pointer, never waiting on a
    /// change).
    current: Mutex<Arc<RuleSet>>,
    /// Numbers the rules added without an id.
    next_id: AtomicU64,
    /// The changes waiting for the answers to requests rules hit, shared by every snapshot.
    answers: Arc<Answers>,
}

impl Faults {
    /// An empty rule set for the server whose seams are `seams`.
    pub fn new(seams: Arc<Seams>) -> Arc<Self> {
        Arc::new(Self {
            seams,
            current: Mutex::default(),
            next_id: AtomicU64::new(1),
            answers: Arc::default(),
        })
    }

    /// Adds a rule (checked again here, whatever its source); an id already in use is refused.
    pub fn add(&self, spec: RuleSpec) -> Result<Arc<Rule>, FieldError> {
        let mut added = self.add_all(vec![spec])?;
        Ok(added.remove(0))
    }

    /// Adds rules together, all or none (a fault file, a preset): frames see either none of
    /// them or all, in their order. The first refused rule refuses them all.
    pub fn add_all(&self, specs: Vec<RuleSpec>) -> Result<Vec<Arc<Rule>>, FieldError> {
        let mut current = lock(&self.current);
        let mut rules = current.rules.clone();
        let mut added = Vec::with_capacity(specs.len());
        for spec in specs {
            let rule = self.rule(spec, &rules)?;
            rules.push(rule.clone());
            added.push(rule);
        }
        self.publish(&mut current, rules);
        Ok(added)
    }

    /// The rule `spec` makes beside those `in_force`: checked, its URI pattern compiled, its id
    /// given or assigned (`r<n>`) and not already taken.
    fn rule(&self, mut spec: RuleSpec, in_force: &[Arc<Rule>]) -> Result<Arc<Rule>, FieldError> {
        spec.check()?;
        let uri = match &spec.matches.uri {
            Some(pattern) => Some(glob(pattern)?),
            None => None,
        };
        let taken = |id: &str| in_force.iter().any(|r| &*r.id == id);
        let id: Arc<str> = match &spec.id {
            Some(id) if taken(id) => {
                return Err(FieldError::at(
                    "id",
                    format!("a rule {id:?} is already in force"),
                ));
            }
            Some(id) => id.as_str().into(),
            None => loop {
                let n = self.next_id.fetch_add(1, Ordering::Relaxed);
                let id = format!("r{n}");
                if !taken(&id) {
                    break id.into();
                }
            },
        };
        spec.id = Some(id.to_string());
        let seed = spec.matches.seed.unwrap_or(0);
        Ok(Arc::new(Rule {
            verdict: Rule::verdict(&id, &spec),
            change: Change::of(&spec.action).map(Arc::new),
            id,
            spec,
            uri,
            seen: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            draw: Mutex::new(seed),
        }))
    }

    /// Puts preset `name`'s rules in force (all or none), drawing from `seed`.
    pub fn add_preset(&self, name: &str, seed: u64) -> Result<Vec<Arc<Rule>>, FieldError> {
        self.add_all(presets::rules(name, seed)?)
    }

    /// Takes the rule `id` out; whether there was one.
    pub fn remove(&self, id: &str) -> bool {
        let mut current = lock(&self.current);
        let rules: Vec<Arc<Rule>> = current
            .rules
            .iter()
            .filter(|r| &*r.id != id)
            .cloned()
            .collect();
        let removed = rules.len() < current.rules.len();
        self.publish(&mut current, rules);
        removed
    }

    /// Takes every rule out; how many there were.
    pub fn clear(&self) -> usize {
        let mut current = lock(&self.current);
        let removed = current.rules.len();
        self.publish(&mut current, Vec::new());
        removed
    }

    /// Makes `rules` the ones in force: the new snapshot, installed as the seams' hooks (none
    /// while there is no rule).
    fn publish(&self, current: &mut Arc<RuleSet>, rules: Vec<Arc<Rule>>) {
        let set = Arc::new(RuleSet::of(rules, self.answers.clone()));
        if set.rules.is_empty() && !self.answers.waiting() {
            self.seams.clear();
        } else {
            self.seams.install(set.clone());
        }
        *current = set;
    }

    /// The rules in force, in order.
    pub fn rules(&self) -> Vec<Arc<Rule>> {
        lock(&self.current).rules.clone()
    }

    /// The rule `id`, if it is in force.
    pub fn get(&self, id: &str) -> Option<Arc<Rule>> {
        lock(&self.current)
            .rules
            .iter()
            .find(|r| &*r.id == id)
            .cloned()
    }
}

/// The rules in force at one moment, as the inbound seam evaluates them: in order, with the
/// rules that name a tool or prompt indexed by that name, so a frame is checked only against
/// the rules that could match it. Checking each of 100 rules that name other tools cost 7-9%
/// of HTTP echo's requests/s at 16 connections (`bench.run`, `ours-faults` / `ours-tape`).
#[derive(Default)]
pub struct RuleSet {
    /// Every rule, in the order they were added.
    rules: Vec<Arc<Rule>>,
    /// The positions (ascending) of the inbound rules with a `match.name`, by that name.
    by_name: HashMap<String, Vec<usize>>,
    /// The positions (ascending) of the inbound rules without one.
    unnamed: Vec<usize>,
    /// The positions (ascending) of the rules of direction `out`.
    outgoing: Vec<usize>,
    /// The changes waiting for answers (the server's one table).
    answers: Arc<Answers>,
}

impl RuleSet {
    /// The set of `rules`, indexed, sharing `answers`.
    fn of(rules: Vec<Arc<Rule>>, answers: Arc<Answers>) -> Self {
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let (mut unnamed, mut outgoing) = (Vec::new(), Vec::new());
        for (i, rule) in rules.iter().enumerate() {
            let m = &rule.spec.matches;
            match (&m.name, m.direction.unwrap_or_default()) {
                (_, Direction::Out) => outgoing.push(i),
                (Some(name), Direction::In) => by_name.entry(name.clone()).or_default().push(i),
                (None, Direction::In) => unnamed.push(i),
            }
        }
        Self {
            rules,
            by_name,
            unnamed,
            outgoing,
            answers,
        }
    }
}

/// The changes rules left for the answers to the requests they hit, by connection and request
/// id, taken when the answer goes out. Read on the outbound path only while one waits.
#[derive(Default)]
pub struct Answers {
    /// How many wait (so an answer with none waiting is not looked up).
    count: AtomicU64,
    /// The changes, with the mark of the rule that made each.
    waiting: Mutex<HashMap<(Arc<str>, RequestId), Left>>,
}

/// A change left for an answer, with the mark of the rule that left it.
type Left = (Arc<Change>, Option<Arc<FaultMark>>);

impl Answers {
    /// Whether any change waits.
    fn waiting(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    /// Leaves `change` for the answer to request `id` on `conn`.
    fn leave(&self, conn: &str, id: RequestId, change: Arc<Change>, mark: Option<Arc<FaultMark>>) {
        let mut waiting = lock(&self.waiting);
        waiting.insert((conn.into(), id), (change, mark));
        self.count.store(waiting.len() as u64, Ordering::Release);
    }

    /// The change left for the answer to `id` on `conn`, taken out.
    fn take(&self, conn: &str, id: &RequestId) -> Option<Left> {
        let mut waiting = lock(&self.waiting);
        let found = waiting.remove(&(Arc::<str>::from(conn), id.clone()));
        self.count.store(waiting.len() as u64, Ordering::Release);
        found
    }
}

/// What the rules match a frame on, read from it once rather than by each rule (a `name`
/// lookup in the params per rule is a hash and a compare each: 100 rules are 100 of them).
struct Facts<'a> {
    /// The method.
    method: Option<&'a str>,
    /// `params.name`.
    name: Option<&'a str>,
    /// `params.uri`.
    uri: Option<&'a str>,
}

impl<'a> Facts<'a> {
    /// The facts of `message`.
    fn of(message: &'a Message) -> Self {
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

impl Hooks for RuleSet {
    fn inbound(&self, frame: &InboundFrame<'_>) -> Verdict {
        let facts = Facts::of(frame.message);
        let named = facts
            .name
            .and_then(|n| self.by_name.get(n))
            .map_or(&[][..], Vec::as_slice);
        // The rules without a name and those naming this frame's, merged back into their order.
        let (mut u, mut n) = (self.unnamed.iter().peekable(), named.iter().peekable());
        let mut decided: Option<&Arc<Rule>> = None;
        loop {
            let next = match (u.peek(), n.peek()) {
                (Some(&&a), Some(&&b)) if a < b => u.next(),
                (Some(_), Some(_)) | (None, Some(_)) => n.next(),
                (Some(_), None) => u.next(),
                (None, None) => break,
            };
            let Some(&i) = next else { break };
            let rule = &self.rules[i];
            if !rule.admits(frame, &facts) || !rule.fires() {
                continue;
            }
            if decided.is_none() {
                rule.hits.fetch_add(1, Ordering::Relaxed);
                decided = Some(rule);
            }
        }
        let Some(rule) = decided else {
            return Verdict::PASS;
        };
        if let (Some(change), Message::Request(request)) = (&rule.change, frame.message) {
            self.answers
                .leave(frame.conn, request.id.clone(), change.clone(), rule.mark());
        }
        rule.verdict.clone()
    }

    fn outbound(&self, frame: &OutboundFrame<'_>) -> OutVerdict {
        let answer = matches!(frame.summary.kind, Kind::Response | Kind::Error);
        if answer && self.answers.waiting() {
            if let Some((change, mark)) = frame
                .summary
                .id
                .as_ref()
                .and_then(|id| self.answers.take(frame.conn, id))
            {
                return replaced(&change, frame.text, mark);
            }
        }
        // As inbound: every admitted rule counts the frame, the first that fires decides.
        let mut decided: Option<&Arc<Rule>> = None;
        for &i in &self.outgoing {
            let rule = &self.rules[i];
            if rule.admits_out(frame) && rule.fires() && decided.is_none() {
                rule.hits.fetch_add(1, Ordering::Relaxed);
                decided = Some(rule);
            }
        }
        match decided {
            None => OutVerdict::PASS,
            Some(rule) => match &rule.change {
                Some(change) => replaced(change, frame.text, rule.mark()),
                None => OutVerdict {
                    outbound: Outbound::Drop,
                    mark: rule.mark(),
                },
            },
        }
    }
}

/// `text` as `change` makes it, marked.
fn replaced(change: &Change, text: &str, mark: Option<Arc<FaultMark>>) -> OutVerdict {
    OutVerdict {
        outbound: Outbound::Replace(change.apply(text).into_iter().map(Arc::from).collect()),
        mark,
    }
}

/// A URI pattern as a regex: `*` is any run of characters, the rest literal.
fn glob(pattern: &str) -> Result<Regex, FieldError> {
    let body: Vec<String> = pattern.split('*').map(regex::escape).collect();
    Regex::new(&format!("^{}$", body.join(".*")))
        .map_err(|e| FieldError::at("match.uri", format!("not a usable pattern: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;
    use crate::protocol::Era;
    use serde_json::json;

    /// What the rules answer a `tools/call` of `tool` (the error's message, or `pass`).
    fn answer(seams: &Seams, tool: &str) -> String {
        let message = Message::request(
            RequestId::from(1_i64),
            "tools/call",
            Some(json!({ "name": tool })),
        );
        let frame = InboundFrame {
            conn: "c",
            transport: TransportKind::Memory,
            era: Era::Handshake,
            revision: None,
            client: None,
            message: &message,
        };
        match seams.inbound(&frame).inbound {
            Inbound::Answer(Instead::Error(e)) => e.message,
            Inbound::Pass => "pass".into(),
            other => format!("{other:?}"),
        }
    }

    fn rule(name: Option<&str>, says: &str) -> RuleSpec {
        let mut matches = json!({ "method": "tools/call" });
        if let Some(name) = name {
            matches["name"] = json!(name);
        }
        let text =
            json!({ "match": matches, "action": { "error": { "code": 1, "message": says } } });
        RuleSpec::parse(&text.to_string()).unwrap()
    }

    #[test]
    fn the_first_rule_in_order_decides_whether_it_names_the_tool_or_not() {
        let seams = Arc::new(Seams::default());
        let faults = Faults::new(seams.clone());
        assert!(!seams.armed());
        faults.add(rule(Some("other"), "other")).unwrap();
        faults.add(rule(Some("echo"), "named")).unwrap();
        let any = faults.add(rule(None, "any")).unwrap();
        faults.add(rule(Some("echo"), "late")).unwrap();
        assert_eq!(answer(&seams, "echo"), "named");
        assert_eq!(answer(&seams, "sum"), "any");
        // Every admitted rule counts the frame; only the deciding one has a hit.
        assert_eq!((any.hits(), any.seen.load(Ordering::Relaxed)), (1, 2));
        faults.clear();
        assert!(!seams.armed());
        faults.add(rule(None, "any")).unwrap();
        faults.add(rule(Some("echo"), "named")).unwrap();
        assert_eq!(answer(&seams, "echo"), "any");
        assert!(faults.remove("r5"));
        assert_eq!(answer(&seams, "echo"), "named");
        faults.clear();
        assert_eq!(answer(&seams, "echo"), "pass");
    }
}
