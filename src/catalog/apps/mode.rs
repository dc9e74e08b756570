//! What the `apps` catalog's parts share: the extension's names, the [`AppsMode`], and whether
//! a request's client declared the extension.

use crate::error::Error;
use crate::server::context::RequestContext;
use serde_json::Value;

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The tool a view posts its checks to.
pub const SUBMIT: &str = "apps_submit_results";

/// The MIME type of a UI resource (and the one a host must list in its `mimeTypes`).
pub const MIME: &str = "text/html;profile=mcp-app";

/// The `_meta` keys that link a tool to its view: the current nested one and the deprecated flat
/// one (hosts still read it).
pub const META_KEYS: [&str; 2] = ["ui", "ui/resourceUri"];

/// How the catalog shows its views' metadata (`--apps`, `Server(apps=...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppsMode {
    /// `_meta.ui` (and the app-only tools) only for a host that declared the extension: the
    /// spec's SHOULD.
    #[default]
    Gate,
    /// For every client, declared or not: a host that renders without declaring still renders.
    Always,
    /// For no client, and the extension is not declared: a host must render nothing.
    Off,
}

impl AppsMode {
    /// The mode named `name` (`gate`, `always`, `off`).
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "gate" => Ok(Self::Gate),
            "always" => Ok(Self::Always),
            "off" => Ok(Self::Off),
            other => Err(Error::Config(format!(
                "apps {other:?} is not gate, always or off"
            ))),
        }
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gate => "gate",
            Self::Always => "always",
            Self::Off => "off",
        }
    }
}

/// Whether the client declared the extension in `capabilities` (as the request declares them).
pub fn declared(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// Whether the client of `ctx` gets the views' metadata under `mode`.
pub fn shows_ui(mode: AppsMode, ctx: &RequestContext) -> bool {
    match mode {
        AppsMode::Always => true,
        AppsMode::Off => false,
        AppsMode::Gate => declared(&ctx.client_capabilities()),
    }
}
