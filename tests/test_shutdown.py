"""Shutdown and the Python boundary: Ctrl-C interrupts every blocking wait of the Python API;
`stop()` under full load returns within a second and frees the port; SIGTERM ends the CLI under
load within a second with its record file complete. Real subprocesses and loopback sockets
(docs/reliability.md, "Shutdown and the Python boundary")."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import httpx
import pytest

from everything_mcp import Server

from conftest import SERVER_CMD, WAIT, envelope

ACCEPT_BOTH = "application/json, text/event-stream"
STATELESS = {"Accept": ACCEPT_BOTH, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}


def headers(tool: str) -> dict[str, str]:
    """A 2026-07-28 `tools/call` of `tool`'s headers."""
    return {**STATELESS, "Mcp-Name": tool}


# Each blocking call of the Python API, after its set-up: each waits 60 s unless interrupted.
BLOCKING_WAITS = {
    "Server.wait": "srv.start_http('127.0.0.1', 0)\nsrv.wait()",
    "traffic.wait_for": "srv.traffic.wait_for('never/sent', timeout=60)",
    "Connection.recv": "conn = srv.connect()\nconn.recv(timeout=60)",
    "ask": textwrap.dedent(
        """\
        conn = srv.connect()
        init = {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        conn.recv(timeout=10)
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        srv.ask("roots/list", timeout=60)"""
    ),
    "TaskGate.next_task": "srv.task_gate('slow_compute').next_task(timeout=60)",
}

SCRIPT = """\
import json, sys
from everything_mcp import Server
srv = Server(catalogs=["everything", "conformance"])
try:
{setup}
    print("returned", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.parametrize("wait", list(BLOCKING_WAITS))
def test_ctrl_c_interrupts_every_blocking_wait(wait: str) -> None:
    setup = textwrap.indent(BLOCKING_WAITS[wait] + "\nprint('never', flush=True)", "    ")
    lines = setup.splitlines()
    # "ready" just before the blocking call (the last line of its set-up).
    lines.insert(len(lines) - 2, "    print('ready', flush=True)")
    script = SCRIPT.format(setup="\n".join(lines))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        # Nothing observable marks the moment the call has released the GIL and blocks: give it
        # that moment, then interrupt (a signal that came earlier is raised at the call anyway).
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        interrupted_at = time.monotonic()
        out, _ = proc.communicate(timeout=WAIT)
        took = time.monotonic() - interrupted_at
        assert out.split() == ["interrupted"], out
        assert took < 2.0, f"{wait} took {took:.2f} s to give way to Ctrl-C"
    finally:
        proc.kill()


def load(url: str, stop: threading.Event, answered: list[int], errors: list[str], base: int) -> None:
    """Stateless `echo` calls, each with a new id, until `stop`; every answer checked."""
    with httpx.Client(timeout=WAIT) as client:
        n = base
        while not stop.is_set():
            n += 1
            call = {"name": "echo", "arguments": {"message": f"m{n}"}, "_meta": envelope()}
            body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}
            try:
                r = client.post(url, json=body, headers=headers("echo"))
            except httpx.HTTPError:
                return  # the server went away: what the caller is testing
            if f"Echo: m{n}" in r.text:
                answered.append(n)
            else:
                errors.append(r.text[:200])


def test_stop_under_full_load_returns_within_a_second_and_frees_the_port() -> None:
    srv = Server()
    srv.start_http("127.0.0.1", 0)
    url, port = srv.http_url, int(srv.base_url.rsplit(":", 1)[1])
    assert url is not None
    stop, answered, errors = threading.Event(), [], []  # type: ignore[var-annotated]
    workers = [threading.Thread(target=load, args=(url, stop, answered, errors, i * 1_000_000)) for i in range(4)]
    for w in workers:
        w.start()
    # A request that stays open (a long-running tool) is part of the load too.
    slow = {"name": "trigger-long-running-operation", "arguments": {"duration": 60, "steps": 60}}
    slow_call = {"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {**slow, "_meta": envelope()}}

    def call_slow() -> None:
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(url, json=slow_call, headers=headers(slow["name"]), timeout=30)

    slow_caller = threading.Thread(target=call_slow)
    slow_caller.start()
    srv.traffic.wait_for("tools/call", where=lambda r: r.id == "slow")
    while len(answered) < 200 and not errors:
        time.sleep(0.01)
    started = time.monotonic()
    srv.stop()
    took = time.monotonic() - started
    stop.set()
    for w in [*workers, slow_caller]:
        w.join(timeout=WAIT)
    assert not errors, errors[:3]
    assert took < 1.0, f"stop() took {took:.2f} s under load"
    # The port is free: a new listener binds it.
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))


def test_sigterm_under_load_exits_within_a_second_with_the_record_complete() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "traffic.jsonl"
        proc = subprocess.Popen(
            [*SERVER_CMD, "http", "--port", "0", "--record", str(record)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stderr is not None
            mcp = json.loads(proc.stderr.readline())["url"]
            stop, answered, errors = threading.Event(), [], []  # type: ignore[var-annotated]
            workers = [
                threading.Thread(target=load, args=(mcp, stop, answered, errors, i * 1_000_000)) for i in range(4)
            ]
            for w in workers:
                w.start()
            while len(answered) < 200 and not errors:
                time.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            proc.wait(timeout=WAIT)
            took = time.monotonic() - started
            stop.set()
            for w in workers:
                w.join(timeout=WAIT)
            assert not errors, errors[:3]
            assert took < 1.0, f"SIGTERM took {took:.2f} s to end the server under load"
            # Every line of the record is whole, and every answer a client read is in it.
            records = [json.loads(line) for line in record.read_text().splitlines()]
            recorded = {r["id"] for r in records if r["dir"] == "out" and r["kind"] == "response"}
            missing = [n for n in answered if n not in recorded]
            assert not missing, f"{len(missing)} answers the clients read are not in the record"
        finally:
            proc.kill()
