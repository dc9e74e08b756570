"""Tools, resources and prompts written as plain Python functions.

The server calls a function through an *invoker*: arguments arrive as JSON text and are decoded
here, the function runs (sync functions on a thread of the server's blocking pool, ``async def``
functions as tasks on the package's event-loop thread), and its return value, converted to the MCP
result here, goes back as JSON text through a ``_core.Reply``, or the :class:`RpcError` it raised
as a JSON-RPC error. Each decorated function becomes a :class:`Handle` that records its calls.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import inspect
import json
import logging
import threading
import time
import traceback
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin, get_type_hints

from . import _core

__all__ = ["Call", "Context", "Handle", "RpcError", "content"]

log = logging.getLogger("everything_mcp")


class RpcError(Exception):
    """Raise it from a handler (tool, resource, template, prompt, method or completion) to answer
    the request with exactly this JSON-RPC error object: ``{"code", "message", "data"}``, without
    ``data`` when it is None. Any other exception is an ``isError`` result from a tool and a
    ``-32603`` error elsewhere."""

    code: int
    """The error's ``code``: ``-32602`` (invalid params), or an application code."""
    message: str
    """The error's ``message``."""
    data: Any
    """The error's ``data`` (any JSON value), or None for none."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        if isinstance(code, bool) or not isinstance(code, int) or not -(2**63) <= code < 2**63:
            raise TypeError(f"a JSON-RPC error code is a 64-bit integer, not {code!r}")
        if not isinstance(message, str):
            raise TypeError(f"a JSON-RPC error message is a str, not {message!r}")
        super().__init__(code, message, data)
        self.code, self.message, self.data = code, message, data

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


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


# --- content helpers -----------------------------------------------------------------------


class content:
    """Content blocks to return from tools and prompts."""

    @staticmethod
    def text(text: str, **extra: Any) -> dict[str, Any]:
        return {"type": "text", "text": text, **extra}

    @staticmethod
    def image(data: bytes | str, mime_type: str = "image/png", **extra: Any) -> dict[str, Any]:
        """From bytes, or from a file when ``data`` is a path."""
        return {"type": "image", "data": _b64(data), "mimeType": mime_type, **extra}

    @staticmethod
    def audio(data: bytes | str, mime_type: str = "audio/wav", **extra: Any) -> dict[str, Any]:
        """From bytes, or from a file when ``data`` is a path."""
        return {"type": "audio", "data": _b64(data), "mimeType": mime_type, **extra}

    @staticmethod
    def resource_link(uri: str, name: str, **extra: Any) -> dict[str, Any]:
        return {"type": "resource_link", "uri": uri, "name": name, **extra}

    @staticmethod
    def embedded(
        uri: str, text: str | None = None, blob: bytes | None = None, mime_type: str = "text/plain"
    ) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": uri, "mimeType": mime_type}
        if blob is not None:
            resource["blob"] = base64.b64encode(blob).decode()
        else:
            resource["text"] = text or ""
        return {"type": "resource", "resource": resource}


def _b64(data: bytes | str) -> str:
    if isinstance(data, str):
        with open(data, "rb") as f:
            data = f.read()
    return base64.b64encode(data).decode()


_CONTENT_TYPES = {"text", "image", "audio", "resource_link", "resource"}


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in _CONTENT_TYPES


# --- JSON Schema from type hints ------------------------------------------------------------


def schema_for(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a Python type annotation."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = get_args(tp)
        schema = schema_for(base)
        for m in meta:
            if isinstance(m, str):
                schema["description"] = m
        return schema
    if tp is Any or tp is inspect.Parameter.empty:
        return {}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is type(None):
        return {"type": "null"}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if origin in (typing.Union, types.UnionType):
        options = [schema_for(a) for a in get_args(tp)]
        return {"anyOf": options}
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set):
        args = get_args(tp)
        return {"type": "array", "items": schema_for(args[0])} if args else {"type": "array"}
    if origin is dict or tp is dict:
        args = get_args(tp)
        return {"type": "object", "additionalProperties": schema_for(args[1])} if args else {"type": "object"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = get_type_hints(tp, include_extras=True)
        props = {f.name: schema_for(hints.get(f.name, Any)) for f in dataclasses.fields(tp)}
        required = [
            f.name for f in dataclasses.fields(tp)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]  # fmt: skip
        return {"type": "object", "properties": props, "required": required}
    if isinstance(tp, type) and typing.is_typeddict(tp):
        hints = get_type_hints(tp, include_extras=True)
        return {
            "type": "object",
            "properties": {k: schema_for(v) for k, v in hints.items()},
            "required": sorted(getattr(tp, "__required_keys__", hints.keys())),
        }
    model_schema = getattr(tp, "model_json_schema", None)  # pydantic, when installed
    if callable(model_schema):
        result: dict[str, Any] = model_schema()
        return result
    return {}


def input_schema(fn: Callable[..., Any]) -> tuple[dict[str, Any], str | None]:
    """The ``inputSchema`` of a function's parameters, and the name of its ``Context`` one."""
    hints = get_type_hints(fn, include_extras=True)
    props: dict[str, Any] = {}
    required: list[str] = []
    context_param = None
    for name, p in inspect.signature(fn).parameters.items():
        hint = hints.get(name, Any)
        if hint is Context:
            context_param = name
            continue
        prop = schema_for(hint)
        if p.default is not inspect.Parameter.empty:
            if isinstance(p.default, (str, int, float, bool)) or p.default is None:
                prop["default"] = p.default
        else:
            required.append(name)
        props[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema, context_param


def _plain(value: Any) -> Any:
    """Dataclasses, pydantic models and enums as JSON-able values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    return value


def tool_result(value: Any) -> dict[str, Any]:
    """A tool's return value as a ``CallToolResult``."""
    if isinstance(value, dict) and "content" in value and isinstance(value["content"], list):
        return value  # a full result passes through
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [content.text(value)]}
    if _is_block(value):
        return {"content": [value]}
    if isinstance(value, list) and value and all(_is_block(v) for v in value):
        return {"content": value}
    plain = _plain(value)
    text = json.dumps(plain, ensure_ascii=False)
    structured = plain if isinstance(plain, dict) else {"result": plain}
    return {"content": [content.text(text)], "structuredContent": structured}


