//! The one error funnel: core [`Error`]s become a small Python exception hierarchy (or the
//! builtin Python users expect, such as `OSError`).

use crate::error::Error;
use pyo3::prelude::*;

pyo3::create_exception!(
    _core,
    EverythingMcpError,
    pyo3::exceptions::PyException,
    "Base class of every everything-mcp error."
);
pyo3::create_exception!(
    _core,
    ConfigError,
    EverythingMcpError,
    "A server was configured wrongly."
);
pyo3::create_exception!(
    _core,
    ConnectionClosedError,
    EverythingMcpError,
    "The connection is closed."
);
pyo3::create_exception!(
    _core,
    ClientError,
    EverythingMcpError,
    "The client answered a server request with an error, lacks the capability, or did not answer in time."
);

pyo3::create_exception!(
    _core,
    InputRequired,
    pyo3::exceptions::PyBaseException,
    "Raised inside a handler's ask in the stateless era when the answer is not known yet: this round of the request is over (the client was answered input_required) and the handler runs again, from the top, with the answer. A BaseException, so `except Exception` does not swallow it."
);

/// Maps a core error to its Python exception.
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Definition(_) | Error::Config(_) | Error::Fault(_) | Error::Recording(_) => {
            ConfigError::new_err(e.to_string())
        }
        Error::Stopped => ConnectionClosedError::new_err(e.to_string()),
        // pyo3's own conversion: the `OSError` subclass and `errno` the error's kind has.
        Error::Io(io) => io.into(),
    }
}
