//! A registered Python function as the core calls it (`_core.Invoker`): the package's invoker
//! for it, and whether it runs on the event-loop thread.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// `invoker(*args, context, reply)` for one registered function, and where it runs.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Invoker {
    /// The package's invoker: converts, calls the function (or its side effect), records the
    /// call, answers the reply.
    pub(super) call: Py<PyAny>,
    /// Whether calls go to the event-loop thread (an `async def` function) rather than a
    /// runner: read per call without the GIL, so the package can change it when a test puts
    /// a side effect of the other kind in the function's place.
    on_loop: AtomicBool,
}

impl Invoker {
    /// Whether the next call goes to the event-loop thread.
    pub(super) fn on_loop(&self) -> bool {
        self.on_loop.load(Ordering::Relaxed)
    }
}

#[pymethods]
impl Invoker {
    #[new]
    fn new(call: Py<PyAny>, on_loop: bool) -> Self {
        Self {
            call,
            on_loop: AtomicBool::new(on_loop),
        }
    }

    /// Whether calls run on the event-loop thread (`async def`) rather than a runner thread.
    #[getter(on_loop)]
    fn get_on_loop(&self) -> bool {
        self.on_loop()
    }

    #[setter(on_loop)]
    fn set_on_loop(&self, on_loop: bool) {
        self.on_loop.store(on_loop, Ordering::Relaxed);
    }
}
