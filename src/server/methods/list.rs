//! The preamble every `*/list` request shares: the server's page size (or the registry's own
//! pager), the request's revision and cursor ([`ListRequest`]).

use crate::jsonrpc::ErrorObject;
use crate::protocol::shape::Shape;
use crate::server::model::{RequestContext, Server};
use crate::server::pagination::{list_page, list_page_with, Pager};
use serde_json::{Map, Value};

/// A `*/list` request of a registry family (`tools/list`, `resources/list`, …): what each reads
/// to cut and shape its page, so each family's list method says only what it lists.
pub struct ListRequest<'a> {
    /// The server: its registry snapshot and the configured page size.
    pub server: &'a Server,
    /// The request: its session (which may own resources) and revision (which fields a
    /// definition shows).
    pub ctx: &'a RequestContext,
    /// The request's params: the client's `cursor`.
    pub params: &'a Map<String, Value>,
}

impl<'a> ListRequest<'a> {
    /// The `*/list` request `params` of `ctx`, served by `server`.
    pub fn new(
        server: &'a Server,
        ctx: &'a RequestContext,
        params: &'a Map<String, Value>,
    ) -> Self {
        Self {
            server,
            ctx,
            params,
        }
    }

    /// The page of `definitions` the client's cursor asks for, as the result's `key`, each
    /// shaped as `shape` for the request's revision; cut by `pager` when the registry brings
    /// one, else by the configured page size.
    pub fn page<'d>(
        &self,
        key: &str,
        shape: Shape,
        definitions: impl ExactSizeIterator<Item = &'d Map<String, Value>>,
        pager: Option<&Pager>,
    ) -> Result<Value, ErrorObject> {
        let revision = self.ctx.scope.revision;
        match pager {
            Some(pager) => list_page_with(key, definitions, self.params, pager, shape, revision),
            None => {
                let page_size = self.server.config.page_size;
                list_page(key, definitions, self.params, page_size, shape, revision)
            }
        }
    }
}
