//! Multi-round-trip requests (MRTR, SEP-2322): how a stateless request asks its client
//! something. No server → client request is ever sent in the stateless era. Instead:
//!
//! 1. The handler runs. Each ask has a key (explicit, or `"<n>"` for the nth unkeyed ask of
//!    the run, deterministic because a handler re-runs identically). An ask whose answer is
//!    known returns it at once.
//! 2. An ask without an answer registers its input request here and never resolves. The serving
//!    future ([`super::dispatch`]) races the handler against [`Rounds::needed`]; once input is
//!    needed it drops the handler and answers `{resultType:"input_required", inputRequests,
//!    requestState}` ([`Rounds::input_required`]).
//! 3. The client answers with a new request: the same params plus `inputResponses` (bare
//!    results, keyed) and the echoed `requestState`. The handler runs again from the top;
//!    answers are those sealed in the state plus this round's, accepted only for keys the state
//!    says were asked (an unknown key or a missing answer re-asks; it is never an error).
//!
//! An answer is tied to its question by a digest, so a handler that asks something different
//! under the same key is asked again rather than handed a stale answer.

use super::request_state::{self, Binding, Key};
use crate::field;
use crate::jsonrpc::ErrorObject;
use crate::protocol::envelope;
use crate::protocol::method_names::{ClientRequest, ServerRequest};
use indexmap::IndexMap;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// One question a handler asks: its key, method and params.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The key its answer comes back under in `inputResponses`.
    pub key: String,
    /// `sampling/createMessage`, `elicitation/create` or `roots/list`.
    pub method: String,
    /// The request's params (`None`: no `params` member, as for `roots/list`).
    pub params: Option<Value>,
}

impl Ask {
    /// The wire form inside `inputRequests` (of a round, or of a task): `{method, params?}`.
    pub fn to_wire(&self) -> Value {
        let mut m = Map::new();
        m.insert("method".into(), self.method.clone().into());
        if let Some(p) = &self.params {
            let mut p = p.clone();
            // A 2026 elicitation says which mode it is; a form is the default.
            if let (Some(ServerRequest::Elicit), Value::Object(o)) =
                (ServerRequest::parse(&self.method), &mut p)
            {
                o.entry("mode").or_insert_with(|| "form".into());
            }
            m.insert("params".into(), p);
        }
        Value::Object(m)
    }

    /// The digest that ties an answer to this exact question.
    fn digest(&self) -> String {
        request_state::digest(&self.to_wire())
    }
}

/// What a round of one stateless request knows and what it still needs.
pub struct Rounds {
    /// The method served; only those that [`ClientRequest::may_require_input`] may ask.
    method: Option<ClientRequest>,
    /// What the sealed state is bound to, computed when first needed (a state is opened or
    /// sealed): most requests never ask, and the binding hashes the arguments.
    binding: OnceLock<Binding>,
    /// The method as sent, for the binding and for errors.
    method_name: String,
    /// Where the binding's `name`, `uri` and `arguments` are read from when it is computed.
    bound: Bound,
    /// Known answers by key: `{q: question digest, r: result}`.
    answers: Map<String, Value>,
    /// The handler's own state, carried between rounds (Python's `ctx.state`).
    state: Mutex<Value>,
    /// Counts unkeyed asks, for their automatic keys.
    next_auto: AtomicU64,
    /// What this round still needs, and whether it must end with an error instead.
    pending: Mutex<Pending>,
    /// Set once this round needs input (or must fail): the serving future stops.
    over: AtomicBool,
    /// Wakes the serving future when `over` is set. A `Notify` is built in place, where a
    /// `CancellationToken` allocated a tree node per request and locked it on every check:
    /// about 270 instructions a stateless request (callgrind), for a round that rarely ends.
    needed: Notify,
}

