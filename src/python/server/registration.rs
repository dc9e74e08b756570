//! What a [`PyServer`] offers: Python callables registered as tools, resources, templates,
//! prompts, custom methods and completions, skills, and their removal.

use super::state::PyServer;
use crate::python::args;
use crate::python::errors::{to_py, ConfigError};
use crate::python::handlers::{self, Invoker};
use crate::server::registry::{CompletionKey, Prompt, Resource, ResourceTemplate, Tool};
use crate::server::skills::Skill;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

pub(super) fn tool(
    server: &PyServer,
    definition: &str,
    invoker: Py<Invoker>,
    requires: Option<String>,
) -> PyResult<()> {
    let handler = handlers::object(invoker, &server.dispatch);
    let mut tool = Tool::new(args::json(definition)?, handler).map_err(to_py)?;
    if let Some(path) = requires {
        tool = tool.requiring(&path);
    }
    server.core.add_tool(tool);
    Ok(())
}

pub(super) fn resource(server: &PyServer, definition: &str, invoker: Py<Invoker>) -> PyResult<()> {
    server.core.add_resource(Resource {
        definition: args::object(definition, "a resource")?,
        handler: handlers::resource(invoker, &server.dispatch),
    });
    Ok(())
}

pub(super) fn template(server: &PyServer, definition: &str, invoker: Py<Invoker>) -> PyResult<()> {
    let handler = handlers::template(invoker, &server.dispatch);
    let template = ResourceTemplate::new(args::json(definition)?, handler).map_err(to_py)?;
    server.core.add_template(template);
    Ok(())
}

pub(super) fn prompt(server: &PyServer, definition: &str, invoker: Py<Invoker>) -> PyResult<()> {
    server.core.add_prompt(Prompt {
        definition: args::object(definition, "a prompt")?,
        handler: handlers::object(invoker, &server.dispatch),
    });
    Ok(())
}

pub(super) fn method(server: &PyServer, name: &str, invoker: Py<Invoker>) -> PyResult<()> {
    server
        .core
        .add_method(name, handlers::object(invoker, &server.dispatch))
        .map_err(to_py)
}

pub(super) fn skill(server: &PyServer, files: Vec<(String, PyBackedBytes)>) -> PyResult<String> {
    let files = files.into_iter().map(|(p, b)| (p, b.to_vec())).collect();
    let skill = Skill::new(files).map_err(to_py)?;
    let uri = skill.uri.clone();
    server.core.add_skill(skill);
    Ok(uri)
}

pub(super) fn completion(
    server: &PyServer,
    ref_type: &str,
    ref_name: &str,
    argument: &str,
    invoker: Py<Invoker>,
) {
    let key = CompletionKey {
        ref_type: ref_type.into(),
        ref_name: ref_name.into(),
        argument: argument.into(),
    };
    server
        .core
        .add_completion(key, handlers::completion(invoker, &server.dispatch));
}

pub(super) fn remove(server: &PyServer, kind: &str, name: &str) -> PyResult<bool> {
    Ok(match kind {
        "tool" => server.core.remove_tool(name),
        "resource" => server.core.remove_resource(name),
        "prompt" => server.core.remove_prompt(name),
        other => {
            return Err(ConfigError::new_err(format!(
                "unknown kind {other:?} (tool, resource, prompt)"
            )))
        }
    })
}
