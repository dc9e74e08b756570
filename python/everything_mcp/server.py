"""The Pythonic face of the server: construct, serve, connect, read the traffic."""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from . import _core

if TYPE_CHECKING:
    from .traffic import TrafficRecord

__all__ = ["Server"]


class Server:
    """An MCP test server running inside this process.

    ``Server()`` serves the ``everything`` catalog on every protocol revision.  Serve this
    process's stdin/stdout with :meth:`run_stdio`, or open in-process connections with
    :meth:`connect`.  Every frame in and out is recorded: read it with :attr:`traffic`.

    Args:
        catalogs: built-in surfaces to load (``"everything"``, ``"none"``).
        record: also append every frame to this JSON-lines file.
        revisions: protocol revisions to accept (default: all).
        page_size: items per ``*/list`` page (default: one page).
        max_message_bytes: largest accepted frame (default 64 MiB).
        keep_traffic: most records kept in memory, oldest dropped first (default: all).
        name, title, version, instructions: what ``initialize`` reports (a custom ``name``
            without ``title`` reports no title).
        worker_threads: threads of the server's runtime.
        tick: seconds between the ticks of every periodic catalog timer (simulated logs,
            subscription updates, roots sync) instead of the reference's 5-15 s.
        update_delay: ``review-lab``: seconds from a subscription to the resource's update.
        send_list_changed: ``review-lab``: also send ``resources/list_changed`` with it.
        expose_env: ``get-env``/``printEnv`` show secret-looking variables (names with TOKEN,
            SECRET, KEY, PASSWORD, CREDENTIAL or AUTH), which are ``<redacted>`` by default.
    """

    def __init__(
        self,
        *,
        catalogs: Sequence[str] = ("everything",),
        record: str | os.PathLike[str] | None = None,
        revisions: Sequence[str] | None = None,
        page_size: int | None = None,
        max_message_bytes: int | None = None,
        keep_traffic: int | None = None,
        name: str | None = None,
        title: str | None = None,
        version: str | None = None,
        instructions: str | None = None,
        worker_threads: int = 2,
        tick: float | None = None,
        update_delay: float = 5.0,
        send_list_changed: bool = False,
        expose_env: bool = False,
    ) -> None:
        self._core = _core.Server(
            catalogs=list(catalogs),
            record=os.fspath(record) if record is not None else None,
            revisions=list(revisions) if revisions is not None else None,
            page_size=page_size,
            max_message_bytes=max_message_bytes,
            keep_traffic=keep_traffic,
            name=name,
            title=title,
            version=version,
            instructions=instructions,
            worker_threads=worker_threads,
            tick=tick,
            update_delay=update_delay,
            send_list_changed=send_list_changed,
            expose_env=expose_env,
        )

    def run_stdio(self) -> None:
        """Serve this process's stdin/stdout until stdin closes.

        Signals are handled by Python: a handler that raises (Ctrl-C's ``KeyboardInterrupt``)
        stops the server cleanly, then the exception propagates.
        """
        self._core.run_stdio()

    def start_http(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        strict_port: bool = False,
        json_response: bool = False,
        allow_hosts: Sequence[str] = (),
        allow_origins: Sequence[str] = (),
        max_sessions: int = 1000,
        session_idle_timeout: float | None = 1800.0,
        event_store_capacity: int = 1024,
        sse_retry: float = 1.0,
        keepalive: float = 15.0,
        standalone_stream: bool = True,
    ) -> str:
        """Serve HTTP in this process and return the Streamable HTTP URL (``…/mcp``).

        One listener serves Streamable HTTP at ``/mcp``, the legacy HTTP+SSE transport at
        ``/sse`` + ``/message``, and ``GET /health``. ``port=0`` picks a free port; a busy port
        moves on to the next of 20 unless ``strict_port``. Only loopback ``Host``/``Origin``
        values are accepted unless widened with ``allow_hosts``/``allow_origins`` (``"*"``: any).
        ``json_response`` answers POSTed requests with ``application/json`` instead of SSE.
        :meth:`stop` closes open streams and frees the port.
        """
        self._core.start_http(
            host,
            port,
            strict_port=strict_port,
            json_response=json_response,
            allow_hosts=list(allow_hosts),
            allow_origins=list(allow_origins),
            max_sessions=max_sessions,
            session_idle_timeout=session_idle_timeout,
            event_store_capacity=event_store_capacity,
            sse_retry=sse_retry,
            keepalive=keepalive,
            standalone_stream=standalone_stream,
        )
        url = self.http_url
        assert url is not None
        return url

    @property
    def base_url(self) -> str | None:
        """``http://host:port`` of the HTTP listener, or None before :meth:`start_http`."""
        address = self._core.http_address()
        if address is None:
            return None
        host, port = address
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

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

    def wait(self) -> None:
        """Block until :meth:`stop` is called from elsewhere or a signal handler raises."""
        self._core.wait()

    def connect(self) -> _core.Connection:
        """Open an in-process connection: ``send()`` frames, ``recv()`` the server's."""
        return self._core.connect()

    @property
    def traffic(self) -> list[TrafficRecord]:
        """Every recorded frame so far, in order."""
        from .traffic import parse_record

        return [parse_record(line) for line in self._core.traffic()]

    def traffic_since(self, seq: int) -> list[TrafficRecord]:
        """Recorded frames after ``seq``."""
        from .traffic import parse_record

        return [parse_record(line) for line in self._core.traffic(seq)]

    def clear_traffic(self) -> None:
        """Forget the in-memory traffic (a record file keeps everything)."""
        self._core.clear_traffic()

    @property
    def session_count(self) -> int:
        """How many sessions are open, on any transport (a closed session no longer counts)."""
        return self._core.session_count()

    @property
    def tool_names(self) -> list[str]:
        """Registered tool names, in ``tools/list`` order."""
        return self._core.tool_names()

    def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to subscribers of ``uri``; return how many."""
        return self._core.notify_resource_updated(uri)

    def notify_list_changed(self, kind: str) -> None:
        """Send ``notifications/<kind>/list_changed`` (``tools``, ``resources``, ``prompts``)."""
        self._core.notify_list_changed(kind)

    def stop(self) -> None:
        """Stop serving; idempotent."""
        self._core.stop()

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