/// Where a request's `name`, `uri` and `arguments` (what its binding is computed from) are
/// found once they are needed: the handler takes the params themselves.
enum Bound {
    /// The request's wire text, parsed again for them. Copying `arguments` for every request
    /// cost a stateless `tools/call echo` about 1,300 instructions (callgrind); only a request
    /// that opens or seals a state reads them, and the text is there anyway (the tape keeps it).
    Frame(Arc<str>),
    /// Copies of those the request has (a request without its own text, inside a batch), or
    /// none at all (a method that binds nothing).
    Copied(Vec<(&'static str, Value)>),
}

impl Bound {
    /// The members `keys` of `params` (the request's), read from its text or copied.
    fn of(params: &Map<String, Value>, keys: &[&'static str], frame: Option<Arc<str>>) -> Self {
        match frame {
            Some(text) if !keys.is_empty() => Self::Frame(text),
            _ => Self::Copied(
                keys.iter()
                    .filter_map(|k| field::get(params, k).map(|v| (*k, v.clone())))
                    .collect(),
            ),
        }
    }

    /// The binding of a request of `method` to these members.
    fn binding(&self, method: &str) -> Binding {
        match self {
            Self::Frame(text) => {
                // The text was parsed into the params before: it parses again, to the same values.
                let params = match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(mut message)) => match message.remove("params") {
                        Some(Value::Object(p)) => p,
                        _ => Map::new(),
                    },
                    _ => Map::new(),
                };
                let bound = BOUND_KEYS
                    .iter()
                    .filter_map(|k| params.get(*k).map(|v| ((*k).to_string(), v.clone())))
                    .collect();
                Binding::of(method, &bound)
            }
            Self::Copied(members) => Binding::of(
                method,
                &members
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), v.clone()))
                    .collect(),
            ),
        }
    }
}

/// The params a state is bound to (those a request has).
const BOUND_KEYS: [&str; 3] = ["name", "uri", "arguments"];

/// What a round still needs.
#[derive(Default)]
struct Pending {
    /// The questions without answers, in the order asked.
    asks: IndexMap<String, Ask>,
    /// The error the request ends with instead (e.g. -32021), first one wins.
    failure: Option<ErrorObject>,
}

impl Rounds {
    /// What a state of this request is bound to.
    fn binding(&self) -> &Binding {
        self.binding
            .get_or_init(|| self.bound.binding(&self.method_name))
    }

