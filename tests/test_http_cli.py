"""`everything-mcp http|sse` (the native command and `python -m everything_mcp`, `cli_cmd`) and
`python -m everything_mcp config` as real subprocesses: the listening line, port selection,
graceful shutdown with open streams, and client configurations."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import SERVER_CMD, WAIT, init_params


def start(
    command: list[str], *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    proc = subprocess.Popen([*command, *args], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line, "the server printed nothing"
    return proc, json.loads(line)


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=WAIT)
    if proc.stderr:
        proc.stderr.close()
    return code


def test_http_prints_its_url_and_serves(tmp_path: Path, cli_cmd: list[str]) -> None:
    record = tmp_path / "t.jsonl"
    proc, listening = start(cli_cmd, "http", "--port", "0", "--record", str(record))
    try:
        assert listening["event"] == "listening" and listening["transport"] == "http"
        url = listening["url"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        r = httpx.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params()},
            headers={"accept": "application/json, text/event-stream"},
            timeout=WAIT,
        )
        assert r.status_code == 200
        session = r.headers["mcp-session-id"]
        # An open standalone stream must not hold the shutdown up.
        with httpx.stream(
            "GET", url, headers={"accept": "text/event-stream", "mcp-session-id": session}, timeout=WAIT
        ) as stream:
            assert stream.status_code == 200
            t0 = time.monotonic()
            assert stop(proc) == 0
            assert time.monotonic() - t0 < 1.0
            assert list(stream.iter_lines()) in ([], [""])  # closed by the server
    finally:
        if proc.poll() is None:
            proc.kill()
    kinds = [
        (r["dir"], r["kind"], r["http"]["method"] if r["dir"] == "in" and r["http"] else None)
        for r in map(json.loads, record.read_text().splitlines())
    ]
    assert kinds == [("in", "request", "POST"), ("out", "response", None), ("in", "http", "GET")]


def test_sse_command_prints_the_sse_url(cli_cmd: list[str]) -> None:
    proc, listening = start(cli_cmd, "sse", "--port", "0")
    try:
        assert listening["transport"] == "sse" and listening["url"].endswith("/sse")
    finally:
        assert stop(proc) == 0


def test_busy_port_moves_on_unless_strict(busy_port: int, cli_cmd: list[str]) -> None:
    proc, listening = start(cli_cmd, "streamableHttp", "--port", str(busy_port))
    try:
        port = int(listening["base_url"].rsplit(":", 1)[1])
        assert busy_port < port <= busy_port + 20
    finally:
        assert stop(proc) == 0
    r = subprocess.run(
        [*cli_cmd, "http", "--port", str(busy_port), "--strict-port"], capture_output=True, text=True, timeout=WAIT
    )
    assert r.returncode == 2
    assert r.stderr.startswith("everything-mcp: ") and "in use" in r.stderr.lower()


def test_port_from_the_environment(busy_port: int, cli_cmd: list[str]) -> None:
    env = {**os.environ, "PORT": str(busy_port)}
    proc, listening = start(cli_cmd, "http", env=env)
    try:
        assert int(listening["base_url"].rsplit(":", 1)[1]) in range(busy_port + 1, busy_port + 21)
    finally:
        assert stop(proc) == 0


@pytest.mark.parametrize("client", ["claude", "vscode", "cursor", "json"])
def test_config_prints_a_client_configuration(client: str) -> None:
    r = subprocess.run([*SERVER_CMD, "config", client, "--port", "4000"], capture_output=True, text=True, timeout=WAIT)
    assert r.returncode == 0
    config = json.loads(r.stdout)
    text = json.dumps(config)
    assert json.dumps(sys.executable) in text and os.path.isabs(sys.executable)
    assert '"-m", "everything_mcp", "stdio"' in text
    assert "http://127.0.0.1:4000/mcp" in text
    # The file to edit, on stderr (stdout is the JSON alone).
    files = {"vscode": ".vscode/mcp.json", "cursor": "~/.cursor/mcp.json", "claude": "claude_desktop_config.json"}
    assert (files[client] in r.stderr) if client in files else r.stderr == ""
    if client == "vscode":
        assert config["servers"]["everything"]["type"] == "stdio"
        assert config["servers"]["everything-http"] == {"type": "http", "url": "http://127.0.0.1:4000/mcp"}
    elif client in ("claude", "cursor"):
        assert config["mcpServers"]["everything"]["command"] == sys.executable
