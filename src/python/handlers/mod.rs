//! Python callables as registry handlers. The Python package wraps each user function in an
//! *invoker*, `invoker(*args, context, reply)` ([`Invoker`]): the arguments are Python objects
//! (a `dict` of the JSON arguments, a URI, a completion's value), the answer goes to a [`Reply`]
//! as JSON text. Where it runs ([`Dispatch`]): a sync function on a runner of the server's
//! blocking pool (`runners.rs`), which answers before the invoker returns; an `async def`
//! function on the package's event-loop thread (`on_loop.rs`), where the invoker starts it as a
//! task and returns a way to cancel it, and the task's done-callback answers later. No worker
//! thread of the runtime ever waits for the GIL.

mod context;
mod invoker;
mod on_loop;
mod reply;

pub use context::Context;
pub use invoker::Invoker;
pub use on_loop::LoopDrain;
pub use reply::Reply;

use super::runners::{Job, Runners, STALL};
use crate::server::context::RequestContext;
use crate::server::handler::{
    BoxFuture, CompleteFn, HandlerError, HandlerResult, ObjectFn, ResourceFn, TemplateFn,
};
use on_loop::LoopQueue;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use reply::Answer;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// Where a server's Python handlers run: its runners for sync functions, its event-loop queue
/// for `async def` ones.
pub struct Dispatch {
    /// The blocking-pool threads that run sync handlers.
    runners: Runners,
    /// The calls waiting for the event-loop thread.
    on_loop: LoopQueue,
    /// The server's runtime: a handler's `ask` waits on it.
    handle: Handle,
}

impl Dispatch {
    /// The dispatch of a server running on `handle` with `workers` worker threads: one runner
    /// drains at a time with the GIL, `workers` without it (a free-threaded interpreter).
    pub fn new(py: Python<'_>, handle: Handle, workers: usize) -> Arc<Self> {
        let parallel = if gil_enabled(py) { 1 } else { workers };
        let runners = Runners::new(parallel);
        Arc::new(Self {
            on_loop: LoopQueue::new(runners.clone()),
            runners,
            handle,
        })
    }

    /// Sets how the event-loop thread is reached: `schedule(drain)` must make that thread call
    /// `drain()` soon (`loop.call_soon_threadsafe`).
    pub fn set_loop(&self, schedule: Py<PyAny>) {
        self.on_loop.set_schedule(schedule);
    }

    /// Ends the runners (waiting at most `timeout` for the idle ones: call it detached from
    /// Python) and drops the calls not started yet.
    pub fn stop(&self, timeout: std::time::Duration) {
        self.on_loop.stop();
        self.runners.stop(timeout);
    }
}

/// Whether this interpreter runs with the GIL (`sys._is_gil_enabled()`, Python 3.13+; an
/// older one always does).
fn gil_enabled(py: Python<'_>) -> bool {
    let probe = || -> PyResult<bool> {
        py.import("sys")?
            .getattr("_is_gil_enabled")?
            .call0()?
            .extract()
    };
    probe().unwrap_or(true)
}

/// One argument of an invoker call, made a Python object on the thread that calls it.
pub enum Arg {
    /// A `str` (a URI, a completion's partial value).
    Text(String),
    /// A `dict` (tool or prompt arguments, method params, template variables).
    Object(Map<String, Value>),
}

impl Arg {
    /// Its size as JSON text in bytes (a `str` by its UTF-8 length), counted without building
    /// the text: what the package's record of the call counts against its handle's byte bound
    /// (`Handle.keep_calls_bytes`).
    fn json_bytes(&self) -> usize {
        match self {
            Self::Text(text) => text.len(),
            Self::Object(map) => {
                let mut counted = Counted(0);
                // Writing to a counter cannot fail, nor can a map of JSON values be refused.
                let _ = serde_json::to_writer(&mut counted, map);
                counted.0
            }
        }
    }

    fn to_python<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Self::Text(text) => Ok(PyString::new(py, text).into_any()),
            Self::Object(map) => Ok(pythonize::pythonize(py, map)?),
        }
    }
}

