//! The `apps` catalog's views (docs/apps.md, "Views"): the self-testing view under every
//! resource variant (`_meta.ui` on the list entry, on the read item, on both and conflicting;
//! each CSP key; permissions; `prefersBorder`; `domain`; `text` or `blob`; the wrong MIME type;
//! unlisted; cached by `ttlMs`; changing per read) and the negative views.
//!
//! A view is one HTML file of `views/` with its configuration injected at read time: which view
//! and variant it is, the origins its CSP probes load from (the server's HTTP listener under
//! the name it declared and under its other loopback name, which it did not), what the
//! declared `_meta.ui` lets through (so the view knows what to expect of the host's CSP), and
//! the tools it calls. The shared bridge code (`views/bridge.js`) is inlined into each.

use super::mode::{shows_ui, AppsMode, MIME};
use crate::server::context::RequestContext;
use crate::server::handler::resource_fn;
use crate::server::registry::{Registry, Resource};
use base64::Engine;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The self-testing view's URI (the main view: `apps_selftest` shows it).
pub const SELFTEST: &str = "ui://everything-mcp/selftest";

/// The page every view shares: its configuration, the bridge, a guard, and where the view's own
/// script goes.
const VIEW_HTML: &str = include_str!("views/view.html");
/// Where [`VIEW_HTML`] wants the view's title.
const TITLE_MARK: &str = "__EVERYTHING_MCP_TITLE__";
/// Where [`VIEW_HTML`] wants the view's own script.
const SCRIPT_MARK: &str = "/*__EVERYTHING_MCP_VIEW__*/";
/// The self-testing view's own script.
const SELFTEST_JS: &str = include_str!("views/selftest.js");
/// The bridge code every view shares, inlined where a view has [`BRIDGE_MARK`].
const BRIDGE_JS: &str = include_str!("views/bridge.js");
/// Where a view's page wants [`BRIDGE_JS`].
const BRIDGE_MARK: &str = "/*__EVERYTHING_MCP_BRIDGE__*/";
/// Where a view's page wants its configuration (JSON).
const CONFIG_MARK: &str = "__EVERYTHING_MCP_CONFIG__";
/// Stands for the declared origin (this listener) in a definition's `_meta.ui`.
const DECLARED: &str = "{declared}";
/// Stands for the undeclared origin (this listener's other loopback name).
const UNDECLARED: &str = "{undeclared}";

/// The `_meta.ui` of the self-testing view: its probes' origin declared for `connect-src` and
/// the resource directives, and a border asked for.
const SELFTEST_UI: &str = r#"{"csp":{"connectDomains":["{declared}"],"resourceDomains":["{declared}"]},"prefersBorder":true}"#;

/// One way of serving the self-testing view.
pub struct Variant {
    /// Its name: `ui://everything-mcp/view/<name>`, tool `apps_view_<name>`.
    pub name: &'static str,
    /// What it tests, for the tool's description and the docs.
    pub about: &'static str,
    /// Whether `resources/list` shows it.
    pub listed: bool,
    /// The MIME type it is served as.
    pub mime: &'static str,
    /// Served as a base64 `blob` instead of `text`.
    pub blob: bool,
    /// `_meta.ui` of its `resources/list` entry (JSON text).
    pub list_ui: Option<&'static str>,
    /// `_meta.ui` of its `resources/read` item (JSON text): the one that wins.
    pub read_ui: Option<&'static str>,
    /// 2026-07-28: its read result may be cached a minute (`ttlMs`, `cacheScope`).
    pub cached: bool,
    /// Its content differs on every read (a counter in the page).
    pub changing: bool,
}

/// A variant served as text, listed, with `ui` on both its list entry and its read item.
const fn both(name: &'static str, about: &'static str, ui: &'static str) -> Variant {
    Variant {
        name,
        about,
        listed: true,
        mime: MIME,
        blob: false,
        list_ui: Some(ui),
        read_ui: Some(ui),
        cached: false,
        changing: false,
    }
}

