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

pub mod action;
pub mod change;
mod live;
mod pending;
pub mod presets;
pub mod rule;
mod ruleset;

use crate::field_error::FieldError;
use crate::lock::lock;
use crate::server::seams::Seams;
pub use action::{Action, AskAction, DelayMs, ErrorAction, NotifyAction};
pub use live::Rule;
use pending::{Answers, Closing, Holds};
pub use rule::{parse_file, Direction, Match, RuleSpec};
pub use ruleset::RuleSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
    /// The requests held until the client cancels them, shared by every snapshot.
    holds: Arc<Holds>,
    /// The connections whose output a rule closed, shared by every snapshot.
    closing: Arc<Closing>,
    /// Whether an `exit` rule may end the process (set by a server serving its process's own
    /// stdio); otherwise it closes the connection's output.
    may_exit: std::sync::atomic::AtomicBool,
}

impl Faults {
    /// An empty rule set for the server whose seams are `seams`.
    pub fn new(seams: Arc<Seams>) -> Arc<Self> {
        Arc::new(Self {
            seams,
            current: Mutex::default(),
            next_id: AtomicU64::new(1),
            answers: Arc::default(),
            holds: Arc::default(),
            closing: Arc::default(),
            may_exit: std::sync::atomic::AtomicBool::new(false),
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
        Rule::compile(id, spec).map(Arc::new)
    }

    /// Puts preset `name`'s rules in force (all or none), drawing from `seed`.
    pub fn add_preset(&self, name: &str, seed: u64) -> Result<Vec<Arc<Rule>>, FieldError> {
        self.add_all(presets::rules(name, seed)?)
    }

    /// Puts in force the rules that script the consent step's next `answers` (all or none;
    /// [`presets::consent`]).
    pub fn add_consent(&self, answers: &[serde_json::Value]) -> Result<Vec<Arc<Rule>>, FieldError> {
        self.add_all(presets::consent(answers)?)
    }

    /// Lets an `exit` rule end the process: the server serves its process's own stdio.
    pub fn allow_exit(&self) {
        self.may_exit.store(true, Ordering::Release);
    }

    /// Whether an `exit` rule ends the process.
    pub fn may_exit(&self) -> bool {
        self.may_exit.load(Ordering::Acquire)
    }

    /// Closes the output of connection `conn` from its next write on (`close_output`).
    pub fn close_output(&self, conn: &str) {
        self.closing.close(conn);
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
        let set = Arc::new(RuleSet::of(
            rules,
            (
                self.answers.clone(),
                self.holds.clone(),
                self.closing.clone(),
            ),
        ));
        if set.rules.is_empty() && !self.answers.waiting() && !self.holds.any() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Message;
    use crate::jsonrpc::RequestId;
    use crate::protocol::Era;
    use crate::server::seams::{Inbound, InboundFrame, Instead};
    use crate::traffic::TransportKind;
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
            client: &|| None,
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

    #[test]
    fn auth_rules_act_on_their_step_only_and_leave_frames_alone() {
        use crate::server::seams::{AuthRequest, AuthStep, Consent};
        let seams = Arc::new(Seams::default());
        let faults = Faults::new(seams.clone());
        let spec = |text: serde_json::Value| RuleSpec::parse(&text.to_string()).unwrap();
        faults
            .add(spec(
                json!({ "match": { "auth": "token", "grant": "refresh_token", "first": 1 },
                              "action": { "oauth_error": { "error": "invalid_grant" } } }),
            ))
            .unwrap();
        faults
            .add_consent(&[json!("approve"), json!("deny")])
            .unwrap();
        let token = |grant| AuthRequest {
            step: AuthStep::Token,
            path: "/token",
            grant: Some(grant),
        };
        let refused = seams.auth(&token("refresh_token")).unwrap();
        assert_eq!(
            refused.oauth_error.map(|e| (e.0, e.1)),
            Some((400, "invalid_grant".to_string()))
        );
        assert!(seams.auth(&token("refresh_token")).is_none(), "first: 1");
        assert!(seams.auth(&token("authorization_code")).is_none());
        let authorize = AuthRequest {
            step: AuthStep::Authorize,
            path: "/authorize",
            grant: None,
        };
        assert!(
            seams.auth(&authorize).is_none(),
            "the first answer approves"
        );
        assert_eq!(seams.auth(&authorize).unwrap().consent, Some(Consent::Deny));
        assert!(seams.auth(&authorize).is_none());
        // The frames of the MCP endpoint are not the auth rules' to act on.
        assert_eq!(answer(&seams, "echo"), "pass");
    }

    #[test]
    fn auth_rules_that_make_no_sense_are_refused_naming_the_member() {
        let refused =
            |text: serde_json::Value| RuleSpec::parse(&text.to_string()).unwrap_err().to_string();
        let e = refused(
            json!({ "match": { "auth": "token", "method": "x" }, "action": { "http_status": 429 } }),
        );
        assert!(e.starts_with("match.method: matches MCP frames"), "{e}");
        let e =
            refused(json!({ "match": { "auth": "register" }, "action": { "consent": "deny" } }));
        assert!(
            e.starts_with("action.consent: acts at \"authorize\" only"),
            "{e}"
        );
        let e = refused(json!({ "action": { "expired_token": true } }));
        assert!(
            e.starts_with("action.expired_token: acts on a step of the auth lab"),
            "{e}"
        );
        let e = refused(
            json!({ "match": { "auth": "authorize", "grant": "x" }, "action": { "consent": "deny" } }),
        );
        assert!(e.starts_with("match.grant: matches token requests"), "{e}");
        let e = refused(json!({ "match": { "auth": "token" }, "action": { "drop": true } }));
        assert!(
            e.starts_with("action.drop: does not act on a request to the auth lab"),
            "{e}"
        );
        let e = refused(
            json!({ "action": { "challenge": { "error": "insufficient_scope", "end": "expired" } } }),
        );
        assert!(e.starts_with("action.challenge.end:"), "{e}");
        let e = refused(
            json!({ "match": { "auth": "authorize" }, "action": { "consent": "deny", "oauth_error": { "error": "x" } } }),
        );
        assert!(
            e.starts_with(
                "action: \"http_status\", \"oauth_error\" and \"consent\" exclude each other"
            ),
            "{e}"
        );
    }
}
