//! `simulate-research-query`: the reference's Tasks demo. It runs only as a task
//! (`taskSupport: "required"`): four one-second stages, each announced as the task's status
//! message; when the query is ambiguous (and the client can be asked), the task goes
//! `input_required` and asks the user to pick an interpretation; the outcome is a markdown
//! report. The texts are the reference's, since clients assert on them.
//!
//! The tool starts its own task ([`tasks::escalate`]) so the `CreateTaskResult` already carries
//! the first stage's status message, as the reference's does. The asking goes through
//! `RequestContext::elicit`, which inside a task is a related-task request (handshake era: on
//! the `tasks/result` stream over HTTP, inline on stdio) or an entry of the task's
//! `inputRequests` answered by `tasks/update` (stateless era).

use super::shared::{annotations, definition};
use crate::catalog::elicitation::truthy;
use crate::catalog::{js_string, string_arg, Options};
use crate::clock::Timer;
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::server::context::RequestContext;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Tool;
use crate::server::tasks::{self, Status};
use serde_json::{json, Value};
use std::time::Duration;

/// The tool's name.
const NAME: &str = "simulate-research-query";

/// The stages, in order; each is announced as `<stage>...`.
const STAGES: [&str; 4] = [
    "Gathering sources",
    "Analyzing content",
    "Synthesizing findings",
    "Generating report",
];

/// The stage at which an ambiguous query asks for clarification (the reference's index 2).
const CLARIFY_AT: usize = 2;

/// How long each stage takes (the reference's 1 s; `--tick-ms` replaces it, so tests need not
/// wait four seconds a run).
const STAGE_DURATION: Duration = Duration::from_secs(1);

/// `simulate-research-query {topic, ambiguous=false}`.
pub fn simulate_research_query(options: &Options) -> Result<Tool, Error> {
    let stage = options.tick(STAGE_DURATION);
    let input = json!({
        "type": "object",
        "properties": {
            "topic": { "type": "string", "description": "The research topic to investigate" },
            "ambiguous": {
                "type": "boolean",
                "default": false,
                "description": "Simulate an ambiguous query that requires clarification (triggers input_required status)"
            }
        },
        "required": ["topic"]
    });
    let definition = definition(
        NAME,
        "Simulate Research Query",
        "Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.",
        input,
        annotations(false, false, false, false),
    );
    let tool = definition
        .task_support("required")
        .serve(tool_fn(move |ctx, args| async move {
            let topic = string_arg(&args, "topic");
            // The reference asks only a client that declared elicitation; others get the
            // plain run even when `ambiguous` is set.
            let ambiguous = args.get("ambiguous").and_then(Value::as_bool) == Some(true)
                && ctx.client_capabilities().get("elicitation").is_some();
            let first = Some(format!("{}...", STAGES[0]));
            // Busy from here: a manual clock advanced once the task is created waits for the
            // work's first stage to start.
            let timer = ctx.server.clock.busy_timer();
            tasks::escalate(&ctx, NAME, Value::Object(args), first, move |ctx| {
                research(ctx, topic, ambiguous, stage, timer)
            })
            .await
            .map_err(HandlerError::Rpc)
        }))?;
    Ok(tool.starting_its_own_task())
}

/// The task's work: the stages, the clarification when ambiguous, the report.
async fn research(
    ctx: RequestContext,
    topic: String,
    ambiguous: bool,
    stage: Duration,
    mut timer: Timer,
) -> Result<Value, ErrorObject> {
    let mut clarification: Option<String> = None;
    for (i, name) in STAGES.iter().enumerate() {
        // The first stage's status is the one the task was created with (and announced with,
        // before the CreateTaskResult): announcing it again would be one notification more
        // than the reference sends.
        if i > 0 {
            ctx.task_status(Some(Status::Working), Some(format!("{name}...")));
        }
        if i == CLARIFY_AT && ambiguous && clarification.is_none() {
            ctx.task_status(
                Some(Status::InputRequired),
                Some(format!(
                    "Found multiple interpretations for \"{topic}\". Requesting clarification..."
                )),
            );
            timer.idle();
            let chosen = clarify(&ctx, &topic).await;
            ctx.task_status(
                Some(Status::Working),
                Some(format!("Continuing with interpretation: \"{chosen}\"...")),
            );
            clarification = Some(chosen);
        }
        tokio::select! {
            () = timer.sleep(stage) => {}
            () = ctx.cancelled() => return Err(ErrorObject::internal("the research was cancelled")),
        }
    }
    Ok(json!({ "content": [{ "type": "text", "text": report(&topic, clarification.as_deref()) }] }))
}

/// Asks the user which interpretation of `topic` they mean; what to go on with, in the
/// reference's words for every outcome.
async fn clarify(ctx: &RequestContext, topic: &str) -> String {
    let params = json!({
        "message": format!("The research query \"{topic}\" could have multiple interpretations. Please clarify what you're looking for:"),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "interpretation": {
                    "type": "string",
                    "title": "Clarification",
                    "description": "Which interpretation of the topic do you mean?",
                    "oneOf": interpretations(topic)
                }
            },
            "required": ["interpretation"]
        }
    });
    match ctx.elicit(params).await {
        Ok(answer) => match answer.get("action").and_then(Value::as_str) {
            Some("accept") if truthy(answer.get("content")) => {
                let chosen = answer.pointer("/content/interpretation");
                if truthy(chosen) {
                    chosen.map(js_string).unwrap_or_default()
                } else {
                    "User accepted without selection".into()
                }
            }
            Some("decline") => "User declined - using default interpretation".into(),
            _ => "User cancelled - using default interpretation".into(),
        },
        Err(e) => {
            tracing::warn!(tool = NAME, "Elicitation failed: {}", e.message);
            "technical (default - elicitation unavailable)".into()
        }
    }
}

