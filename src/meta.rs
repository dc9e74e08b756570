//! [`RequestMeta`]: a received request's `params._meta`, kept as the JSON text it arrived in.
//!
//! A stateless request's `_meta` is its whole envelope (protocol version, client capabilities,
//! client identity: a few members under 40-byte names), read once by the gate and otherwise
//! only for `progressToken` or when a handler asks for all of it. Built as `serde_json` maps it
//! cost more than the rest of the request's decoding: an `IndexMap` per object, SipHash and a
//! `String` per 40-byte name, all dropped again at the end of the request. Here the parser only
//! notes where each member's name and value lie in the frame text (which the record keeps
//! anyway), and a reader parses the one member it wants, matching names by comparison
//! (callgrind, a stateless echo over HTTP: decoding 12.7k -> 9.9k instructions, the gate
//! 5.4k -> 4.3k, the whole request 71.4k -> 67.5k; a stateful one unchanged at 55.2k).
//!
//! What is accepted stays exactly what `serde_json::Value` accepts: each member's value is
//! checked as strictly as `Value` would parse it, and a frame that fails the check is parsed
//! again as a `Value` ([`crate::jsonrpc::parse_raw_str`]), whose verdict (and error text) is the
//! one that counts.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// The `_meta` object of a received request, as text: its members in the order sent, each
/// read on demand. A name sent twice counts as a parsed object counts it: the last value, at
/// the first position.
#[derive(Clone)]
pub struct RequestMeta {
    /// The text the members lie in: the request's frame (shared with the record), or the
    /// serialisation of a `_meta` that was already a value ([`RequestMeta::from_object`]).
    text: Arc<str>,
    /// Each member as sent, repeats included.
    members: Vec<Member>,
}

/// One member of a `_meta` object.
#[derive(Clone)]
struct Member {
    /// Its name.
    name: Name,
    /// Where its value's JSON text lies in [`RequestMeta::text`].
    value: Range<usize>,
}

/// A member's name: where it lies in the text, or (written with escapes) unescaped.
#[derive(Clone)]
enum Name {
    /// Written without escapes: these bytes of the text, between the quotes.
    At(Range<usize>),
    /// Written with escapes (rare): the name they spell.
    Unescaped(Box<str>),
}

impl RequestMeta {
    /// A `_meta` that is already a value (a request inside a batch, which is parsed as a
    /// value): serialised once, then indexed as a received one is.
    pub fn from_object(object: &Map<String, Value>) -> Self {
        let text: Arc<str> = Arc::from(serde_json::to_string(object).unwrap_or_default());
        let mut de = serde_json::Deserializer::from_str(&text);
        match (MetaSeed { text: &text }).deserialize(&mut de) {
            Ok(Parsed::Object(meta)) => meta,
            // Unreachable: serde_json writes an object as one, and writes only what it reads.
            _ => Self {
                text: text.clone(),
                members: Vec::new(),
            },
        }
    }

    /// The `_meta` object of a message's `params` value, if it has one.
    pub fn in_params(params: &Value) -> Option<Self> {
        crate::field::member(params, "_meta")
            .and_then(Value::as_object)
            .map(Self::from_object)
    }

    /// The name of `member`.
    fn name<'a>(&'a self, member: &'a Member) -> &'a str {
        match &member.name {
            Name::At(range) => &self.text[range.clone()],
            Name::Unescaped(name) => name,
        }
    }

