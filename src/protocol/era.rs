//! The two eras of MCP and how a server chooses which to serve. An era is a set of revisions:
//! the handshake era (2024-11-05 … 2025-11-25, sessions opened with `initialize`) and the
//! stateless era (2026-07-28, every request describes itself in `_meta`). A test pins an era to
//! check that its client speaks that era (or falls back from the other one); records name the
//! era of every frame so a test can tell the two apart on one server.

use super::revision::Revision;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The era a revision (and so a frame) belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// Sessions opened with `initialize` (every revision before 2026-07-28).
    Handshake,
    /// No handshake: every request carries the envelope (2026-07-28 on).
    Stateless,
}

impl Era {
    /// The era of `revision`.
    pub fn of(revision: Revision) -> Self {
        if revision.has_handshake() {
            Self::Handshake
        } else {
            Self::Stateless
        }
    }

    /// The name used on the command line and in records.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Handshake => "handshake",
            Self::Stateless => "stateless",
        }
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which eras a server serves (`--era`): one of them, or both side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EraChoice {
    /// Only the handshake era: a 2026 client gets `-32601` for `server/discover` and falls back.
    Handshake,
    /// Only the stateless era: `initialize` is an unknown method.
    Stateless,
    /// Both (the default): each connection or request picks its own.
    #[default]
    Both,
}

impl EraChoice {
    /// Every choice's name, for help texts and the binding's validation.
    pub const NAMES: [&'static str; 3] = ["handshake", "stateless", "both"];

    /// The name used on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Handshake => "handshake",
            Self::Stateless => "stateless",
            Self::Both => "both",
        }
    }

    /// Whether a server with this choice serves `revision`.
    pub fn admits(self, revision: Revision) -> bool {
        match self {
            Self::Both => true,
            Self::Handshake => Era::of(revision) == Era::Handshake,
            Self::Stateless => Era::of(revision) == Era::Stateless,
        }
    }

    /// The revisions of `pinned` this choice admits, oldest first; an error naming both when
    /// none is left (a pin that contradicts the era is a configuration mistake, not a server
    /// that answers nothing).
    pub fn narrow(self, pinned: &[Revision]) -> Result<Vec<Revision>, String> {
        let mut allowed: Vec<Revision> =
            pinned.iter().copied().filter(|r| self.admits(*r)).collect();
        allowed.sort();
        allowed.dedup();
        if allowed.is_empty() {
            let names: Vec<&str> = pinned.iter().map(|r| r.as_str()).collect();
            return Err(format!(
                "era {} serves none of the allowed revisions ({})",
                self.as_str(),
                names.join(", ")
            ));
        }
        Ok(allowed)
    }
}

impl FromStr for EraChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "handshake" => Ok(Self::Handshake),
            "stateless" => Ok(Self::Stateless),
            "both" => Ok(Self::Both),
            other => Err(format!(
                "unknown era {other:?} (choose from {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_belong_to_their_era() {
        for r in Revision::HANDSHAKE {
            assert_eq!(Era::of(r), Era::Handshake);
        }
        assert_eq!(Era::of(Revision::V2026_07_28), Era::Stateless);
    }

    #[test]
    fn a_choice_narrows_the_pinned_revisions() {
        assert_eq!(
            EraChoice::Both.narrow(&Revision::ALL),
            Ok(Revision::ALL.to_vec())
        );
        assert_eq!(
            EraChoice::Handshake.narrow(&Revision::ALL),
            Ok(Revision::HANDSHAKE.to_vec())
        );
        assert_eq!(
            EraChoice::Stateless.narrow(&Revision::ALL),
            Ok(vec![Revision::V2026_07_28])
        );
        assert_eq!(
            EraChoice::Handshake.narrow(&[Revision::V2025_06_18, Revision::V2026_07_28]),
            Ok(vec![Revision::V2025_06_18])
        );
        let err = EraChoice::Stateless
            .narrow(&[Revision::V2025_06_18])
            .unwrap_err();
        assert!(
            err.contains("stateless") && err.contains("2025-06-18"),
            "{err}"
        );
    }

    #[test]
    fn choices_parse_by_name() {
        for name in EraChoice::NAMES {
            assert_eq!(name.parse::<EraChoice>().map(EraChoice::as_str), Ok(name));
        }
        assert!("auto".parse::<EraChoice>().is_err());
    }
}