/// Every variant, in the docs' order.
pub const VARIANTS: &[Variant] = &[
    both("text", "the page as text", SELFTEST_UI),
    Variant {
        blob: true,
        ..both("blob", "the page as a base64 blob", SELFTEST_UI)
    },
    Variant {
        mime: "text/html",
        ..both(
            "wrong-mime",
            "served as text/html, not the apps MIME type (a host should not render it)",
            SELFTEST_UI,
        )
    },
    Variant {
        listed: false,
        list_ui: None,
        ..both(
            "unlisted",
            "not in resources/list (a host must read it anyway)",
            SELFTEST_UI,
        )
    },
    Variant {
        read_ui: None,
        ..both(
            "meta-list-only",
            "_meta.ui on the resources/list entry only (a host must look there too)",
            SELFTEST_UI,
        )
    },
    Variant {
        list_ui: None,
        ..both(
            "meta-read-only",
            "_meta.ui on the resources/read item only",
            SELFTEST_UI,
        )
    },
    Variant {
        list_ui: Some(
            r#"{"csp":{"connectDomains":["{undeclared}"],"resourceDomains":["{undeclared}"]},"prefersBorder":false}"#,
        ),
        ..both(
            "meta-conflict",
            "_meta.ui on both, conflicting: the read item's must win",
            SELFTEST_UI,
        )
    },
    both(
        "no-csp",
        "no csp at all: the host's default must deny every origin",
        r#"{"prefersBorder":true}"#,
    ),
    both(
        "connect",
        "csp.connectDomains only",
        r#"{"csp":{"connectDomains":["{declared}"]}}"#,
    ),
    both(
        "resource-domains",
        "csp.resourceDomains only",
        r#"{"csp":{"resourceDomains":["{declared}"]}}"#,
    ),
    both(
        "frame-domains",
        "csp.frameDomains: a nested frame from the declared origin",
        r#"{"csp":{"frameDomains":["{declared}"]}}"#,
    ),
    both(
        "base-uri",
        "csp.baseUriDomains",
        r#"{"csp":{"baseUriDomains":["{declared}"]}}"#,
    ),
    both(
        "permissions",
        "every permissions key (camera, microphone, geolocation, clipboardWrite)",
        r#"{"permissions":{"camera":{},"microphone":{},"geolocation":{},"clipboardWrite":{}}}"#,
    ),
    both(
        "border-true",
        "prefersBorder true",
        r#"{"csp":{"connectDomains":["{declared}"],"resourceDomains":["{declared}"]},"prefersBorder":true}"#,
    ),
    both(
        "border-false",
        "prefersBorder false",
        r#"{"csp":{"connectDomains":["{declared}"],"resourceDomains":["{declared}"]},"prefersBorder":false}"#,
    ),
    both(
        "border-omitted",
        "prefersBorder omitted (the host decides)",
        r#"{"csp":{"connectDomains":["{declared}"],"resourceDomains":["{declared}"]}}"#,
    ),
    both(
        "domain",
        "a dedicated sandbox domain asked for (its format is the host's)",
        r#"{"csp":{"connectDomains":["{declared}"],"resourceDomains":["{declared}"]},"domain":"everything-mcp-apps.invalid"}"#,
    ),
    Variant {
        cached: true,
        ..both(
            "ttl",
            "2026-07-28: its read result may be cached a minute (ttlMs 60000, cacheScope private)",
            SELFTEST_UI,
        )
    },
    Variant {
        changing: true,
        ..both("changing", "its content differs on every read", SELFTEST_UI)
    },
    both(
        "slow",
        "shown by apps_slow, whose result comes late or is cancelled",
        SELFTEST_UI,
    ),
];

/// The negative views, by kind: what each does wrong on purpose.
pub const NEGATIVE: [(&str, &str); 6] = [
    (
        "no-handshake",
        "it waits before ui/initialize (a host must send nothing until initialized)",
    ),
    (
        "malformed",
        "it sends malformed JSON-RPC before its handshake",
    ),
    (
        "unknown-method",
        "it sends an unknown ui/ request (the host must answer -32601)",
    ),
    (
        "early-calls",
        "it calls a tool before its handshake (a host should not forward it)",
    ),
    (
        "size-flood",
        "it sends 500 size-changed notifications at once",
    ),
    (
        "teardown-never-acked",
        "it never answers ui/resource-teardown",
    ),
];

/// A negative view's own script.
fn negative_js(kind: &str) -> &'static str {
    match kind {
        "no-handshake" => include_str!("views/negative-no-handshake.js"),
        "malformed" => include_str!("views/negative-malformed.js"),
        "unknown-method" => include_str!("views/negative-unknown-method.js"),
        "early-calls" => include_str!("views/negative-early-calls.js"),
        "size-flood" => include_str!("views/negative-size-flood.js"),
        _ => include_str!("views/negative-teardown-never-acked.js"),
    }
}