    /// The JSON text of member `key`'s value (the last one, if it was sent twice).
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.text.get(self.find(key)?.value.clone())
    }

    /// Member `key` (the last one, if it was sent twice).
    fn find(&self, key: &str) -> Option<&Member> {
        let text = self.text.as_bytes();
        let named = |m: &&Member| match &m.name {
            // Bytes, not `str` slices: no character-boundary checks on the request path.
            Name::At(range) => range.len() == key.len() && &text[range.clone()] == key.as_bytes(),
            Name::Unescaped(name) => &**name == key,
        };
        self.members.iter().rev().find(named)
    }

    /// Member `key`'s value as text, to be parsed when (if ever) it is read.
    pub fn member(&self, key: &str) -> Option<RawJson> {
        Some(RawJson {
            text: self.text.clone(),
            range: self.find(key)?.value.clone(),
        })
    }

    /// Whether the object has a member `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.raw(key).is_some()
    }

    /// Member `key`'s value, parsed.
    pub fn value(&self, key: &str) -> Option<Value> {
        self.raw(key).and_then(|raw| serde_json::from_str(raw).ok())
    }

    /// Member `key`'s value if it is a string (borrowed from the text unless it has escapes).
    pub fn str(&self, key: &str) -> Option<Cow<'_, str>> {
        as_str(self.raw(key)?)
    }

    /// The whole object, parsed: what a `serde_json::Value` parse of the `_meta` would give
    /// (names in first-sent order, the last value of a repeated one).
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = Map::new();
        for member in &self.members {
            let value = serde_json::from_str(&self.text[member.value.clone()]).unwrap_or_default();
            map.insert(self.name(member).to_owned(), value);
        }
        map
    }

    /// This object without member `key`, ordered as `Map::remove` leaves a parsed one under
    /// `preserve_order` (the last member takes the removed one's place), so what a handler
    /// sees of it is what it saw when `_meta` was a map.
    pub fn without(&self, key: &str) -> Self {
        let mut entries: Vec<Member> = Vec::with_capacity(self.members.len());
        for member in &self.members {
            let name = self.name(member);
            match entries.iter_mut().find(|e| self.name(e) == name) {
                Some(entry) => entry.value = member.value.clone(),
                None => entries.push(member.clone()),
            }
        }
        if let Some(at) = entries.iter().position(|e| self.name(e) == key) {
            entries.swap_remove(at);
        }
        Self {
            text: self.text.clone(),
            members: entries,
        }
    }
}

/// A JSON value (a member of a received `_meta`) kept as its text, parsed when it is read: a
/// stateless request's `clientInfo`, which its session holds but few handlers look at. Parsing
/// it for every request cost about 2,300 instructions (callgrind).
#[derive(Clone)]
pub struct RawJson {
    /// The text it lies in (the request's frame).
    text: Arc<str>,
    /// Where.
    range: Range<usize>,
}

impl RawJson {
    /// Its JSON text, as sent.
    pub fn text(&self) -> &str {
        &self.text[self.range.clone()]
    }

    /// The value, parsed.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.text()).unwrap_or_default()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.text()).finish()
    }
}

/// The string a JSON value's text `raw` (as [`RequestMeta::raw`] gives it) holds, if it is
/// a string: borrowed from `raw` unless it has escapes.
pub fn as_str(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Equal when they hold the same JSON (not necessarily the same text).
impl PartialEq for RequestMeta {
    fn eq(&self, other: &Self) -> bool {
        self.to_map() == other.to_map()
    }
}

impl fmt::Debug for RequestMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RequestMeta").field(&self.to_map()).finish()
    }
}

/// What a `_meta` member held, as parsed by [`MetaSeed`]: an object, indexed, or any other
/// value (which no reader of a request's `_meta` looks into, but a notification's hooks see).
pub enum Parsed {
    /// A JSON object.
    Object(RequestMeta),
    /// Anything else, as a value (boxed: rare, and inline it would make every request's
    /// parsed `params` bigger on its way out of the parser).
    Other(Box<Value>),
}

impl Parsed {
    /// The value a `serde_json::Value` parse would have given.
    pub fn into_value(self) -> Value {
        match self {
            Parsed::Object(meta) => Value::Object(meta.to_map()),
            Parsed::Other(value) => *value,
        }
    }
}

/// Reads a `_meta` value out of `text` (which the deserializer must be reading, so that the
/// members' positions can be taken from the slices it lends).
pub struct MetaSeed<'a> {
    /// The text being parsed.
    pub text: &'a Arc<str>,
}

impl<'de> DeserializeSeed<'de> for MetaSeed<'_> {
    type Value = Parsed;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Parsed, D::Error> {
        d.deserialize_any(self)
    }
}

/// Builds `$wrap(value)` for every JSON value but objects, exactly as `serde_json::Value`
/// builds them.
macro_rules! visit_non_objects {
    ($de:lifetime, $out:ty, $wrap:expr) => {
        fn visit_bool<E>(self, v: bool) -> Result<$out, E> {
            Ok($wrap(Value::Bool(v)))
        }
        fn visit_i64<E>(self, v: i64) -> Result<$out, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_u64<E>(self, v: u64) -> Result<$out, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_f64<E>(self, v: f64) -> Result<$out, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_str<E>(self, v: &str) -> Result<$out, E> {
            Ok($wrap(Value::String(v.to_owned())))
        }
        fn visit_string<E>(self, v: String) -> Result<$out, E> {
            Ok($wrap(Value::String(v)))
        }
        fn visit_unit<E>(self) -> Result<$out, E> {
            Ok($wrap(Value::Null))
        }
        fn visit_seq<A: serde::de::SeqAccess<$de>>(self, mut seq: A) -> Result<$out, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(item) = seq.next_element::<Value>()? {
                items.push(item);
            }
            Ok($wrap(Value::Array(items)))
        }
    };
}
pub(crate) use visit_non_objects;

