//! The rules in force at one moment, as the seams evaluate them: indexed, with the facts of a
//! frame read once, and the hooks that plug them into the seams.

use super::change::Change;
use super::live::{Facts, Rule};
use super::pending::{Answers, Closing, Holds};
use super::rule::Direction;
use crate::jsonrpc::{Message, RequestId};
use crate::server::seams::{
    AuthRequest, AuthVerdict, Hooks, Inbound, InboundFrame, OutVerdict, Outbound, OutboundFrame,
    Transport, TransportEvent, Verdict,
};
use crate::traffic::{FaultMark, Kind};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The rules in force at one moment, as the inbound seam evaluates them: in order, with the
/// rules that name a tool or prompt indexed by that name, so a frame is checked only against
/// the rules that could match it. Checking each of 100 rules that name other tools cost 7-9%
/// of HTTP echo's requests/s at 16 connections (`bench.run`, `ours-faults` / `ours-tape`).
#[derive(Default)]
pub struct RuleSet {
    /// Every rule, in the order they were added.
    pub(super) rules: Vec<Arc<Rule>>,
    /// The positions (ascending) of the inbound rules with a `match.name`, by that name.
    by_name: HashMap<String, Vec<usize>>,
    /// The positions (ascending) of the inbound rules without one.
    unnamed: Vec<usize>,
    /// The positions (ascending) of the rules of direction `out`.
    outgoing: Vec<usize>,
    /// The positions (ascending) of the rules about the auth lab (`match.auth`).
    auth: Vec<usize>,
    /// The changes waiting for answers (the server's one table).
    answers: Arc<Answers>,
    /// The requests held until cancelled (the server's one table).
    holds: Arc<Holds>,
    /// The connections whose output a rule closed (the server's one set).
    closing: Arc<Closing>,
}

impl RuleSet {
    /// The set of `rules`, indexed, sharing `answers`.
    pub(super) fn of(
        rules: Vec<Arc<Rule>>,
        (answers, holds, closing): (Arc<Answers>, Arc<Holds>, Arc<Closing>),
    ) -> Self {
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let (mut unnamed, mut outgoing, mut auth) = (Vec::new(), Vec::new(), Vec::new());
        for (i, rule) in rules.iter().enumerate() {
            let m = &rule.spec.matches;
            if m.auth.is_some() {
                auth.push(i);
                continue;
            }
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
            auth,
            answers,
            holds,
            closing,
        }
    }
}

impl Hooks for RuleSet {
    fn inbound(&self, frame: &InboundFrame<'_>) -> Verdict {
        if self.holds.any() {
            if let Some(verdict) = self.cancel_of_held(frame) {
                return verdict;
            }
        }
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
        let verdict = rule.verdict_now();
        if let Message::Request(request) = frame.message {
            if let Some(change) = &rule.change {
                let change = if change.per_request() {
                    let token = request.meta.as_ref().and_then(|m| m.get("progressToken"));
                    Arc::new(change.for_request(request.params.as_ref(), token))
                } else {
                    change.clone()
                };
                self.answers
                    .leave(frame.conn, request.id.clone(), change, rule.mark());
            }
            if let Inbound::AfterCancel(signal) = &verdict.inbound {
                self.holds
                    .hold(frame.conn, request.id.clone(), signal.clone(), rule.mark());
            }
        }
        verdict
    }

    fn auth(&self, request: &AuthRequest<'_>) -> Option<AuthVerdict> {
        self.first_firing(&self.auth, |rule| rule.admits_auth(request))
            .and_then(|rule| rule.auth_now())
    }

    fn transport(&self, event: &TransportEvent<'_>) -> Transport {
        match event {
            TransportEvent::StreamWrite { conn } if self.closing.closed(conn) => Transport::Close,
            _ => Transport::Pass,
        }
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
        match self.first_firing(&self.outgoing, |rule| rule.admits_out(frame)) {
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

impl RuleSet {
    /// The rule among those at `positions` that decides: as for inbound frames, every rule
    /// `admits` counts the frame (or request), and the first that fires decides (its hit).
    fn first_firing(
        &self,
        positions: &[usize],
        admits: impl Fn(&Rule) -> bool,
    ) -> Option<&Arc<Rule>> {
        let mut decided: Option<&Arc<Rule>> = None;
        for &i in positions {
            let rule = &self.rules[i];
            if admits(rule) && rule.fires() && decided.is_none() {
                rule.hits.fetch_add(1, Ordering::Relaxed);
                decided = Some(rule);
            }
        }
        decided
    }

    /// A `notifications/cancelled` of a request held until cancelled: it releases the request
    /// (which is then served and answered late) and is not applied itself (marked as the
    /// holding rule's).
    fn cancel_of_held(&self, frame: &InboundFrame<'_>) -> Option<Verdict> {
        let Message::Notification(n) = frame.message else {
            return None;
        };
        if n.method != "notifications/cancelled" {
            return None;
        }
        let id = n.params.as_ref()?.get("requestId")?;
        let id: RequestId = serde_json::from_value(id.clone()).ok()?;
        let mark = self.holds.release(frame.conn, &id)?;
        Some(Verdict {
            inbound: Inbound::Drop,
            mark,
            ..Verdict::PASS
        })
    }
}

/// `text` as `change` makes it, marked.
fn replaced(change: &Change, text: &str, mark: Option<Arc<FaultMark>>) -> OutVerdict {
    OutVerdict {
        outbound: Outbound::Replace(change.apply(text).into_iter().map(Arc::from).collect()),
        mark,
    }
}
