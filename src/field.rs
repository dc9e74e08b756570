//! Members of small JSON objects, found without hashing. `serde_json`'s `preserve_order` maps
//! hash every key with SipHash; a request's objects (`params`, `_meta`, a tool's arguments)
//! have a handful of members, where comparing the keys one by one is several times cheaper.
//! Callgrind counted SipHash at about 12% of a stateless `tools/call` (10k of 87k instructions
//! per request), most of it in lookups on objects of two to four members; reading them here
//! took the stateless gate (envelope, rounds) from 11.9k to 8.5k instructions per request and
//! the `Mcp-Param-*` header check from 1.45k to 0.5k. Measured again when the JSON parse path
//! was unified (`bench.callgrind`, instructions per request, these lookups hashed instead):
//! stateless echo 55.4k -> 57.2k (+3.3%), stateful 52.4k -> 53.2k (+1.5%), Python echo
//! 134.8k -> 135.7k; so they stay, here, as the one module of such lookups.

use serde_json::{Map, Value};

/// Objects with up to this many members are searched linearly; larger ones by their hash.
/// A short key compare costs a few instructions against about 200 for SipHashing the key.
const LINEAR_UP_TO: usize = 8;

/// `map.get(key)`, without hashing `key` when `map` is small.
pub fn get<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= LINEAR_UP_TO {
        map.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

/// `map.get_mut(key)`, without hashing `key` when `map` is small.
pub fn get_mut<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Value> {
    if map.len() <= LINEAR_UP_TO {
        map.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get_mut(key)
    }
}

/// `map.contains_key(key)`, without hashing `key` when `map` is small.
pub fn contains(map: &Map<String, Value>, key: &str) -> bool {
    get(map, key).is_some()
}

/// The member `key` of `value` if it is an object (`value.get(key)` for objects), without
/// hashing `key` when the object is small.
pub fn member<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.as_object().and_then(|m| get(m, key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_what_the_map_finds_small_or_large() {
        for n in [0, 1, 3, LINEAR_UP_TO, LINEAR_UP_TO + 1, 40] {
            let mut map: Map<String, Value> = (0..n).map(|i| (format!("k{i}"), json!(i))).collect();
            for i in 0..=n {
                let key = format!("k{i}");
                assert_eq!(get(&map, &key), map.get(&key));
                assert_eq!(contains(&map, &key), map.contains_key(&key));
                assert_eq!(member(&Value::Object(map.clone()), &key), map.get(&key));
            }
            if let Some(v) = get_mut(&mut map, "k0") {
                *v = json!("changed");
            }
            assert!(n == 0 || map["k0"] == "changed");
        }
        assert_eq!(member(&json!([1]), "k0"), None);
    }
}
