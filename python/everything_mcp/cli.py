"""The command line.

``python -m everything_mcp [stdio|http|streamableHttp|sse|config] [options]``. With no command
it serves stdio, as the reference server does (clients spawn it that way).
"""

from __future__ import annotations

import os
import signal
import sys

from . import _core

# Every stdio client spawns this module, so its start-up time is a product figure
# (docs/benchmarks.md): a bare `stdio` (what clients spawn) imports neither `argparse` nor
# `typing` nor `json`, and builds no parser.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import FrameType
    from typing import Any

__all__ = ["main"]

LOG_LEVELS = ("off", "error", "warn", "info", "debug", "trace")
_LOG_ALIASES = {"warning": "warn"}
DEFAULT_PORT = 3001
"""The reference server's default port (also read from ``PORT``)."""

_COMMANDS = ("stdio", "http", "streamableHttp", "sse", "config")


class _Terminated(Exception):
    """Raised by the SIGTERM handler so the server stops cleanly."""


def _server_defaults() -> dict[str, Any]:
    """The default of every option `stdio`, `http` and `sse` share: the parser's (through
    ``set_defaults``) and the bare ``stdio`` command's, which is served without a parser.
    ``None`` leaves the setting to the core, whose defaults (``_core.DEFAULTS``) are written
    once, in Rust; only the reference lab's environment variables are read here."""
    delay = os.environ.get("MCP_TEST_UPDATE_DELAY_SECONDS")
    list_changed = os.environ.get("MCP_TEST_SEND_LIST_CHANGED")
    return {
        "record": None,
        "log_level": "warn",
        "revision": None,
        "era": None,
        "page_size": None,
        "max_message_bytes": None,
        "tick_ms": None,
        "update_delay": float(delay) if delay else None,
        "send_list_changed": list_changed.lower() == "true" if list_changed else None,
        "expose_env": None,
        "task_ttl": None,
        "catalog": None,
    }


def _log_level(value: str) -> str:
    import argparse

    level = _LOG_ALIASES.get(value.lower(), value.lower())
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"invalid level {value!r} (choose from {', '.join(LOG_LEVELS)})")
    return level


def _count(value: str) -> int:
    """A non-negative integer option."""
    import argparse

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {n}")
    return n


def _catalogs(value: str) -> list[str]:
    import argparse

    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in _core.CATALOGS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown catalog {value!r} (choose from {', '.join(_core.CATALOGS)})")
    return names


def _port(value: str) -> int:
    import argparse

    n = _count(value)
    if n > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, got {n}")
    return n


