"""The Python entry: construct a Server, talk to it in-process, read its traffic."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import everything_mcp
from everything_mcp import ConfigError, ConnectionClosedError, Server, TrafficRecord

from conftest import WAIT, init_params


def rpc(id: int, method: str, params: dict[str, object] | None = None) -> str:
    msg: dict[str, object] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg)


def test_in_process_session_and_traffic() -> None:
    with Server() as server:
        conn = server.connect()
        conn.send(rpc(0, "initialize", init_params("2025-06-18")))
        init = json.loads(conn.recv(timeout=WAIT) or "")
        assert init["result"]["protocolVersion"] == "2025-06-18"
        conn.send(rpc(1, "tools/call", {"name": "get-sum", "arguments": {"a": 2, "b": 3.5}}))
        reply = json.loads(conn.recv(timeout=WAIT) or "")
        assert reply["result"]["content"][0]["text"] == "The sum of 2 and 3.5 is 5.5."

        traffic = server.traffic
        assert all(isinstance(r, TrafficRecord) for r in traffic)
        assert [(r.dir, r.method) for r in traffic] == [
            ("in", "initialize"),
            ("out", "initialize"),
            ("in", "tools/call"),
            ("out", "tools/call"),
        ]
        assert traffic[2].params == {"name": "get-sum", "arguments": {"a": 2, "b": 3.5}}
        assert traffic[3].conn == conn.id
        assert server.traffic_since(3) == traffic[3:]
        server.clear_traffic()
        assert server.traffic == []
        assert conn.recv(timeout=0.05) is None
        conn.send(rpc(2, "ping"))
        assert conn.recv(timeout=WAIT) is not None
        after_clear = server.traffic_since(4)
        assert [r.seq for r in after_clear] == [5, 6]
        assert [r.seq for r in server.traffic_since(5)] == [6]


def test_configuration_errors_are_clear() -> None:
    with pytest.raises(ConfigError, match='unknown catalog "nope"'):
        Server(catalogs=["nope"])
    with pytest.raises(ConfigError, match="unknown MCP protocol revision"):
        Server(revisions=["2020-01-01"])
    assert issubclass(ConfigError, everything_mcp.EverythingMcpError)


def test_catalog_none_and_pinned_revision() -> None:
    with Server(catalogs=["none"], revisions=["2025-03-26"]) as server:
        assert server.tool_names == []
        conn = server.connect()
        conn.send(rpc(0, "initialize", init_params("2025-11-25")))
        assert json.loads(conn.recv(timeout=WAIT) or "")["result"]["protocolVersion"] == "2025-03-26"


def test_stop_is_idempotent_and_closes_connections() -> None:
    server = Server()
    conn = server.connect()
    server.stop()
    server.stop()
    with pytest.raises(ConnectionClosedError):
        conn.recv(timeout=1)
    with pytest.raises(ConnectionClosedError):
        server.connect()


def test_run_stdio_from_python(tmp_path: object) -> None:
    script = textwrap.dedent(
        """
        import json
        from everything_mcp import Server
        server = Server()
        server.run_stdio()
        import sys
        print(json.dumps([(r.dir, r.kind, r.method) for r in server.traffic]), file=sys.stderr)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        input=rpc(1, "ping") + "\n" + rpc(2, "tools/list") + "\n",
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    assert [json.loads(line)["id"] for line in out.stdout.splitlines()] == [1, 2]
    assert json.loads(out.stderr) == [
        ["in", "request", "ping"],
        ["out", "response", "ping"],
        ["in", "request", "tools/list"],
        ["out", "error", "tools/list"],
    ]


def test_the_tape_keeps_the_newest_10000_records_by_default() -> None:
    # A load test through the fixture must not grow memory without bound (docs/benchmarks.md).
    with Server(catalogs=["none"]) as server:
        conn = server.connect()
        conn.send(rpc(0, "initialize", init_params()))
        assert conn.recv(timeout=WAIT) is not None
        conn.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for i in range(1, 5_001):
            conn.send(rpc(i, "ping"))
        for _ in range(5_000):
            assert conn.recv(timeout=WAIT) is not None
        records = server.traffic
        assert len(records) == 10_000
        assert records[0].seq == 10_003 - 10_000 + 1  # 10,003 frames so far; the first 3 dropped
        assert records[-1].seq == 10_003
        assert records[-1].msg == {"jsonrpc": "2.0", "id": 5000, "result": {}}


def test_memory_cap_and_server_info() -> None:
    with Server(keep_traffic=2, name="mine", version="9") as server:
        conn = server.connect()
        conn.send(rpc(0, "initialize", init_params()))
        info = json.loads(conn.recv(timeout=WAIT) or "")["result"]["serverInfo"]
        assert info == {"name": "mine", "version": "9"}
        for i in range(1, 4):
            conn.send(rpc(i, "ping"))
            assert conn.recv(timeout=WAIT) is not None
        assert [r.seq for r in server.traffic] == [7, 8]
