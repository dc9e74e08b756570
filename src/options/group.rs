//! An options group (server, HTTP listener): how one is read from names and values, how its
//! names and defaults are listed, and the value types its fields share.

use crate::error::Error;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

/// A duration as the options take it: a number of seconds (fractions allowed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);
impl Seconds {
    /// `duration` in seconds.
    pub fn of(duration: Duration) -> Self {
        Self(duration.as_secs_f64())
    }

    /// The `Duration`; a negative, NaN or infinite number is a configuration error naming
    /// `option`.
    pub fn duration(self, option: &str) -> Result<Duration, Error> {
        Duration::try_from_secs_f64(self.0).map_err(|_| {
            Error::Config(format!("{option} must be a non-negative number of seconds"))
        })
    }
}
/// An option the group does not have, or a value of the wrong shape for it.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionError {
    /// No option of the group has this name; `known` are the group's names, in field order.
    Unknown {
        /// The name given.
        name: String,
        /// Every option of the group.
        known: Vec<String>,
    },
    /// The value given for `name` is not of the option's type.
    Invalid {
        /// The option.
        name: String,
        /// What was wrong with it (`invalid type: string "x", expected a non-negative integer`).
        message: String,
    },
}
impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unknown { name, known } => {
                write!(f, "unknown option {name:?} (options: {})", known.join(", "))
            }
            Self::Invalid { name, message } => write!(f, "option {name:?}: {message}"),
        }
    }
}
impl std::error::Error for OptionError {}
/// A group of options ([`ServerOptions`], [`HttpOptions`]): serde gives the names, the shapes
/// and the defaults, from the one definition of each field.
pub trait Group: Serialize + DeserializeOwned + Default {}
/// The names of `G`'s options, in field order.
pub fn names<G: Group>() -> Vec<String> {
    defaults::<G>().into_iter().map(|(name, _)| name).collect()
}
/// `G`'s defaults, by option name, as JSON values (durations in seconds, `null`: unset).
pub fn defaults<G: Group>() -> Map<String, Value> {
    match serde_json::to_value(G::default()) {
        Ok(Value::Object(map)) => map,
        _ => unreachable!("an options group serializes to an object"),
    }
}
/// The options `given` (name → value): an option given as `null` takes its default, as one not
/// given does.
pub fn parse<G: Group>(given: Map<String, Value>) -> Result<G, OptionError> {
    let known = names::<G>();
    if let Some(name) = given.keys().find(|name| !known.contains(name)) {
        return Err(OptionError::Unknown {
            name: name.clone(),
            known,
        });
    }
    let given: Map<String, Value> = given.into_iter().filter(|(_, v)| !v.is_null()).collect();
    serde_path_to_error::deserialize(Value::Object(given)).map_err(|e| OptionError::Invalid {
        name: e.path().to_string(),
        message: plain(e.into_inner().to_string()),
    })
}
/// serde's message with the Rust number types it names said as a user of the options reads
/// them (`expected usize` is `expected a non-negative integer`).
pub(super) fn plain(message: String) -> String {
    [
        ("expected usize", "expected a non-negative integer"),
        ("expected f64", "expected a number"),
    ]
    .iter()
    .fold(message, |m, (rust, plain)| m.replace(rust, plain))
}
