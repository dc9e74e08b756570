//! Changes a rule makes to a frame on its way to the client (the answer to a request it hit,
//! or an outgoing frame it matched): another id, a missing `jsonrpc`, members set or taken out
//! by JSON pointer, padding, text that is not JSON, a cut, a second copy. What comes out is the
//! text the wire carries, as many frames as are sent (none, one, or two for a duplicate).

use super::action::Action;
use serde_json::{Map, Value};

/// The `_meta` member an `oversize` change pads with.
const PADDING: &str = "everything-mcp/padding";

/// What a rule changes in a frame, read once from its action.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Another id than the request's (a number plus 1,000,000; a string prefixed `wrong-`).
    wrong_id: bool,
    /// Sent twice.
    duplicate: bool,
    /// Without `"jsonrpc"`.
    no_jsonrpc: bool,
    /// Replaced by this text.
    not_json: Option<String>,
    /// Cut to this many bytes.
    truncate: Option<usize>,
    /// Padded to at least this many bytes.
    oversize: Option<usize>,
    /// Values put at JSON pointers.
    set: Vec<(String, Value)>,
    /// JSON pointers taken out.
    remove: Vec<String>,
    /// Not sent at all (the answer of a stream closed without replay).
    discard: bool,
    /// A raw line sent before the frame.
    stray_line: Option<String>,
    /// The answer's `nextCursor` becomes the request's cursor ([`Change::for_request`]).
    repeat_cursor: bool,
    /// A progress notification follows the answer ([`Change::for_request`]).
    progress_after: bool,
    /// Frames sent after the answer (made for one request).
    after: Vec<String>,
}

impl Change {
    /// The change `action` makes, if it makes one.
    pub fn of(action: &Action) -> Option<Self> {
        let discard = action.close_stream == Some(super::action::Replay::NoReplay);
        if action.change().is_none() && !discard {
            return None;
        }
        Some(Self {
            wrong_id: action.wrong_id == Some(true),
            duplicate: action.duplicate == Some(true),
            no_jsonrpc: action.no_jsonrpc == Some(true),
            not_json: action.not_json.clone(),
            truncate: action.truncate,
            oversize: action.oversize,
            set: action
                .set
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            remove: action.remove.clone().unwrap_or_default(),
            discard,
            stray_line: action.stray_line.clone(),
            repeat_cursor: action.repeat_cursor == Some(true),
            progress_after: action.progress_after == Some(true),
            after: Vec::new(),
        })
    }

