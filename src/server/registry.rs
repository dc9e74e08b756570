//! What a server offers: tools, resources, resource templates, prompts and completion
//! providers, each a definition (what `*/list` shows) plus a handler (what runs, typed in
//! [`super::handler`]). The types are in [`super::model`] (they name the context handlers
//! get); how they are built, checked and changed is here.
//!
//! Handlers are plain async closures over a `RequestContext`, so a Rust catalog entry and a
//! Python callable (wrapped by the binding) look the same to the dispatcher.

use super::handler::resource_fn;
use super::model::{InputValidator, RequestContext, TemplateFn, ToolFn};
use super::session::Session;
use super::skills::{self, Skill, SKILL_MD};
use super::tasks::task::TaskSupport;
use super::uri_template::UriTemplate;
use crate::error::Error;
use crate::jsonrpc::Message;
use crate::lock::lock;
use crate::protocol::capabilities::SKILLS_EXTENSION;
use crate::protocol::header_params;
use crate::protocol::method_names::NotificationMethod;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

pub use super::model::{
    CompletionKey, DefinitionView, ErrorDialect, Prompt, Registry, Resource, ResourceTemplate,
    Shown, Tool,
};
pub use crate::protocol::method_names::ListKind;

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
        Self::build(definition, handler, true)
    }

    /// A built-in catalog's tool: as [`Tool::new`], its schema compiled on the first call
    /// (see [`InputValidator`]).
    pub fn builtin(definition: Value, handler: ToolFn) -> Result<Self, Error> {
        Self::build(definition, handler, false)
    }

    fn build(definition: Value, handler: ToolFn, compile_now: bool) -> Result<Self, Error> {
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
        let validator = if compile_now {
            InputValidator::compiled(schema).map_err(|e| {
                Error::Definition(format!("tool {name:?} has an invalid inputSchema: {e}"))
            })?
        } else {
            InputValidator::on_first_use(schema.clone())
        };
        let header_params = header_params::of_schema(schema);
        Ok(Self {
            task_support: TaskSupport::of(&definition),
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

impl Resource {
    /// The resource's URI.
    pub fn uri(&self) -> &str {
        string_field(&self.definition, "uri")
    }
}

impl ResourceTemplate {
    /// A template from its definition (which must have a string `uriTemplate`, parsed here
    /// into the matcher) and handler.
    pub fn new(definition: Value, handler: TemplateFn) -> Result<Self, Error> {
        let definition = definition_object(definition, "a template")?;
        let template = UriTemplate::parse(string_field(&definition, "uriTemplate"))
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

impl Registry {
    /// What the client of `ctx` with `capabilities` (as the request declares them) sees of
    /// `definitions`, through the catalogs' [`Registry::definition_views`], in order; hidden ones
    /// left out.
    pub fn shown<'d>(
        &self,
        ctx: &RequestContext,
        capabilities: &Value,
        definitions: impl Iterator<Item = &'d Map<String, Value>>,
    ) -> Vec<Cow<'d, Map<String, Value>>> {
        if self.definition_views.is_empty() {
            return definitions.map(Cow::Borrowed).collect();
        }
        definitions
            .filter_map(|definition| {
                let mut seen = Cow::Borrowed(definition);
                for view in &self.definition_views {
                    match view(ctx, capabilities, &seen) {
                        Shown::As => {}
                        Shown::Hidden => return None,
                        Shown::Changed(changed) => seen = Cow::Owned(changed),
                    }
                }
                Some(seen)
            })
            .collect()
    }

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
        for resource in skill_resources(&skill) {
            self.resources.insert(resource.uri().to_string(), resource);
        }
        self.extensions.insert(
            SKILLS_EXTENSION.into(),
            serde_json::json!({ "directoryRead": true }),
        );
        self.skills.insert(skill.uri.clone(), Arc::new(skill));
    }
}

/// The resources that serve the skill's files (`resources/list` and `resources/read`, in
/// both eras). `SKILL.md` is named and described by its frontmatter, as the extension asks.
fn skill_resources(skill: &Skill) -> Vec<Resource> {
    skill
        .files
        .iter()
        .map(|f| {
            let mut definition = Map::new();
            definition.insert("uri".into(), f.uri.clone().into());
            if f.path == SKILL_MD {
                definition.insert("name".into(), skill.name.clone().into());
                definition.insert(
                    "description".into(),
                    skill.frontmatter["description"].clone(),
                );
            } else {
                definition.insert("name".into(), f.path.clone().into());
            }
            definition.insert("mimeType".into(), f.mime_type.into());
            definition.insert("size".into(), f.bytes.len().into());
            let contents = skills::contents(f);
            Resource {
                definition,
                handler: resource_fn(move |_, _| {
                    let contents = contents.clone();
                    async move { Ok(vec![contents]) }
                }),
            }
        })
        .collect()
}

/// The resources that exist for one session only (created at runtime, e.g. by a tool), listed
/// and readable only there, gone with the session (a session extension: the session itself
/// knows nothing of the registry).
#[derive(Default)]
struct OwnResources(Mutex<Vec<Resource>>);

impl Session {
    /// Adds (or replaces, by URI) a resource of this session only and sends it
    /// `notifications/resources/list_changed`.
    pub fn add_own_resource(&self, resource: Resource) {
        {
            let resources = self.extension::<OwnResources>();
            let mut own = lock(&resources.0);
            own.retain(|r| r.uri() != resource.uri());
            own.push(resource);
        }
        self.sink.send(&Message::notification(
            NotificationMethod::ResourceListChanged.as_str(),
            None,
        ));
    }

    /// This session's own resources.
    pub fn own_resources(&self) -> Vec<Resource> {
        lock(&self.extension::<OwnResources>().0).clone()
    }
}