impl<'de> Visitor<'de> for MetaSeed<'_> {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    visit_non_objects!('de, Parsed, |v| Parsed::Other(Box::new(v)));

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut members = Vec::new();
        while let Some(name) = map.next_key_seed(NameSeed { text: self.text })? {
            // The value is skipped (its text is kept), which checks less than parsing it
            // would (lone surrogates, numbers out of range, nesting): the strict check makes
            // up for it where that could matter.
            let raw: &'de RawValue = map.next_value()?;
            let value = span(self.text, raw.get())
                .ok_or_else(|| de::Error::custom("a _meta value outside the text"))?;
            if !skipping_suffices(raw.get()) {
                Strict(STRICT_DEPTH)
                    .deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
                    .map_err(de::Error::custom)?;
            }
            members.push(Member { name, value });
        }
        Ok(Parsed::Object(RequestMeta {
            text: self.text.clone(),
            members,
        }))
    }
}

/// Whether skipping `raw` (a value the parser skipped without error) checked all that parsing
/// it as a `Value` would: it is short (no number of 309 digits, no deep nesting) and has no
/// escape (no `\u` surrogate) and no exponent (no number out of range). An envelope's values
/// (a version string, `{}`, `{"name":…,"version":…}`) are such; walking them strictly as
/// well cost a stateless request about 500 instructions (callgrind).
fn skipping_suffices(raw: &str) -> bool {
    const SHORT: usize = 200;
    let bytes = raw.as_bytes();
    if bytes.len() > SHORT {
        return false;
    }
    // One pass: an escape, or an `e` after a digit (an exponent; inside a string it only
    // costs a needless walk).
    let mut after_digit = false;
    for &b in bytes {
        if b == b'\\' || (after_digit && (b | 0x20) == b'e') {
            return false;
        }
        after_digit = b.is_ascii_digit();
    }
    true
}

/// Where `part` (a slice the parser lent out of `text`) lies in `text`, if it lies there.
fn span(text: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let range = start..start + part.len();
    text.get(range.clone())
        .filter(|t| t.as_ptr() == part.as_ptr())
        .map(|_| range)
}

/// Reads a member name: where it lies in the text, or unescaped.
struct NameSeed<'a> {
    /// The text being parsed.
    text: &'a Arc<str>,
}

impl<'de> DeserializeSeed<'de> for NameSeed<'_> {
    type Value = Name;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Name, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for NameSeed<'_> {
    type Value = Name;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Name, E> {
        Ok(match span(self.text, v) {
            Some(range) => Name::At(range),
            None => Name::Unescaped(v.into()),
        })
    }

    fn visit_str<E>(self, v: &str) -> Result<Name, E> {
        Ok(Name::Unescaped(v.into()))
    }
}

/// How deeply a `_meta` member's value may nest before the strict check gives up (and the
/// frame is parsed as a `Value`, which decides): below what `Value` allows there (its limit
/// of 128 counts the frame, `params` and `_meta` too).
const STRICT_DEPTH: u32 = 100;

/// Walks a value as `serde_json::Value` would parse it (every string decoded, every number
/// converted), building nothing: it fails wherever that parse would fail. The count is the
/// nesting still allowed.
struct Strict(u32);

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.nested()?;
        while seq.next_element_seed(Strict(inner))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.nested()?;
        while map.next_key_seed(Strict(inner))?.is_some() {
            map.next_value_seed(Strict(inner))?;
        }
        Ok(())
    }
}

