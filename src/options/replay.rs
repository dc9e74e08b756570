//! [`ReplayOptions`]: how a server replays recorded traffic (`Server.from_recording(...)`, the
//! `replay` command), and their conversion to the replay the core serves.

use crate::error::Error;
use crate::replay::matching::{Ignore, DEFAULT_IGNORE};
use crate::replay::passing::{EpisodeWriter, Links};
use crate::replay::upstream::Target;
use crate::replay::{Passes, Recording, Replay, Settings, Upstreaming};
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
    /// The real server to record from: a command line (spawned, spoken to over stdio) or a
    /// Streamable HTTP URL. Used as `record_mode` says.
    pub upstream: Option<String>,
    /// When the real server is asked, as VCR's record modes: `none` never (a request the
    /// recording lacks is an error); `once` when the recording does not exist yet (then every
    /// request, the traffic written to the first file), else never; `new_episodes` for what the
    /// recording lacks (each such exchange appended to the first file); `all` always (the
    /// first file written anew).
    pub record_mode: String,
}

/// What a replay writes, besides what its server is told to record.
pub struct Replaying {
    /// The replay.
    pub replay: Replay,
    /// The file the server's own recorder writes the recording to (modes that pass every
    /// request to the real server).
    pub records_to: Option<PathBuf>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            ignore: DEFAULT_IGNORE.iter().map(|p| p.to_string()).collect(),
            order: "any".into(),
            repeat: true,
            upstream: None,
            record_mode: "once".into(),
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

    /// The replay: the files read, matched as [`Self::settings`] say, the real server asked as
    /// `record_mode` says. Fails on a file that cannot be read or holds something else than
    /// traffic records, a missing recording with no `upstream` to make it from, or no file named.
    pub fn replay(&self) -> Result<Replaying, Error> {
        let Some(first) = self.files.first() else {
            return Err(Error::Config(
                "a replay needs at least one recording file".into(),
            ));
        };
        let settings = self.settings()?;
        let target = self
            .upstream
            .as_deref()
            .map(Target::parse)
            .transpose()
            .map_err(|e| Error::Config(format!("upstream: {e}")))?;
        let exists = |f: &PathBuf| std::fs::metadata(f).is_ok_and(|m| m.len() > 0);
        let needs = |mode: &str| {
            Error::Config(format!(
                "record mode {mode:?} asks the real server, and no upstream was given"
            ))
        };
        let (recording, passes, records_to) = match self.record_mode.as_str() {
            "none" => (Recording::load(&self.files)?, None, None),
            "once" if self.files.iter().all(exists) => (Recording::load(&self.files)?, None, None),
            "once" | "all" => {
                if target.is_none() {
                    return Err(match self.record_mode.as_str() {
                        "once" => Error::Config(format!(
                            "the recording {} does not exist yet, and no upstream was given to record it from",
                            first.display()
                        )),
                        mode => needs(mode),
                    });
                }
                // Written anew: the server's recorder appends.
                std::fs::write(first, b"")?;
                (
                    Recording::default(),
                    Some(Passes::Everything),
                    Some(first.clone()),
                )
            }
            "new_episodes" => {
                if target.is_none() {
                    return Err(needs("new_episodes"));
                }
                let present: Vec<PathBuf> =
                    self.files.iter().filter(|f| exists(f)).cloned().collect();
                let writer = EpisodeWriter::open(first)?;
                (
                    Recording::load(&present)?,
                    Some(Passes::Unmatched(Box::new(writer))),
                    None,
                )
            }
            other => {
                return Err(Error::Config(format!(
                "record mode {other:?} is not one of \"none\", \"once\", \"new_episodes\", \"all\""
            )))
            }
        };
        let upstream = match (passes, target) {
            (Some(passes), Some(target)) => Some(Upstreaming {
                links: Links::new(target),
                passes,
            }),
            _ => None,
        };
        Ok(Replaying {
            replay: Replay::new(recording, settings, upstream),
            records_to,
        })
    }
}

impl super::group::Group for ReplayOptions {}
