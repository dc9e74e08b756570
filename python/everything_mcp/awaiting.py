"""Python awaiting the core: work the core does for an ``async def`` caller (``ctx.aask``,
``srv.aask``, ``srv.clock.asleep``, a task gate's waits) settles an asyncio future from the core's
thread, so the event loop is never blocked (the mirror of ``src/python/callback.rs``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _core


async def await_core(start: Callable[[Callable[[Any, BaseException | None], None]], _core.Pending]) -> Any:
    """Awaits work the core does for an async caller: ``start(callback)`` begins it, and the core
    calls ``callback(value, error)`` from another thread when it is done. The event loop is never
    blocked and no thread waits; cancelling the awaiting task abandons the work."""
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if not future.done():
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

    def callback(value: Any, error: BaseException | None) -> None:
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the loop is closed: nobody awaits the answer any more
            pass

    pending = start(callback)
    try:
        return await future
    except asyncio.CancelledError:
        pending.cancel()
        raise
