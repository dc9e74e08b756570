//! What a server offers: tools, resources, resource templates, prompts and completion
//! providers, each a definition (what `*/list` shows) plus a handler (what runs, typed in
//! [`super::handler`]).
//!
//! Handlers are plain async closures over a `RequestContext`, so a Rust catalog entry and a
//! Python callable (wrapped by the binding) look the same to the dispatcher.

use super::handler::{
    CompleteFn, MethodFn, NotificationHook, PromptFn, ResourceFn, SessionHook, SubscribeHook,
    TemplateFn, ToolFn,
};
use super::skills::Skill;
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::protocol::capabilities::SKILLS_EXTENSION;
use crate::protocol::header_params::{self, HeaderParam};
use crate::protocol::methods::NotificationMethod;
use crate::FastIndexMap;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A tool: its `tools/list` entry, a compiled validator for its input, and its handler.
#[derive(Clone)]
pub struct Tool {
    /// The `tools/list` entry as the newest revision shows it (`name`, `title`, `inputSchema`,
    /// ...); older revisions get fields they do not define removed when listed.
    pub definition: Map<String, Value>,
    /// `inputSchema`, compiled once at registration: arguments are checked before the handler runs.
    pub validator: Arc<jsonschema::Validator>,
    /// What runs on `tools/call`.
    pub handler: ToolFn,
    /// The client capabilities (dotted paths, e.g. `"sampling"`, `"elicitation.url"`) a
    /// session must all have declared to see and call this tool; empty: every session.
    pub requires: Vec<Arc<str>>,
    /// Set for a tool that needs what only the handshake era has (a session the server can
    /// send requests on outside any input round, e.g. to poll a task the client runs): a
    /// stateless request neither sees nor calls it, whatever its capabilities say.
    pub handshake_only: bool,
    /// `execution.taskSupport`, read once from the definition: whether a call may (or must)
    /// run as a task.
    pub task_support: super::tasks::TaskSupport,
    /// Set for a tool whose handler starts its task itself (`tasks::start`) after gathering
    /// input over multi-round-trip requests, so the stateless era's answer is an
    /// `InputRequiredResult` first and a `CreateTaskResult` only on the last round.
    pub starts_own_task: bool,
    /// The arguments `inputSchema` mirrors into `Mcp-Param-*` headers (`x-mcp-header`), read
    /// once here: the stateless HTTP transport checks them on every call, and walking the
    /// schema per call cost about 500 instructions (callgrind) for tools that mirror none.
    pub header_params: Vec<HeaderParam>,
}

impl Tool {
    /// Shows (and serves) the tool only to sessions whose client declared `capability` (and
    /// every capability required before: the calls add up).
    pub fn requiring(mut self, capability: &str) -> Self {
        self.requires.push(capability.into());
        self
    }

    /// Shows (and serves) the tool only in the handshake era (see [`Tool::handshake_only`]).
    pub fn in_handshake_era_only(mut self) -> Self {
        self.handshake_only = true;
        self
    }

    /// Marks the tool as starting its own task (see [`Tool::starts_own_task`]).
    pub fn starting_its_own_task(mut self) -> Self {
        self.starts_own_task = true;
        self
    }

    /// Whether a client with these `capabilities` sees the tool, in the era `handshake` says.
    pub fn visible_to(&self, capabilities: &Value, handshake: bool) -> bool {
        (handshake || !self.handshake_only)
            && self.requires.iter().all(|path| {
                path.split('.')
                    .try_fold(capabilities, |v, key| v.get(key))
                    .is_some()
            })
    }