/// A writer that only counts the bytes written to it.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A tool, prompt or custom method served by `invoker(arguments, context, reply)`.
pub fn object(invoker: Py<Invoker>, dispatch: &Arc<Dispatch>) -> ObjectFn {
    let (invoker, dispatch) = (Arc::new(invoker), dispatch.clone());
    Arc::new(move |ctx, args| {
        call_invoker(
            invoker.clone(),
            dispatch.clone(),
            ctx,
            vec![Arg::Object(args)],
        )
    })
}

/// A resource read by `invoker(uri, context, reply)`, which answers a contents array.
pub fn resource(invoker: Py<Invoker>, dispatch: &Arc<Dispatch>) -> ResourceFn {
    let (invoker, dispatch) = (Arc::new(invoker), dispatch.clone());
    Arc::new(move |ctx, uri| {
        let call = call_invoker(invoker.clone(), dispatch.clone(), ctx, vec![Arg::Text(uri)]);
        Box::pin(async move { contents(call.await?) })
    })
}

/// A resource template read by `invoker(uri, variables, context, reply)`, which answers a
/// contents array.
pub fn template(invoker: Py<Invoker>, dispatch: &Arc<Dispatch>) -> TemplateFn {
    let (invoker, dispatch) = (Arc::new(invoker), dispatch.clone());
    Arc::new(move |ctx, uri, vars| {
        let args = vec![Arg::Text(uri), Arg::Object(vars)];
        let call = call_invoker(invoker.clone(), dispatch.clone(), ctx, args);
        Box::pin(async move { contents(call.await?) })
    })
}

/// A completion provider: `invoker(value, context_arguments, context, reply)` answers a JSON
/// array of strings.
pub fn completion(invoker: Py<Invoker>, dispatch: &Arc<Dispatch>) -> CompleteFn {
    let (invoker, dispatch) = (Arc::new(invoker), dispatch.clone());
    Arc::new(move |ctx, _argument, value, context| {
        let args = vec![Arg::Text(value), Arg::Object(context)];
        let call = call_invoker(invoker.clone(), dispatch.clone(), ctx, args);
        Box::pin(async move {
            serde_json::from_value::<Vec<String>>(call.await?).map_err(|e| {
                HandlerError::failed(format!("completions must be a list of strings: {e}"))
            })
        })
    })
}

/// A resource handler's JSON answer as a contents array.
fn contents(value: Value) -> HandlerResult<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(HandlerError::failed(format!(
            "a resource handler must return a contents array, got {other}"
        ))),
    }
}

/// Runs `invoker(*args, context, reply)` where it belongs (a runner, or the event-loop thread)
/// and awaits its answer. The request's cancellation (or this future being dropped) cancels a
/// still-running `async def` handler. An exception escaping the invoker is a failure with its
/// text (the invoker already turns user exceptions into answers; this is the safety net).
fn call_invoker(
    invoker: Arc<Py<Invoker>>,
    dispatch: Arc<Dispatch>,
    ctx: RequestContext,
    args: Vec<Arg>,
) -> BoxFuture<HandlerResult<Value>> {
    Box::pin(async move {
        let (tx, mut answer) = oneshot::channel();
        let cancelled = ctx.scope.cancel.clone();
        let context = Context {
            ctx,
            handle: dispatch.handle.clone(),
            arguments_bytes: args.iter().map(Arg::json_bytes).sum(),
        };
        // Made before the invoker runs: this future may be dropped (the request cancelled) while
        // the handler is still queued, and the slot then still cancels it once started.
        let running = Running {
            slot: Arc::new(Mutex::new(CancelSlot::default())),
            handle: dispatch.handle.clone(),
        };
        let slot = running.slot.clone();
        let on_loop = invoker.get().on_loop();
        // A panic in the invoker drops `tx`: the request then ends below.
        let job: Job = Box::new(move |py| start(py, &invoker, &args, context, tx, &slot));
        let ticket = if on_loop {
            dispatch.on_loop.submit(job);
            None
        } else {
            Some(dispatch.runners.submit(job))
        };
        let mut seen = dispatch.runners.taken();
        let answer = loop {
            let queued = ticket.is_some_and(|t| seen <= t);
            tokio::select! {
                answer = &mut answer => break answer,
                () = cancelled.cancelled() => return Err(HandlerError::failed("the request was cancelled")),
                // Still queued: if nothing left the queue meanwhile, the runners are blocked.
                () = tokio::time::sleep(STALL), if queued => {
                    let now = dispatch.runners.taken();
                    if now == seen {
                        dispatch.runners.rescue();
                    }
                    seen = now;
                }
            }
        };
        crate::lock::lock(&running.slot).cancel = None; // it answered: nothing left to cancel
        answer
            .unwrap_or_else(|_| Err(HandlerError::failed("the handler ended without answering")))?
            .into_value()
    })
}

