"""What a handler may use while serving one request: its ids and revision, progress and log
messages, its task's status, the state it carries between stateless rounds, and asking the
client (sampling, elicitation, roots), sync or ``async``."""

from __future__ import annotations

import json
from typing import Any

from .. import _core
from ..awaiting import await_core


class Context:
    """What a handler may use while serving one request.

    Declare a parameter annotated ``Context`` to receive it; it is not part of the input schema.
    """

    def __init__(self, core: _core.Context) -> None:
        self._core = core
        self._state: dict[str, Any] | None = None

    @property
    def request_id(self) -> str | int:
        """The JSON-RPC id of the request."""
        value: str | int = json.loads(self._core.request_id)
        return value

    @property
    def session_id(self) -> str:
        """The session (connection) the request came on."""
        return self._core.session_id

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        return self._core.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared in ``initialize``."""
        caps: dict[str, Any] = json.loads(self._core.client_capabilities)
        return caps

    @property
    def cancelled(self) -> bool:
        """Whether the client cancelled the request (or disconnected)."""
        return self._core.cancelled

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` (only if the client asked for progress)."""
        self._core.progress(progress, total, message)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` unless the client's ``logging/setLevel`` filters it."""
        self._core.log(level, json.dumps(data), logger)

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as (a tool with ``task_support``, called as a
        task), or None for an ordinary request."""
        return self._core.task_id

    def status(self, message: str) -> None:
        """Set the status message of the task this call runs as (``statusMessage`` in
        ``tasks/get``; ``notifications/tasks/status`` in the handshake era). Outside a task it
        does nothing, so a tool with ``task_support="optional"`` calls it either way."""
        self._core.task_status(message)

    @property
    def stateless(self) -> bool:
        """Whether the request is served in the stateless era (2026-07-28), where asking the
        client ends the round with ``input_required`` and the handler runs again, from the top,
        once the client answers. ``False`` inside a task (of either era): there an ask waits for
        the client's answer (``tasks/update``, or the related-task request) and the handler runs
        once."""
        return self._core.stateless

    @property
    def state(self) -> dict[str, Any]:
        """A JSON-able dict the handler carries between rounds of a stateless request (sealed
        into ``requestState``; what it held when the round ended comes back on the next run).
        Empty at first, and in the handshake era, where the handler runs once."""
        if self._state is None:
            loaded = json.loads(self._core.round_state)
            self._state = loaded if isinstance(loaded, dict) else {}
        return self._state

    def _save_state(self) -> None:
        # A round ends inside an ask, so saving before each ask seals what the handler holds.
        if self._state is not None:
            self._core.set_round_state(json.dumps(self._state))

    def ask(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None, *, key: str | None = None
    ) -> Any:
        """Ask the client (``sampling/createMessage``, ``elicitation/create``, ``roots/list``) and
        wait for its result (raises ``ClientError``). Handshake era: a server → client request.
        Stateless era: an input request under ``key`` (default ``"<n>"``, the nth unkeyed ask of
        this run); until the client answered it raises :class:`InputRequired` (a
        ``BaseException``: let it propagate), and the next round's run gets the answer."""
        self._save_state()
        text = None if params is None else json.dumps(params)
        return json.loads(self._core.ask(method, text, timeout, key))

    async def aask(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None, *, key: str | None = None
    ) -> Any:
        """:meth:`ask` for ``async def`` handlers: the event loop keeps running while the client
        answers."""
        self._save_state()
        text = json.dumps(params) if params is not None else None
        answer = await await_core(lambda callback: self._core.ask_async(method, text, timeout, callback, key))
        return json.loads(answer)

    def ask_all(
        self, asks: dict[str, tuple[str, dict[str, Any] | None]], timeout: float | None = None
    ) -> dict[str, Any]:
        """Ask several things at once, ``{key: (method, params)}``: in ONE round in the stateless
        era (all of them in the same ``inputRequests``), concurrently in the handshake era.
        Returns ``{key: answer}``."""
        self._save_state()
        keys = list(asks)
        text = json.dumps([[k, m, p] for k, (m, p) in asks.items()])
        return dict(zip(keys, json.loads(self._core.ask_all(text, timeout)), strict=True))

    async def aask_all(
        self, asks: dict[str, tuple[str, dict[str, Any] | None]], timeout: float | None = None
    ) -> dict[str, Any]:
        """:meth:`ask_all` for ``async def`` handlers."""
        self._save_state()
        keys = list(asks)
        text = json.dumps([[k, m, p] for k, (m, p) in asks.items()])
        answers = await await_core(lambda callback: self._core.ask_all_async(text, timeout, callback))
        return dict(zip(keys, json.loads(answers), strict=True))

    def sample(self, prompt: str, max_tokens: int = 100, *, key: str | None = None, **params: Any) -> Any:
        """Ask the client's LLM (``sampling/createMessage``) with one user message."""
        message = {"role": "user", "content": {"type": "text", "text": prompt}}
        return self.ask("sampling/createMessage", {"messages": [message], "maxTokens": max_tokens, **params}, key=key)

    def elicit(self, message: str, requested_schema: dict[str, Any], *, key: str | None = None) -> Any:
        """Ask the user for input through the client (``elicitation/create``, form mode)."""
        return self.ask("elicitation/create", {"message": message, "requestedSchema": requested_schema}, key=key)

    def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """Ask the client for its roots (``roots/list``)."""
        roots: list[dict[str, Any]] = self.ask("roots/list", key=key).get("roots", [])
        return roots

    async def asample(self, prompt: str, max_tokens: int = 100, *, key: str | None = None, **params: Any) -> Any:
        """:meth:`sample` for ``async def`` handlers."""
        message = {"role": "user", "content": {"type": "text", "text": prompt}}
        params = {"messages": [message], "maxTokens": max_tokens, **params}
        return await self.aask("sampling/createMessage", params, key=key)

    async def aelicit(self, message: str, requested_schema: dict[str, Any], *, key: str | None = None) -> Any:
        """:meth:`elicit` for ``async def`` handlers."""
        params = {"message": message, "requestedSchema": requested_schema}
        return await self.aask("elicitation/create", params, key=key)

    async def alist_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """:meth:`list_roots` for ``async def`` handlers."""
        roots: list[dict[str, Any]] = (await self.aask("roots/list", key=key)).get("roots", [])
        return roots
