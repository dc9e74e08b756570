"""The private Rust extension behind everything_mcp. Use the public API in everything_mcp."""

import os
from collections.abc import Callable
from types import TracebackType
from typing import Any, final

from typing_extensions import Unpack

from everything_mcp.options import HttpOptions, ServerOptions

__all__ = [
    "CATALOGS",
    "DEFAULTS",
    "ERAS",
    "HTTP_OPTIONS",
    "LAB_PAGE",
    "LAB_POLICY",
    "SERVER_OPTIONS",
    "SUPPORTED_REVISIONS",
    "ClientError",
    "ConfigError",
    "Connection",
    "ConnectionClosedError",
    "Context",
    "EverythingMcpError",
    "GatedTask",
    "InputRequired",
    "Invoker",
    "LoopDrain",
    "PanicException",
    "Pending",
    "Reply",
    "Server",
    "TaskGate",
    "__version__",
    "cli_main",
    "init_logging",
]

__version__: str
SUPPORTED_REVISIONS: list[str]
ERAS: list[str]
"""The values of ``era``: ``handshake``, ``stateless`` or ``both``."""
CATALOGS: list[str]
DEFAULTS: dict[str, Any]
LAB_PAGE: str
"""The lab page (``/_lab/``): one self-contained HTML file, also the HTML report's template."""
LAB_POLICY: str
"""The ``Content-Security-Policy`` the lab page is served with."""
"""Every option's default (durations in seconds; ``None``: unset), read from the Rust core."""
SERVER_OPTIONS: tuple[str, ...]
"""The names of the options ``Server()`` takes, in the Rust type's order."""
HTTP_OPTIONS: tuple[str, ...]
"""The names of the options ``Server.start_http()`` takes besides the address."""

class PanicException(BaseException):
    """PyO3's exception for a Rust panic (a handler raising it must not take the server down)."""

class EverythingMcpError(Exception):
    """Base class of every everything-mcp error."""

class ConfigError(EverythingMcpError):
    """A server was configured wrongly."""

class ConnectionClosedError(EverythingMcpError):
    """The connection is closed."""

class InputRequired(BaseException):
    """A stateless-era ask whose answer is not known yet: this round of the request is over."""

class ClientError(EverythingMcpError):
    """The client answered a server request with an error, lacks the capability, or did not answer in time."""

