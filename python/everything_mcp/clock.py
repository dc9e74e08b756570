"""A server's clock as a test drives it: ``Server(clock="manual")`` stands still until
``srv.clock.advance(seconds)`` (or ``await srv.clock.aadvance(seconds)``), and after each advance
exactly the timers due by then have fired, in order, their work done: the catalogs' timers
(simulated logs, subscription updates, research stages, the ``*-async`` polls, the review lab's
update), task TTLs, session idle expiry, ``requestState`` expiry, keep-alives, the roots sync
delay and fault delays. See docs/clock.md."""

from __future__ import annotations

from . import _core
from .awaiting import await_core


class Clock:
    """``srv.clock``: which clock the server runs on, and (a manual one) moving it."""

    def __init__(self, core: _core.Server) -> None:
        self._core = core

    @property
    def kind(self) -> str:
        """``"real"`` (the default) or ``"manual"``."""
        return self._core.clock_kind

    @property
    def manual(self) -> bool:
        """Whether only the test moves this clock."""
        return self._core.clock_kind == "manual"

    @property
    def elapsed(self) -> float | None:
        """Seconds a manual clock has been advanced since the server started; ``None`` on the
        real clock."""
        return self._core.clock_elapsed

    def advance(self, seconds: float) -> float:
        """Move a manual clock ``seconds`` forward; returns once every timer due by then has
        fired, in deadline order, and the work each one started has reached its next wait (a
        message sent, a task's stage recorded). Returns :attr:`elapsed`. The GIL is released
        while it waits. On the real clock it raises :class:`everything_mcp.ConfigError`; a
        negative or non-finite ``seconds`` raises ``ValueError``.

        From an ``async`` test whose client runs on the same event loop, use :meth:`aadvance`:
        the timers' work never waits on the client, but the client's reading of what they sent
        does."""
        return self._core.advance_clock(seconds)

    async def aadvance(self, seconds: float) -> float:
        """:meth:`advance` for asyncio tests: the event loop keeps running while timers fire."""
        elapsed: float = await await_core(lambda callback: self._core.advance_clock_async(seconds, callback))
        return elapsed

    def __repr__(self) -> str:
        elapsed = self.elapsed
        return f"Clock({self.kind!r})" if elapsed is None else f"Clock('manual', elapsed={elapsed:g})"