    /// The rounds of a stateless request of `method` with `params`: opens its `requestState`
    /// (`-32602` when it is not a state this server sealed for this request) and takes this
    /// round's `inputResponses` for the keys the state says were asked. `frame` is the
    /// request's wire text, if it came alone: its arguments are read from it when needed.
    pub fn open(
        key: &Key,
        method: &str,
        builtin: Option<ClientRequest>,
        params: &Map<String, Value>,
        frame: Option<Arc<str>>,
    ) -> Result<Self, ErrorObject> {
        // Kept only where a state can be sealed or opened: a method that may not require input
        // never seals one, and one it is sent with is checked against the empty binding (and
        // refused, as a state minted for another request).
        let bindable = builtin.is_some_and(ClientRequest::may_require_input)
            || field::contains(params, "requestState");
        let keys: &[&'static str] = if bindable { &BOUND_KEYS } else { &[] };
        let bound = Bound::of(params, keys, frame);
        let binding = OnceLock::new();
        let sealed = match field::get(params, "requestState") {
            None | Some(Value::Null) => Value::Null,
            Some(Value::String(token)) => {
                let bound = binding.get_or_init(|| bound.binding(method));
                request_state::open(key, bound, token)?
            }
            Some(_) => {
                return Err(
                    ErrorObject::invalid_params("\"requestState\" must be a string")
                        .with_data(json!({ "reason": "invalid_request_state" })),
                )
            }
        };
        let mut answers = match sealed.get("answers") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        // With a state, only answers to the questions it says were asked count. Without one
        // (a client answering a hand-written round, as the conformance suite does) an answer
        // counts for whatever this run asks under its key (`q: null`): it is the client's own
        // word either way. Only result objects are answers; anything else re-asks.
        let stateless_round = sealed.is_null();
        let asked = sealed.get("asked").and_then(Value::as_object);
        if let Some(Value::Object(responses)) = field::get(params, "inputResponses") {
            for (k, response) in responses.iter().filter(|(_, r)| r.is_object()) {
                let question = match asked.and_then(|a| a.get(k)) {
                    Some(q) => q.clone(),
                    None if stateless_round => Value::Null,
                    None => continue,
                };
                answers.insert(k.clone(), json!({ "q": question, "r": response }));
            }
        }
        Ok(Self {
            method: builtin,
            binding,
            method_name: method.to_string(),
            bound,
            answers,
            state: Mutex::new(sealed.get("state").cloned().unwrap_or(Value::Null)),
            next_auto: AtomicU64::new(1),
            pending: Mutex::default(),
            over: AtomicBool::new(false),
            needed: Notify::new(),
        })
    }

    /// The key of the next unkeyed ask of this run: `"1"`, `"2"`, …
    pub fn auto_key(&self) -> String {
        self.next_auto.fetch_add(1, Ordering::Relaxed).to_string()
    }

    /// The answers to `asks`, all known; or `None` once the round is over (input is needed, or
    /// the request must fail: then the caller must wait for the handler to be dropped or
    /// cancelled). `capabilities` are the client's, from the envelope: a question it could not
    /// take fails the request with `-32021`. Asking from a method that may not require input
    /// is an error the handler gets.
    pub fn resolve(
        &self,
        asks: &[Ask],
        capabilities: &Value,
    ) -> Result<Option<Vec<Value>>, ErrorObject> {
        if !self.method.is_some_and(ClientRequest::may_require_input) {
            return Err(ErrorObject::internal(format!(
                "{} cannot ask the client anything in the stateless era (only tools/call, prompts/get and resources/read may answer input_required)",
                self.method_name
            )));
        }
        let mut found = Vec::with_capacity(asks.len());
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for ask in asks {
            let known = self.answers.get(&ask.key).filter(|a| match a.get("q") {
                Some(Value::String(q)) => *q == ask.digest(),
                _ => true,
            });
            if let Some(answer) = known {
                found.push(answer["r"].clone());
                continue;
            }
            if let Some(missing) = crate::protocol::method_names::missing_for_request(
                &ask.method,
                ask.params.as_ref(),
                capabilities,
            ) {
                pending
                    .failure
                    .get_or_insert_with(|| missing_capability_refusal(ask, missing));
            } else {
                pending.asks.insert(ask.key.clone(), ask.clone());
            }
        }
        if found.len() == asks.len() {
            return Ok(Some(found));
        }
        drop(pending);
        self.over.store(true, Ordering::Release);
        self.needed.notify_waiters();
        Ok(None)
    }

    /// Resolves once this round is over: input is needed or the request must fail.
    pub async fn needed(&self) {
        let notified = self.needed.notified();
        tokio::pin!(notified);
        // Registered before `over` is read, so an end between the two still wakes this.
        notified.as_mut().enable();
        if !self.is_over() {
            notified.await;
        }
    }

    /// Whether this round is over (see [`Rounds::needed`]).
    pub fn is_over(&self) -> bool {
        self.over.load(Ordering::Acquire)
    }

    /// The handler's own state, carried between rounds.
    pub fn state(&self) -> Value {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the handler's own state (sealed into `requestState` if the round needs input).
    pub fn set_state(&self, state: Value) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }

    /// How the round ends once [`Rounds::needed`] resolved: the failure, or the
    /// `input_required` result with the questions and the sealed state (answers so far, the
    /// questions' digests, the handler's state).
    pub fn input_required(&self, key: &Key) -> Result<Value, ErrorObject> {
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(failure) = &pending.failure {
            return Err(failure.clone());
        }
        let requests: Map<String, Value> = pending
            .asks
            .iter()
            .map(|(k, a)| (k.clone(), a.to_wire()))
            .collect();
        let asked: Map<String, Value> = pending
            .asks
            .iter()
            .map(|(k, a)| (k.clone(), a.digest().into()))
            .collect();
        let data = json!({ "answers": self.answers, "asked": asked, "state": self.state() });
        Ok(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": request_state::seal(key, self.binding(), data),
        }))
    }
}