impl Strict {
    /// The nesting allowed inside a container here, or an error when there is none left.
    fn nested<E: de::Error>(&self) -> Result<u32, E> {
        self.0
            .checked_sub(1)
            .ok_or_else(|| E::custom("a _meta value nested too deeply"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Parsed, serde_json::Error> {
        let text: Arc<str> = Arc::from(text);
        let mut de = serde_json::Deserializer::from_str(&text);
        let parsed = MetaSeed { text: &text }.deserialize(&mut de)?;
        de.end()?;
        Ok(parsed)
    }

    fn object(text: &str) -> RequestMeta {
        match read(text) {
            Ok(Parsed::Object(meta)) => meta,
            _ => panic!("{text} is not an object"),
        }
    }

    #[test]
    fn reads_what_a_value_parse_reads() {
        for text in [
            r#"{}"#,
            r#" { "a" : 1 , "b":{"c":[1,2.5,"x"]}, "a":null } "#,
            r#"{"k\u0065y":"v\n","p\/q":true,"":{}}"#,
            r#"{"z":1,"y":2,"x":3,"y":4}"#,
        ] {
            let meta = object(text);
            let expected: Value = serde_json::from_str(text).unwrap();
            let got = Value::Object(meta.to_map());
            assert_eq!(got, expected, "{text}");
            // The same order, too (map equality ignores it).
            assert_eq!(got.to_string(), expected.to_string(), "{text}");
            for (key, value) in expected.as_object().unwrap() {
                assert_eq!(meta.value(key).as_ref(), Some(value), "{text} {key}");
                assert_eq!(meta.member(key).map(|m| m.to_value()).as_ref(), Some(value));
                assert_eq!(meta.raw(key).is_some(), meta.contains(key));
            }
        }
        let meta = object(r#"{ "v" :  "2026-07-28" , "e":"a\"b", "n" : null }"#);
        assert_eq!(meta.raw("v"), Some(r#""2026-07-28""#));
        assert_eq!(meta.str("v").as_deref(), Some("2026-07-28"));
        assert!(matches!(meta.str("v"), Some(Cow::Borrowed(_))));
        assert_eq!(meta.str("e").as_deref(), Some("a\"b"));
        assert_eq!(meta.raw("n"), Some("null"));
        assert_eq!(meta.str("n"), None);
        assert_eq!(meta.raw("missing"), None);
    }

    #[test]
    fn refuses_what_a_value_parse_refuses() {
        for text in [
            r#"{"a":"\ud800"}"#,
            r#"{"a":[1e400]}"#,
            r#"{"a":{"b":-1e999}}"#,
            r#"{"a":[1,2],"b":"x\ud800y"}"#,
            r#"{"a":1,}"#,
            r#"{"a"}"#,
        ] {
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
            assert!(read(text).is_err(), "{text}");
        }
        let long = format!(r#"{{"a":{}}}"#, "1".repeat(400));
        assert!(serde_json::from_str::<Value>(&long).is_err());
        assert!(read(&long).is_err());
        let deep = format!(r#"{{"a":{}{}}}"#, "[".repeat(120), "]".repeat(120));
        assert!(serde_json::from_str::<Value>(&deep).is_ok());
        assert!(
            read(&deep).is_err(),
            "stricter than Value: the frame is parsed again"
        );
    }

    #[test]
    fn only_what_a_skip_may_miss_is_walked_strictly() {
        for easy in [
            r#""2026-07-28""#,
            "{}",
            r#"{"name":"loadgen","version":"1"}"#,
            "[1,2.5,-3]",
        ] {
            assert!(skipping_suffices(easy), "{easy}");
        }
        for hard in [
            r#""\ud800""#,
            "1e400",
            "2.5E3",
            r#"{"a":"\n"}"#,
            &"1".repeat(201),
        ] {
            assert!(!skipping_suffices(hard), "{hard}");
        }
    }

    #[test]
    fn other_values_are_kept_as_values() {
        for text in ["5", "-1.5", "null", "true", r#""s""#, r#"[1,{"a":[]}]"#] {
            let Ok(Parsed::Other(value)) = read(text) else {
                panic!("{text}")
            };
            assert_eq!(*value, serde_json::from_str::<Value>(text).unwrap());
        }
    }

    #[test]
    fn without_a_member_is_ordered_as_map_remove_leaves_it() {
        for text in [
            r#"{"progressToken":1,"a":2,"b":3,"c":4}"#,
            r#"{"a":2,"progressToken":1,"b":3}"#,
            r#"{"a":2,"b":3,"progressToken":1}"#,
            r#"{"a":2,"b":3}"#,
            r#"{"a":2,"progressToken":1,"a":5,"b":3}"#,
        ] {
            let mut expected: Map<String, Value> = serde_json::from_str(text).unwrap();
            expected.remove("progressToken");
            let got = object(text).without("progressToken").to_map();
            assert_eq!(
                Value::Object(got).to_string(),
                Value::Object(expected).to_string()
            );
        }
    }

    #[test]
    fn a_value_is_indexed_as_received_text_is() {
        let value = json!({ "b": [1, "\u{1F600}"], "a\"": { "x": null } });
        let meta = RequestMeta::from_object(value.as_object().unwrap());
        assert_eq!(Value::Object(meta.to_map()), value);
        assert_eq!(meta.value("a\""), Some(json!({ "x": null })));
        assert_eq!(
            RequestMeta::in_params(&json!({ "_meta": value })),
            Some(meta)
        );
        assert_eq!(RequestMeta::in_params(&json!({ "_meta": 5 })), None);
    }
}