def _default_port() -> int:
    try:
        return int(os.environ.get("PORT", DEFAULT_PORT))
    except ValueError:
        return DEFAULT_PORT


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, only that command gets its options (the others are still
    listed): building every command's options costs a stdio client's spawn several ms."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="everything-mcp",
        description="A Model Context Protocol test server that exercises every corner of the protocol.",
    )
    parser.add_argument("--version", action="version", version=f"everything-mcp {_core.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    stdio = commands.add_parser("stdio", help="serve newline-delimited JSON-RPC on stdin/stdout (default)")
    if command in (None, "stdio"):
        _add_server_options(stdio)
    for name, aliases, text in [
        ("http", ["streamableHttp"], "serve Streamable HTTP at /mcp (and legacy SSE at /sse)"),
        ("sse", [], "serve the legacy HTTP+SSE transport at /sse (and Streamable HTTP at /mcp)"),
    ]:
        p = commands.add_parser(name, aliases=aliases, help=text)
        if command in (None, name, *aliases):
            _add_server_options(p)
            _add_http_options(p)
    config = commands.add_parser("config", help="print a client configuration to paste into Claude, VS Code or Cursor")
    config.add_argument("client", nargs="?", default="json", choices=("claude", "vscode", "cursor", "json"))
    config.add_argument("--name", default="everything", help="the server's name in the configuration")
    config.add_argument("--port", type=_port, default=_default_port(), help="port of the HTTP variant")
    return parser


def _add_server_options(p: argparse.ArgumentParser) -> None:
    import argparse

    p.set_defaults(**_server_defaults())
    p.add_argument("--record", metavar="FILE", help="append every frame in and out to FILE as JSON lines")
    p.add_argument(
        "--log-level",
        metavar="LEVEL",
        type=_log_level,
        help=f"diagnostics on stderr: {', '.join(LOG_LEVELS)} (default: warn)",
    )
    p.add_argument(
        "--revision",
        metavar="REV",
        action="append",
        choices=_core.SUPPORTED_REVISIONS,
        help="accept only this protocol revision, repeatable (default: all)",
    )
    p.add_argument(
        "--era",
        choices=_core.ERAS,
        help="serve the handshake era (2024-11-05 … 2025-11-25), the stateless era (2026-07-28)"
        f" or both side by side; narrows --revision (default: {_core.DEFAULTS['era']})",
    )
    p.add_argument("--page-size", metavar="N", type=_count, help="items per */list page (default: one page)")
    p.add_argument(
        "--max-message-bytes",
        metavar="N",
        type=_count,
        help="largest accepted frame or HTTP body; larger ones are refused"
        f" (default: {_core.DEFAULTS['max_message_bytes'] // 2**20} MiB)",
    )
    p.add_argument(
        "--tick-ms",
        metavar="MS",
        type=_count,
        help="interval of every periodic catalog timer (and of the everything catalog's task stages and"
        " polls), instead of the reference's 1-15 s",
    )
    p.add_argument(
        "--update-delay",
        metavar="SECONDS",
        type=float,
        help="review-lab: seconds from a subscription to the update"
        f" ($MCP_TEST_UPDATE_DELAY_SECONDS, default {_core.DEFAULTS['update_delay']:g})",
    )
    p.add_argument(
        "--send-list-changed",
        action=argparse.BooleanOptionalAction,
        help="review-lab: also send resources/list_changed with the update ($MCP_TEST_SEND_LIST_CHANGED=true)",
    )
    p.add_argument(
        "--expose-env",
        action="store_true",
        help="get-env/printEnv show secret-looking variables instead of <redacted>",
    )
    p.add_argument(
        "--task-ttl",
        metavar="SECONDS",
        type=float,
        help=f"how long a task is kept after it is created or settles (default {_core.DEFAULTS['task_ttl']:g})",
    )
    p.add_argument(
        "--catalog",
        metavar="NAMES",
        action="append",
        type=_catalogs,
        help=f"catalogs to serve, comma-separated or repeated: {', '.join(_core.CATALOGS)}"
        f" (default: {','.join(_core.DEFAULTS['catalogs'])})",
    )


def _add_http_options(p: argparse.ArgumentParser) -> None:
    defaults = _core.DEFAULTS
    p.add_argument("--host", help=f"address to bind (default: {defaults['host']})")
    p.add_argument(
        "--port",
        type=_port,
        default=_default_port(),
        help=f"port to bind; 0 picks a free one (default: $PORT or {DEFAULT_PORT})",
    )
    p.add_argument("--strict-port", action="store_true", help="fail if the port is busy instead of trying the next 20")
    p.add_argument(
        "--json-response",
        action="store_true",
        help="answer POSTed requests with application/json instead of an SSE stream",
    )
    p.add_argument(
        "--allow-host",
        metavar="HOST",
        action="append",
        default=[],
        help="also accept this Host (DNS-rebinding guard; repeatable; * for any)",
    )
    p.add_argument(
        "--allow-origin",
        metavar="ORIGIN",
        action="append",
        default=[],
        help="also accept this Origin, e.g. https://app.example (repeatable; * for any)",
    )
    p.add_argument(
        "--max-sessions",
        metavar="N",
        type=_count,
        help=f"most concurrent sessions (default {defaults['max_sessions']})",
    )
    p.add_argument(
        "--session-timeout",
        metavar="SECONDS",
        type=float,
        help=f"end sessions idle this long; 0 never (default {defaults['session_idle_timeout']:g})",
    )
    p.add_argument(
        "--event-store",
        metavar="N",
        type=_count,
        help=f"SSE events kept per session for Last-Event-ID resumption (default {defaults['event_store_capacity']})",
    )
    p.add_argument(
        "--no-standalone-stream",
        action="store_true",
        help="answer GET /mcp with 405 instead of opening a standalone SSE stream",
    )


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def _client_config(client: str, name: str, port: int) -> dict[str, Any]:
    """A configuration with a stdio and an HTTP variant, in the client's own format."""
    stdio = {"command": sys.executable, "args": ["-m", "everything_mcp", "stdio"]}
    url = f"http://127.0.0.1:{port}/mcp"
    if client == "vscode":  # .vscode/mcp.json
        return {"servers": {name: {"type": "stdio", **stdio}, f"{name}-http": {"type": "http", "url": url}}}
    if client == "cursor":  # ~/.cursor/mcp.json
        return {"mcpServers": {name: stdio, f"{name}-http": {"url": url}}}
    if client == "claude":  # claude_desktop_config.json (stdio) / .mcp.json of Claude Code (http)
        return {"mcpServers": {name: stdio, f"{name}-http": {"type": "http", "url": url}}}
    return {"stdio": stdio, "http": {"url": url, "start": [sys.executable, "-m", "everything_mcp", "http"]}}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0] not in _COMMANDS and args[0] not in ("-h", "--help", "--version")):
        if not args or args[0].startswith("-"):
            args = ["stdio", *args]
    if args == ["stdio"]:
        from types import SimpleNamespace

        ns: Any = SimpleNamespace(command="stdio", **_server_defaults())
    else:
        ns = _parser(args[0] if args and args[0] in _COMMANDS else None).parse_args(args)
    if ns.command == "config":
        import json

        print(json.dumps(_client_config(ns.client, ns.name, ns.port), indent=2))
        return 0
    try:
        _core.init_logging(ns.log_level)
        # The binding itself, not `Server`: the authoring machinery `Server` brings along would
        # add a third to the start-up time of every stdio client's spawn.
        server = _core.Server(
            catalogs=[name for names in ns.catalog for name in names] if ns.catalog else None,
            record=ns.record,
            revisions=ns.revision,
            era=ns.era,
            page_size=ns.page_size,
            max_message_bytes=ns.max_message_bytes,
            keep_traffic=0,  # nothing reads it in memory; --record has everything
            tick=ns.tick_ms / 1000 if ns.tick_ms else None,
            update_delay=ns.update_delay,
            send_list_changed=ns.send_list_changed,
            expose_env=ns.expose_env,
            task_ttl=ns.task_ttl,
        )
        if ns.command != "stdio":
            server.start_http(
                ns.host,
                ns.port,
                strict_port=ns.strict_port,
                json_response=ns.json_response or None,
                allow_hosts=ns.allow_host,
                allow_origins=ns.allow_origin,
                max_sessions=ns.max_sessions,
                session_idle_timeout=ns.session_timeout,
                event_store_capacity=ns.event_store,
                standalone_stream=False if ns.no_standalone_stream else None,
            )
    except (_core.EverythingMcpError, OSError) as e:
        print(f"everything-mcp: {e}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if ns.command == "stdio":
            if sys.stdin is not None and sys.stdin.isatty():
                print(
                    "everything-mcp: serving MCP on stdio; type JSON-RPC lines or connect a client (Ctrl-D to end)",
                    file=sys.stderr,
                )
            server.run_stdio()
        else:
            transport = "sse" if ns.command == "sse" else "http"
            base_url = server.base_url()
            url = f"{base_url}/sse" if transport == "sse" else f"{base_url}/mcp"
            listening = {"event": "listening", "transport": transport, "url": url, "base_url": base_url}
            import json

            print(json.dumps(listening), file=sys.stderr, flush=True)
            server.wait()
    except (KeyboardInterrupt, _Terminated):
        pass
    finally:
        # Already stopping: a second signal must not interrupt the cleanup with a traceback.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        server.stop()
    return 0
