"""Shared helpers: a real `python -m everything_mcp` subprocess driven line by line."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp.types import TextContent

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
"""The official client's two eras, for a test of both: "legacy" opens with `initialize`, "auto"
(its default) with `server/discover` (2026-07-28)."""

WAIT = 10.0
"""Upper bound of every wait in these tests (they normally take milliseconds)."""

SERVER_CMD = [sys.executable, "-m", "everything_mcp"]


def native_binary() -> str | None:
    """The native `everything-mcp` under test: `$EVERYTHING_MCP_BINARY`, or the one the wheel
    installed beside this Python (the test command's); `None` when there is neither (a
    `maturin develop` environment, whose `everything-mcp` is no native binary)."""
    given = os.environ.get("EVERYTHING_MCP_BINARY")
    if given:
        return os.path.abspath(given)
    beside = os.path.join(os.path.dirname(sys.executable), "everything-mcp")
    try:
        with open(beside, "rb") as f:
            native = f.read(2) != b"#!"  # a console script starts with its interpreter
    except OSError:
        return None
    return beside if native else None


def native_cmd() -> list[str]:
    """The native command, or the test is skipped (and fails under CI, where the wheel must
    have installed it)."""
    binary = native_binary()
    if binary is None:
        reason = "no native everything-mcp: set EVERYTHING_MCP_BINARY (cargo build --bin everything-mcp)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return [binary]


@pytest.fixture(params=["python", "native"])
def cli_cmd(request: pytest.FixtureRequest) -> list[str]:
    """The serving commands' two launchers, one command line: `python -m everything_mcp` and
    the native `everything-mcp` (a test using this runs against both)."""
    return SERVER_CMD if request.param == "python" else native_cmd()


EVERYTHING_TOOLS = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
]
"""The reference's 13 always-visible tools, in its order (what a client without capabilities sees):
the 12 static ones, then the research task it registers after `initialized`."""


STATELESS = "2026-07-28"
"""The stateless era's revision."""


def envelope(capabilities: dict[str, Any] | None = None, client: str | None = "pytest") -> dict[str, Any]:
    """A 2026-07-28 request's `_meta` envelope: the revision, these client capabilities (none by
    default) and, unless `client` is None, a clientInfo of that name."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }
    if client is not None:
        meta["io.modelcontextprotocol/clientInfo"] = {"name": client, "version": "1"}
    return meta


def init_params(version: str = "2025-11-25") -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}


class StdioServer:
    """A server subprocess; lines are written raw and read back with a timeout."""

    def __init__(self, *args: str, command: list[str] | None = None) -> None:
        """``python -m everything_mcp *args``, or ``command`` (e.g. ``srv.stdio_command``)."""
        catalogs = args[args.index("--catalog") + 1].split(",") if "--catalog" in args else ["everything"]
        self.announces_tools = "everything" in catalogs
        """Whether `notifications/initialized` is followed by a `tools/list_changed`: the
        `everything` catalog announces `simulate-research-query` then, as the reference does."""
        self.proc = subprocess.Popen(
            command or [*SERVER_CMD, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def write(self, data: bytes | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.encode() if isinstance(data, str) else data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any] | list[Any]) -> None:
        self.write(json.dumps(message) + "\n")

    def recv(self, timeout: float = WAIT) -> Any:
        line = self._lines.get(timeout=timeout)
        assert line is not None, "the server closed stdout"
        return json.loads(line)

    def request(self, id: int | str, method: str, params: dict[str, Any] | None = None) -> Any:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.recv()

    def initialize(self, version: str = "2025-11-25") -> Any:
        """The handshake, with no client capabilities; the `tools/list_changed` that follows it
        (see `announces_tools`) is read, so the next frame is the answer to what comes next."""
        result = self.request(0, "initialize", init_params(version))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if self.announces_tools:
            assert self.recv() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        return result

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=WAIT)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None and not f.closed:
                f.close()


@pytest.fixture
def stdio_server() -> Iterator[StdioServer]:
    server = StdioServer("stdio")
    yield server
    server.stop()


@pytest.fixture
def stdio() -> Iterator[StdioServer]:
    """A `python -m everything_mcp stdio --catalog conformance` subprocess (a module may
    override it with its own `stdio`)."""
    server = StdioServer("stdio", "--catalog", "conformance")
    yield server
    server.stop()


@pytest.fixture
def anyio_backend() -> str:
    """The event loop of every `pytest.mark.anyio` test: asyncio, the official client's."""
    return "asyncio"


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """Runs a test that takes it twice: over stdio, then over Streamable HTTP (a test may
    parametrize `transport` itself instead)."""
    return str(request.param)


