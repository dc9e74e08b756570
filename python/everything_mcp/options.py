"""The options of a server and of its HTTP listener, typed once for Python.

The options themselves (what each means, its default) are defined once, in Rust
(``src/options/``: ``ServerOptions``, ``HttpOptions``); ``everything_mcp.DEFAULTS`` holds their
defaults and ``python -m everything_mcp http --help`` describes them. These ``TypedDict`` s give
them their Python types, for ``Server(**options)``, ``Server.start_http(host, port, **options)``,
the pytest fixtures and marker, and the CLI. Every key is optional, and ``None`` is the
default, as an omitted key is. ``tests/test_options.py`` checks that they name exactly the
Rust types' options.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

__all__ = ["HttpOptions", "Options", "ReplayOptions", "ServerOptions"]


class ReplayOptions(TypedDict, total=False):
    """``Server(replay={...})`` (``Server.from_recording``): how a server replays recorded
    traffic (docs/replay.md)."""

    files: Sequence[str | os.PathLike[str]]
    ignore: Sequence[str] | None
    order: str | None
    repeat: bool | None
    upstream: str | None
    record_mode: str | None


class ServerOptions(TypedDict, total=False):
    """``Server(**options)``: every option of a server."""

    catalogs: Sequence[str] | None
    record: str | os.PathLike[str] | None
    replay: ReplayOptions | None
    dialect: str | None
    revisions: Sequence[str] | None
    era: str | None
    page_size: int | None
    max_message_bytes: int | None
    keep_traffic: int | None
    keep_traffic_bytes: int | None
    max_pending_requests: int | None
    max_tasks: int | None
    max_listen_streams: int | None
    name: str | None
    title: str | None
    version: str | None
    instructions: str | None
    worker_threads: int | None
    tick: float | None
    update_delay: float | None
    send_list_changed: bool | None
    expose_env: bool | None
    apps: str | None
    task_ttl: float | None
    task_poll_interval: float | None
    clock: str | None


class HttpOptions(TypedDict, total=False):
    """``Server.start_http(host, port, **options)``: every option of an HTTP listener besides its
    address."""

    strict_port: bool | None
    json_response: bool | None
    allow_hosts: Sequence[str] | None
    allow_origins: Sequence[str] | None
    max_sessions: int | None
    session_idle_timeout: float | None
    event_store_capacity: int | None
    event_store_bytes: int | None
    stream_buffer_bytes: int | None
    max_streams_per_session: int | None
    max_streams: int | None
    control_read_bytes: int | None
    sse_retry: float | None
    keepalive: float | None
    standalone_stream: bool | None
    control: bool | None
    control_token: str | None
    lab: bool | None
    auth: str | None
    tokens: Sequence[str] | None
    scopes: Sequence[str] | None
    token_ttl: float | None
    tool_scopes: Mapping[str, str] | None
    issuer_path: str | None
    resource_metadata_path: str | None
    clients: Sequence[Mapping[str, Any]] | None
    client_documents: Mapping[str, Mapping[str, Any]] | None
    consent: str | None


class Options(ServerOptions, HttpOptions, total=False):
    """Both groups, as the pytest fixtures and ``@pytest.mark.everything_mcp(...)`` take them (each
    server they start serves HTTP on an ephemeral loopback port), plus the fault rules to put in
    force before the test (``faults=[{"match": ..., "action": ...}, "slow-server"]``: rules, or
    the names of presets; docs/faults.md)."""

    faults: list[dict[str, Any] | str] | None