/// A view's page: the shared page with its title and script.
fn page(title: &str, script: &str) -> String {
    VIEW_HTML
        .replace(TITLE_MARK, title)
        .replace(SCRIPT_MARK, script)
}

/// `ui://everything-mcp/view/<name>`.
pub fn variant_uri(name: &str) -> String {
    format!("ui://everything-mcp/view/{name}")
}

/// `ui://everything-mcp/negative/<kind>`.
pub fn negative_uri(kind: &str) -> String {
    format!("ui://everything-mcp/negative/{kind}")
}

/// What one view resource is: its page, its metadata, how it is served.
struct View {
    uri: String,
    /// `"selftest"` or `"negative/<kind>"` (the config's `view`).
    view: String,
    /// `"default"` or the variant's name.
    variant: &'static str,
    page: String,
    mime: &'static str,
    blob: bool,
    list_ui: Option<Value>,
    read_ui: Option<Value>,
    changing: bool,
}

/// Registers every view (the self-testing one, its variants, the negative ones).
pub(super) fn load(registry: &mut Registry, mode: AppsMode, unlisted: &mut Vec<String>) {
    let parse = |ui: Option<&str>| ui.map(|t| serde_json::from_str::<Value>(t).unwrap_or_default());
    let mut views = vec![(
        true,
        View {
            uri: SELFTEST.into(),
            view: "selftest".into(),
            variant: "default",
            page: page("MCP Apps self-test", SELFTEST_JS),
            mime: MIME,
            blob: false,
            list_ui: parse(Some(SELFTEST_UI)),
            read_ui: parse(Some(SELFTEST_UI)),
            changing: false,
        },
    )];
    for v in VARIANTS {
        if v.cached {
            registry
                .read_cache
                .insert(variant_uri(v.name), (60_000, "private"));
        }
        views.push((
            v.listed,
            View {
                uri: variant_uri(v.name),
                view: "selftest".into(),
                variant: v.name,
                page: page("MCP Apps self-test", SELFTEST_JS),
                mime: v.mime,
                blob: v.blob,
                list_ui: parse(v.list_ui),
                read_ui: parse(v.read_ui),
                changing: v.changing,
            },
        ));
    }
    for (kind, _) in NEGATIVE {
        views.push((
            true,
            View {
                uri: negative_uri(kind),
                view: format!("negative/{kind}"),
                variant: "default",
                page: page(&format!("negative view: {kind}"), negative_js(kind)),
                mime: MIME,
                blob: false,
                list_ui: parse(Some(SELFTEST_UI)),
                read_ui: parse(Some(SELFTEST_UI)),
                changing: false,
            },
        ));
    }
    for (listed, view) in views {
        let resource = resource(view, mode);
        if !listed {
            // Readable, not listed: the catalog's definition view hides it (`UNLISTED`).
            unlisted.push(resource.uri().to_string());
        }
        registry
            .resources
            .insert(resource.uri().to_string(), resource);
    }
}

/// The resource serving `view` under `mode`.
fn resource(view: View, mode: AppsMode) -> Resource {
    let mut definition = Map::new();
    definition.insert("uri".into(), view.uri.clone().into());
    definition.insert(
        "name".into(),
        format!(
            "apps view {}",
            view.uri.trim_start_matches("ui://everything-mcp/")
        )
        .into(),
    );
    definition.insert("mimeType".into(), view.mime.into());
    if let Some(ui) = &view.list_ui {
        definition.insert("_meta".into(), json!({ "ui": ui }));
    }
    let view = Arc::new(view);
    let reads = Arc::new(AtomicU64::new(0));
    Resource {
        definition,
        handler: resource_fn(move |ctx, uri| {
            let read = reads.fetch_add(1, Ordering::Relaxed) + 1;
            let item = contents(&view, &ctx, &uri, mode, read);
            async move { Ok(vec![item]) }
        }),
    }
}

