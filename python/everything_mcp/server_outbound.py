"""What a :class:`~everything_mcp.Server` sends its clients on the test's behalf: any
notification, progress, log messages, ``list_changed`` and ``resources/updated``, and requests
(``srv.ask``) whose answers come back to the test."""

from __future__ import annotations

import json
from typing import Any

from . import _core
from .awaiting import await_core

__all__ = ["ServerOutbound"]


class ServerOutbound:
    """A part of :class:`~everything_mcp.Server` (which is the class to use): what it sends its
    clients."""

    _core: _core.Server
    """The binding's server, which ``Server`` constructs."""

    def notify(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> int:
        """Send any notification to one session or every connected one; returns how many."""
        return self._core.notify(method, None if params is None else json.dumps(params), session)

    def progress(
        self,
        token: str | int,
        progress: float,
        total: float | None = None,
        message: str | None = None,
        *,
        session: str | None = None,
    ) -> int:
        """Send ``notifications/progress`` for ``token`` (a request's ``progressToken``) from the
        test, to one session or every connected one."""
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return self.notify("notifications/progress", params, session=session)

    def ask(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Ask the client of ``session`` (or of every connected session) something from the test,
        e.g. ``srv.ask("roots/list")``; returns ``{session_id: result}`` (an error answer is
        ``{"error": …}``)."""
        answers = self._core.ask(method, None if params is None else json.dumps(params), session, timeout)
        return {sid: json.loads(answer) for sid, answer in answers}

    async def aask(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """:meth:`ask` for asyncio tests: the event loop keeps running while the clients answer,
        so an in-process async client (the official ``mcp`` one) can answer
        (``answers = await srv.aask("roots/list")``)."""
        text = None if params is None else json.dumps(params)
        answers = await await_core(lambda callback: self._core.ask_async(method, text, session, timeout, callback))
        return {sid: json.loads(answer) for sid, answer in answers}

    def log(self, level: str, data: Any, logger: str | None = None) -> int:
        """Send ``notifications/message`` to every connected client (each one's
        ``logging/setLevel`` applies); returns how many received it. Listen streams
        (2026-07-28) never get it: a filter cannot ask for log messages."""
        return self._core.log(level, json.dumps(data), logger)

    def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to subscribers of ``uri`` (sessions that
        subscribed, listen streams whose ``resourceSubscriptions`` name it); return how many."""
        return self._core.notify_resource_updated(uri)

    def notify_list_changed(self, kind: str) -> None:
        """Send ``notifications/<kind>/list_changed`` (``tools``, ``resources``, ``prompts``) to
        every session and every listen stream that asked for it."""
        self._core.notify_list_changed(kind)
