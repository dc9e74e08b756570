//! [`ReplayOptions`]: how a server replays recorded traffic (`Server.from_recording(...)`, the
//! `replay` command), and their conversion to the replay the core serves.

use crate::error::Error;
use crate::replay::matching::{Ignore, DEFAULT_IGNORE};
use crate::replay::{Recording, Replay, Settings};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Every option of a replay: the `replay` server option's members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayOptions {
    /// The recordings answered from (`--record` files, JSON lines), read in this order.
    pub files: Vec<PathBuf>,
    /// The paths of a request its matching leaves out: JSON Pointers into `{"id", "method",
    /// "params"}`, `*` for any member or element. The default leaves out the id and `_meta`;
    /// `[]` matches exactly.
    pub ignore: Vec<String>,
    /// `any`: a request takes the first unused recording that matches it; `recorded`: requests
    /// must come in the recorded order (per connection).
    pub order: String,
    /// Whether a request whose recorded answers were all given gets the last of them again,
    /// rather than an error.
    pub repeat: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            ignore: DEFAULT_IGNORE.iter().map(|p| p.to_string()).collect(),
            order: "any".into(),
            repeat: true,
        }
    }
}

impl ReplayOptions {
    /// How requests are matched. Fails on an unknown order or a path that is not a pointer.
    pub fn settings(&self) -> Result<Settings, Error> {
        let in_order = match self.order.as_str() {
            "any" => false,
            "recorded" => true,
            other => {
                return Err(Error::Config(format!(
                    "replay order {other:?} is not one of \"any\", \"recorded\""
                )))
            }
        };
        Ok(Settings {
            ignore: Ignore::new(&self.ignore).map_err(Error::Config)?,
            in_order,
            repeat: self.repeat,
        })
    }

    /// The replay: the files read, matched as [`Self::settings`] say. Fails on a file that
    /// cannot be read or holds something else than traffic records, or when none is named.
    pub fn replay(&self) -> Result<Replay, Error> {
        if self.files.is_empty() {
            return Err(Error::Config(
                "a replay needs at least one recording file".into(),
            ));
        }
        let settings = self.settings()?;
        Ok(Replay::new(Recording::load(&self.files)?, settings))
    }
}

impl super::group::Group for ReplayOptions {}