    /// Builds a tool from its definition (which must have a string `name` and an object
    /// `inputSchema`) and handler; fails when the schema does not compile.
    pub fn new(definition: Value, handler: ToolFn) -> Result<Self, Error> {
        let definition = definition_object(definition, "a tool")?;
        let name = string_field(&definition, "name");
        if name.is_empty() {
            return Err(Error::Definition(
                "a tool needs a non-empty string \"name\"".into(),
            ));
        }
        let schema = definition
            .get("inputSchema")
            .filter(|s| s.is_object())
            .ok_or_else(|| {
                Error::Definition(format!("tool {name:?} needs an object \"inputSchema\""))
            })?;
        let validator = jsonschema::validator_for(schema).map_err(|e| {
            Error::Definition(format!("tool {name:?} has an invalid inputSchema: {e}"))
        })?;
        let header_params = header_params::of_schema(schema);
        Ok(Self {
            task_support: super::tasks::TaskSupport::of(&definition),
            definition,
            validator: Arc::new(validator),
            handler,
            requires: Vec::new(),
            handshake_only: false,
            starts_own_task: false,
            header_params,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        string_field(&self.definition, "name")
    }
}

/// A concrete resource: its `resources/list` entry and how to read it.
#[derive(Clone)]
pub struct Resource {
    /// The `resources/list` entry (`uri`, `name`, `mimeType`, ...).
    pub definition: Map<String, Value>,
    /// What runs on `resources/read` of this URI.
    pub handler: ResourceFn,
}

impl Resource {
    /// The resource's URI.
    pub fn uri(&self) -> &str {
        string_field(&self.definition, "uri")
    }
}

/// A resource template: its `resources/templates/list` entry, the parsed template, and a reader.
#[derive(Clone)]
pub struct ResourceTemplate {
    /// The `resources/templates/list` entry (`uriTemplate`, `name`, ...).
    pub definition: Map<String, Value>,
    /// The parsed `uriTemplate`, used to match URIs on `resources/read`.
    pub template: super::uri_template::UriTemplate,
    /// What runs on `resources/read` of a matching URI.
    pub handler: TemplateFn,
}

impl ResourceTemplate {
    /// A template from its definition (which must have a string `uriTemplate`, parsed here
    /// into the matcher) and handler.
    pub fn new(definition: Value, handler: TemplateFn) -> Result<Self, Error> {
        let definition = definition_object(definition, "a template")?;
        let template =
            super::uri_template::UriTemplate::parse(string_field(&definition, "uriTemplate"))
                .map_err(Error::Definition)?;
        Ok(Self {
            definition,
            template,
            handler,
        })
    }
}

/// The map of a definition given as JSON, or an error naming `what` (e.g. "a tool") needed one.
fn definition_object(definition: Value, what: &str) -> Result<Map<String, Value>, Error> {
    match definition {
        Value::Object(m) => Ok(m),
        _ => Err(Error::Definition(format!(
            "{what} definition must be a JSON object"
        ))),
    }
}

/// A string member of a definition (`""` when absent or not a string).
fn string_field<'a>(definition: &'a Map<String, Value>, key: &str) -> &'a str {
    definition
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A prompt: its `prompts/list` entry and how to render it.
#[derive(Clone)]
pub struct Prompt {
    /// The `prompts/list` entry (`name`, `arguments`, ...).
    pub definition: Map<String, Value>,
    /// What runs on `prompts/get`.
    pub handler: PromptFn,
}

impl Prompt {
    /// The prompt's name.
    pub fn name(&self) -> &str {
        string_field(&self.definition, "name")
    }
    /// Names of the arguments marked `required`.
    pub fn required_arguments(&self) -> Vec<String> {
        self.definition
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|a| a.get("required").and_then(Value::as_bool) == Some(true))
            .filter_map(|a| a.get("name").and_then(Value::as_str).map(str::to_string))
            .collect()
    }
}

/// What a completion provider completes: `ref/prompt` by prompt name or `ref/resource` by
/// template URI, and one argument of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompletionKey {
    /// `"ref/prompt"` or `"ref/resource"`.
    pub ref_type: String,
    /// The prompt name or the resource template's `uriTemplate`.
    pub ref_name: String,
    /// The argument (or template variable) being completed.
    pub argument: String,
}

