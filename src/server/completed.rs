//! A stateless result as it leaves the server: the handler's members, then the members every
//! 2026-07-28 result needs (`resultType`, caching hints, the server's `_meta`), written as text
//! after them as the answer is encoded rather than put in the result's map
//! ([`super::stateless::complete`] decides which).

use crate::jsonrpc::{Message, RequestId};
use serde_json::{Map, Value};
use std::sync::Arc;

/// How long a client may cache a cacheable result (`ttlMs`): not at all, because a test
/// registers and removes tools, resources and prompts at any moment.
pub const CACHE_TTL_MS: u64 = 0;

/// Who may share a cached result (`cacheScope`): only this client, because what a client sees
/// depends on the capabilities it declared (capability-gated tools).
pub const CACHE_SCOPE: &str = "private";

/// A stateless result as it leaves: the handler's members, then the members [`complete`]
/// adds, written as text after them instead of being put in the result's map. On the wire, in
/// the record and as a value ([`Completed::into_message`]) it is the result `complete`
/// describes.
#[derive(Debug, Clone)]
pub struct Completed {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result.
    result: CompletedResult,
}

impl Completed {
    /// The answer to request `id`: the handler's `members`, then the `added` members and the
    /// server's `_meta` text (`meta`, when the handler set no `_meta`).
    pub fn new(
        id: RequestId,
        members: Map<String, Value>,
        added: Added,
        meta: Option<Arc<str>>,
    ) -> Self {
        Self {
            id,
            result: CompletedResult {
                members,
                added,
                meta,
            },
        }
    }

    /// The wire text: the same bytes as the [`Message::Response`] of [`Self::into_message`].
    /// The response around the result and the added members are written as text, not through
    /// serde: each member serde writes escapes its name and value byte by byte (about 300
    /// instructions for `"resultType":"complete"`), and the text is sized once instead of
    /// grown (callgrind: 67.2k -> 66.0k instructions per stateless echo).
    pub fn to_json(&self) -> String {
        let members = self.result.members_json();
        let len = members.len() + self.result.added_len();
        crate::jsonrpc::response_json(&self.id, len, |out| self.result.write(&members, out))
    }

    /// The same answer as a plain response, its result a value (an answer in a batch, which
    /// is written as an array of messages): the result's text read back, so it cannot differ.
    pub fn into_message(self) -> Message {
        let members = self.result.members_json();
        let mut text = String::with_capacity(members.len() + self.result.added_len());
        self.result.write(&members, &mut text);
        let result = serde_json::from_str(&text).unwrap_or(Value::Null);
        Message::response(self.id, result)
    }
}

/// The members of a completed result, in wire order.
#[derive(Debug, Clone)]
struct CompletedResult {
    /// The handler's members (with whatever [`complete`] merged into them).
    members: Map<String, Value>,
    /// The members that follow them.
    added: Added,
    /// `"_meta":{"io.modelcontextprotocol/serverInfo":...}`, last, when the handler set no
    /// `_meta`: the server's text, written once ([`Server::stateless_meta`]).
    meta: Option<Arc<str>>,
}

impl CompletedResult {
    /// The handler's members as a JSON object's text.
    fn members_json(&self) -> String {
        crate::jsonrpc::to_json(&self.members)
    }

    /// The length of the added members' text (with their commas).
    fn added_len(&self) -> usize {
        self.added.json().map_or(0, |t| t.len() + 1)
            + self.meta.as_deref().map_or(0, |t| t.len() + 1)
    }

    /// Appends the result's text to `out`: `members` (the handler's members, [`Self::members_json`])
    /// with the added members before its closing brace.
    fn write(&self, members: &str, out: &mut String) {
        // `members` is `{...}`: compact JSON, its last byte the closing brace.
        out.push_str(members.strip_suffix('}').unwrap_or("{"));
        let mut first = self.members.is_empty();
        for member in [self.added.json(), self.meta.as_deref()]
            .into_iter()
            .flatten()
        {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(member);
        }
        out.push('}');
    }
}

/// Which of the members every stateless result needs follow the handler's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// None (the handler set some of them; the others were merged into its map).
    Nothing,
    /// `"resultType": "complete"`.
    ResultType,
    /// `"resultType": "complete"`, then `ttlMs` and `cacheScope` (a cacheable method).
    ResultTypeAndCache,
}

impl Added {
    /// The members' JSON text. (The values are [`CACHE_TTL_MS`] and [`CACHE_SCOPE`]; the
    /// tests check the text against a result they were merged into.)
    fn json(self) -> Option<&'static str> {
        match self {
            Added::Nothing => None,
            Added::ResultType => Some(r#""resultType":"complete""#),
            Added::ResultTypeAndCache => {
                Some(r#""resultType":"complete","ttlMs":0,"cacheScope":"private""#)
            }
        }
    }
}

