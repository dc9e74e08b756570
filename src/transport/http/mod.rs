//! HTTP transports on axum: Streamable HTTP at `/mcp` ([`streamable`]) and the legacy
//! HTTP+SSE transport at `/sse` + `/message` ([`legacy_sse`]), behind one DNS-rebinding guard
//! ([`guard`]) and CORS, plus `GET /health`.

pub mod apps_assets;
pub mod auth;
pub mod body;
pub mod config;
pub mod control;
pub mod dialect;
pub mod front;
pub mod guard;
pub mod headers;
pub mod kit;
pub mod lab;
pub mod legacy_sse;
pub mod mcp;
pub mod negotiation;
pub mod outbox;
pub mod peer;
pub mod recording;
pub mod scripted;
pub mod serving;
pub mod sessions;
pub mod shaping;
pub mod sse;
pub mod state;
pub mod stateless;
#[cfg(test)]
mod stateless_tests;
#[cfg(test)]
mod status_tests;
pub mod streamable;
#[cfg(test)]
mod test_support;

pub use config::{HttpConfig, DEFAULT_HOST};
pub use serving::{app, base_url, bind, listen, serve};
pub use state::HttpState;
