"""How a registered function runs and answers: a sync one on the thread that calls its invoker
(a runner of the server's blocking pool), an ``async def`` one as a task on the server's
event-loop thread (:class:`LoopThread`, started by the first one; the core calls its invoker
there); the call is recorded on its
:class:`~everything_mcp.authoring.handle.Handle` and the value or the error goes back through a
``_core.Reply``."""

from __future__ import annotations

import inspect
import json
import logging
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from .. import _core
from .context import Context
from .handle import Call, Handle
from .results import tool_json
from .rpc_error import RpcError

log = logging.getLogger("everything_mcp")

Cancel = Callable[[], None] | None
"""What an invoker returns: how to cancel an ``async def`` handler still running (see
:func:`run_handler`)."""


class LoopThread:
    """The event loop that runs ``async def`` handlers, on a daemon thread of its own."""

    def __init__(self) -> None:
        import asyncio

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="everything-mcp-asyncio", daemon=True)
        self.thread.start()

    def run(self, awaitable: Any, done: Callable[[Any, BaseException | None], None]) -> Callable[[], None]:
        """Runs ``awaitable`` as a task on the loop and calls ``done(value, error)`` there when it
        ends; returns a thread-safe ``cancel()``."""
        import asyncio

        tasks: list[asyncio.Task[Any]] = []

        def finished(task: asyncio.Task[Any]) -> None:
            if task.cancelled():
                done(None, asyncio.CancelledError("the request was cancelled"))
            elif (error := task.exception()) is not None:
                done(None, error)
            else:
                done(task.result(), None)

        def start() -> None:
            task = self.loop.create_task(_awaitable(awaitable))
            task.add_done_callback(finished)
            tasks.append(task)

        def cancel_on_loop() -> None:
            for task in tasks:  # `start` ran first: callbacks run in the order they were scheduled
                task.cancel()

        def cancel() -> None:
            try:
                self.loop.call_soon_threadsafe(cancel_on_loop)
            except RuntimeError:  # the loop is closed: the task ended with it
                pass

        if threading.get_ident() == self.thread.ident:
            start()  # called by the loop (the core's drain of queued calls): no hop
        else:
            self.loop.call_soon_threadsafe(start)
        return cancel

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=2)
        if not self.thread.is_alive():
            self.loop.close()


class HandlerLoop:
    """A server's :class:`LoopThread`, started by the first ``async def`` handler that needs it
    (a server without one never starts a thread) and stopped with the server."""

    def __init__(self) -> None:
        self._thread: LoopThread | None = None
        self._lock = threading.Lock()
        self._watched: _core.LoopDrain | None = None

    def __call__(self) -> LoopThread:
        """The loop thread, started now if it is not running."""
        with self._lock:
            if self._thread is None:
                self._thread = LoopThread()
            return self._thread

    def schedule(self, drain: _core.LoopDrain) -> None:
        """Makes the loop thread (started now if it is not running) call ``drain()``: how the
        core starts the ``async def`` calls it queued for it. The first time, the loop also
        starts watching the drain's descriptor, so later calls wake it without this."""
        thread = self()
        thread.loop.call_soon_threadsafe(drain)
        fd = drain.fileno()
        with self._lock:
            if self._watched is not None or fd is None:
                return
            self._watched = drain
        thread.loop.call_soon_threadsafe(_watch, thread.loop, fd, drain)

    def stop(self) -> None:
        """Stops the loop thread if it runs; a later handler starts a new one."""
        with self._lock:
            if self._watched is not None:
                self._watched.watched(False)  # calls go through schedule() again
                self._watched = None
            if self._thread is not None:
                self._thread.stop()
                self._thread = None


def _watch(loop: Any, fd: int, drain: _core.LoopDrain) -> None:
    """On the loop: run ``drain`` whenever ``fd`` is readable, and tell the core to wake the loop
    that way from now on (a proactor loop, on Windows, cannot: ``schedule`` goes on)."""
    try:
        loop.add_reader(fd, drain)
    except NotImplementedError:
        return
    drain.watched(True)


_NOT_AWAITABLE = frozenset((str, dict, list, int, float, bool, type(None), bytes))
"""Return types a handler's value is never awaitable as: checked before the slower
``inspect.isawaitable``."""


def run_handler(
    handle: Handle,
    loop: Callable[[], LoopThread],
    kwargs: dict[str, Any],
    core_ctx: _core.Context,
    ctx_param: str | None,
    reply: _core.Reply,
    convert: Callable[[Any], str],
) -> Callable[[], None] | None:
    """Calls the handle's function (or side effect), records the call, and answers ``reply``
    with ``convert(value)`` (JSON text) or the error it raised. The function gets a
    :class:`Context` of ``core_ctx`` as ``ctx_param`` when it asks for one.

    A sync function has answered when this returns None. An ``async def`` function becomes a task
    on the loop thread (started here when this runs there) whose done-callback answers; this
    returns its ``cancel()``, which the core calls when the request is cancelled. No thread waits
    for the task."""
    record = Call(
        arguments=dict(kwargs),
        session_id=core_ctx.session_id,
        started=time.monotonic(),
        size=core_ctx.arguments_bytes,
    )
    if ctx_param:
        kwargs[ctx_param] = Context(core_ctx)
    handle._record(record)

    def finish(value: Any, error: BaseException | None) -> None:
        record.ended = time.monotonic()
        if error is None:
            record.result = value
        else:
            record.error = error
        answer(reply, convert, value, error, lambda size: handle._answered(record, size))

    try:
        if handle._side_effect is None:
            value = handle.fn(**kwargs)
        else:
            action, effect = handle._next_effect()
            if action == "raise":
                raise effect
            value = effect if action == "return" else (effect if action == "call" else handle.fn)(**kwargs)
        if type(value) not in _NOT_AWAITABLE and inspect.isawaitable(value):
            try:
                return loop().run(value, finish)
            except BaseException:
                if inspect.iscoroutine(value):
                    value.close()  # never started (the loop is closed): no "never awaited" warning
                raise
    except BaseException as e:
        finish(None, e)
        return None
    finish(value, None)
    return None


def answer(
    reply: _core.Reply,
    convert: Callable[[Any], str],
    value: Any,
    error: BaseException | None,
    sized: Callable[[int], None],
) -> None:
    """Answers the request: the converted value, the :class:`RpcError` as is, or a failure with
    the exception's text (an ``isError`` result for a tool, ``-32603`` elsewhere). Tells ``sized``
    the answer's size as text (its length: a byte per character of ASCII) before it is sent, so
    the call's record has its size when the client has its answer."""
    if error is None:
        try:
            if type(value) is str and convert is tool_json:
                sized(len(value))
                reply.tool_text(value)
                return
            text = convert(value)
            sized(len(text))
            reply.result(text)
            return
        except Exception as e:  # the value does not convert: that is the handler's failure
            error = e
    if isinstance(error, RpcError):
        try:
            data = None if error.data is None else json.dumps(error.data)
        except (TypeError, ValueError) as e:
            message = f"the data of RpcError({error.code}) is not JSON: {e}"
            sized(len(message))
            reply.fail(message)
            return
        sized(len(error.message) + len(data or ""))
        reply.error(error.code, error.message, data)
        return
    message = error_text(error)
    sized(len(message))
    reply.fail(message)


async def _awaitable(value: Any) -> Any:
    return await value


def error_text(e: BaseException) -> str:
    """The text a client sees for an exception, ``Type: message`` (the traceback goes to the
    log)."""
    log.info("handler raised:\n%s", "".join(traceback.format_exception(e)))
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