/// Everything registered, in registration order (the order `*/list` shows).
#[derive(Clone, Default)]
pub struct Registry {
    /// Tools by name.
    pub tools: FastIndexMap<String, Tool>,
    /// Resources by URI.
    pub resources: FastIndexMap<String, Resource>,
    /// Resource templates by `uriTemplate`.
    pub templates: FastIndexMap<String, ResourceTemplate>,
    /// Prompts by name.
    pub prompts: FastIndexMap<String, Prompt>,
    /// Completion providers.
    pub completions: FastIndexMap<CompletionKey, CompleteFn>,
    /// Run when a session completes its handshake (`notifications/initialized`): per-session
    /// timers, roots sync, announcing capability-gated tools.
    pub on_initialized: Vec<SessionHook>,
    /// Run on `resources/subscribe` (`true`) and `resources/unsubscribe` (`false`).
    pub on_subscribe: Vec<SubscribeHook>,
    /// Run on client notifications the core does not handle itself (e.g.
    /// `notifications/roots/list_changed`).
    pub on_notification: Vec<NotificationHook>,
    /// The `instructions` a catalog brings (used unless the server was given its own).
    pub instructions: Option<String>,
    /// The protocol extensions the catalogs implement (SEP-2133), by identifier, with their
    /// settings object: declared under `capabilities.extensions` in `server/discover` (e.g.
    /// `"io.modelcontextprotocol/skills": {}`).
    pub extensions: Map<String, Value>,
    /// The skills served (SEP-2640), by their `skill://<name>/SKILL.md` URI: what
    /// `skills/list`, `skills/get` and `resources/directory/read` answer from. Their files are
    /// also in [`Registry::resources`] (see [`Registry::add_skill`]).
    pub skills: FastIndexMap<String, Arc<Skill>>,
    /// Custom JSON-RPC methods (e.g. a vendor extension), by method name: `(context, params) ->
    /// result`.
    pub methods: FastIndexMap<String, MethodFn>,
    /// How unknown tool and prompt names are reported, for a catalog that reproduces another
    /// server's errors; `None`: the spec's `-32602`.
    pub dialect: Option<ErrorDialect>,
    /// Replaces the built-in paging of `resources/list` (cursor format and page size), for a
    /// catalog that reproduces another server's cursors; `None`: the built-in one.
    pub resource_pager: Option<super::pagination::Pager>,
    /// Set by a catalog that only exists in the handshake era (`everything-v1` reproduces a
    /// 2025 server): while it is loaded the server serves no stateless revision, so a 2026
    /// client gets the handshake era's `-32601` for `server/discover` and falls back.
    pub handshake_only: bool,
}

impl Registry {
    /// Serves `skill`: its files become resources (so a handshake-era client, which cannot
    /// call `skills/list`, still lists and reads them), it is listed by `skills/list`, and the
    /// skills extension is declared, with `directoryRead` since `resources/directory/read` is
    /// served. A skill with the same URI is replaced, its old files removed.
    pub fn add_skill(&mut self, skill: Skill) {
        if let Some(old) = self.skills.shift_remove(&skill.uri) {
            for file in &old.files {
                self.resources.shift_remove(&file.uri);
            }
        }
        for resource in skill.resources() {
            self.resources.insert(resource.uri().to_string(), resource);
        }
        self.extensions.insert(
            SKILLS_EXTENSION.into(),
            serde_json::json!({ "directoryRead": true }),
        );
        self.skills.insert(skill.uri.clone(), Arc::new(skill));
    }
}

/// Errors a catalog reports in another server's words (see [`Registry::dialect`]).
#[derive(Clone, Copy)]
pub struct ErrorDialect {
    /// The error for `tools/call` of an unknown tool.
    pub unknown_tool: fn(&str) -> ErrorObject,
    /// The error for `prompts/get` of an unknown prompt.
    pub unknown_prompt: fn(&str) -> ErrorObject,
}

/// Which `notifications/*/list_changed` a registry change calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/resources/list_changed` (resources and templates).
    Resources,
    /// `notifications/prompts/list_changed`.
    Prompts,
}

impl ListKind {
    /// The notification method.
    pub fn notification(self) -> &'static str {
        match self {
            Self::Tools => NotificationMethod::ToolListChanged,
            Self::Resources => NotificationMethod::ResourceListChanged,
            Self::Prompts => NotificationMethod::PromptListChanged,
        }
        .as_str()
    }
}
