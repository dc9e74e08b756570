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

_COMMANDS = ("stdio", "http", "streamableHttp", "sse", "config", "report")
_STDIO_ONLY: dict[str, Any] = {"control_port": None, "control_token": None}
"""The defaults of the flags only `stdio` has (its control API's listener)."""


class _Terminated(Exception):
    """Raised by the SIGTERM handler so the server stops cleanly."""


_FIXED: dict[str, Any] = {}
"""The server options the CLI sets instead of offering a flag (none at present)."""


def _server_defaults() -> dict[str, Any]:
    """The default of every option `stdio`, `http` and `sse` share: the parser's (through
    ``set_defaults``) and the bare ``stdio`` command's, which is served without a parser. Each
    server option's flag stores it under the option's own name (``dest``), and ``None`` leaves
    it to the core, whose defaults (``_core.DEFAULTS``) are written once, in Rust; only the
    reference lab's environment variables are read here."""
    delay = os.environ.get("MCP_TEST_UPDATE_DELAY_SECONDS")
    list_changed = os.environ.get("MCP_TEST_SEND_LIST_CHANGED")
    defaults: dict[str, Any] = {name: None for name in _core.SERVER_OPTIONS if name not in _FIXED}
    defaults["log_level"] = "warn"
    # The CLI keeps no traffic in memory unless asked (`--record` writes every frame to a file)
    # or the lab page, which reads the memory, is served: `main` decides once it knows.
    defaults["keep_traffic"] = None
    defaults["faults"] = None
    defaults["faults_preset"] = None
    defaults["faults_seed"] = None
    defaults["update_delay"] = float(delay) if delay else None
    defaults["send_list_changed"] = list_changed.lower() == "true" if list_changed else None
    return defaults


def _given(ns: Any, names: Sequence[str]) -> dict[str, Any]:
    """The options among ``names`` that the command line gave (the rest take the core's
    defaults)."""
    return {name: value for name in names if (value := getattr(ns, name, None)) is not None}


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, only that command gets its options (the others are still
    listed): building every command's options costs a stdio client's spawn several ms."""
    import argparse

    from .flags import _add_http_options, _add_server_options, _default_port, _port

    parser = argparse.ArgumentParser(
        prog="everything-mcp",
        description="A Model Context Protocol test server that exercises every corner of the protocol.",
    )
    parser.add_argument("--version", action="version", version=f"everything-mcp {_core.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    stdio = commands.add_parser("stdio", help="serve newline-delimited JSON-RPC on stdin/stdout (default)")
    if command in (None, "stdio"):
        _add_server_options(stdio)
        stdio.set_defaults(**_server_defaults())
        stdio.add_argument(
            "--control-port",
            metavar="N",
            type=_port,
            help="also serve the control API on 127.0.0.1:N (0: any free port; announced on stderr)",
        )
        stdio.add_argument(
            "--control-token",
            metavar="TOKEN",
            help="with --control-port: every control API call must carry Authorization: Bearer TOKEN",
        )
    for name, aliases, text in [
        ("http", ["streamableHttp"], "serve Streamable HTTP at /mcp (and legacy SSE at /sse)"),
        ("sse", [], "serve the legacy HTTP+SSE transport at /sse (and Streamable HTTP at /mcp)"),
    ]:
        p = commands.add_parser(name, aliases=aliases, help=text)
        if command in (None, name, *aliases):
            _add_server_options(p)
            p.set_defaults(**_server_defaults())
            _add_http_options(p)
    report = commands.add_parser("report", help="what each client in recorded traffic did: checks, levels, a matrix")
    report.add_argument("files", nargs="+", metavar="FILE.jsonl", help="record files (--record); several give a matrix")
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
    from .agents import AGENTS

    config = commands.add_parser(
        "config", help="how to add this server to an agent: the file and snippet, or the command"
    )
    config.add_argument("client", nargs="?", default="json", choices=("claude", "vscode", "cursor", "json", *AGENTS))
    config.add_argument("--name", default="everything", help="the server's name in the configuration")
    config.add_argument("--port", type=_port, default=_default_port(), help="port of the HTTP variant")
    return parser


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def _load_faults(server: _core.Server, path: str) -> None:
    """Puts the rules of the fault file at ``path`` in force; its errors name the file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise _core.ConfigError(f"--faults {path}: {e.strerror or e}") from e
    try:
        server.load_faults(text)
    except _core.ConfigError as e:
        raise _core.ConfigError(f"--faults {path}: {e}") from e


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
    if not args or (args[0] not in _COMMANDS and args[0] not in ("-h", "--help", "--version")):
        if not args or args[0].startswith("-"):
            args = ["stdio", *args]
    if args == ["stdio"]:
        from types import SimpleNamespace

        ns: Any = SimpleNamespace(command="stdio", **_server_defaults(), **_STDIO_ONLY)
    else:
        ns = _parser(args[0] if args and args[0] in _COMMANDS else None).parse_args(args)
    if ns.command == "report":
        return _report(ns)
    if ns.command == "config":
        import json

        from .agents import AGENTS, JSON_FILES, agent_config, json_config

        if ns.client in AGENTS:
            sys.stdout.write(agent_config(ns.client, ns.name, ns.port).text(ns.port))
        else:
            if ns.client in JSON_FILES:
                print(f"# add to {JSON_FILES[ns.client]}", file=sys.stderr)
            print(json.dumps(json_config(ns.client, ns.name, ns.port), indent=2))
        return 0
    try:
        _core.init_logging(ns.log_level)
        # The binding itself, not `Server`: the authoring machinery `Server` brings along would
        # add a third to the start-up time of every stdio client's spawn.
        options = _given(ns, _core.SERVER_OPTIONS)
        if "keep_traffic" not in options:
            # The lab page (HTTP unless --no-lab, and a stdio server's control port) reads the
            # traffic from memory.
            listens = ns.command != "stdio" or ns.control_port is not None
            lab = listens and getattr(ns, "lab", None) is not False
            options["keep_traffic"] = 0
            if lab:
                from .flags import LAB_KEEP_TRAFFIC

                options["keep_traffic"] = LAB_KEEP_TRAFFIC
        server = _core.Server(**options, **_FIXED)
        if ns.faults:
            _load_faults(server, ns.faults)
        for preset in ns.faults_preset or []:
            server.add_fault_preset(preset, ns.faults_seed or 0)
        if ns.command != "stdio":
            server.start_http(ns.host, ns.port, **_given(ns, _core.HTTP_OPTIONS))
        elif ns.control_port is not None:
            # The control API of a stdio server: its HTTP listener, on loopback only.
            server.start_http("127.0.0.1", ns.control_port, strict_port=True, control_token=ns.control_token)
            import json

            control = {"event": "control", "url": f"{server.base_url()}/_control/"}
            print(json.dumps(control), file=sys.stderr, flush=True)
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