    /// The change for the answer to a request with `params`: a `repeat_cursor` sets the answer's
    /// `nextCursor` to the request's `cursor` (the first page, without one: the change is
    /// as written). A `progress_after` sends a `notifications/progress` for the request's
    /// `progressToken` (from its `_meta`) after the answer; a request without one gets none.
    pub fn for_request(&self, params: Option<&Value>, progress_token: Option<&Value>) -> Self {
        let mut change = self.clone();
        if self.repeat_cursor {
            if let Some(cursor) = params.and_then(|p| p.get("cursor")) {
                change
                    .set
                    .push(("/result/nextCursor".into(), cursor.clone()));
            }
        }
        if let (true, Some(token)) = (self.progress_after, progress_token) {
            let late = serde_json::json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": { "progressToken": token, "progress": 1, "message": "after the answer" }
            });
            change.after.push(late.to_string());
        }
        change
    }

    /// The frames `text` becomes: the members changed first (in the order `remove`, `set`,
    /// `wrong_id`, `no_jsonrpc`, `oversize`), then the text replaced or cut, then doubled.
    pub fn apply(&self, text: &str) -> Vec<String> {
        if self.discard {
            return Vec::new();
        }
        let mut out = match serde_json::from_str::<Value>(text) {
            Ok(mut frame) if self.edits_members() => {
                self.edit(&mut frame);
                frame.to_string()
            }
            _ => text.to_string(),
        };
        if let Some(size) = self.oversize {
            out = pad(&out, size);
        }
        if let Some(replacement) = &self.not_json {
            out = replacement.clone();
        }
        if let Some(n) = self.truncate {
            out = cut(&out, n).to_string();
        }
        let mut frames = self.stray_line.iter().cloned().collect::<Vec<_>>();
        if self.duplicate {
            frames.push(out.clone());
        }
        frames.push(out);
        frames.extend(self.after.iter().cloned());
        frames
    }

    /// Whether any member of the frame changes (else the text is used as it is).
    fn edits_members(&self) -> bool {
        self.wrong_id || self.no_jsonrpc || !self.set.is_empty() || !self.remove.is_empty()
    }

    /// Whether the change depends on the request it answers (see [`Change::for_request`]).
    pub fn per_request(&self) -> bool {
        self.repeat_cursor || self.progress_after
    }

    /// Changes the members of `frame` in place.
    fn edit(&self, frame: &mut Value) {
        for pointer in &self.remove {
            if let Some((parent, key)) = split(pointer) {
                match frame.pointer_mut(parent) {
                    Some(Value::Object(m)) => {
                        m.remove(&key);
                    }
                    Some(Value::Array(items)) => {
                        if let Ok(i) = key.parse::<usize>() {
                            if i < items.len() {
                                items.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        for (pointer, value) in &self.set {
            put(frame, pointer, value.clone());
        }
        let Value::Object(m) = frame else {
            return;
        };
        if self.wrong_id {
            if let Some(id) = m.get_mut("id") {
                *id = match id {
                    Value::Number(n) => n.as_i64().map_or_else(
                        || Value::String(format!("wrong-{n}")),
                        |n| Value::from(n.wrapping_add(1_000_000)),
                    ),
                    Value::String(s) => Value::String(format!("wrong-{s}")),
                    _ => Value::String("wrong".into()),
                };
            }
        }
        if self.no_jsonrpc {
            m.remove("jsonrpc");
        }
    }
}

/// `pointer` as its parent's pointer and its last key (unescaped), if it has one.
fn split(pointer: &str) -> Option<(&str, String)> {
    let at = pointer.rfind('/')?;
    let key = pointer[at + 1..].replace("~1", "/").replace("~0", "~");
    Some((&pointer[..at], key))
}

/// Puts `value` at `pointer`, making the objects on the way that are missing.
fn put(frame: &mut Value, pointer: &str, value: Value) {
    if pointer.is_empty() {
        *frame = value;
        return;
    }
    let Some((parent, key)) = split(pointer) else {
        return;
    };
    if frame.pointer(parent).is_none() {
        put(frame, parent, Value::Object(Map::new()));
    }
    match frame.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(key, value);
        }
        Some(Value::Array(items)) => match key.parse::<usize>() {
            Ok(i) if i < items.len() => items[i] = value,
            _ if key == "-" => items.push(value),
            _ => {}
        },
        _ => {}
    }
}

/// `text` padded to at least `size` bytes with a `_meta` member of its result (or params, or
/// error data), so it stays valid JSON; not JSON, it is padded with spaces.
fn pad(text: &str, size: usize) -> String {
    if text.len() >= size {
        return text.to_string();
    }
    let Ok(mut frame) = serde_json::from_str::<Value>(text) else {
        return format!("{text}{}", " ".repeat(size - text.len()));
    };
    let holder = ["/result", "/params", "/error/data"]
        .into_iter()
        .find(|p| frame.pointer(p).is_some_and(Value::is_object))
        .unwrap_or("/result");
    let at = format!("{holder}/_meta/{}", PADDING.replace('/', "~1"));
    put(&mut frame, &at, Value::String(String::new()));
    let missing = size.saturating_sub(frame.to_string().len());
    put(&mut frame, &at, Value::String("x".repeat(missing)));
    frame.to_string()
}

/// The first `n` bytes of `text`, or fewer to end on a character boundary.
fn cut(text: &str, n: usize) -> &str {
    let mut end = n.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl crate::server::seams::Edit for Change {
    fn apply(&self, text: &str) -> String {
        Change::apply(self, text).pop().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn change(action: Value) -> Change {
        Change::of(&serde_json::from_value(action).unwrap()).unwrap()
    }

    const ANSWER: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}}}}"#;

    #[test]
    fn members_are_set_taken_out_and_the_id_changed() {
        let out = change(json!({
            "set": { "/result/protocolVersion": "2025-03-26", "/result/capabilities/prompts": {} },
            "remove": ["/result/capabilities/tools"],
            "wrong_id": true,
            "no_jsonrpc": true
        }))
        .apply(ANSWER);
        let frame: Value = serde_json::from_str(&out[0]).unwrap();
        assert_eq!(
            frame,
            json!({"id": 1_000_007, "result": {"protocolVersion": "2025-03-26", "capabilities": {"logging": {}, "prompts": {}}}})
        );
    }

    #[test]
    fn text_is_padded_cut_replaced_and_doubled() {
        let padded = &change(json!({ "oversize": 4096 })).apply(ANSWER)[0];
        assert_eq!(padded.len(), 4096);
        let v: Value = serde_json::from_str(padded).unwrap();
        assert!(v["result"]["_meta"][PADDING].as_str().unwrap().len() > 3900);
        assert_eq!(
            change(json!({ "truncate": 10 })).apply(ANSWER),
            [&ANSWER[..10]]
        );
        assert_eq!(
            change(json!({ "not_json": "<html>" })).apply(ANSWER),
            ["<html>"]
        );
        assert_eq!(
            change(json!({ "duplicate": true })).apply(ANSWER),
            [ANSWER, ANSWER]
        );
        assert_eq!(
            change(json!({ "set": { "/id": "x" } })).apply(r#"{"id":1}"#),
            [r#"{"id":"x"}"#]
        );
    }
}
