//! `requestState` sealing (SEP-2322). A stateless server keeps nothing between the rounds of a
//! multi-round-trip request: everything it must remember (the answers so far, which questions
//! are pending, a handler's own state) rides in the opaque `requestState` the client echoes.
//! The client must not be able to forge or move it, so it is signed (HMAC-SHA256 under a
//! per-server random key), bound to the request it belongs to (method, tool/prompt name or
//! resource URI, a digest of the arguments) and expires. It is signed, not encrypted: it only
//! holds what the client itself sent or was asked.

use crate::clock::Clock;
use crate::jsonrpc::ErrorObject;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::time::{Duration, UNIX_EPOCH};

/// How long a sealed state stays valid: long enough for a user to fill a form, short enough
/// that a leaked state is soon useless.
pub const TTL: Duration = Duration::from_secs(600);

/// The version prefix of every token, so a future format can be told apart.
const PREFIX: &str = "v1.";

/// The signing key: 32 random bytes, one per server, so a state minted by one server (or an
/// earlier run) is refused by another; and the server's clock, which a state's expiry is
/// written and read on (a test's manual clock expires it only when advanced past it).
#[derive(Clone)]
pub struct Key([u8; 32], Clock);

impl Key {
    /// A fresh random key, expiring states on `clock`.
    pub fn random(clock: Clock) -> Self {
        let mut bytes = [0u8; 32];
        // Without an OS random source no key is safe; that is not a state a server can run in.
        getrandom::fill(&mut bytes).expect("the OS random source failed");
        Self(bytes, clock)
    }

    /// Seconds since the epoch, on the key's clock.
    fn now(&self) -> u64 {
        self.1
            .wall()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// The MAC of `text`.
    fn mac(&self, text: &str) -> Vec<u8> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key size");
        mac.update(text.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }

    /// Whether `tag` is the MAC of `text` (compared in constant time).
    fn verify(&self, text: &str, tag: &[u8]) -> bool {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key size");
        mac.update(text.as_bytes());
        mac.verify_slice(tag).is_ok()
    }
}

/// What a state is bound to: a state minted for one request is refused on any other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The method (`tools/call`, `prompts/get`, `resources/read`).
    pub method: String,
    /// The tool or prompt name, or the resource URI.
    pub target: String,
    /// [`digest`] of the arguments (`null` when there are none).
    pub arguments: String,
}

impl Binding {
    /// The binding of a request of `method` with these `params`.
    pub fn of(method: &str, params: &Map<String, Value>) -> Self {
        let target = ["name", "uri"]
            .iter()
            .find_map(|k| params.get(*k).and_then(Value::as_str))
            .unwrap_or_default();
        Self {
            method: method.into(),
            target: target.into(),
            arguments: digest(params.get("arguments").unwrap_or(&Value::Null)),
        }
    }
}

/// A short digest of a JSON value, independent of its object key order: base64url of the first
/// 16 bytes of SHA-256 over the canonical (sorted, compact) JSON text.
pub fn digest(value: &Value) -> String {
    let hash = Sha256::digest(canonical(value).to_string().as_bytes());
    URL_SAFE_NO_PAD.encode(&hash[..16])
}

/// `value` with every object's keys sorted (the crate keeps insertion order).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<_> = m.iter().collect();
            keys.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                keys.into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Seals `data` for the request `binding` describes: `v1.<payload>.<mac>`, both base64url.
pub fn seal(key: &Key, binding: &Binding, data: Value) -> String {
    let payload = json!({
        "m": binding.method,
        "t": binding.target,
        "a": binding.arguments,
        "exp": key.now() + TTL.as_secs(),
        "d": data,
    });
    let signed = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(payload.to_string()));
    let tag = URL_SAFE_NO_PAD.encode(key.mac(&signed));
    format!("{signed}.{tag}")
}

/// Opens a state sealed by [`seal`] for the same `binding`: its data, or `-32602` with
/// `data.reason` (`invalid_request_state`: not ours or altered; `expired_request_state`;
/// `request_state_mismatch`: minted for another request).
pub fn open(key: &Key, binding: &Binding, token: &str) -> Result<Value, ErrorObject> {
    let refuse = |reason: &str| {
        ErrorObject::invalid_params("Invalid or expired requestState")
            .with_data(json!({ "reason": reason }))
    };
    let invalid = || refuse("invalid_request_state");
    let (signed, tag) = token.rsplit_once('.').ok_or_else(invalid)?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
    if !key.verify(signed, &tag) {
        return Err(invalid());
    }
    let payload = signed.strip_prefix(PREFIX).ok_or_else(invalid)?;
    let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| invalid())?;
    let payload: Value = serde_json::from_slice(&payload).map_err(|_| invalid())?;
    let exp = payload
        .get("exp")
        .and_then(Value::as_u64)
        .ok_or_else(invalid)?;
    if exp < key.now() {
        return Err(refuse("expired_request_state"));
    }
    let field = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or_default();
    if field("m") != binding.method
        || field("t") != binding.target
        || field("a") != binding.arguments
    {
        return Err(refuse("request_state_mismatch"));
    }
    Ok(payload.get("d").cloned().unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(name: &str, args: Value) -> Binding {
        let params = json!({ "name": name, "arguments": args });
        Binding::of("tools/call", params.as_object().unwrap())
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_request_and_unaltered() {
        let key = Key::random(Clock::Real);
        let b = binding("t", json!({ "x": 1, "y": [1, { "b": 2, "a": 1 }] }));
        let token = seal(&key, &b, json!({ "k": "v" }));
        assert_eq!(open(&key, &b, &token).unwrap(), json!({ "k": "v" }));
        // Argument key order does not matter.
        let same = binding("t", json!({ "y": [1, { "a": 1, "b": 2 }], "x": 1 }));
        assert!(open(&key, &same, &token).is_ok());
        let reason = |r: Result<Value, ErrorObject>| {
            let e = r.unwrap_err();
            assert_eq!(e.code, crate::jsonrpc::code::INVALID_PARAMS);
            e.data.unwrap()["reason"].as_str().unwrap().to_string()
        };
        assert_eq!(
            reason(open(
                &key,
                &binding("u", json!({ "x": 1, "y": [1, { "b": 2, "a": 1 }] })),
                &token
            )),
            "request_state_mismatch"
        );
        assert_eq!(
            reason(open(&key, &binding("t", json!({ "x": 2 })), &token)),
            "request_state_mismatch"
        );
        assert_eq!(
            reason(open(&key, &b, &format!("{token}-TAMPERED"))),
            "invalid_request_state"
        );
        assert_eq!(
            reason(open(&Key::random(Clock::Real), &b, &token)),
            "invalid_request_state"
        );
        assert_eq!(reason(open(&key, &b, "garbage")), "invalid_request_state");
    }
}
