"""The Pythonic face of the server: construct, serve (stdio, HTTP, in-process connections, a
stdio command for clients to spawn), stop. What it offers besides comes from its parts:
:mod:`.server_authoring` (Python tools, resources, prompts), :mod:`.server_controls` (traffic,
report, faults, clock, auth lab, tasks) and :mod:`.server_outbound` (what it sends the clients)."""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _core
from .authoring.running import HandlerLoop
from .server_authoring import ServerAuthoring
from .server_controls import ServerControls
from .server_outbound import ServerOutbound

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import HttpOptions, ReplayOptions, ServerOptions

__all__ = ["Server"]


class Server(ServerAuthoring, ServerControls, ServerOutbound):
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
        self._loop = HandlerLoop()
        self._core.set_handler_loop(self._loop.schedule)
        # Stopped when collected, and at the latest at interpreter exit (before finalization,
        # when its handler threads can still leave Python cleanly).
        weakref.finalize(self, self._core.stop)
        self._relay: str | None = None
        self._relay_dir: str | None = None

    @classmethod
    def from_recording(
        cls,
        *files: str | os.PathLike[str],
        ignore: Sequence[str] | None = None,
        order: str | None = None,
        repeat: bool | None = None,
        upstream: str | None = None,
        record_mode: str | None = None,
        **options: Unpack[ServerOptions],
    ) -> Server:
        """A server that answers from recorded traffic (``record=`` / ``--record`` files)
        instead of a catalog: each request gets the recorded answer to the matching recorded
        request, after what the server sent while serving it (docs/replay.md).

        ``ignore``: the paths of a request the matching leaves out, JSON Pointers into
        ``{"id", "method", "params"}`` with ``*`` for any segment (default ``["/id",
        "/params/_meta"]``; ``[]`` matches exactly). ``order``: ``"any"`` (default) or
        ``"recorded"``. ``repeat``: a request whose recorded answers were all given gets the last
        again (default) or, with ``False``, an error. ``upstream``: the real server to record
        from, a command line or a Streamable HTTP URL; ``record_mode``: when it is asked,
        ``"none"``, ``"once"`` (default: when the first file does not exist yet),
        ``"new_episodes"`` or ``"all"``. Every other option is a server option (``record=``
        records the replay, ``clock="manual"`` times what followed an answer).
        """
        if not files:
            raise TypeError("from_recording() needs at least one recording file")
        replay: ReplayOptions = {"files": [os.fspath(f) for f in files]}
        if ignore is not None:
            replay["ignore"] = list(ignore)
        if order is not None:
            replay["order"] = order
        if repeat is not None:
            replay["repeat"] = repeat
        if upstream is not None:
            replay["upstream"] = upstream
        if record_mode is not None:
            replay["record_mode"] = record_mode
        options["replay"] = replay
        return cls(**options)

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
    def limit_hits(self) -> dict[str, int]:
        """How often each bound on what clients can make the server hold refused or dropped
        something since it started, by the option that sets it (``max_tasks``,
        ``stream_buffer_bytes``, ``event_store_bytes``, ...; docs/reliability.md). A bound that
        bites is counted here, never silent."""
        return dict(self._core.limit_hits())

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

    def stop(self) -> None:
        """Stop serving; idempotent."""
        self._core.stop()
        self._loop.stop()
        if self._relay_dir is not None:
            import shutil

            shutil.rmtree(self._relay_dir, ignore_errors=True)
            self._relay_dir = self._relay = None

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
