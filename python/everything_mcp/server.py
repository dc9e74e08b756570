"""The Pythonic face of the server: construct, serve, connect, read the traffic."""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _core
from .authoring.context import Context
from .authoring.handle import Handle
from .authoring.results import prompt_json, tool_json, values_json
from .authoring.running import Cancel, LoopThread, run_handler
from .authoring.schema import input_schema as schema_of  # `tool()` has an `input_schema` parameter
from .awaiting import await_core

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .auth import Auth
    from .clock import Clock
    from .faults import Faults
    from .options import HttpOptions, ServerOptions
    from .report import Report
    from .tasks import TaskGate, TaskInfo
    from .traffic import TrafficRecord, TrafficView

__all__ = ["Server"]


class Server:
    """An MCP test server running inside this process.

    ``Server()`` serves the ``everything`` catalog on every protocol revision.  Serve this
    process's stdin/stdout with :meth:`run_stdio`, or open in-process connections with
    :meth:`connect`.  Every frame in and out is recorded: read it with :attr:`traffic`.

    Every option is a keyword argument, a key of :class:`~everything_mcp.options.ServerOptions`
    (``catalogs=["none"]``, ``era="handshake"``, ``tick=0.05``, ...), and optional: an omitted
    one (or ``None``) takes the core's default, listed in :data:`everything_mcp.DEFAULTS`. What
    each means: ``docs/python-api.md`` (Options), or ``python -m everything_mcp http --help``.
    """

    def __init__(self, **options: Unpack[ServerOptions]) -> None:
        self._core = _core.Server(**options)
        self._loop_thread: LoopThread | None = None
        self._loop_lock = threading.Lock()
        self._relay: str | None = None
        self._relay_dir: str | None = None

    def run_stdio(self) -> None:
        """Serve this process's stdin/stdout until stdin closes.

        Signals are handled by Python: a handler that raises (Ctrl-C's ``KeyboardInterrupt``)
        stops the server cleanly, then the exception propagates.
        """
        self._core.run_stdio()

    def start_http(self, host: str | None = None, port: int = 0, **options: Unpack[HttpOptions]) -> str:
        """Serve HTTP in this process and return the Streamable HTTP URL (``…/mcp``).

        One listener serves Streamable HTTP at ``/mcp``, the legacy HTTP+SSE transport at
        ``/sse`` + ``/message``, and ``GET /health``. ``port=0`` picks a free port; a busy port
        moves on to the next of 20 unless ``strict_port``. Only loopback ``Host``/``Origin``
        values are accepted unless widened with ``allow_hosts``/``allow_origins`` (``"*"``: any).
        ``json_response`` answers POSTed requests with ``application/json`` instead of SSE.
        Every option (:class:`~everything_mcp.options.HttpOptions`) is optional and takes its
        default from :data:`everything_mcp.DEFAULTS` when omitted (loopback host, 1000 sessions,
        idle sessions ended after 1800 s; ``session_idle_timeout=0``: never).
        :meth:`stop` closes open streams and frees the port.
        """
        self._core.start_http(host, port, **options)
        url = self.http_url
        assert url is not None
        return url

    @property
    def base_url(self) -> str | None:
        """``http://host:port`` of the HTTP listener, or None before :meth:`start_http`."""
        return self._core.base_url()

    @property
    def http_url(self) -> str | None:
        """The Streamable HTTP endpoint (``…/mcp``), or None before :meth:`start_http`."""
        base = self.base_url
        return None if base is None else f"{base}/mcp"

    @property
    def sse_url(self) -> str | None:
        """The legacy HTTP+SSE endpoint (``…/sse``), or None before :meth:`start_http`."""
        base = self.base_url
        return None if base is None else f"{base}/sse"

    def _relay_path(self) -> str:
        if self._relay is None:
            import shutil
            import tempfile
            import weakref

            self._relay_dir = tempfile.mkdtemp(prefix="everything-mcp-")
            # Removed by stop(), or when the server is garbage-collected without it.
            weakref.finalize(self, shutil.rmtree, self._relay_dir, True)
            self._relay = self._core.start_relay(self._relay_dir)
        return self._relay

    @property
    def stdio_command(self) -> list[str]:
        """An argv that an MCP client can spawn to talk to this in-process server over stdio
        (its own interpreter, configuration in the arguments): the process relays stdin/stdout
        to this server, so Python tools, traffic and triggers work for stdio clients too."""
        return [sys.executable, "-m", "everything_mcp.relay", self._relay_path()]

    @property
    def stdio_params(self) -> dict[str, Any]:
        """``stdio_command`` as ``mcp.StdioServerParameters(**server.stdio_params)`` takes it."""
        command, *args = self.stdio_command
        return {"command": command, "args": args}

    def wait(self) -> None:
        """Block until :meth:`stop` is called from elsewhere or a signal handler raises."""
        self._core.wait()

    def connect(self) -> _core.Connection:
        """Open an in-process connection: ``send()`` frames, ``recv()`` the server's."""
        return self._core.connect()

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

        return report(self.traffic)

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

    def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to subscribers of ``uri`` (sessions that
        subscribed, listen streams whose ``resourceSubscriptions`` name it); return how many."""
        return self._core.notify_resource_updated(uri)

    def trigger(self, name: str) -> int:
        """Fire a loaded catalog's trigger, e.g. ``"review-lab.update"`` (every pending update of
        the review lab now, instead of after its delay); how many things it set off. The names:
        :attr:`trigger_names`; an unknown one raises ``ConfigError``."""
        return self._core.trigger(name)

    @property
    def trigger_names(self) -> list[str]:
        """The triggers the loaded catalogs offer (``POST /_control/triggers/{name}`` too)."""
        return self._core.trigger_names()

    def notify_list_changed(self, kind: str) -> None:
        """Send ``notifications/<kind>/list_changed`` (``tools``, ``resources``, ``prompts``) to
        every session and every listen stream that asked for it."""
        self._core.notify_list_changed(kind)

    def stop(self) -> None:
        """Stop serving; idempotent."""
        self._core.stop()
        with self._loop_lock:
            if self._loop_thread is not None:
                self._loop_thread.stop()
                self._loop_thread = None
        if self._relay_dir is not None:
            import shutil

            shutil.rmtree(self._relay_dir, ignore_errors=True)
            self._relay_dir = self._relay = None

    # --- authoring ---------------------------------------------------------------------------

    def _loop(self) -> LoopThread:
        with self._loop_lock:
            if self._loop_thread is None:
                self._loop_thread = LoopThread()
            return self._loop_thread

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        requires: str | None = None,
        task_support: str = "forbidden",
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function as a tool (sync or ``async def``).

        The name is the function's, the description its docstring, the ``inputSchema`` comes from
        its type hints (a ``Context`` parameter receives the request context). A ``str`` return
        is text; a dict, list, dataclass or model becomes ``structuredContent`` plus its JSON as
        text; content blocks (``everything_mcp.content``) and full results pass through. An
        exception is an ``isError`` result with its type and text (``ValueError: bad input``);
        raise ``RpcError`` to answer with a JSON-RPC error instead. ``requires`` shows the tool
        only to clients that declared that capability (e.g. ``"sampling"``).

        ``task_support`` (``execution.taskSupport``): ``"optional"`` runs a call as a task when the
        client asks for one (2025-11-25 ``params.task``) or can take one (2026-07-28, the tasks
        extension), ``"required"`` only as a task; ``"forbidden"`` (default) never. Run as a
        task, the function reports with ``ctx.status("...")`` and asks with ``ctx.elicit(...)``
        and the like as usual (see ``docs/tasks.md``).
        """
        if task_support not in ("forbidden", "optional", "required"):
            raise ValueError(f"task_support is 'forbidden', 'optional' or 'required', not {task_support!r}")

        def register(fn: Callable[..., Any]) -> Handle:
            schema, ctx_param = schema_of(fn)
            definition: dict[str, Any] = {
                "name": name or fn.__name__,
                "description": description or inspect.getdoc(fn) or "",
                "inputSchema": input_schema or schema,
            }
            for key, value in (("title", title), ("outputSchema", output_schema), ("annotations", annotations)):
                if value is not None:
                    definition[key] = value
            if task_support != "forbidden":  # forbidden is the default: listed without `execution`
                definition["execution"] = {"taskSupport": task_support}
            handle = Handle(fn, "tool", definition["name"])

            def invoke(arguments_json: str, core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                arguments = json.loads(arguments_json)
                return run_handler(handle, self._loop, arguments, Context(core_ctx), ctx_param, reply, tool_json)

            self._core.add_tool(json.dumps(definition), invoke, requires)
            return handle

        return register

    def resource(
        self, uri: str, *, name: str | None = None, mime_type: str = "text/plain", description: str | None = None
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function returning a resource's content (``str`` is text, ``bytes`` a
        blob, a dict/list its JSON)."""

        def register(fn: Callable[..., Any]) -> Handle:
            definition = {"uri": uri, "name": name or fn.__name__, "mimeType": mime_type}
            if description or inspect.getdoc(fn):
                definition["description"] = description or inspect.getdoc(fn) or ""
            handle = Handle(fn, "resource", uri)
            self._core.add_resource(json.dumps(definition), self._resource_invoker(handle, mime_type))
            return handle

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        mime_type: str = "text/plain",
        description: str | None = None,
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function of the template's variables returning the content of a matching
        resource."""

        def register(fn: Callable[..., Any]) -> Handle:
            definition = {"uriTemplate": uri_template, "name": name or fn.__name__, "mimeType": mime_type}
            if description or inspect.getdoc(fn):
                definition["description"] = description or inspect.getdoc(fn) or ""
            handle = Handle(fn, "resource", uri_template)
            invoker = self._resource_invoker(handle, mime_type)
            self._core.add_template(
                json.dumps(definition), lambda uri, variables, ctx, reply: invoker(uri, ctx, reply, variables)
            )
            return handle

        return register

    def _resource_invoker(self, handle: Handle, mime_type: str) -> Callable[..., Cancel]:
        _, ctx_param = schema_of(handle.fn)

        def invoke(uri: str, core_ctx: _core.Context, reply: _core.Reply, variables: str = "{}") -> Cancel:
            def contents(value: Any) -> str:
                item: dict[str, Any] = {"uri": uri, "mimeType": mime_type}
                if isinstance(value, bytes):
                    import base64

                    item["blob"] = base64.b64encode(value).decode()
                else:
                    item["text"] = value if isinstance(value, str) else json.dumps(value)
                return json.dumps([item])

            return run_handler(handle, self._loop, json.loads(variables), Context(core_ctx), ctx_param, reply, contents)

        return invoke

    def prompt(
        self, name: str | None = None, *, title: str | None = None, description: str | None = None
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function as a prompt: its parameters are the arguments (required unless
        they have a default); a ``str`` return is one user message, a list of strings or
        message dicts is the messages."""

        def register(fn: Callable[..., Any]) -> Handle:
            schema, ctx_param = schema_of(fn)
            required = set(schema.get("required", []))
            arguments = [
                {
                    "name": arg,
                    "required": arg in required,
                    **({"description": p["description"]} if "description" in p else {}),
                }
                for arg, p in schema["properties"].items()
            ]
            definition: dict[str, Any] = {
                "name": name or fn.__name__,
                "description": description or inspect.getdoc(fn) or "",
            }
            if title:
                definition["title"] = title
            if arguments:
                definition["arguments"] = arguments
            handle = Handle(fn, "prompt", definition["name"])

            def invoke(arguments_json: str, core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                arguments = json.loads(arguments_json)
                return run_handler(handle, self._loop, arguments, Context(core_ctx), ctx_param, reply, prompt_json)

            self._core.add_prompt(json.dumps(definition), invoke)
            return handle

        return register

    def method(self, name: str) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function as a custom JSON-RPC method (e.g. ``"vendor/echo"``): it receives
        the request's ``params`` as keyword arguments (and a ``Context`` if it asks for one) and
        returns the JSON result."""

        def register(fn: Callable[..., Any]) -> Handle:
            _, ctx_param = schema_of(fn)
            handle = Handle(fn, "method", name)

            def invoke(params_json: str, core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                params = {k: v for k, v in json.loads(params_json).items() if k != "_meta"}
                return run_handler(handle, self._loop, params, Context(core_ctx), ctx_param, reply, json.dumps)

            self._core.add_method(name, invoke)
            return handle

        return register

    def skill(self, path: str | os.PathLike[str]) -> str:
        """Serve the skill in folder ``path`` through the skills extension (SEP-2640) and
        return its URI, ``skill://<name>/SKILL.md``.

        The folder's ``SKILL.md`` must start with YAML frontmatter giving a ``name`` (the
        Agent Skills naming rules: lowercase letters, digits, single inner hyphens) and a
        ``description``. Every file under the folder, subfolders included, becomes a resource
        ``skill://<name>/<path>`` and an entry of the skill's manifest with its ``sha256:``
        digest and size; hidden files and folders (``.git``, ``.DS_Store``) are left out. The
        files are read once, now. Serving a skill declares the extension, so ``skills/list``,
        ``skills/get`` and ``resources/directory/read`` answer (2026-07-28); a skill with the
        same name replaces the earlier one. ``ConfigError`` when the folder is not a valid skill.
        """
        root = os.fspath(path)
        if not os.path.isdir(root):
            raise NotADirectoryError(f"a skill is a folder: {root!r}")
        files: list[tuple[str, bytes]] = []
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for name in sorted(names):
                full = os.path.join(folder, name)
                if name.startswith(".") or not os.path.isfile(full):
                    continue
                relative = os.path.relpath(full, root).replace(os.sep, "/")
                with open(full, "rb") as f:
                    files.append((relative, f.read()))
        return self._core.add_skill(files)

    def completion(self, ref: str, argument: str) -> Callable[[Callable[..., Any]], Handle]:
        """Register ``fn(value, arguments) -> list[str]`` (sync or ``async def``) completing
        ``argument`` of the prompt named ``ref`` (or of the resource template whose
        ``uriTemplate`` is ``ref``): ``value`` is the partial value, ``arguments`` the other
        arguments the client already filled in. A ``Context`` parameter receives the request
        context."""

        def register(fn: Callable[..., Any]) -> Handle:
            ref_type = "ref/resource" if "://" in ref else "ref/prompt"
            _, ctx_param = schema_of(fn)
            named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            params = [n for n, p in inspect.signature(fn).parameters.items() if n != ctx_param and p.kind in named]
            if len(params) < 2:
                raise TypeError(f"a completion takes (value, arguments); {fn.__name__} takes {params}")
            handle = Handle(fn, "completion", f"{ref} {argument}")

            def invoke(value: str, context_json: str, core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                kwargs = {params[0]: value, params[1]: json.loads(context_json)}
                return run_handler(handle, self._loop, kwargs, Context(core_ctx), ctx_param, reply, values_json)

            self._core.add_completion(ref_type, ref, argument, invoke)
            return handle

        return register

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

    def remove(self, item: Handle | str, kind: str = "tool") -> bool:
        """Remove a tool, resource or prompt (a handle, or a name/URI with its ``kind``); the
        connected clients get the matching ``list_changed``."""
        if isinstance(item, Handle):
            kind, item = item.kind, item.name
        return self._core.remove(kind, item)

    def log(self, level: str, data: Any, logger: str | None = None) -> int:
        """Send ``notifications/message`` to every connected client (each one's
        ``logging/setLevel`` applies); returns how many received it. Listen streams
        (2026-07-28) never get it: a filter cannot ask for log messages."""
        return self._core.log(level, json.dumps(data), logger)

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
