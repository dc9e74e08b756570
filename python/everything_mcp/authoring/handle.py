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
    size: int = 0
    """Its arguments and its answer as JSON text, in bytes (the answer's once it is sent): what
    it counts against the handle's ``keep_calls_bytes``."""
    _kept: bool = field(default=True, init=False, repr=False, compare=False)
    """Whether the handle still keeps it (an answer sent after the call was dropped no longer
    counts)."""


KEEP_CALLS = 10_000
"""How many of its newest calls a :class:`Handle` keeps by default (the traffic tape's count)."""

KEEP_CALLS_BYTES = 64 * 1024 * 1024
"""How many bytes of calls (:attr:`Call.size`) a :class:`Handle` keeps by default (the traffic
tape's bound)."""


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
    """The newest calls, oldest first, bounded by count and by bytes, so a handler under
    sustained load holds bounded memory: the newest ``keep_calls`` at least, as long as their
    sizes stay within ``keep_calls_bytes`` (the newest call is always kept). Older ones are
    dropped in batches and counted in :attr:`calls_dropped`."""
    keep_calls: int = KEEP_CALLS
    """How many of the newest calls ``calls`` keeps at least (bytes allowing)."""
    keep_calls_bytes: int = KEEP_CALLS_BYTES
    """How many bytes of calls (:attr:`Call.size`) ``calls`` keeps at most."""
    _dropped: int = field(default=0, repr=False)
    _kept_bytes: int = field(default=0, repr=False)
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
        """Calls no longer in ``calls`` (the oldest, past ``keep_calls`` or
        ``keep_calls_bytes``)."""
        return self._dropped

    @property
    def calls_bytes(self) -> int:
        """The sizes of the calls in ``calls``, summed (:attr:`Call.size`)."""
        return self._kept_bytes

    def _record(self, call: Call) -> None:
        """Appends ``call`` and keeps the bounds."""
        with self._lock:
            self.calls.append(call)
            self._kept_bytes += call.size
            if len(self.calls) > self.keep_calls + self.keep_calls // 8 or self._kept_bytes > self.keep_calls_bytes:
                self._trim()

    def _answered(self, call: Call, size: int) -> None:
        """Adds the ``size`` of ``call``'s answer and keeps the bounds."""
        with self._lock:
            call.size += size
            if call._kept:
                self._kept_bytes += size
                if self._kept_bytes > self.keep_calls_bytes:
                    self._trim()

    def _trim(self) -> None:
        """Past ``keep_calls`` plus an eighth, drops the oldest down to ``keep_calls``; past
        ``keep_calls_bytes``, down to seven eighths of it (the newest call stays). In batches:
        one ``del`` of the list's head per eighth of either bound."""
        calls = self.calls
        excess = len(calls) - self.keep_calls
        drop = excess if excess > self.keep_calls // 8 else 0
        bytes_left = self._kept_bytes
        for call in calls[:drop]:
            bytes_left -= call.size
        if bytes_left > self.keep_calls_bytes:
            target = self.keep_calls_bytes - self.keep_calls_bytes // 8
            while bytes_left > target and drop < len(calls) - 1:
                bytes_left -= calls[drop].size
                drop += 1
        if drop:
            for call in calls[:drop]:
                call._kept = False
            del calls[:drop]
            self._kept_bytes = bytes_left
            self._dropped += drop

    def reset(self) -> None:
        """Forget the calls and the side effect."""
        with self._lock:
            for call in self.calls:
                call._kept = False
            self.calls.clear()
            self._dropped = 0
            self._kept_bytes = 0
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
