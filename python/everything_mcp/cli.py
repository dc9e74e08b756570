"""The command line: ``python -m everything_mcp [stdio] [--record FILE] [--log-level LEVEL]``.

With no command it serves stdio, as the reference server does (clients spawn it that way).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from . import _core
from .server import Server

__all__ = ["main"]

LOG_LEVELS = ("off", "error", "warn", "info", "debug", "trace")
_LOG_ALIASES = {"warning": "warn"}


def _log_level(value: str) -> str:
    level = _LOG_ALIASES.get(value.lower(), value.lower())
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"invalid level {value!r} (choose from {', '.join(LOG_LEVELS)})")
    return level


class _Terminated(Exception):
    """Raised by the SIGTERM handler so the server stops cleanly."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="everything-mcp",
        description="A Model Context Protocol test server that exercises every corner of the protocol.",
    )
    parser.add_argument("--version", action="version", version=f"everything-mcp {_core.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    stdio = commands.add_parser("stdio", help="serve newline-delimited JSON-RPC on stdin/stdout (default)")
    _add_server_options(stdio)
    return parser


def _add_server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--record", metavar="FILE", help="append every frame in and out to FILE as JSON lines")
    p.add_argument(
        "--log-level",
        metavar="LEVEL",
        type=_log_level,
        default="warn",
        help=f"diagnostics on stderr: {', '.join(LOG_LEVELS)} (default: warn)",
    )
    p.add_argument(
        "--revision",
        metavar="REV",
        action="append",
        choices=_core.SUPPORTED_REVISIONS,
        help="accept only this protocol revision, repeatable (default: all)",
    )
    p.add_argument("--page-size", metavar="N", type=int, help="items per */list page (default: one page)")
    p.add_argument(
        "--max-message-bytes",
        metavar="N",
        type=int,
        help="largest accepted frame; larger ones get -32600 (default: 64 MiB)",
    )
    p.add_argument(
        "--catalog",
        metavar="NAME",
        action="append",
        choices=_core.CATALOGS,
        help=f"catalog to serve, repeatable: {', '.join(_core.CATALOGS)} (default: everything)",
    )


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if not args or (args[0].startswith("-") and args[0] not in ("-h", "--help", "--version")):
        args = ["stdio", *args]
    ns = parser.parse_args(args)
    try:
        _core.init_logging(ns.log_level)
        server = Server(
            catalogs=ns.catalog or ["everything"],
            record=ns.record,
            revisions=ns.revision,
            page_size=ns.page_size,
            max_message_bytes=ns.max_message_bytes,
            keep_traffic=0,  # nothing reads it in memory; --record has everything
        )
    except (_core.EverythingMcpError, OSError) as e:
        print(f"everything-mcp: {e}", file=sys.stderr)
        return 2
    if sys.stdin is not None and sys.stdin.isatty():
        print(
            "everything-mcp: serving MCP on stdio; type JSON-RPC lines or connect a client (Ctrl-D to end)",
            file=sys.stderr,
        )
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        server.run_stdio()
    except (KeyboardInterrupt, _Terminated):
        pass
    finally:
        # Already stopping: a second signal must not interrupt the cleanup with a traceback.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        server.stop()
    return 0
