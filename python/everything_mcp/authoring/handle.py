"""A registered Python function and the record of its calls, with the side effect a test may
put in its place."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import _core


@dataclass
class Call:
    """One call of a handler."""

    arguments: dict[str, Any]
    """What the client sent: tool or prompt arguments, method params, or a template's variables
    (``{}`` for a fixed resource)."""
    session_id: str
    """The connection it came on."""
    started: float
    """``time.monotonic()`` at the start."""
    ended: float = 0.0
    """``time.monotonic()`` at the end."""
    result: Any = None
    """What the function returned (before conversion)."""
    error: BaseException | None = None
    """What it raised, if anything."""


KEEP_CALLS = 10_000
"""How many of its newest calls a :class:`Handle` keeps by default (the traffic tape's count)."""


@dataclass
class Handle:
    """A registered Python function: callable as before, plus its record of calls.

    ``side_effect`` (the respx pattern): an exception (raised on every call), an iterable (one
    item per call: an exception is raised, anything else is returned), or a callable (called
    with the arguments instead of the function).
    """

    fn: Callable[..., Any]
    kind: str
    name: str
    calls: list[Call] = field(default_factory=list)
    """The newest calls, oldest first: at least the newest ``keep_calls`` (older ones are
    dropped in batches, counted in :attr:`calls_dropped`), so a handler under sustained load
    holds bounded memory."""
    keep_calls: int = KEEP_CALLS
    """How many of the newest calls ``calls`` keeps at least."""
    _dropped: int = field(default=0, repr=False)
    _side_effect: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _effects: Iterator[Any] | None = field(default=None, repr=False)
    _invokers: list[_core.Invoker] = field(default_factory=list, repr=False)
    """How the core calls this function (one per registration): told where calls run when the
    side effect changes (:meth:`_runs_on_loop`)."""

    @property
    def side_effect(self) -> Any:
        """What replaces the function (see the class docstring); ``None``: the function runs."""
        return self._side_effect

    @side_effect.setter
    def side_effect(self, effect: Any) -> None:
        with self._lock:
            self._side_effect = effect
            self._effects = None
            self._dispatch_changed()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def called(self) -> bool:
        return bool(self.calls)

    @property
    def call_count(self) -> int:
        """Every call since the last :meth:`reset`, the dropped ones included."""
        return self._dropped + len(self.calls)

    @property
    def calls_dropped(self) -> int:
        """Calls no longer in ``calls`` (the oldest, past ``keep_calls``)."""
        return self._dropped

    def _record(self, call: Call) -> None:
        """Appends ``call``; past ``keep_calls`` plus an eighth, drops the oldest down to
        ``keep_calls`` (in batches: one ``del`` of a list's head per eighth of calls)."""
        with self._lock:
            self.calls.append(call)
            excess = len(self.calls) - self.keep_calls
            if excess > self.keep_calls // 8:
                del self.calls[:excess]
                self._dropped += excess

    def reset(self) -> None:
        """Forget the calls and the side effect."""
        with self._lock:
            self.calls.clear()
            self._dropped = 0
            self._side_effect = None
            self._effects = None
            self._dispatch_changed()

    def _invoker(self, call: Callable[..., Any]) -> _core.Invoker:
        """``call`` (the invoker of one registration) as the core calls it."""
        invoker = _core.Invoker(call, self._runs_on_loop())
        self._invokers.append(invoker)
        return invoker

    def _runs_on_loop(self) -> bool:
        """Whether calls start on the event-loop thread: what runs in the function's place (the
        function, or a callable side effect) is an ``async def``. A sync function runs on a
        runner thread, where it may block; one that returns an awaitable anyway still works
        (:func:`~everything_mcp.authoring.running.run_handler` hands it to the loop)."""
        effect = self._side_effect
        if effect is not None and callable(effect) and not _is_exception(effect):
            return inspect.iscoroutinefunction(effect)
        return inspect.iscoroutinefunction(self.fn)

    def _dispatch_changed(self) -> None:
        on_loop = self._runs_on_loop()
        for invoker in self._invokers:
            invoker.on_loop = on_loop

    def _next_effect(self) -> tuple[str, Any]:
        """What this call does: ``("run", None)`` the function, ``("raise", exc)``,
        ``("call", fn)`` instead of the function, or ``("return", value)``."""
        effect = self._side_effect
        if effect is None:
            return "run", None
        if _is_exception(effect):
            return "raise", effect
        if callable(effect):
            return "call", effect
        with self._lock:
            if self._effects is None:
                self._effects = iter(effect)
            try:
                item = next(self._effects)
            except StopIteration:
                return "run", None
        return ("raise", item) if _is_exception(item) else ("return", item)


def _is_exception(value: Any) -> bool:
    return isinstance(value, BaseException) or (isinstance(value, type) and issubclass(value, BaseException))
