//! MCP protocol revisions, what each one allows, and `initialize` version negotiation.

use std::fmt;
use std::str::FromStr;

/// One published MCP revision. Ordered oldest to newest so features can be compared with `>=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// The first stable revision (HTTP+SSE transport).
    V2024_11_05,
    /// Streamable HTTP, batching, tool annotations, audio, completions capability.
    V2025_03_26,
    /// Batching removed; structured tool output, elicitation, titles, resource links.
    V2025_06_18,
    /// Icons, URL elicitation, sampling with tools, tasks; the last handshake-era revision.
    V2025_11_25,
    /// The stateless era: no `initialize`, per-request `_meta`, `server/discover`.
    V2026_07_28,
}

impl Revision {
    /// Every revision, oldest first.
    pub const ALL: [Revision; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The revisions negotiated with `initialize`, oldest first.
    pub const HANDSHAKE: [Revision; 4] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
    ];

    /// The newest revision that uses the `initialize` handshake.
    pub const LATEST_HANDSHAKE: Revision = Self::V2025_11_25;

    /// The wire string, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether this revision starts with `initialize` (everything before 2026-07-28).
    pub fn has_handshake(self) -> bool {
        self <= Self::LATEST_HANDSHAKE
    }

    /// JSON-RPC batches (arrays) were allowed only in 2025-03-26.
    pub fn allows_batches(self) -> bool {
        self == Self::V2025_03_26
    }

    /// `title` on tools, prompts, resources and `Implementation` (2025-06-18+).
    pub fn has_titles(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Tool `annotations` (2025-03-26+).
    pub fn has_tool_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// `outputSchema` / `structuredContent` (2025-06-18+).
    pub fn has_structured_output(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// `execution.taskSupport` on tools and the `tasks` capability (2025-11-25+).
    pub fn has_tasks(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// The `completions` server capability (2025-03-26+).
    pub fn has_completions_capability(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// `capabilities.extensions` (SEP-2133; 2026-07-28+), where the tasks and skills
    /// extensions are declared.
    pub fn has_extensions_capability(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// `message` on progress notifications (2025-03-26+).
    pub fn has_progress_message(self) -> bool {
        self >= Self::V2025_03_26
    }
}

/// Written as its wire string (traffic records name the revision of every frame).
impl serde::Serialize for Revision {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(self.as_str())
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Returned when a string names no known revision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown MCP protocol revision {0:?} (known: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)")]
pub struct UnknownRevision(pub String);

impl FromStr for Revision {
    type Err = UnknownRevision;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownRevision(s.to_string()))
    }
}

/// Chooses the revision to answer an `initialize` with: the requested one when this server
/// supports it, otherwise the newest supported handshake revision (what the spec asks: "the
/// server MUST respond with another protocol version it supports ... SHOULD be the latest").
///
/// `supported` is the server's allowed set (all handshake revisions unless pinned); it is never
/// empty of handshake revisions when `initialize` is served.
pub fn negotiate(requested: &str, supported: &[Revision]) -> Option<Revision> {
    let handshake = supported.iter().copied().filter(|r| r.has_handshake());
    if let Ok(r) = requested.parse::<Revision>() {
        if r.has_handshake() && supported.contains(&r) {
            return Some(r);
        }
    }
    handshake.max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_a_supported_revision() {
        for r in Revision::HANDSHAKE {
            assert_eq!(negotiate(r.as_str(), &Revision::ALL), Some(r));
        }
    }

    #[test]
    fn answers_unknown_or_stateless_with_the_newest_handshake_revision() {
        for req in ["1999-01-01", "", "2024-10-07", "2026-07-28", "latest"] {
            assert_eq!(
                negotiate(req, &Revision::ALL),
                Some(Revision::V2025_11_25),
                "{req}"
            );
        }
    }

    #[test]
    fn respects_a_pinned_set() {
        let pinned = [Revision::V2025_03_26];
        assert_eq!(
            negotiate("2025-11-25", &pinned),
            Some(Revision::V2025_03_26)
        );
        assert_eq!(
            negotiate("2025-03-26", &pinned),
            Some(Revision::V2025_03_26)
        );
        assert_eq!(negotiate("2025-03-26", &[Revision::V2026_07_28]), None);
    }

    #[test]
    fn feature_gates() {
        assert!(Revision::V2025_03_26.allows_batches());
        assert!(!Revision::V2025_06_18.allows_batches());
        assert!(!Revision::V2024_11_05.allows_batches());
        assert!(Revision::V2025_06_18.has_titles() && !Revision::V2025_03_26.has_titles());
        assert_eq!("2025-06-18".parse::<Revision>(), Ok(Revision::V2025_06_18));
        assert!("2025-06-19".parse::<Revision>().is_err());
    }
}
