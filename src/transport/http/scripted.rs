//! An HTTP answer an inbound hook scripted instead of serving a frame (a fault rule's
//! `http_status`): its status, its headers as given, and its body as `text/plain`; or an
//! authorization challenge, which the auth lab words.

use super::state::HttpState;
use crate::server::seams::HttpAnswer;
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The response for `answer`. A header that is not a valid HTTP header is left out (and said
/// on the diagnostics): the answer still goes out.
pub fn response(state: &HttpState, answer: &HttpAnswer) -> Response {
    if let Some(challenge) = &answer.challenge {
        return super::auth::resource::scripted(state.auth.as_deref(), challenge);
    }
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, answer.body.clone()).into_response();
    let headers = response.headers_mut();
    if answer.body.is_empty() {
        headers.remove(header::CONTENT_TYPE);
    }
    for (name, value) in &answer.headers {
        match (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            (Ok(name), Ok(value)) => {
                headers.append(name, value);
            }
            _ => tracing::warn!(%name, "a scripted answer's header is not valid HTTP; left out"),
        }
    }
    response
}
