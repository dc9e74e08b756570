//! `logging/setLevel`: the minimum level of `notifications/message` for this session.

use crate::jsonrpc::ErrorObject;
use crate::protocol::{LogFilter, LogLevel};
use crate::server::context::RequestContext;
use serde_json::{Map, Value};

/// Stores the session's level; an unknown level is `-32602`.
pub fn set_level(ctx: &RequestContext, params: &Map<String, Value>) -> Result<Value, ErrorObject> {
    let level: LogLevel = super::params::required_str(params, "level")?
        .parse()
        .map_err(ErrorObject::invalid_params)?;
    ctx.session
        .update(|s| s.declared.log_filter = LogFilter::AtLeast(level));
    Ok(Value::Object(Map::new()))
}
