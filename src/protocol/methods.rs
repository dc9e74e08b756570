//! The MCP method names of the handshake era (2024-11-05 to 2025-11-25), by who sends them.

/// Requests a client sends a server: every one this server serves. Anything else is `-32601`
/// (unless registered as a custom method), before and after `initialize`: a 2.x client probes
/// with `server/discover` and must not wait.
pub const CLIENT_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// Requests a server sends a client.
pub const SERVER_REQUESTS: &[&str] =
    &["sampling/createMessage", "elicitation/create", "roots/list"];

/// Notifications, either way.
pub const NOTIFICATIONS: &[&str] = &[
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/roots/list_changed",
];

/// Every method name above.
pub fn all() -> impl Iterator<Item = &'static str> {
    CLIENT_REQUESTS
        .iter()
        .chain(SERVER_REQUESTS)
        .chain(NOTIFICATIONS)
        .copied()
}
