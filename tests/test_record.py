"""`--record FILE` keeps every frame of a session, in order, even when SIGTERM ends it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from everything_mcp import load_records

from conftest import WAIT, StdioServer

FIELDS = {
    "v", "seq", "ts", "t_ns", "dir", "transport", "conn", "stream", "event_id", "http",
    "raw", "msg", "error", "kind", "method", "id", "latency_ms", "era", "revision", "task",
}  # fmt: skip


def test_record_file_survives_sigterm(tmp_path: Path) -> None:
    path = tmp_path / "traffic.jsonl"
    server = StdioServer("stdio", "--record", str(path))
    try:
        server.initialize()
        server.request(1, "tools/call", {"name": "echo", "arguments": {"message": "rec"}})
        server.write(b"garbage\n")
        server.recv()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=WAIT) == 0
    finally:
        server.stop()

    lines = path.read_text().splitlines()
    assert all(set(json.loads(line)) == FIELDS for line in lines)
    records = load_records(path)
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    assert [(r.dir, r.kind, r.method, r.id) for r in records] == [
        ("in", "request", "initialize", 0),
        ("out", "response", "initialize", 0),
        ("in", "notification", "notifications/initialized", None),
        ("out", "notification", "notifications/tools/list_changed", None),  # simulate-research-query
        ("in", "request", "tools/call", 1),
        ("out", "response", "tools/call", 1),
        ("in", "invalid", None, None),
        ("out", "error", None, None),
    ]
    assert {r.transport for r in records} == {"stdio"}
    assert {r.v for r in records} == {2}
    # The whole connection is of the revision its initialize negotiated, even a garbage frame.
    assert {(r.era, r.revision) for r in records} == {("handshake", "2025-11-25")}
    assert len({r.conn for r in records}) == 1
    call, answer, garbage = records[4], records[5], records[6]
    assert call.raw == json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "rec"}}}
    )
    assert call.msg["params"]["arguments"] == {"message": "rec"}
    assert answer.result == {"content": [{"type": "text", "text": "Echo: rec"}]}
    assert answer.latency_ms is not None and answer.latency_ms >= 0
    assert call.latency_ms is None
    assert garbage.raw == "garbage" and garbage.msg is None
    assert garbage.error == "Parse error: expected value at line 1 column 1"
    assert records[0].ts.endswith("Z") and len(records[0].ts) == len("2026-01-01T00:00:00.000000Z")
    assert [r.t_ns for r in records] == sorted(r.t_ns for r in records)


def test_frames_not_recorded_exactly_have_no_msg(tmp_path: Path) -> None:
    # `msg` is the frame parsed. A frame whose invalid UTF-8 had to be replaced in `raw`, or one
    # cut because it was too large, has no `msg` even when what is left would parse.
    path = tmp_path / "traffic.jsonl"
    server = StdioServer("stdio", "--record", str(path), "--max-message-bytes", "300")
    try:
        server.initialize()
        server.write(b'{"jsonrpc":"2.0","id":5,"method":"ping","x":"\xff"}\n')
        assert server.recv()["error"]["code"] == -32700
        server.write(b'{"jsonrpc":"2.0","id":6,"method":"ping"}' + b" " * 400 + b"\n")
        assert server.recv()["error"]["code"] == -32600
        server.request(7, "ping")
    finally:
        server.stop()
    invalid = [r for r in load_records(path) if r.kind == "invalid"]
    assert len(invalid) == 2
    assert invalid[0].raw == '{"jsonrpc":"2.0","id":5,"method":"ping","x":"\ufffd"}' and invalid[0].msg is None
    assert invalid[1].raw.startswith('{"jsonrpc":"2.0","id":6,"method":"ping"}') and invalid[1].msg is None
