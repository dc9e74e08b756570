"""Fault rules for stdio (docs/faults.md): a stray line in the output, stderr flooded, the
output closed, the process exiting mid-request. The official `mcp` client runs
`python -m everything_mcp stdio --faults FILE` as a real subprocess, in both of its modes; raw
checks read the exit code, stderr and the record file, of both launchers (`cli_cmd`: the native
command too)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from everything_mcp import Server, load_records

from conftest import MODES, WAIT, StdioServer, init_params, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

FIRST_ECHO = {"method": "tools/call", "name": "echo", "nth": 1}
ECHO_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": "x"}},
}


def fault_file(tmp_path: Path, action: dict[str, Any]) -> str:
    path = tmp_path / "faults.json"
    path.write_text(json.dumps([{"match": FIRST_ECHO, "action": action}]))
    return str(path)


def cli(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "everything_mcp", "stdio", *args])


@MODES
async def test_a_stray_line_in_the_output_is_skipped(mode: str, tmp_path: Path) -> None:
    """A log line a server prints to stdout by mistake: a client skips what is not JSON-RPC
    (the official one does) and reads the answer after it."""
    faults = fault_file(tmp_path, {"stray_line": "[info] warming up the cache"})
    record = tmp_path / "traffic.jsonl"
    with anyio.fail_after(WAIT):
        async with Client(cli("--faults", faults, "--record", str(record)), mode=mode) as client:
            assert texts(await client.call_tool("echo", {"message": "x"})) == ["Echo: x"]
            assert texts(await client.call_tool("echo", {"message": "y"})) == ["Echo: y"]
    stray = [r for r in load_records(record) if r.raw == "[info] warming up the cache"]
    assert len(stray) == 1 and stray[0].kind == "invalid" and stray[0].fault["action"] == "stray_line"


@MODES
@pytest.mark.parametrize("action", [{"close_output": True}, {"exit": 3}], ids=["close_output", "exit"])
async def test_the_output_closed_or_the_process_gone_mid_request(
    mode: str, action: dict[str, Any], tmp_path: Path
) -> None:
    """The client sees its connection end (the official client: `Connection closed`) and does not
    wait for an answer that cannot come."""
    with anyio.fail_after(WAIT):
        async with Client(cli("--faults", fault_file(tmp_path, action)), mode=mode) as client:
            with pytest.raises(MCPError, match="Connection closed"):
                await client.call_tool("echo", {"message": "x"})


def test_the_process_exits_with_the_code_and_the_record_keeps_the_request(tmp_path: Path, cli_cmd: list[str]) -> None:
    record = tmp_path / "traffic.jsonl"
    args = ["stdio", "--faults", fault_file(tmp_path, {"exit": 3}), "--record", str(record)]
    server = StdioServer(command=[*cli_cmd, *args])
    try:
        server.initialize()
        server.send(ECHO_CALL)
        assert server.proc.wait(timeout=WAIT) == 3
    finally:
        server.stop()
    (call,) = [r for r in load_records(record) if r.method == "tools/call"]
    assert call.fault == {"rule": "r1", "action": "exit"}


def test_output_closed_leaves_stdout_at_its_end(tmp_path: Path, cli_cmd: list[str]) -> None:
    server = StdioServer(command=[*cli_cmd, "stdio", "--faults", fault_file(tmp_path, {"close_output": True})])
    try:
        server.initialize()
        server.send(ECHO_CALL)
        with pytest.raises(AssertionError, match="closed stdout"):
            server.recv()
        assert server.proc.poll() is None  # the process goes on; only its output ended
    finally:
        server.stop()


def test_stderr_flooded(tmp_path: Path, cli_cmd: list[str]) -> None:
    flood = {"stderr": {"line": "WARN something is off", "count": 2000}}
    proc = subprocess.run(
        [*cli_cmd, "stdio", "--faults", fault_file(tmp_path, flood)],
        input="\n".join(
            json.dumps(m)
            for m in [
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params()},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": "x"}},
                },
            ]
        )
        + "\n",
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    assert proc.stderr.count("WARN something is off\n") == 2000
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert answers[-1] == {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "Echo: x"}]}}


@MODES
async def test_an_in_process_server_closes_the_connection_instead_of_exiting(mode: str) -> None:
    """`exit` ends only a server that owns its process: an in-process one (a test's) closes that
    connection's output and goes on serving the others."""
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(match=FIRST_ECHO, action={"exit": 3})
        params = StdioServerParameters(**srv.stdio_params)
        with anyio.fail_after(WAIT):
            async with Client(params, mode=mode) as client:
                with pytest.raises(MCPError, match="Connection closed"):
                    await client.call_tool("echo", {"message": "x"})
            async with Client(params, mode=mode) as client:
                assert texts(await client.call_tool("echo", {"message": "y"})) == ["Echo: y"]