/// The choices offered for `topic`: Python's three meanings when it mentions Python, three
/// generic perspectives otherwise.
fn interpretations(topic: &str) -> Value {
    if topic.to_lowercase().contains("python") {
        json!([
            { "const": "programming", "title": "Python programming language" },
            { "const": "snake", "title": "Python snake species" },
            { "const": "comedy", "title": "Monty Python comedy group" }
        ])
    } else {
        json!([
            { "const": "technical", "title": "Technical/scientific perspective" },
            { "const": "historical", "title": "Historical perspective" },
            { "const": "current", "title": "Current events/news perspective" }
        ])
    }
}

/// The markdown report, line for line the reference's (blank lines included).
fn report(topic: &str, clarification: Option<&str>) -> String {
    let heading = clarification.map_or_else(|| topic.to_string(), |c| format!("{topic} ({c})"));
    let clarification_line = clarification
        .map(|c| format!("- **Clarification**: {c}"))
        .unwrap_or_default();
    let stages: Vec<String> = STAGES
        .iter()
        .enumerate()
        .map(|(i, s)| format!("- Stage {}: {s} ✓", i + 1))
        .collect();
    let asked = if clarification.is_some() {
        "`input_required` → `working` → "
    } else {
        ""
    };
    let flow = clarification.map_or_else(String::new, |c| {
        let outcome = if c.contains("unavailable") {
            "**Note:** Elicitation failed and a default interpretation was used.".to_string()
        } else {
            format!("After receiving clarification (\"{c}\"), the task resumed processing and completed.")
        };
        format!(
            "**Elicitation Flow:**\n\
             When the query was ambiguous, the server sent an `elicitation/create` request\n\
             to the client. The task status changed to `input_required` while awaiting user input.\n\
             {outcome}\n"
        )
    });
    format!(
        "# Research Report: {heading}\n\
         \n\
         ## Research Parameters\n\
         - **Topic**: {topic}\n\
         {clarification_line}\n\
         \n\
         ## Synthesis\n\
         This research query was processed through {count} stages:\n\
         {stages}\n\
         \n\
         ---\n\
         \n\
         ## About This Demo (SEP-1686: Tasks)\n\
         \n\
         This tool demonstrates MCP's task-based execution pattern for long-running operations:\n\
         \n\
         **Task Lifecycle Demonstrated:**\n\
         1. `tools/call` with `task` parameter → Server returns `CreateTaskResult` (not the final result)\n\
         2. Client polls `tasks/get` → Server returns current status and `statusMessage`\n\
         3. Status progressed: `working` → {asked}`completed`\n\
         4. Client calls `tasks/result` → Server returns this final result\n\
         \n\
         {flow}\n\
         **Key Concepts:**\n\
         - Tasks enable \"call now, fetch later\" patterns\n\
         - `statusMessage` provides human-readable progress updates\n\
         - Tasks have TTL (time-to-live) for automatic cleanup\n\
         - `pollInterval` suggests how often to check status\n\
         - Elicitation requests use `relatedTask` to queue via tasks/result (works on all transports)\n\
         \n\
         *This is a simulated research report from the Everything MCP Server.*\n",
        count = STAGES.len(),
        stages = stages.join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::{interpretations, report};

    #[test]
    fn the_plain_report_keeps_the_reference_blank_lines() {
        let text = report("rust", None);
        assert!(text.starts_with(
            "# Research Report: rust\n\n## Research Parameters\n- **Topic**: rust\n\n\n## Synthesis\n"
        ));
        assert!(text.contains("- Stage 4: Generating report ✓\n\n---\n"));
        assert!(text.contains("`working` → `completed`\n4. Client calls"));
        assert!(text.contains("final result\n\n\n**Key Concepts:**"));
        assert!(text
            .ends_with("*This is a simulated research report from the Everything MCP Server.*\n"));
    }

    #[test]
    fn a_clarified_report_tells_the_elicitation_flow() {
        let text = report("python", Some("snake"));
        assert!(text.starts_with("# Research Report: python (snake)\n"));
        assert!(text.contains("- **Topic**: python\n- **Clarification**: snake\n\n## Synthesis"));
        assert!(text.contains("`working` → `input_required` → `working` → `completed`"));
        assert!(text.contains("awaiting user input.\nAfter receiving clarification (\"snake\"), the task resumed processing and completed.\n\n**Key Concepts:**"));
        let failed = report("x", Some("technical (default - elicitation unavailable)"));
        assert!(failed.contains("user input.\n**Note:** Elicitation failed and a default interpretation was used.\n\n**Key"));
    }

    #[test]
    fn python_topics_get_python_meanings() {
        assert_eq!(interpretations("Learn PYTHON")[1]["const"], "snake");
        assert_eq!(interpretations("rust")[2]["const"], "current");
    }
}
