"""`python -m everything_mcp report FILE…` on files it cannot report on (docs/report.md, "When a
file has nothing to report"): an empty file, a file without a frame from a client, a line that is
not a record. Real subprocesses; what they print and their exit status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from everything_mcp import Server

from conftest import SERVER_CMD, WAIT, StdioServer

DOC = "demo://resource/static/document/features.md"


def report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SERVER_CMD, "report", *args], capture_output=True, text=True, timeout=WAIT * 3)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A record file of a raw client over stdio: initialize, initialized, one read."""
    path = tmp_path_factory.mktemp("cli") / "reader.jsonl"
    server = StdioServer("stdio", "--record", str(path))
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "reader", "version": "1"}}
        server.request(0, "initialize", init)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.recv()  # the tools/list_changed the catalog announces
        server.request(1, "resources/read", {"uri": DOC})
        server.close_stdin()
        server.proc.wait(timeout=WAIT)
    finally:
        server.stop()
    return path


def test_an_empty_file_has_no_client_traffic(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for args in ([], ["--json"], ["--markdown"]):
        done = report(str(empty), *args)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == f"everything-mcp: report: no client traffic in {empty}\n"
    # A server nobody spoke to writes an empty file too.
    idle = tmp_path / "idle.jsonl"
    with Server(catalogs=["none"], record=str(idle)):
        pass
    done = report(str(idle))
    assert (done.returncode, done.stderr) == (1, f"everything-mcp: report: no client traffic in {idle}\n")


def test_a_file_of_only_the_servers_frames_has_no_client_traffic(recorded: Path, tmp_path: Path) -> None:
    only_out = tmp_path / "out.jsonl"
    lines = [line for line in recorded.read_text().splitlines() if json.loads(line)["dir"] == "out"]
    assert lines
    only_out.write_text("\n".join(lines) + "\n")
    done = report(str(only_out), "--json")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"everything-mcp: report: no client traffic in {only_out}\n"


def test_several_files_report_those_with_traffic_and_name_the_others(recorded: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("")
    second.write_text("\n")
    done = report(str(first), str(recorded), str(second), "--markdown")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "| check | reader 1 (handshake, stdio) |"
    assert done.stderr == f"everything-mcp: report: no client traffic in {first}, {second}\n"
    html = tmp_path / "page.html"
    done = report(str(recorded), str(first), "--html", str(html))
    assert (done.returncode, done.stderr) == (1, f"everything-mcp: report: no client traffic in {first}\n")
    assert html.exists()  # the page of the file that has some
    done = report(str(first), str(second))
    assert (done.returncode, done.stdout) == (1, "")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("this is not JSON", "not JSON (Expecting value: line 1 column 1 (char 0))"),
        ('{"seq": 2, "dir": "in"', "not JSON (Expecting ',' delimiter: line 1 column 23 (char 22))"),
        ("[1, 2]", "not a traffic record (a JSON object; docs/traffic-format.md)"),
        ('{"hello": "world"}', "not a traffic record: no v, seq, ts, t_ns, dir, transport, conn, stream,"),
    ],
)
def test_a_line_that_is_not_a_record_is_named_by_file_and_line(
    recorded: Path, tmp_path: Path, line: str, why: str
) -> None:
    broken = tmp_path / "broken.jsonl"
    lines = recorded.read_text().splitlines()
    broken.write_text("\n".join([*lines[:2], line, *lines[2:]]) + "\n")
    for args in ([], ["--json"], ["--html", str(tmp_path / "broken.html")], ["--serve", "--port", "0"]):
        done = report(str(broken), *args)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr.startswith(f"everything-mcp: report: {broken}:3: {why}")
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    # Bytes that are not UTF-8, and a field of the wrong kind.
    broken.write_bytes(b"\n".join([lines[0].encode(), b"\xff\xfe{}", b""]))
    done = report(str(broken))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"everything-mcp: report: {broken}:2: not UTF-8 text (invalid start byte)\n"
    wrong = json.loads(lines[0]) | {"seq": "one"}
    broken.write_text(json.dumps(wrong) + "\n")
    done = report(str(broken))
    named = f"everything-mcp: report: {broken}:1: not a traffic record: seq of the wrong kind\n"
    assert (done.returncode, done.stderr) == (2, named)
