//! [`Object`]: a small JSON object as its members in order, found by comparing names.
//!
//! What a reader keeps apart from a received request's `params` (MCP's `params._meta`, read in
//! `protocol::meta`): built as the frame is parsed, read member by member, and only turned into
//! a `serde_json::Map` when someone asks for all of it. A `Map` (`preserve_order`) SipHashes
//! every name as it is inserted, and the names a stateless request's `_meta` carries are
//! 40 bytes long.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A member's name: a `'static` one for names a reader expects (no allocation), or the one sent.
pub type Name = Cow<'static, str>;

/// A JSON object's members in the order they were first sent; a name sent twice holds its last
/// value at its first position, as a parsed `Map` does. Cheap to clone (the values are shared).
#[derive(Clone, Default)]
pub struct Object {
    /// The members.
    members: Vec<(Name, Arc<Value>)>,
}

impl Object {
    /// An empty object with room for `n` members.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            members: Vec::with_capacity(n),
        }
    }

    /// Adds member `name` (a repeated name: the value replaces the earlier one, in its place).
    pub fn insert(&mut self, name: Name, value: Value) {
        match self.members.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => *v = Arc::new(value),
            None => self.members.push((name, Arc::new(value))),
        }
    }

    /// The members of a parsed object, in its order.
    pub fn from_map(object: Map<String, Value>) -> Self {
        Self {
            members: object
                .into_iter()
                .map(|(k, v)| (Name::Owned(k), Arc::new(v)))
                .collect(),
        }
    }

    /// The members of a parsed object, copied.
    pub fn from_object(object: &Map<String, Value>) -> Self {
        Self::from_map(object.clone())
    }

    /// Member `key`'s value.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.shared(key).map(|v| &**v)
    }

    /// Member `key`'s value, shared (no copy).
    pub fn shared(&self, key: &str) -> Option<&Arc<Value>> {
        self.members.iter().find(|(n, _)| n == key).map(|(_, v)| v)
    }

    /// Whether the object has a member `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.shared(key).is_some()
    }

    /// Member `key`'s value, copied.
    pub fn value(&self, key: &str) -> Option<Value> {
        self.get(key).cloned()
    }

    /// Member `key`'s value if it is a string.
    pub fn str(&self, key: &str) -> Option<Cow<'_, str>> {
        self.get(key).and_then(Value::as_str).map(Cow::Borrowed)
    }

    /// The whole object, as a parsed `Map` (in the same order).
    pub fn to_map(&self) -> Map<String, Value> {
        self.members
            .iter()
            .map(|(n, v)| (n.to_string(), Value::clone(v)))
            .collect()
    }

    /// This object without member `key` (the others in their order).
    pub fn without(&self, key: &str) -> Self {
        Self {
            members: self
                .members
                .iter()
                .filter(|(n, _)| n != key)
                .cloned()
                .collect(),
        }
    }
}

/// Equal when they hold the same members (in any order), as `Map`s are.
impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        self.to_map() == other.to_map()
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Object").field(&self.to_map()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn holds_what_a_map_holds_in_its_order() {
        let mut object = Object::default();
        for (k, v) in [("z", 1), ("y", 2), ("x", 3), ("y", 4)] {
            object.insert(Name::Owned(k.into()), json!(v));
        }
        let map: Map<String, Value> = serde_json::from_str(r#"{"z":1,"y":2,"x":3,"y":4}"#).unwrap();
        assert_eq!(
            Value::Object(object.to_map()).to_string(),
            Value::Object(map.clone()).to_string()
        );
        assert_eq!(object, Object::from_object(&map));
        assert_eq!(object.value("y"), Some(json!(4)));
        assert!(object.contains("x") && !object.contains("w"));
        assert_eq!(object.str("x"), None);
        assert_eq!(
            Value::Object(object.without("y").to_map()).to_string(),
            r#"{"z":1,"x":3}"#
        );
    }
}
