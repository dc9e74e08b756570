"""The command line.

``python -m everything_mcp [stdio|http|streamableHttp|sse|report|config] [options]``. With no
command it serves stdio, as the reference server does (clients spawn it that way). The serving
commands, their flags, help and version are the core's (``_core.cli_main``, ``src/cli/``), the
same command line the native ``everything-mcp`` has; ``report`` and ``config`` are here.
"""

from __future__ import annotations

import os
import signal
import sys

from . import _core

# Every stdio client spawns this module, so its start-up time is a product figure
# (docs/benchmarks.md): a serving command imports neither `argparse` nor `typing` nor `json`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import FrameType
    from typing import Any

__all__ = ["main"]

_PYTHON_COMMANDS = ("report", "config")
"""The commands this module runs; every other (`stdio`, `http`, `sse`, help, version) is the
core's command line (`_core.cli_main`, one definition of the flags with the native
`everything-mcp`: `src/cli/`)."""


class _Terminated(Exception):
    """Raised by the SIGTERM handler so the server stops cleanly."""


def _port(value: str) -> int:
    import argparse

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, got {n}")
    return n


def _default_port() -> int:
    try:
        return int(os.environ.get("PORT", DEFAULT_PORT))
    except ValueError:
        return DEFAULT_PORT


DEFAULT_PORT = 3001
"""The reference server's default port (also read from ``PORT``): `config`'s HTTP variant."""


def _parser(command: str) -> argparse.ArgumentParser:
    """The parser of `report` or `config` (the serving commands' is the core's)."""
    import argparse

    parser = argparse.ArgumentParser(prog="everything-mcp")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    if command == "report":
        report = commands.add_parser(
            "report", help="what each client in recorded traffic did: checks, levels, a matrix"
        )
        report.add_argument(
            "files", nargs="+", metavar="FILE.jsonl", help="record files (--record); several give a matrix"
        )
        shape = report.add_mutually_exclusive_group()
        shape.add_argument("--json", action="store_true", help="the report as JSON (docs/report.md: the schema)")
        shape.add_argument("--markdown", action="store_true", help="the compatibility matrix as Markdown")
        shape.add_argument(
            "--html", metavar="OUT.html", help="write the checklist and the sequence diagram as one self-contained page"
        )
        shape.add_argument(
            "--serve",
            action="store_true",
            help="serve the live lab page for the files instead (with --follow it updates as they grow)",
        )
        report.add_argument(
            "--follow", action="store_true", help="with --serve: keep reading the file as it grows (a --record run)"
        )
        report.add_argument("--port", type=_port, default=0, help="with --serve: the port (default: any free one)")
        report.add_argument(
            "--color",
            choices=("auto", "always", "never"),
            default="auto",
            help="colour the table (default: when stdout is a terminal and NO_COLOR is unset)",
        )
    else:
        from .agents import AGENTS

        config = commands.add_parser(
            "config", help="how to add this server to an agent: the file and snippet, or the command"
        )
        config.add_argument(
            "client", nargs="?", default="json", choices=("claude", "vscode", "cursor", "json", *AGENTS)
        )
        config.add_argument("--name", default="everything", help="the server's name in the configuration")
        config.add_argument("--port", type=_port, default=_default_port(), help="port of the HTTP variant")
    return parser


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def _report(ns: Any) -> int:
    """`report FILE…`: the checks of every client the files show, as a table, JSON, Markdown or
    an HTML page, or served live (`--serve`). A file with no frame from a client is named on
    stderr (exit 1; the others are still reported); a line that is not a record is named by
    its file and line (exit 2, nothing reported)."""
    from .report import Report, load_files, report, reports_of_files, write_html

    if ns.follow and not ns.serve:
        print("everything-mcp: report: --follow needs --serve", file=sys.stderr)
        return 2
    if ns.serve:
        from .report.serve import serve_files

        return serve_files(ns.files, ns.port, follow=ns.follow)
    try:
        files = load_files(ns.files) if ns.html else None
        reports = [report(records) for records in files] if files is not None else reports_of_files(ns.files)
    except (OSError, ValueError) as e:  # a RecordError names the file and the line
        print(f"everything-mcp: report: {e}", file=sys.stderr)
        return 2
    silent = [path for path, each in zip(ns.files, reports, strict=True) if not each.clients]
    if len(silent) < len(ns.files):
        if files is not None:
            kept = [(p, records) for p, records, each in zip(ns.files, files, reports, strict=True) if each.clients]
            title = "everything-mcp report: " + ", ".join(os.path.basename(path) for path, _ in kept)
            with open(ns.html, "w", encoding="utf-8") as out:
                write_html(out, [records for _, records in kept], title)
        else:
            whole = Report(tuple(c for each in reports for c in each.clients))
            tty = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
            color = ns.color == "always" or (ns.color == "auto" and tty)
            text = whole.dumps() if ns.json else whole.markdown() if ns.markdown else whole.table(color=color)
            sys.stdout.write(text)
    if silent:
        print(f"everything-mcp: report: no client traffic in {', '.join(silent)}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in _PYTHON_COMMANDS:
        ns = _parser(args[0]).parse_args(args)
        return _report(ns) if ns.command == "report" else _config(ns)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _core.cli_main(args)
    except (KeyboardInterrupt, _Terminated):
        return 0
    finally:
        # Already stopped: a second signal must not end the process with a traceback.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _config(ns: Any) -> int:
    """`config [CLIENT]`: how to add this server to an agent."""
    import json

    from .agents import AGENTS, JSON_FILES, agent_config, json_config

    if ns.client in AGENTS:
        sys.stdout.write(agent_config(ns.client, ns.name, ns.port).text(ns.port))
    else:
        if ns.client in JSON_FILES:
            print(f"# add to {JSON_FILES[ns.client]}", file=sys.stderr)
        print(json.dumps(json_config(ns.client, ns.name, ns.port), indent=2))
    return 0
