"""The test's controls of a running :class:`~everything_mcp.Server`: its traffic and report,
reset, the auth lab, the clock, the fault rules, what it serves and to how many, its tasks and
their gates, and the catalogs' triggers (``/_control/`` offers the same over HTTP,
docs/control-api.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _core

if TYPE_CHECKING:
    from .auth import Auth
    from .clock import Clock
    from .faults import Faults
    from .report import Report
    from .report.apps import AppsResults
    from .tasks import TaskGate, TaskInfo
    from .traffic import TrafficRecord, TrafficView

__all__ = ["ServerControls"]


class ServerControls:
    """A part of :class:`~everything_mcp.Server` (which is the class to use): its controls."""

    _core: _core.Server
    """The binding's server, which ``Server`` constructs."""

    @property
    def traffic(self) -> TrafficView:
        """The recording: a sequence of every frame so far, with ``requests()``,
        ``notifications()``, ``wait_for()``, ``assert_order()``, ``clear()``, ``to_jsonl()``."""
        from .traffic import TrafficView

        return TrafficView(self)

    def traffic_since(self, seq: int) -> list[TrafficRecord]:
        """Recorded frames after ``seq``."""
        from .traffic import parse_record

        return [parse_record(line) for line in self._core.traffic(seq)]

    def report(self) -> Report:
        """What each client did, computed from the traffic so far (docs/report.md):
        ``srv.report().client().assert_level("subscription", 5)``."""
        from .report import report

        records, dropped = self.traffic.snapshot()
        return report(records, dropped=dropped)

    @property
    def apps(self) -> AppsResults:
        """The MCP Apps host lab's results (the ``apps`` catalog, docs/apps.md): what the views
        posted from inside the host's iframe and what the server saw, as report checks:
        ``srv.apps.wait()`` (a view's final results), ``srv.apps.results()``,
        ``srv.apps.assert_checks(passed=[...], failed=[...])``."""
        from .report.apps import AppsResults

        return AppsResults(self.report, self.traffic)

    def clear_traffic(self) -> None:
        """Forget the in-memory traffic (a record file keeps everything)."""
        self._core.clear_traffic()

    def reset(self) -> None:
        """Back to the start between tests that share a server: no fault rules, no traffic kept
        in memory, a manual clock's ``elapsed`` at 0 (time itself never runs backwards), and the
        auth lab (if on) back to its configured clients and documents and its first authorization
        server, every token issued so far refused. What a test registered stays;
        ``POST /_control/reset`` also takes out the control API's canned items."""
        self._core.reset()

    @property
    def auth(self) -> Auth:
        """The HTTP listener's auth lab (``start_http(auth="oauth")``): its clients and tokens, a
        client registered by the test, tokens revoked or expired on cue; see docs/auth.md."""
        from .auth import Auth

        return Auth(self._core)

    @property
    def clock(self) -> Clock:
        """The clock every timer of the server runs on: ``Server(clock="manual")`` makes it
        stand still until ``srv.clock.advance(seconds)``; see docs/clock.md."""
        from .clock import Clock

        return Clock(self._core)

    @property
    def faults(self) -> Faults:
        """The fault rules in force: ``add(match=..., action=...)`` returns a rule handle
        (``hits``, ``remove()``, a context manager); see docs/faults.md."""
        from .faults import Faults

        return Faults(self._core)

    @property
    def session_count(self) -> int:
        """How many sessions are open, on any transport (a closed session no longer counts)."""
        return self._core.session_count()

    @property
    def listener_count(self) -> int:
        """How many ``subscriptions/listen`` streams are open (2026-07-28 clients listening for
        changes), on any transport; a stream the client closed no longer counts."""
        return self._core.listener_count()

    @property
    def tool_names(self) -> list[str]:
        """Registered tool names, in ``tools/list`` order."""
        return self._core.tool_names()

    @property
    def tasks(self) -> list[TaskInfo]:
        """The live tasks (both eras, every session), oldest first, as read-only snapshots:
        ``id``, ``tool``, ``arguments``, ``status``, ``status_message``, ``era``, ``session``,
        ``created_at``... A task is kept for its TTL (300 s) after it settles."""
        from .tasks import task_infos

        return task_infos(self._core.tasks())

    def wait_task(self, task_id: str, *statuses: str, timeout: float = 5.0) -> TaskInfo:
        """Wait until the task ``task_id`` has one of ``statuses`` (any terminal one when none is
        given), e.g. ``srv.wait_task(tid, "input_required")`` once a tool run as a task asked the
        client; returns it then. Raises ``TimeoutError`` (an unknown task never gets there)."""
        if not self._core.wait_task(task_id, list(statuses), timeout):
            now = next((t.status for t in self.tasks if t.id == task_id), "unknown")
            want = " or ".join(statuses) or "an end"
            raise TimeoutError(f"task {task_id} did not reach {want} within {timeout} s: {now}")
        return next(t for t in self.tasks if t.id == task_id)

    async def await_task(self, task_id: str, *statuses: str, timeout: float = 5.0) -> TaskInfo:
        """:meth:`wait_task` for async tests (asyncio or trio, through anyio)."""
        import anyio

        return await anyio.to_thread.run_sync(lambda: self.wait_task(task_id, *statuses, timeout=timeout))

    def task_gate(self, tool: str) -> TaskGate:
        """Hold the tasks of ``tool`` for the test to move: from now on a task started for it
        does not run its handler but waits, ``working``, until the test sets its status, asks
        the client for input, completes or fails it (``gate.complete(result)``; see
        :class:`~everything_mcp.tasks.TaskGate` and ``docs/tasks.md``). One gate per tool: a
        second call returns a handle on the same gate. ``with`` closes it."""
        from .tasks import TaskGate

        return TaskGate(self._core.task_gate(tool))

    def trigger(self, name: str) -> int:
        """Fire a loaded catalog's trigger, e.g. ``"review-lab.update"`` (every pending update of
        the review lab now, instead of after its delay); how many things it set off. The names:
        :attr:`trigger_names`; an unknown one raises ``ConfigError``."""
        return self._core.trigger(name)

    @property
    def trigger_names(self) -> list[str]:
        """The triggers the loaded catalogs offer (``POST /_control/triggers/{name}`` too)."""
        return self._core.trigger_names()
