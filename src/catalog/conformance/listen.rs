//! The suite's `subscriptions/listen` triggers (2026-07-28, SEP-2575): tools that publish a
//! list change, which must reach every open listen stream whose filter asked for it (and, as
//! any runtime change does, every handshake-era session).

use super::shared::plain;
use crate::catalog::text_result;
use crate::error::Error;
use crate::server::handler::tool_fn;
use crate::server::registry::{ListKind, Tool};

/// The two triggers, with the texts of the suite's reference server.
pub(super) fn tools() -> Result<Vec<Tool>, Error> {
    Ok(vec![
        trigger(
            "test_trigger_tool_change",
            "Publishes a tools/list_changed event to open listen streams.",
            ListKind::Tools,
            "Tool list change published.",
        )?,
        trigger(
            "test_trigger_prompt_change",
            "Publishes a prompts/list_changed event to open listen streams.",
            ListKind::Prompts,
            "Prompt list change published.",
        )?,
    ])
}

/// A tool that announces `kind` as changed and says so. The list itself does not change: the
/// suite checks the notification, and a list that really changed would disturb its other
/// checks.
fn trigger(
    name: &str,
    description: &str,
    kind: ListKind,
    text: &'static str,
) -> Result<Tool, Error> {
    plain(name, description).serve(tool_fn(move |ctx, _| async move {
        ctx.server.notify_list_changed(kind);
        Ok(text_result(text.into()))
    }))
}
