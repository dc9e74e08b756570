//! The MCP method names, as types: one enum per direction ([`ClientRequest`], [`ServerRequest`],
//! [`NotificationMethod`]). The dispatcher routes a [`ClientRequest`] with an exhaustive `match`
//! (`server::methods::call`), so a method added here without a handler does not compile, where a
//! name added to a list of strings would silently have become `-32601`. The served-method list,
//! the recorder's shared names and every notification the server sends are derived from these.

use serde_json::Value;

/// Defines an enum of method names: each variant maps to its wire name (`as_str`) and back
/// (`parse`), and `ALL` lists every variant in declaration order.
macro_rules! method_names {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The method name on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $wire,)*
                }
            }

            /// The variant named `name` on the wire, if any (case-sensitive, as JSON-RPC).
            pub fn parse(name: &str) -> Option<Self> {
                match name {
                    $($wire => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

method_names! {
    /// Requests a client sends a server: every one this server serves. Anything else is `-32601`
    /// (unless registered as a custom method), before and after `initialize`: a 2.x client
    /// probes with `server/discover` and must not wait.
    pub enum ClientRequest {
        /// Opens a handshake-era session and negotiates the revision.
        Initialize = "initialize",
        /// Liveness check, answered `{}` in any phase.
        Ping = "ping",
        /// Sets the session's minimum level for `notifications/message`.
        SetLogLevel = "logging/setLevel",
        /// Lists the tools the client can see.
        ListTools = "tools/list",
        /// Runs a tool.
        CallTool = "tools/call",
        /// Lists concrete resources.
        ListResources = "resources/list",
        /// Lists resource templates.
        ListResourceTemplates = "resources/templates/list",
        /// Reads a resource (concrete or templated).
        ReadResource = "resources/read",
        /// Subscribes to `notifications/resources/updated` for one URI.
        Subscribe = "resources/subscribe",
        /// Ends such a subscription.
        Unsubscribe = "resources/unsubscribe",
        /// Lists prompts.
        ListPrompts = "prompts/list",
        /// Renders a prompt.
        GetPrompt = "prompts/get",
        /// Completes a prompt argument or a template variable.
        Complete = "completion/complete",
        /// Stateless era: what the server is and serves (replaces `initialize`).
        Discover = "server/discover",
        /// Stateless era: a long-lived request whose stream carries the notifications the
        /// client asked for (replaces the standalone stream and `resources/subscribe`).
        Listen = "subscriptions/listen",
        /// A task's status (both eras; the stateless era inlines its outcome).
        GetTask = "tasks/get",
        /// Handshake era: a task's outcome, blocking until it settles.
        TaskResult = "tasks/result",
        /// Handshake era: the session's tasks, paged.
        ListTasks = "tasks/list",
        /// Cancels a task (both eras).
        CancelTask = "tasks/cancel",
        /// Stateless era (tasks extension): answers a task's pending `inputRequests`.
        UpdateTask = "tasks/update",
        /// Skills extension (SEP-2640): the skills the server serves, each with its manifest.
        ListSkills = "skills/list",
        /// Skills extension: one skill's entry, by its `SKILL.md` URI.
        GetSkill = "skills/get",
        /// Skills extension: the direct children of a directory resource (a skill's folder).
        ReadDirectory = "resources/directory/read",
    }
}

impl ClientRequest {
    /// Whether the handshake era (2024-11-05 … 2025-11-25) has this method.
    pub const fn in_handshake_era(self) -> bool {
        !matches!(self, Self::Discover | Self::Listen | Self::UpdateTask)
            && self.extension().is_none()
    }

    /// The protocol extension that brings this method, if any: it is served only while the
    /// registry declares that extension (`-32601` otherwise), and only in the stateless era,
    /// the one whose `capabilities.extensions` can declare it.
    pub const fn extension(self) -> Option<&'static str> {
        match self {
            Self::ListSkills | Self::GetSkill | Self::ReadDirectory => {
                Some(super::capabilities::SKILLS_EXTENSION)
            }
            _ => None,
        }
    }

    /// Whether the stateless era (2026-07-28) has this method: it removed `initialize`,
    /// `ping`, `logging/setLevel` and `resources/(un)subscribe`, and its tasks extension has
    /// no `tasks/result` or `tasks/list` (SEP-2663).
    pub const fn in_stateless_era(self) -> bool {
        !matches!(
            self,
            Self::Initialize
                | Self::Ping
                | Self::SetLogLevel
                | Self::Subscribe
                | Self::Unsubscribe
                | Self::TaskResult
                | Self::ListTasks
        )
    }

    /// Whether a stateless result of this method carries cache hints (`ttlMs`, `cacheScope`).
    pub const fn is_cacheable(self) -> bool {
        matches!(
            self,
            Self::Discover
                | Self::ListTools
                | Self::ListPrompts
                | Self::ListResources
                | Self::ListResourceTemplates
                | Self::ReadResource
                | Self::ListSkills
                | Self::GetSkill
                | Self::ReadDirectory
        )
    }

    /// Whether a stateless result of this method may ask the client for input
    /// (`resultType: "input_required"`).
    pub const fn may_require_input(self) -> bool {
        matches!(self, Self::CallTool | Self::GetPrompt | Self::ReadResource)
    }
}

method_names! {
    /// Requests a server sends a client (through `RequestContext::ask_client`).
    pub enum ServerRequest {
        /// Asks the client's LLM.
        CreateMessage = "sampling/createMessage",
        /// Asks the user, through the client (form or URL mode).
        Elicit = "elicitation/create",
        /// Asks the client for its roots.
        ListRoots = "roots/list",
        /// Handshake era: polls a task the client runs (it answered a task-augmented
        /// `sampling/createMessage` or `elicitation/create` with a `CreateTaskResult`). A
        /// client sends the same method to a server: tasks go both ways.
        GetTask = "tasks/get",
        /// Handshake era: the outcome of a task the client runs (see [`ServerRequest::GetTask`]).
        TaskResult = "tasks/result",
    }
}

impl ServerRequest {
    /// Whether a server may ask this as a question for the client to answer (an input request
    /// of a stateless request or task): sampling, elicitation and roots are; polling the
    /// client's own tasks is not, it only exists where the server can send requests.
    pub const fn is_question(self) -> bool {
        matches!(self, Self::CreateMessage | Self::Elicit | Self::ListRoots)
    }
}

method_names! {
    /// Notifications, either way.
    pub enum NotificationMethod {
        /// Client → server: the handshake is complete.
        Initialized = "notifications/initialized",
        /// Either way: a request is cancelled.
        Cancelled = "notifications/cancelled",
        /// Either way: progress of a request that carried a `progressToken`.
        Progress = "notifications/progress",
        /// Server → client: a log message.
        Message = "notifications/message",
        /// Server → client: a subscribed resource changed.
        ResourceUpdated = "notifications/resources/updated",
        /// Server → client: the resource (or template) list changed.
        ResourceListChanged = "notifications/resources/list_changed",
        /// Server → client: the tool list changed.
        ToolListChanged = "notifications/tools/list_changed",
        /// Server → client: the prompt list changed.
        PromptListChanged = "notifications/prompts/list_changed",
        /// Client → server: the client's roots changed.
        RootsListChanged = "notifications/roots/list_changed",
        /// Server → client, stateless era: the first frame of a `subscriptions/listen` stream,
        /// with the filter the server honours.
        SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged",
        /// Server → client, handshake era: a task's status changed (params: the task).
        TaskStatus = "notifications/tasks/status",
        /// Server → client, stateless era (tasks extension): a task's state, on a listen stream.
        Tasks = "notifications/tasks",
    }
}

/// Every method name above (a name used both ways, as `tasks/get`, comes once per direction).
pub fn all() -> impl Iterator<Item = &'static str> {
    let client = ClientRequest::ALL.iter().map(|m| m.as_str());
    let server = ServerRequest::ALL.iter().map(|m| m.as_str());
    let notes = NotificationMethod::ALL.iter().map(|m| m.as_str());
    client.chain(server).chain(notes)
}

/// The client capability (a dotted path) a server → client request `method` needs and
/// `capabilities` lacks, if any: `sampling` (`sampling.tools` when the request offers tools), `elicitation`
/// (`elicitation.url` for URL mode; form mode is implied by a bare `elicitation: {}`),
/// `roots`.
pub fn missing_for_request(
    method: &str,
    params: Option<&Value>,
    capabilities: &Value,
) -> Option<&'static str> {
    let has = |path: &str| {
        path.split('.')
            .try_fold(capabilities, |v, key| v.get(key))
            .is_some()
    };
    let param = |key: &str| params.and_then(|p| p.get(key));
    let url_mode = param("mode").and_then(Value::as_str) == Some("url");
    let request = ServerRequest::parse(method);
    let needed: &[&'static str] = match request {
        Some(ServerRequest::CreateMessage) if param("tools").is_some() => {
            &["sampling", "sampling.tools"]
        }
        Some(ServerRequest::CreateMessage) => &["sampling"],
        Some(ServerRequest::Elicit) if url_mode => &["elicitation", "elicitation.url"],
        Some(ServerRequest::Elicit) => &["elicitation"],
        Some(ServerRequest::ListRoots) => &["roots"],
        // Only a client that declared tasks runs any (and answers for them).
        Some(ServerRequest::GetTask | ServerRequest::TaskResult) => &["tasks"],
        None => &[],
    };
    let missing = needed.iter().copied().find(|c| !has(c));
    // A client that lists elicitation modes, but not `form`, cannot take a form.
    if missing.is_none() && request == Some(ServerRequest::Elicit) && !url_mode {
        let modes = capabilities.get("elicitation").and_then(Value::as_object);
        if modes.is_some_and(|m| !m.is_empty() && !m.contains_key("form")) {
            return Some("elicitation.form");
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_variant() {
        for m in ClientRequest::ALL {
            assert_eq!(ClientRequest::parse(m.as_str()), Some(*m));
        }
        for m in ServerRequest::ALL {
            assert_eq!(ServerRequest::parse(m.as_str()), Some(*m));
        }
        for m in NotificationMethod::ALL {
            assert_eq!(NotificationMethod::parse(m.as_str()), Some(*m));
        }
        assert_eq!(ClientRequest::parse("unknown/method"), None);
        assert_eq!(ClientRequest::parse("Tools/List"), None);
    }

    #[test]
    fn names_are_unique() {
        use std::collections::HashSet;
        let client: Vec<_> = ClientRequest::ALL.iter().map(|m| m.as_str()).collect();
        let server: Vec<_> = ServerRequest::ALL.iter().map(|m| m.as_str()).collect();
        let notes: Vec<_> = NotificationMethod::ALL.iter().map(|m| m.as_str()).collect();
        // Unique within each direction.
        for names in [&client, &server, &notes] {
            let unique: HashSet<_> = names.iter().collect();
            assert_eq!(names.len(), unique.len(), "{names:?}");
        }
        // Only the tasks methods are requested both ways (a task runs on either side), and no
        // request shares a name with a notification.
        let client: HashSet<_> = client.into_iter().collect();
        let server: HashSet<_> = server.into_iter().collect();
        let mut both: Vec<_> = client.intersection(&server).copied().collect();
        both.sort_unstable();
        assert_eq!(both, ["tasks/get", "tasks/result"]);
        assert!(notes
            .iter()
            .all(|n| !client.contains(n) && !server.contains(n)));
    }
}

/// The lists that announce their changes (`notifications/*/list_changed`): what a registry
/// change calls for, and what a `subscriptions/listen` filter can ask to hear of.
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
