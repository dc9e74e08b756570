//! Every option a server is started with, written once: one field per option, with its doc and
//! its default, in one of two groups, and the one conversion of each group to what the core
//! reads.
//!
//! - [`ServerOptions`]: what `Server(...)` (Python) and every CLI command take. It becomes the
//!   core's [`ServerConfig`](crate::ServerConfig), the catalogs' [`catalog::Options`](crate::catalog::Options)
//!   and the registry of the named catalogs ([`ServerOptions::server`]).
//! - [`HttpOptions`]: what an HTTP listener takes (`start_http(host, port, ...)`, the `http` and
//!   `sse` commands). It becomes the transport's [`HttpConfig`](crate::transport::http::HttpConfig)
//!   and a bound listener ([`HttpOptions::listen`]).
//!
//! The fields are the options as users give them: durations in seconds ([`Seconds`]), revisions
//! and the era by name. They are read generically from a map of names to JSON values
//! ([`parse`]), which is how the binding takes Python's keyword arguments whole, and their
//! defaults are written out the same way ([`defaults`]: `_core.DEFAULTS`). A value of the right
//! shape that is wrong (an unknown revision, a negative duration) is refused by the conversion,
//! as a [`Error::Config`](crate::error::Error::Config).
//!
//! Adding an option: a documented field in its group, its default in the group's `Default`, its
//! use in the group's conversion; then one line in the Python `TypedDict`
//! (`python/everything_mcp/options.py`) and one CLI flag (`python/everything_mcp/cli.py`, whose
//! `dest` is the option's name). `tests/test_options.py` and `tests/test_cli.py` check that
//! both know every option.

mod http;
mod server;

pub use http::{HttpOptions, Listener};
pub use server::{ServerOptions, CATALOGS, WORKER_THREADS};

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
fn plain(message: String) -> String {
    [
        ("expected usize", "expected a non-negative integer"),
        ("expected f64", "expected a number"),
    ]
    .iter()
    .fold(message, |m, (rust, plain)| m.replace(rust, plain))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn given(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn nothing_given_is_the_default() {
        assert_eq!(
            parse::<ServerOptions>(Map::new()).unwrap(),
            ServerOptions::default()
        );
        assert_eq!(
            parse::<HttpOptions>(given(json!({ "json_response": null }))).unwrap(),
            HttpOptions::default()
        );
    }

    #[test]
    fn the_defaults_written_out_read_back_as_the_defaults() {
        let server = defaults::<ServerOptions>();
        assert_eq!(
            parse::<ServerOptions>(server).unwrap(),
            ServerOptions::default()
        );
        let http = defaults::<HttpOptions>();
        assert_eq!(parse::<HttpOptions>(http).unwrap(), HttpOptions::default());
    }

    #[test]
    fn an_option_is_read_by_its_name() {
        let o: ServerOptions = parse(given(json!({ "page_size": 3, "tick": 1 }))).unwrap();
        assert_eq!(o.page_size, Some(3));
        assert_eq!(o.tick, Some(Seconds(1.0)));
    }

    #[test]
    fn an_unknown_or_ill_typed_option_is_named() {
        let e = parse::<ServerOptions>(given(json!({ "bogus": null }))).unwrap_err();
        assert!(matches!(&e, OptionError::Unknown { name, .. } if name == "bogus"));
        assert!(e.to_string().contains("catalogs, record"), "{e}");
        let e = parse::<ServerOptions>(given(json!({ "page_size": "x" }))).unwrap_err();
        assert_eq!(
            e,
            OptionError::Invalid {
                name: "page_size".into(),
                message: "invalid type: string \"x\", expected a non-negative integer".into()
            }
        );
    }

    #[test]
    fn the_groups_do_not_share_a_name() {
        let http = names::<HttpOptions>();
        assert!(names::<ServerOptions>().iter().all(|n| !http.contains(n)));
    }

    #[test]
    fn a_negative_duration_is_a_configuration_error() {
        let e = Seconds(-1.0).duration("tick").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid configuration: tick must be a non-negative number of seconds"
        );
    }
}