/// `-32021` for a question the client lacks `missing` (a dotted capability path) for, with
/// `data.requiredCapabilities` as an object (`{"sampling":{}}`; a form elicitation needs
/// `{"elicitation":{"form":{}}}`, as both official SDKs report it).
fn missing_capability_refusal(ask: &Ask, missing: &str) -> ErrorObject {
    let path = if missing == "elicitation"
        && ServerRequest::parse(&ask.method) == Some(ServerRequest::Elicit)
    {
        let url = ask
            .params
            .as_ref()
            .and_then(|p| p.get("mode"))
            .and_then(Value::as_str)
            == Some("url");
        if url {
            "elicitation.url"
        } else {
            "elicitation.form"
        }
    } else {
        missing
    };
    let required = path
        .rsplit('.')
        .fold(json!({}), |inner, key| json!({ key: inner }));
    envelope::missing_capability_error(
        format!(
            "Cannot request input {:?} ({}): the request's client capabilities do not declare {path:?}",
            ask.key, ask.method
        ),
        required,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(extra: Value) -> Map<String, Value> {
        let mut p = json!({ "name": "t", "arguments": {} });
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p.as_object().unwrap().clone()
    }

    /// Opens a `tools/call` round with these params, as a request that came alone (its
    /// arguments are read back from its text).
    fn call(key: &Key, params_json: Value) -> Result<Rounds, ErrorObject> {
        let params = params(params_json);
        let frame = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params });
        Rounds::open(
            key,
            "tools/call",
            Some(ClientRequest::CallTool),
            &params,
            Some(Arc::from(frame.to_string())),
        )
    }

    #[test]
    fn a_request_s_text_binds_it_as_its_params_do() {
        let p = params(json!({ "name": "t", "arguments": { "b": [1, { "c": null }], "a": "x" } }));
        let frame = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p });
        let read = Bound::of(&p, &BOUND_KEYS, Some(Arc::from(frame.to_string())));
        let copied = Bound::of(&p, &BOUND_KEYS, None);
        assert!(matches!(read, Bound::Frame(_)));
        assert!(matches!(copied, Bound::Copied(_)));
        assert_eq!(read.binding("tools/call"), copied.binding("tools/call"));
        assert_ne!(
            read.binding("tools/call"),
            Bound::of(&p, &[], None).binding("tools/call")
        );
    }

    fn elicit(key: &str) -> Ask {
        Ask {
            key: key.into(),
            method: "elicitation/create".into(),
            params: Some(json!({ "mode": "form", "message": key })),
        }
    }

    #[test]
    fn a_question_is_asked_then_answered_through_the_sealed_state() {
        let key = Key::random(crate::clock::Clock::Real);
        let caps = json!({ "elicitation": {} });
        let first = call(&key, json!({})).unwrap();
        assert!(first.resolve(&[elicit("a")], &caps).unwrap().is_none());
        let out = first.input_required(&key).unwrap();
        assert_eq!(
            out["inputRequests"],
            json!({ "a": { "method": "elicitation/create", "params": { "mode": "form", "message": "a" } } })
        );
        let state = out["requestState"].clone();
        // An unknown key re-asks.
        let wrong = call(
            &key,
            json!({ "requestState": state, "inputResponses": { "b": { "action": "accept" } } }),
        )
        .unwrap();
        assert!(wrong.resolve(&[elicit("a")], &caps).unwrap().is_none());
        // The right key answers.
        let answer = json!({ "action": "accept", "content": { "x": 1 } });
        let second = call(
            &key,
            json!({ "requestState": state, "inputResponses": { "a": answer } }),
        )
        .unwrap();
        assert_eq!(
            second.resolve(&[elicit("a")], &caps).unwrap(),
            Some(vec![answer])
        );
        // A different question under the same key is asked again.
        let mut other = elicit("a");
        other.params = Some(json!({ "mode": "form", "message": "other" }));
        assert!(second.resolve(&[other], &caps).unwrap().is_none());
    }

    #[test]
    fn a_question_the_client_cannot_take_fails_the_request_with_32021() {
        let key = Key::random(crate::clock::Clock::Real);
        let r = call(&key, json!({})).unwrap();
        let sample = Ask {
            key: "s".into(),
            method: "sampling/createMessage".into(),
            params: Some(json!({})),
        };
        assert!(r
            .resolve(&[sample, elicit("e")], &json!({}))
            .unwrap()
            .is_none());
        let e = r.input_required(&key).unwrap_err();
        assert_eq!(e.code, envelope::MISSING_CLIENT_CAPABILITY);
        assert_eq!(
            e.data.unwrap()["requiredCapabilities"],
            json!({ "sampling": {} })
        );
        let r = call(&key, json!({})).unwrap();
        r.resolve(&[elicit("e")], &json!({})).unwrap();
        let e = r.input_required(&key).unwrap_err();
        assert_eq!(
            e.data.unwrap()["requiredCapabilities"],
            json!({ "elicitation": { "form": {} } })
        );
        let listing = Rounds::open(
            &key,
            "tools/list",
            Some(ClientRequest::ListTools),
            &Map::new(),
            None,
        )
        .unwrap();
        assert!(listing
            .resolve(&[elicit("e")], &json!({ "elicitation": {} }))
            .is_err());
    }
}