/// The read item of `view`: its page with the configuration injected, and (when the client
/// sees UI metadata) its `_meta.ui` with the origins filled in.
fn contents(view: &View, ctx: &RequestContext, uri: &str, mode: AppsMode, read: u64) -> Value {
    let origins = origins(ctx);
    let effective = view.read_ui.as_ref().or(view.list_ui.as_ref());
    let mut effective = effective.cloned().unwrap_or_else(|| json!({}));
    fill(&mut effective, origins.as_ref());
    let config = json!({
        "view": view.view,
        "variant": view.variant,
        "resourceUri": uri,
        "probes": {
            "declared": origins.as_ref().map(|o| o.0.clone()),
            "undeclared": origins.as_ref().map(|o| o.1.clone()),
        },
        "expect": expect(&effective, origins.as_ref()),
        "tools": {
            "submit": super::mode::SUBMIT, "appOnly": "apps_app_only", "modelOnly": "apps_model_only",
            "unknown": "apps_no_such_tool", "early": "apps_early_probe",
            "inputRequired": "apps_input_required", "task": "apps_task"
        },
        "read": read,
        "era": if ctx.scope.revision.has_handshake() { "handshake" } else { "2026-07-28" },
        "revision": ctx.scope.revision.as_str(),
    });
    let config = config.to_string().replace("</", "<\\/");
    let mut page = view
        .page
        .replace(BRIDGE_MARK, BRIDGE_JS)
        .replace(CONFIG_MARK, &config);
    if view.changing {
        page.push_str(&format!("\n<!-- read {read} -->\n"));
    }
    let mut item = Map::new();
    item.insert("uri".into(), uri.into());
    item.insert("mimeType".into(), view.mime.into());
    if view.blob {
        item.insert(
            "blob".into(),
            base64::engine::general_purpose::STANDARD
                .encode(page)
                .into(),
        );
    } else {
        item.insert("text".into(), page.into());
    }
    if let Some(ui) = &view.read_ui {
        if shows_ui(mode, ctx) {
            let mut ui = ui.clone();
            fill(&mut ui, origins.as_ref());
            item.insert("_meta".into(), json!({ "ui": ui }));
        }
    }
    Value::Object(item)
}

/// What the host's CSP must do with the probes, given the effective `_meta.ui`: each directive
/// lets the declared origin through only when it is declared; the undeclared origin never.
fn expect(ui: &Value, origins: Option<&(String, String)>) -> Value {
    let allows = |key: &str| {
        let declared = origins.map(|o| o.0.as_str());
        let listed = ui
            .pointer(&format!("/csp/{key}"))
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|d| d.as_str() == declared));
        if listed {
            "allowed"
        } else {
            "blocked"
        }
    };
    let permissions: Vec<&str> = ui
        .get("permissions")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    json!({
        "connectDeclared": allows("connectDomains"),
        "connectUndeclared": "blocked",
        "scriptDeclared": allows("resourceDomains"),
        "frameDeclared": allows("frameDomains"),
        "permissions": permissions,
        "displayModes": ["inline", "fullscreen"],
    })
}

/// The declared and undeclared origins of `ctx`'s server: its HTTP listener under the name it
/// is announced as and under its other loopback name. `None` without an HTTP listener.
fn origins(ctx: &RequestContext) -> Option<(String, String)> {
    let base = ctx.server.web_base.get()?;
    let other = if base.contains("://localhost:") {
        base.replacen("://localhost:", "://127.0.0.1:", 1)
    } else if let Some((scheme, rest)) = base.split_once("://") {
        let port = rest.rsplit_once(':').map_or("", |(_, p)| p);
        format!("{scheme}://localhost:{port}")
    } else {
        return None;
    };
    Some((base.clone(), other))
}

/// Fills a listed definition's `_meta.ui` with the origins of `ctx`'s server.
pub(super) fn fill_origins(ui: &mut Value, ctx: &RequestContext) {
    fill(ui, origins(ctx).as_ref());
}

/// Replaces the origin placeholders in `ui.csp`'s lists (dropped when there are no origins).
fn fill(ui: &mut Value, origins: Option<&(String, String)>) {
    let Some(csp) = ui.get_mut("csp").and_then(Value::as_object_mut) else {
        return;
    };
    for list in csp.values_mut() {
        if let Value::Array(items) = list {
            let filled: Vec<Value> = items
                .iter()
                .filter_map(|d| match (d.as_str(), origins) {
                    (Some(DECLARED), Some(o)) => Some(o.0.clone().into()),
                    (Some(UNDECLARED), Some(o)) => Some(o.1.clone().into()),
                    (Some(DECLARED | UNDECLARED), None) => None,
                    _ => Some(d.clone()),
                })
                .collect();
            *items = filled;
        }
    }
}