def counter_resource(srv: Any) -> dict[str, int]:
    """Registers `demo://counter` on `srv`, whose text is `v<state["v"]>`; returns that state, for
    a test to move the resource to a new version."""
    state = {"v": 1}

    @srv.resource("demo://counter")
    def counter() -> str:
        """A counter."""
        return f"v{state['v']}"

    return state


async def climb_the_ladder(srv: Any, mode: str = "legacy") -> None:
    """The official client over `srv`'s stdio, up the whole subscription ladder of
    `demo://counter` (`counter_resource`): it lists, reads, subscribes, is told of the update,
    re-reads the new version and unsubscribes."""
    from mcp import Client, StdioServerParameters, types

    state = counter_resource(srv)
    updated = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(getattr(message, "root", message), types.ResourceUpdatedNotification):
            updated.set()

    with anyio.fail_after(WAIT):
        params = StdioServerParameters(**srv.stdio_params)
        async with Client(params, mode=mode, message_handler=on_message) as client:  # type: ignore[arg-type]
            await client.list_resources()
            await client.read_resource("demo://counter")
            await client.subscribe_resource("demo://counter")
            state["v"] = 2
            srv.notify_resource_updated("demo://counter")
            await updated.wait()
            await client.read_resource("demo://counter")
            await client.unsubscribe_resource("demo://counter")


async def accept_an_elicitation(srv: Any) -> None:
    """The official client in its default mode (2026-07-28) over `srv`'s stdio calls the
    conformance catalog's `test_elicitation` and accepts the question, answered through the
    input_required round."""
    from mcp import Client, StdioServerParameters, types

    async def elicit(_context: object, _params: object) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"confirm": True})

    with anyio.fail_after(WAIT):
        async with Client(StdioServerParameters(**srv.stdio_params), elicitation_callback=elicit) as client:
            await client.call_tool("test_elicitation", {"message": "ok?"})


def texts(result: Any) -> list[str]:
    """The text blocks of a tool result (or of anything with `content`), in order."""
    return [c.text for c in result.content if isinstance(c, TextContent)]


@contextlib.contextmanager
def cli_http_server(*args: str, command: list[str] = SERVER_CMD) -> Iterator[str]:
    """`python -m everything_mcp http --port 0 ARGS` (or `command`'s) as a subprocess: yields
    the `/mcp` URL its first stderr line announces, and ends it afterwards."""
    proc = subprocess.Popen(
        [*command, "http", "--port", "0", *args],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        assert line, "the server printed nothing"
        yield json.loads(line)["url"]
    finally:
        proc.terminate()
        proc.wait(timeout=WAIT)
        proc.stderr.close()


@pytest.fixture
def http_server() -> Iterator[Any]:
    """An in-process server (the default catalog) serving HTTP."""
    from everything_mcp import Server

    with Server() as srv:
        srv.start_http()
        yield srv


@pytest.fixture
def http(http_server: Any) -> Iterator[Any]:
    """An httpx client on `http_server`'s base URL."""
    import httpx

    with httpx.Client(base_url=http_server.base_url or "", timeout=WAIT) as client:
        yield client
