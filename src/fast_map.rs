//! The hash maps of the request path: std's maps with foldhash instead of SipHash, whose
//! hashing showed in the request path's profile.

/// A hash map for the per-request paths (the recorder's open requests, a session's in-flight
/// requests and streams, the session table): std's map with foldhash instead of SipHash, whose
/// hashing showed in the request path's profile. Keys are ids the server hands out or checks.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// An insertion-ordered map with foldhash: the registry's tables, which keep registration order
/// (the order `*/list` shows) and are looked up by name on every call (`tools/call` looks its
/// tool up twice over HTTP: the header check and the call), where SipHash showed in the profile.
pub type FastIndexMap<K, V> = indexmap::IndexMap<K, V, foldhash::fast::RandomState>;

/// The set counterpart of [`FastMap`].
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