# --- handles --------------------------------------------------------------------------------


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
    _side_effect: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _effects: Iterator[Any] | None = field(default=None, repr=False)

    @property
    def side_effect(self) -> Any:
        """What replaces the function (see the class docstring); ``None``: the function runs."""
        return self._side_effect

    @side_effect.setter
    def side_effect(self, effect: Any) -> None:
        with self._lock:
            self._side_effect = effect
            self._effects = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def called(self) -> bool:
        return bool(self.calls)

    @property
    def call_count(self) -> int:
        return len(self.calls)

    def reset(self) -> None:
        """Forget the calls and the side effect."""
        with self._lock:
            self.calls.clear()
            self._side_effect = None
            self._effects = None

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

        self.loop.call_soon_threadsafe(start)
        return cancel

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=2)
        if not self.thread.is_alive():
            self.loop.close()


def run_handler(
    handle: Handle,
    loop: Callable[[], LoopThread],
    kwargs: dict[str, Any],
    ctx: Context,
    ctx_param: str | None,
    reply: _core.Reply,
    convert: Callable[[Any], str],
) -> Callable[[], None] | None:
    """Calls the handle's function (or side effect), records the call, and answers ``reply``
    with ``convert(value)`` (JSON text) or the error it raised.

    A sync function has answered when this returns None. An ``async def`` function becomes a task
    on the loop thread whose done-callback answers; this returns its ``cancel()``, which the core
    calls when the request is cancelled. No thread waits for the task."""
    record = Call(arguments=dict(kwargs), session_id=ctx.session_id, started=time.monotonic())
    if ctx_param:
        kwargs = {**kwargs, ctx_param: ctx}
    with handle._lock:
        handle.calls.append(record)

    def finish(value: Any, error: BaseException | None) -> None:
        record.ended = time.monotonic()
        if error is None:
            record.result = value
        else:
            record.error = error
        answer(reply, convert, value, error)

    try:
        action, effect = handle._next_effect()
        if action == "raise":
            raise effect
        value = effect if action == "return" else (effect if action == "call" else handle.fn)(**kwargs)
        if inspect.isawaitable(value):
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


def answer(reply: _core.Reply, convert: Callable[[Any], str], value: Any, error: BaseException | None) -> None:
    """Answers the request: the converted value, the :class:`RpcError` as is, or a failure with
    the exception's text (an ``isError`` result for a tool, ``-32603`` elsewhere)."""
    if error is None:
        try:
            reply.result(convert(value))
            return
        except Exception as e:  # the value does not convert: that is the handler's failure
            error = e
    if isinstance(error, RpcError):
        try:
            data = None if error.data is None else json.dumps(error.data)
        except (TypeError, ValueError) as e:
            reply.fail(f"the data of RpcError({error.code}) is not JSON: {e}")
            return
        reply.error(error.code, error.message, data)
        return
    reply.fail(error_text(error))


async def _awaitable(value: Any) -> Any:
    return await value


def error_text(e: BaseException) -> str:
    """The text a client sees for an exception, ``Type: message`` (the traceback goes to the
    log)."""
    log.info("handler raised:\n%s", "".join(traceback.format_exception(e)))
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