/// Calls the invoker; an `async def` handler still running leaves its `cancel` callable in
/// `slot`, or is cancelled at once when its request already was (or nobody awaits it any more).
fn start(
    py: Python<'_>,
    invoker: &Py<Invoker>,
    args: &[Arg],
    context: Context,
    tx: oneshot::Sender<Answer>,
    slot: &Mutex<CancelSlot>,
) {
    let cancelled = context.ctx.scope.cancel.clone();
    let reply = Reply {
        tx: Mutex::new(Some(tx)),
    };
    // Cannot fail short of memory; the dropped sender then ends the request.
    let Ok(reply) = Py::new(py, reply) else {
        return;
    };
    let called = (|| -> PyResult<Option<Py<PyAny>>> {
        let mut call_args = Vec::with_capacity(args.len() + 2);
        for arg in args {
            call_args.push(arg.to_python(py)?);
        }
        call_args.push(Bound::new(py, context)?.into_any());
        call_args.push(reply.bind(py).clone().into_any());
        let returned = invoker
            .get()
            .call
            .bind(py)
            .call1(PyTuple::new(py, call_args)?)?;
        Ok((!returned.is_none()).then(|| returned.unbind()))
    })();
    match called {
        Ok(Some(cancel)) => {
            // Under the slot's lock, so a cancellation (or the awaiting future's drop) either
            // comes before and is seen here, or after and finds the callable in the slot. (The
            // check alone, before the future took the callable, lost a cancellation arriving in
            // between: tests/test_authoring.py's cancelled handler ran on, once under load.)
            let now = {
                let mut slot = crate::lock::lock(slot);
                if slot.gone || cancelled.is_cancelled() {
                    Some(cancel)
                } else {
                    slot.cancel = Some(cancel);
                    None
                }
            };
            if let Some(cancel) = now {
                cancel_in_python(py, &cancel);
            }
        }
        Ok(None) => {
            reply.get().send(Err(HandlerError::failed(
                "the handler returned without answering",
            )));
        }
        Err(e) => {
            reply
                .get()
                .send(Err(HandlerError::failed(e.value(py).to_string())));
        }
    }
}

/// Where a started `async def` handler's `cancel` callable waits, shared by the thread that
/// starts it and the future that awaits its answer.
#[derive(Default)]
struct CancelSlot {
    /// The invoker's `cancel` callable; `None` before it is started and once there is nothing
    /// to cancel.
    cancel: Option<Py<PyAny>>,
    /// Whether the awaiting future is gone: a handler started after that is cancelled at once.
    gone: bool,
}

/// The awaiting side of a started handler: dropped before it answered, it cancels the Python
/// task.
struct Running {
    /// The handler's cancel callable, once started.
    slot: Arc<Mutex<CancelSlot>>,
    /// To reach the blocking pool from `drop`.
    handle: Handle,
}

impl Drop for Running {
    fn drop(&mut self) {
        let cancel = {
            let mut slot = crate::lock::lock(&self.slot);
            slot.gone = true;
            slot.cancel.take()
        };
        if let Some(cancel) = cancel {
            // Attached on the blocking pool, never on this worker thread: waiting for the GIL
            // there would stall the connections it serves. A runtime shutting down refuses the
            // job; the event loop is stopped then anyway.
            drop(
                self.handle
                    .spawn_blocking(move || Python::attach(|py| cancel_in_python(py, &cancel))),
            );
        }
    }
}

/// Calls a handler's `cancel`; what it raises is reported as unraisable.
fn cancel_in_python(py: Python<'_>, cancel: &Py<PyAny>) {
    if let Err(e) = cancel.call0(py) {
        e.write_unraisable(py, None);
    }
}
