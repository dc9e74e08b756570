"""Tasks as a test sees them: :class:`TaskInfo` (what ``srv.tasks`` lists), and the gates that
hold a tool's tasks for the test to move (``srv.task_gate(tool)``, see ``docs/tasks.md``).

A gated task does not run the tool's handler: it waits, ``working``, and the test moves it —
``status("...")`` sets its status message, ``require_input(...)`` asks the client (the task is
``input_required`` until it answers), ``complete(result)`` / ``fail(error)`` end it — each step
acknowledged before the call returns, so the client's next poll sees it. No timers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from . import _core
from ._core import EverythingMcpError
from .authoring.results import tool_result
from .authoring.rpc_error import RpcError
from .awaiting import await_core

__all__ = ["GatedTask", "TaskEnded", "TaskGate", "TaskInfo", "TaskStatus"]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""Where a task is in its life; the last three are terminal."""

TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})

DEFAULT_TIMEOUT = 5.0
"""Seconds a gate waits for a task to start or to apply a step."""

ASK_TIMEOUT = 30.0
"""Seconds a gated task waits for the client to answer what it asked."""


class TaskEnded(EverythingMcpError):
    """The task had already ended (the client cancelled it, its TTL elapsed, or it was completed
    or failed before): the step could not be applied."""


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """A live task as the server holds it (a snapshot)."""

    id: str
    """The task id (32 hex digits)."""
    tool: str
    """The tool it runs."""
    arguments: dict[str, Any]
    """The arguments it was called with."""
    status: TaskStatus
    """``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``."""
    status_message: str | None
    """The note beside the status (``statusMessage``)."""
    era: Literal["handshake", "stateless"]
    """The wire it speaks: ``handshake`` (2025-11-25, ``params.task``) or ``stateless``
    (2026-07-28, the tasks extension)."""
    session: str | None
    """The session that owns it (handshake era); None in the stateless era."""
    created_at: str
    """``createdAt`` (ISO 8601)."""
    last_updated_at: str
    """``lastUpdatedAt`` (ISO 8601)."""
    ttl: float
    """Seconds it is kept after creation (and again after it settles)."""
    poll_interval: float
    """Seconds between polls suggested to the client."""
    input_requests: dict[str, Any]
    """Stateless era: the outstanding ``inputRequests`` by key (empty otherwise)."""

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (completed, failed or cancelled)."""
        return self.status in TERMINAL

    @classmethod
    def _from_json(cls, data: dict[str, Any]) -> TaskInfo:
        return cls(
            id=data["id"],
            tool=data["tool"],
            arguments=data["arguments"],
            status=data["status"],
            status_message=data["statusMessage"],
            era=data["era"],
            session=data["session"],
            created_at=data["createdAt"],
            last_updated_at=data["lastUpdatedAt"],
            ttl=data["ttl"],
            poll_interval=data["pollInterval"],
            input_requests=data["inputRequests"],
        )


def task_infos(text: str) -> list[TaskInfo]:
    """``_core.Server.tasks()`` as :class:`TaskInfo` objects."""
    return [TaskInfo._from_json(t) for t in json.loads(text)]


def _json_or_none(value: Any) -> str | None:
    """``value`` as JSON text for the core, ``None`` left as is."""
    return None if value is None else json.dumps(value)


def _elicitation(message: str, requested_schema: dict[str, Any] | None) -> dict[str, Any]:
    schema = requested_schema if requested_schema is not None else {"type": "object", "properties": {}}
    return {"message": message, "requestedSchema": schema}


class GatedTask:
    """One task a gate holds. Every step returns once applied, so the client's next poll (or
    the handshake era's ``notifications/tasks/status``) already shows it."""

    def __init__(self, core: _core.GatedTask) -> None:
        self._core = core

    def __repr__(self) -> str:
        info = self.info
        return f"GatedTask({info.tool!r}, id={info.id!r}, status={info.status!r})"

    @property
    def id(self) -> str:
        """The task id."""
        return self._core.id

    @property
    def info(self) -> TaskInfo:
        """The task as it is now."""
        return TaskInfo._from_json(json.loads(self._core.info()))

    def status(self, message: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Set the task's status message (raises :class:`TaskEnded` if it had ended)."""
        if not self._core.status(message, timeout):
            raise TaskEnded(f"task {self.id} has ended: its status message cannot change")

    def ask(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = ASK_TIMEOUT, key: str | None = None
    ) -> Any:
        """Ask the client through the task (``elicitation/create``, ``sampling/createMessage``,
        ``roots/list``) and return its answer. The task is ``input_required`` meanwhile:
        handshake era, a server → client request carrying the related-task ``_meta``; stateless
        era, an entry of the task's ``inputRequests`` (under ``key``) that the client answers
        with ``tasks/update``. Raises ``ClientError`` (error answer, missing capability, task
        ended) or ``TimeoutError``."""
        return json.loads(self._core.ask(method, _json_or_none(params), timeout, key))

    async def aask(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = ASK_TIMEOUT, key: str | None = None
    ) -> Any:
        """:meth:`ask` for asyncio tests: the event loop keeps running while the client
        answers."""
        text = _json_or_none(params)
        answer = await await_core(lambda callback: self._core.ask_async(method, text, timeout, callback, key))
        return json.loads(answer)

    def require_input(
        self,
        message: str,
        requested_schema: dict[str, Any] | None = None,
        *,
        timeout: float = ASK_TIMEOUT,
        key: str | None = None,
    ) -> Any:
        """Move the task to ``input_required`` and ask the user (``elicitation/create``, form
        mode) through the client; returns the client's answer (``{"action", "content"}``)."""
        return self.ask("elicitation/create", _elicitation(message, requested_schema), timeout=timeout, key=key)

    async def arequire_input(
        self,
        message: str,
        requested_schema: dict[str, Any] | None = None,
        *,
        timeout: float = ASK_TIMEOUT,
        key: str | None = None,
    ) -> Any:
        """:meth:`require_input` for asyncio tests."""
        params = _elicitation(message, requested_schema)
        return await self.aask("elicitation/create", params, timeout=timeout, key=key)

    def complete(self, result: Any = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """End the task ``completed``. ``result`` is converted as a tool's return value is (a
        ``str`` is text, a dict becomes ``structuredContent``, a full ``CallToolResult`` — an
        ``isError`` one too — passes through). Raises :class:`TaskEnded` if it had ended."""
        if not self._core.complete(json.dumps(tool_result(result), default=str), timeout):
            raise TaskEnded(f"task {self.id} had already ended: it cannot complete")

    def fail(self, error: RpcError | str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """End the task ``failed`` with a JSON-RPC error: an :class:`RpcError` as is, a ``str``
        as ``-32603`` with that message. Raises :class:`TaskEnded` if it had ended."""
        if isinstance(error, str):
            error = RpcError(-32603, error)
        if not self._core.fail(error.code, error.message, _json_or_none(error.data), timeout):
            raise TaskEnded(f"task {self.id} had already ended: it cannot fail")

    def wait_for(self, *statuses: TaskStatus, timeout: float = DEFAULT_TIMEOUT) -> TaskInfo:
        """Wait until the task's status is one of ``statuses`` (any terminal one when none is
        given), e.g. ``task.wait_for("cancelled")`` after the client cancelled it; raises
        ``TimeoutError``."""
        return self._reached(self._core.wait_status(list(statuses), timeout), statuses, timeout)

    async def await_for(self, *statuses: TaskStatus, timeout: float = DEFAULT_TIMEOUT) -> TaskInfo:
        """:meth:`wait_for` for asyncio tests."""
        reached = await await_core(lambda callback: self._core.wait_status_async(list(statuses), timeout, callback))
        return self._reached(reached, statuses, timeout)

    def _reached(self, reached: bool, statuses: tuple[TaskStatus, ...], timeout: float) -> TaskInfo:
        """The task now, if it ``reached`` one of ``statuses``; else ``TimeoutError``."""
        if not reached:
            want = " or ".join(statuses) or "an end"
            raise TimeoutError(f"task {self.id} did not reach {want} within {timeout} s: {self.info.status}")
        return self.info


class TaskGate:
    """A test's gate on one tool (``srv.task_gate("tool")``): from now on a task started for the
    tool is held, ``working``, for the test to move, instead of running the handler.

    For one task at a time, the short forms act on the oldest held task that has not ended
    (waiting for one to start): ``gate.status("...")``, ``gate.require_input(...)``,
    ``gate.complete(result)``, ``gate.fail(error)``. For several, take each with
    :meth:`next_task` and move the :class:`GatedTask`. ``with srv.task_gate(...) as gate:``
    closes the gate on exit (later tasks run the handler again; held ones stay held).
    """

    def __init__(self, core: _core.TaskGate) -> None:
        self._core = core

    def __repr__(self) -> str:
        return f"TaskGate({self.tool!r}, held={len(self.held)})"

    @property
    def tool(self) -> str:
        """The tool whose tasks it holds."""
        return self._core.tool

    @property
    def held(self) -> list[GatedTask]:
        """Every task it has held, oldest first (ended ones included)."""
        return [GatedTask(t) for t in self._core.held()]

    def next_task(self, timeout: float = DEFAULT_TIMEOUT) -> GatedTask:
        """The next task this gate holds that was not handed out yet, waiting up to ``timeout``
        seconds for the client to start it (``TimeoutError``)."""
        return GatedTask(self._core.next_task(timeout))

    async def anext_task(self, timeout: float = DEFAULT_TIMEOUT) -> GatedTask:
        """:meth:`next_task` for asyncio tests (the client may run on the same loop)."""
        core: _core.GatedTask = await await_core(lambda callback: self._core.next_task_async(timeout, callback))
        return GatedTask(core)

    def current(self, timeout: float = DEFAULT_TIMEOUT) -> GatedTask:
        """The oldest held task that has not ended, waiting up to ``timeout`` seconds for one."""
        return GatedTask(self._core.current(timeout))

    async def acurrent(self, timeout: float = DEFAULT_TIMEOUT) -> GatedTask:
        """:meth:`current` for asyncio tests."""
        core: _core.GatedTask = await await_core(lambda callback: self._core.current_async(timeout, callback))
        return GatedTask(core)

    def _on_current(self, timeout: float, step: Callable[[GatedTask], object]) -> GatedTask:
        """Applies ``step`` to the current task (waiting up to ``timeout`` for one); returns it."""
        task = self.current(timeout)
        step(task)
        return task

    def status(self, message: str, *, timeout: float = DEFAULT_TIMEOUT) -> GatedTask:
        """:meth:`GatedTask.status` on the current task; returns it."""
        return self._on_current(timeout, lambda task: task.status(message, timeout=timeout))

    def require_input(
        self,
        message: str,
        requested_schema: dict[str, Any] | None = None,
        *,
        timeout: float = ASK_TIMEOUT,
        key: str | None = None,
    ) -> Any:
        """:meth:`GatedTask.require_input` on the current task; returns the client's answer."""
        return self.current(timeout).require_input(message, requested_schema, timeout=timeout, key=key)

    async def arequire_input(
        self,
        message: str,
        requested_schema: dict[str, Any] | None = None,
        *,
        timeout: float = ASK_TIMEOUT,
        key: str | None = None,
    ) -> Any:
        """:meth:`require_input` for asyncio tests."""
        task = await self.acurrent(timeout)
        return await task.arequire_input(message, requested_schema, timeout=timeout, key=key)

    def complete(self, result: Any = None, *, timeout: float = DEFAULT_TIMEOUT) -> GatedTask:
        """:meth:`GatedTask.complete` on the current task; returns it."""
        return self._on_current(timeout, lambda task: task.complete(result, timeout=timeout))

    def fail(self, error: RpcError | str, *, timeout: float = DEFAULT_TIMEOUT) -> GatedTask:
        """:meth:`GatedTask.fail` on the current task; returns it."""
        return self._on_current(timeout, lambda task: task.fail(error, timeout=timeout))

    def close(self) -> None:
        """Stop holding: later tasks of the tool run its handler. Tasks already held stay held
        (their :class:`GatedTask` still moves them)."""
        self._core.close()

    def __enter__(self) -> TaskGate:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