@final
class Context:
    """The request context handed to a Python handler."""

    @property
    def request_id(self) -> str: ...
    @property
    def arguments_bytes(self) -> int: ...
    @property
    def session_id(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def meta(self) -> str: ...
    @property
    def client_capabilities(self) -> str: ...
    @property
    def cancelled(self) -> bool: ...
    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None: ...
    def log(self, level: str, data: str, logger: str | None = None) -> None: ...
    def ask(
        self, method: str, params: str | None = None, timeout: float | None = None, key: str | None = None
    ) -> str: ...
    def ask_async(
        self,
        method: str,
        params: str | None,
        timeout: float | None,
        callback: Callable[[Any, BaseException | None], None],
        key: str | None = None,
    ) -> Pending:
        """`ask` without waiting: `callback(answer_json, None)` or `callback(None, ClientError)` later."""
    def ask_all(self, asks: str, timeout: float | None = None) -> str:
        """Several asks at once (`[[key, method, params|null], ...]` JSON); a JSON array of answers."""
    def ask_all_async(
        self, asks: str, timeout: float | None, callback: Callable[[Any, BaseException | None], None]
    ) -> Pending:
        """`ask_all` without waiting."""
    @property
    def round_state(self) -> str: ...
    def set_round_state(self, state: str) -> None:
        """Replace the state carried to the next round (JSON text)."""
    @property
    def stateless(self) -> bool: ...
    @property
    def task_id(self) -> str | None: ...
    def task_status(self, message: str) -> None:
        """Set the status message of the task this work runs as (no-op outside a task)."""

@final
class Invoker:
    """A registered function as the core calls it: `call(*args, ctx, reply)`, and whether it runs
    on the event-loop thread (`async def`) rather than a runner thread."""

    def __new__(cls, call: Callable[..., _Cancel], on_loop: bool) -> Invoker: ...
    @property
    def on_loop(self) -> bool: ...
    @on_loop.setter
    def on_loop(self, on_loop: bool) -> None: ...

@final
class LoopDrain:
    """Starts the `async def` handler calls queued for the event-loop thread."""

    def __call__(self, *args: object, **kwargs: object) -> None: ...
    def fileno(self) -> int | None:
        """The descriptor the loop watches (`loop.add_reader`) to be woken; None where there is none."""
    def watched(self, watched: bool) -> None:
        """Whether the loop watches the descriptor (calls then wake it through it)."""

@final
class Reply:
    """Where a Python handler's answer goes, once (the first answer wins)."""

    def result(self, json: str) -> None:
        """Answer with the handler's result (JSON text)."""
    def tool_text(self, text: str) -> None:
        """Answer a tool call with one text block (`{"content": [{"type": "text", "text": text}]}`)."""
    def error(self, code: int, message: str, data: str | None = None) -> None:
        """Answer with this JSON-RPC error (`data` JSON text; None: no data member)."""
    def fail(self, text: str) -> None:
        """Answer with a failure: an isError result for a tool, -32603 elsewhere."""

@final
class Pending:
    """Work started for an async caller."""

    def cancel(self) -> None:
        """Abandon the work; the callback is not called."""

_Cancel = Callable[[], None] | None
"""What an invoker returns: how to cancel an async handler still running."""

def init_logging(level: str) -> None:
    """Send the core's diagnostics to stderr at `level` (e.g. "warn", "debug"). First call wins."""

def cli_main(args: list[str]) -> int:
    """Run a serving command (`stdio`, `http`, `sse`; help, version) of the core's command line,
    given its arguments; returns the exit status. Signal handlers' exceptions propagate once the
    server has stopped."""

@final
class Server:
    """A running MCP server inside this process."""

    def __new__(cls, **options: Unpack[ServerOptions]) -> Server: ...
    def run_stdio(self) -> None:
        """Serve stdin/stdout until stdin closes; a signal handler's exception propagates."""
    def start_http(self, host: str | None = None, port: int = 0, **options: Unpack[HttpOptions]) -> tuple[str, int]:
        """Serve /mcp, /sse, /message and /health; return the bound (host, port)."""
    def start_relay(self, directory: str | os.PathLike[str]) -> str:
        """Serve stdio connections relayed over a Unix socket in directory; return its path."""
    def base_url(self) -> str | None:
        """``http://host:port`` of the HTTP listener, or None."""
    def wait(self) -> None:
        """Block until stop() is called or a signal handler raises."""
    def connect(self) -> Connection:
        """Open an in-process connection."""
    def traffic(self, since: int = 0) -> list[str]:
        """Recorded frames with seq > since, each one JSON text."""
    def traffic_read(self, since: int = 0) -> tuple[list[str], int]:
        """Recorded frames with seq > since, and how many after since the memory bound dropped."""
    def limit_hits(self) -> list[tuple[str, int]]:
        """How often each bound refused or dropped something, by the option that sets it."""
    def traffic_stats(self) -> dict[str, int | None]:
        """kept, kept_bytes, dropped, dropped_total, keep_traffic, keep_traffic_bytes."""
    def traffic_count(self) -> int:
        """How many frames were recorded so far."""
    def clear_traffic(self) -> None:
        """Forget the in-memory traffic."""
    def add_fault(self, rule: str) -> str:
        """Put a fault rule (JSON text) in force; return its id."""
    def load_faults(self, text: str) -> list[str]:
        """Put every rule of a fault file's text in force (all or none); return their ids."""
    def add_fault_preset(self, name: str, seed: int = 0) -> list[str]:
        """Put fault preset name's rules in force, drawing from seed; return their ids."""
    def faults(self) -> list[str]:
        """The fault rules in force, each JSON text with its hits."""
    def fault_hits(self, id: str) -> int | None:
        """How many frames rule id acted on; None when it is not in force."""
    def remove_fault(self, id: str) -> bool:
        """Take fault rule id out; whether it was in force."""
    def clear_faults(self) -> None:
        """Take every fault rule out."""
    def auth_clients(self) -> str:
        """The auth lab's registered clients (without secrets), as JSON text."""
    def auth_tokens(self) -> str:
        """The auth lab's issued access tokens (never the tokens themselves), as JSON text."""
    def auth_register(self, metadata: str) -> str:
        """Registers a client with the auth lab (metadata: JSON text); the answer, as JSON text."""
    def auth_add_document(self, url: str, document: str) -> None: ...
    def auth_consent(self, answers: str) -> list[str]: ...
    def auth_migrate(self) -> str: ...
    def auth_end(self, jti: str | None, why: str) -> int:
        """Ends the access token jti (every one when None) as why: revoked or expired."""
    def trigger(self, name: str) -> int:
        """Fire the loaded catalogs' trigger name; how many things it set off."""
    def trigger_names(self) -> list[str]:
        """The triggers the loaded catalogs offer."""
    def notify_resource_updated(self, uri: str) -> int:
        """Send notifications/resources/updated to subscribers of uri; return how many."""
    def notify_list_changed(self, kind: str) -> None:
        """Send notifications/<kind>/list_changed (tools, resources, prompts)."""
    def add_tool(self, definition: str, invoker: Invoker, requires: str | None = None) -> None:
        """Register a tool: listed as `definition`, served by `invoker(arguments, ctx, reply)`."""
    def add_resource(self, definition: str, invoker: Invoker) -> None:
        """Register a resource served by `invoker(uri, ctx, reply)` (a contents JSON array)."""
    def add_template(self, definition: str, invoker: Invoker) -> None:
        """Register a template served by `invoker(uri, variables, ctx, reply)`."""
    def add_prompt(self, definition: str, invoker: Invoker) -> None:
        """Register a prompt served by `invoker(arguments, ctx, reply)`."""
    def add_method(self, name: str, invoker: Invoker) -> None:
        """Register a custom JSON-RPC method served by `invoker(params, ctx, reply)`."""
    def set_handler_loop(self, schedule: Callable[[LoopDrain], object]) -> None:
        """How the `async def` handlers' event-loop thread is reached: `schedule(drain)` makes it
        call `drain()` soon (`loop.call_soon_threadsafe`)."""
    def add_skill(self, files: list[tuple[str, bytes]]) -> str:
        """Serve a skill made of `(path, bytes)` files (SEP-2640); returns its `SKILL.md` URI."""
    def add_completion(self, ref_type: str, ref_name: str, argument: str, invoker: Invoker) -> None:
        """Register completions: `invoker(value, context_arguments, ctx, reply)` (a JSON array of strings)."""
    def ask(
        self, method: str, params: str | None = None, session: str | None = None, timeout: float = 30.0
    ) -> list[tuple[str, str]]:
        """Ask one session's client (or every initialized one's) something; `[(session, answer_json)]`."""
    def ask_async(
        self,
        method: str,
        params: str | None,
        session: str | None,
        timeout: float,
        callback: Callable[[Any, BaseException | None], None],
    ) -> Pending:
        """`ask` without waiting: `callback([(session, answer_json)], None)` or `callback(None, error)` later."""
    def notify(self, method: str, params: str | None = None, session: str | None = None) -> int:
        """Send a notification to one session or every initialized one."""
    def reset(self) -> None:
        """No fault rules, no traffic kept, a manual clock's elapsed at zero."""
    def advance_clock(self, seconds: float) -> float:
        """Advance a manual clock (GIL released); seconds advanced since the start."""
    def advance_clock_async(self, seconds: float, callback: Callable[[Any, BaseException | None], None]) -> Pending:
        """`advance_clock` without waiting: `callback(elapsed, None)` or `callback(None, error)` later."""
    @property
    def clock_elapsed(self) -> float | None:
        """Seconds a manual clock has been advanced; None on the real clock."""
    @property
    def clock_kind(self) -> str:
        """`"real"` or `"manual"`."""
    def remove(self, kind: str, name: str) -> bool:
        """Remove a tool, resource (or template) or prompt."""
    def log(self, level: str, data: str, logger: str | None = None) -> int:
        """Send notifications/message to every initialized session."""
    def wait_traffic(self, since: int, timeout: float) -> bool:
        """Wait until a record with seq > since exists (GIL released)."""
    def session_count(self) -> int:
        """How many sessions are open, on any transport."""
    def listener_count(self) -> int:
        """How many subscriptions/listen streams are open, on any transport."""
    def tool_names(self) -> list[str]:
        """Registered tool names in tools/list order."""
    def task_gate(self, tool: str) -> TaskGate:
        """Open (or reuse) the test gate of `tool`: its tasks are held for the test."""
    def tasks(self) -> str:
        """The live tasks, oldest first, as a JSON array."""
    def wait_task(self, id: str, statuses: list[str], timeout: float) -> bool:
        """Wait until task `id` has one of `statuses` (any terminal one when empty)."""
    def stop(self) -> None:
        """Stop every connection and the runtime; idempotent."""
    def __enter__(self) -> Server: ...
    def __exit__(
        self,
        _exc_type: type[BaseException] | None,
        _exc_value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None: ...

@final
class Connection:
    """The client end of an in-process connection."""

    @property
    def id(self) -> str:
        """The session id (the conn field of its traffic records)."""
    def send(self, frame: str | bytes) -> None:
        """Send one frame to the server."""
    def recv(self, timeout: float | None = None) -> str | None:
        """The next frame from the server, or None after timeout seconds."""
    def close(self) -> None:
        """Close the client side."""

@final
class TaskGate:
    """A test's gate on one tool: tasks of that tool are held for the test."""

    @property
    def tool(self) -> str: ...
    def next_task(self, timeout: float) -> GatedTask:
        """The next held task not handed out yet, waiting for it (TimeoutError)."""
    def next_task_async(self, timeout: float, callback: Callable[[Any, BaseException | None], None]) -> Pending:
        """`next_task` without waiting."""
    def current(self, timeout: float) -> GatedTask:
        """The oldest held task that has not ended, waiting for one."""
    def current_async(self, timeout: float, callback: Callable[[Any, BaseException | None], None]) -> Pending:
        """`current` without waiting."""
    def held(self) -> list[GatedTask]:
        """Every task held so far, oldest first."""
    def close(self) -> bool:
        """Remove the gate: later tasks run the handler again."""

@final
class GatedTask:
    """One task a gate holds."""

    @property
    def id(self) -> str: ...
    def info(self) -> str:
        """The task as `Server.tasks` lists it (JSON text)."""
    def status(self, message: str, timeout: float) -> bool:
        """Set the status message; False if the task had ended."""
    def ask(self, method: str, params: str | None, timeout: float, key: str | None = None) -> str:
        """Ask the client through the task; the answer as JSON text."""
    def ask_async(
        self,
        method: str,
        params: str | None,
        timeout: float,
        callback: Callable[[Any, BaseException | None], None],
        key: str | None = None,
    ) -> Pending:
        """`ask` without waiting."""
    def complete(self, result: str, timeout: float) -> bool:
        """End the task completed with this result (JSON text); False if it had ended."""
    def fail(self, code: int, message: str, data: str | None, timeout: float) -> bool:
        """End the task failed with this JSON-RPC error; False if it had ended."""
    def wait_status(self, statuses: list[str], timeout: float) -> bool:
        """Wait until the status is one of `statuses` (any terminal one when empty)."""
    def wait_status_async(
        self, statuses: list[str], timeout: float, callback: Callable[[Any, BaseException | None], None]
    ) -> Pending:
        """`wait_status` without waiting."""
