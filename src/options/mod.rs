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
//! (`python/everything_mcp/options.py`) and one flag (a field named after the option in
//! `crate::cli::flags`, for both launchers). `tests/test_options.py` and
//! `cli::tests::every_option_has_its_flag` check that both know every option.

mod group;
mod http;
mod replay;
mod server;

pub use group::{defaults, names, parse, Group, OptionError, Seconds};
pub use http::{HttpOptions, Listener};
pub use replay::ReplayOptions;
pub use server::{ServerOptions, CATALOGS, MAX_BLOCKING_THREADS, WORKER_THREADS};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::{Map, Value};

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
