"""The pytest plugin (registered through the ``pytest11`` entry point).

Fixtures:

- ``everything_mcp``: a :class:`~everything_mcp.Server` serving HTTP on an ephemeral loopback
  port for one test (``.http_url``, ``.traffic``, decorators to add tools…); options come from
  ``@pytest.mark.everything_mcp(catalogs=[...], json_response=True, ...)``.
- ``everything_mcp_factory``: ``everything_mcp_factory(**options)`` starts any number of servers,
  all stopped after the test.
- ``everything_mcp_replay``: a server replaying this test's recording
  (``recordings/<module>/<test>.jsonl`` beside the test file; name it with
  ``@pytest.mark.everything_mcp_replay("name")``), recorded from the ``everything`` catalog (or the
  marker's ``upstream=``) when the record mode says so: ``--everything-mcp-record-mode`` (or the
  ``everything_mcp_record_mode`` ini option) ``none`` (the default), ``once``, ``new_episodes`` or
  ``all``, as in VCR.

On a failing test the traffic of every server the test used is added to the report, and with
``--everything-mcp-records DIR`` (or the ``everything_mcp_records`` ini option) saved there as JSONL;
with ``--everything-mcp-report DIR`` (or ``everything_mcp_report``) the HTML report of that traffic
(the checklist per client and the sequence diagram, docs/report.md) is written there too.
Fixtures are synchronous, so they work in sync, pytest-asyncio and anyio tests alike.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import Options
    from .server import Server

__all__ = ["everything_mcp", "everything_mcp_factory", "everything_mcp_replay"]

RECORD_MODES = ("none", "once", "new_episodes", "all")
"""The record modes of ``everything_mcp_replay`` (VCR's): when the real server is asked."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("everything-mcp")
    group.addoption(
        "--everything-mcp-records",
        metavar="DIR",
        default=None,
        help="save the MCP traffic of failing tests as JSONL files in DIR",
    )
    parser.addini("everything_mcp_records", "directory for the MCP traffic of failing tests (JSONL)", default="")
    group.addoption(
        "--everything-mcp-report",
        metavar="DIR",
        default=None,
        help="write the HTML report (checks and sequence diagram) of failing tests' MCP traffic in DIR",
    )
    parser.addini("everything_mcp_report", "directory for the HTML reports of failing tests", default="")
    group.addoption(
        "--everything-mcp-record-mode",
        choices=RECORD_MODES,
        default=None,
        help="when everything_mcp_replay records from the real server: none (default; replay only), once"
        " (recordings that do not exist yet), new_episodes (what a recording lacks), all (every recording anew)",
    )
    parser.addini("everything_mcp_record_mode", "the record mode of everything_mcp_replay", default="none")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "everything_mcp(**options): options for the everything_mcp fixture (everything_mcp.options.Options:"
        " Server and start_http arguments)",
    )
    config.addinivalue_line(
        "markers",
        "everything_mcp_replay(name=None, *, upstream=None, ignore=None, order=None, repeat=None, **options):"
        " the recording the everything_mcp_replay fixture replays (recordings/<module>/<name>.jsonl), the"
        " real server it is recorded from (default: the everything catalog), its matching, server options",
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
        servers = item.stash.get(_SERVERS, [])
        if report.failed and servers:
            for i, srv in enumerate(servers):
                report.sections.append((f"everything-mcp traffic (server {i + 1})", srv.traffic.table(limit=200)))
            _save_records(item, servers)
            _save_reports(item, servers)
    return report


_SERVERS = pytest.StashKey[list["Server"]]()
_FAILED = pytest.StashKey[bool]()


def _save_records(item: pytest.Item, servers: list[Server]) -> None:
    for path, srv in _outputs(item, servers, "records", "jsonl"):
        srv.traffic.to_jsonl(path)


def _save_reports(item: pytest.Item, servers: list[Server]) -> None:
    from .report import write_html

    for i, (path, srv) in enumerate(_outputs(item, servers, "report", "html")):
        with path.open("w", encoding="utf-8") as out:
            records, dropped = srv.traffic.snapshot()
            write_html(out, [records], title=f"{item.nodeid} (server {i + 1})", dropped=dropped)


def _outputs(item: pytest.Item, servers: list[Server], what: str, suffix: str) -> list[tuple[Path, Server]]:
    """Where each server's `what` goes (``--everything-mcp-<what> DIR`` or its ini option):
    ``DIR/<test id>-<n>.<suffix>``; none when neither is set."""
    directory = item.config.getoption(f"--everything-mcp-{what}") or item.config.getini(f"everything_mcp_{what}")
    if not directory:
        return []
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid)
    return [(out / f"{stem}-{i + 1}.{suffix}", srv) for i, srv in enumerate(servers)]


def _start(item: pytest.Item, options: dict[str, Any]) -> Server:
    from . import _core
    from .server import Server

    # The listener's options go to `start_http`, the rest (unknown ones too) to `Server`.
    http = {k: options.pop(k) for k in list(options) if k in _core.HTTP_OPTIONS}
    faults = options.pop("faults", None) or []
    srv = Server(**options)
    for rule in faults:
        if isinstance(rule, str):
            srv.faults.preset(rule)
        else:
            srv.faults.add_rule(rule)
    srv.start_http(**http)
    item.stash.setdefault(_SERVERS, []).append(srv)
    return srv


@pytest.fixture
def everything_mcp_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., Server]]:
    """Start servers with any options (``catalogs``, ``era``, ``revisions``, ``tick``, ``json_response``…);
    each serves HTTP on an ephemeral port and is stopped after the test."""
    started: list[Server] = []

    def factory(**options: Unpack[Options]) -> Server:
        srv = _start(request.node, dict(options))
        started.append(srv)
        return srv

    yield factory
    for srv in started:
        srv.stop()


@pytest.fixture
def everything_mcp(request: pytest.FixtureRequest, everything_mcp_factory: Callable[..., Server]) -> Server:
    """A server for this test (options from ``@pytest.mark.everything_mcp(...)``)."""
    marker = request.node.get_closest_marker("everything_mcp")
    options = dict(marker.kwargs) if marker else {}
    return everything_mcp_factory(**options)


@pytest.fixture
def everything_mcp_replay(request: pytest.FixtureRequest) -> Iterator[Server]:
    """A server replaying this test's recording over HTTP (``.http_url``), recorded first when
    the record mode asks (docs/replay.md#pytest)."""
    from . import _core
    from .server import Server

    marker = request.node.get_closest_marker("everything_mcp_replay")
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    name = str(marker.args[0]) if marker and marker.args else request.node.name
    module = Path(str(request.node.path))
    path = module.parent / "recordings" / module.stem / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".jsonl")
    config = request.config
    mode = config.getoption("--everything-mcp-record-mode") or config.getini("everything_mcp_record_mode") or "none"
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"everything_mcp_record_mode {mode!r} is not one of {', '.join(RECORD_MODES)}")
    if mode == "none" and not path.exists():
        pytest.fail(
            f"no recording {path}: record it with --everything-mcp-record-mode=once (it is then replayed)",
            pytrace=False,
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    upstream = options.pop("upstream", None) or shlex.join([sys.executable, "-m", "everything_mcp", "stdio"])
    matching = {k: options.pop(k) for k in ("ignore", "order", "repeat") if k in options}
    http = {k: options.pop(k) for k in list(options) if k in _core.HTTP_OPTIONS}
    srv = Server.from_recording(path, upstream=upstream, record_mode=mode, **matching, **options)
    srv.start_http(**http)
    request.node.stash.setdefault(_SERVERS, []).append(srv)
    yield srv
    srv.stop()
