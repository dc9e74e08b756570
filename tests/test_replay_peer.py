"""A recording made against a peer server (a server written with the official Python SDK, run
here) through `replay --upstream`, then replayed: the official client gets the same frames, byte
for byte, from the peer itself and from the replay, in each era."""

from __future__ import annotations

import contextlib
import json
import pathlib
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from everything_mcp import Server, load_records

from conftest import WAIT, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

PEER = pathlib.Path(__file__).parent / "peers" / "python_sdk_server.py"
PEER_COMMAND = f"{sys.executable} {PEER}"


async def script(params: StdioServerParameters, mode: str) -> list[Any]:
    """What the client got from one session with the peer (or its replay)."""
    progress: list[Any] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    got: list[Any] = []
    with anyio.fail_after(WAIT):
        async with Client(params, mode=mode, read_timeout_seconds=WAIT) as client:
            got.append((client.protocol_version, client.server_info.name if client.server_info else None))
            got.append([t.name for t in (await client.list_tools()).tools])
            got.append(texts(await client.call_tool("add", {"a": 1, "b": 2})))
            got.append(texts(await client.call_tool("count", {"steps": 2}, progress_callback=on_progress)))
            got.append([c.model_dump() for c in (await client.read_resource("greeting://Ada")).contents])
            got.append([m.model_dump() for m in (await client.get_prompt("greet_user", {"name": "Ada"})).messages])
    return [*got, progress]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_peer_recording_replays_frame_for_frame(tmp_path: pathlib.Path, mode: str) -> None:
    # The peer itself, its stdout copied as it goes: what the client read.
    direct = tmp_path / "direct.out"
    tee = StdioServerParameters(
        command="sh", args=["-c", '"$0" "$1" | tee "$2"', sys.executable, str(PEER), str(direct)]
    )
    from_peer = await script(tee, mode)

    # Through the replay, recording (the first run of record mode `once`).
    recording = tmp_path / "peer.jsonl"
    with Server.from_recording(recording, upstream=PEER_COMMAND) as recorder:
        through = await script(StdioServerParameters(**recorder.stdio_params), mode)
    assert through == from_peer

    # The replay alone.
    with Server.from_recording(recording) as replay:
        replayed = await script(StdioServerParameters(**replay.stdio_params), mode)
        sent = [r.raw for r in replay.traffic if r.dir == "out"]
    assert replayed == from_peer
    assert replayed[-1] == [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")]

    # The frames: the peer's own bytes, the recording's, the replay's.
    peer_frames = direct.read_text().splitlines()
    recorded = [r.raw for r in load_records(recording) if r.dir == "out"]
    assert recorded == peer_frames
    assert sent == peer_frames
    assert all(json.loads(f)["jsonrpc"] == "2.0" for f in sent)


async def test_new_episodes_are_asked_of_the_peer_and_appended(tmp_path: pathlib.Path) -> None:
    recording = tmp_path / "peer.jsonl"
    with Server.from_recording(recording, upstream=PEER_COMMAND) as recorder:
        await script(StdioServerParameters(**recorder.stdio_params), "auto")
    lines = len(recording.read_text().splitlines())

    async def add(srv: Server, a: int) -> list[str]:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params)) as client:
                return texts(await client.call_tool("add", {"a": a, "b": 2}))

    # Without an upstream, a request the recording lacks is an error; with one, in record mode
    # new_episodes, the peer answers it and the exchange is appended.
    with Server.from_recording(recording, record_mode="new_episodes", upstream=PEER_COMMAND) as srv:
        assert await add(srv, 1) == ["3"]
        assert await add(srv, 40) == ["42"]
    added = [json.loads(line) for line in recording.read_text().splitlines()[lines:]]
    assert [(r["dir"], r["kind"], r["method"]) for r in added] == [
        ("in", "request", "tools/call"),
        ("out", "response", "tools/call"),
    ]
    assert added[0]["msg"]["params"]["arguments"] == {"a": 40, "b": 2}
    with Server.from_recording(recording, record_mode="none") as srv:
        assert await add(srv, 40) == ["42"]


@contextlib.contextmanager
def peer_over_http() -> Iterator[str]:
    """The peer serving Streamable HTTP on a free loopback port: yields its `/mcp` URL once it
    says it listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(PEER), "--http", str(port)], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or []], daemon=True).start()
    try:
        while "Uvicorn running on" not in lines.get(timeout=WAIT):
            pass
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=WAIT)
        proc.stderr.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_peer_over_http_is_recorded_and_replayed_over_http(tmp_path: pathlib.Path, mode: str) -> None:
    recording = tmp_path / "peer-http.jsonl"
    with peer_over_http() as url:
        with Server.from_recording(recording, upstream=url, record_mode="all") as recorder:
            through = await script(StdioServerParameters(**recorder.stdio_params), mode)
    assert through[0] == ("2025-11-25" if mode == "legacy" else "2026-07-28", "Demo")
    assert through[-1] == [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")]
    with Server.from_recording(recording) as replay:
        url = replay.start_http()
        with anyio.fail_after(WAIT):
            async with Client(url, mode=mode) as client:
                assert texts(await client.call_tool("add", {"a": 1, "b": 2})) == ["3"]
                assert [t.name for t in (await client.list_tools()).tools] == ["add", "count"]


def test_verify_sends_the_client_side_again_and_names_what_differs(tmp_path: pathlib.Path, cli_cmd: list[str]) -> None:
    recording = tmp_path / "peer.jsonl"

    async def record() -> None:
        with Server.from_recording(recording, upstream=PEER_COMMAND) as recorder:
            await script(StdioServerParameters(**recorder.stdio_params), "legacy")

    anyio.run(record)
    same = subprocess.run(
        [*cli_cmd, "verify", str(recording), "--upstream", PEER_COMMAND], capture_output=True, text=True, timeout=WAIT
    )
    assert same.returncode == 0, same.stderr
    assert same.stdout == "6 requests sent, 0 answered differently\n"

    # A server that answers differently: each difference on a line, then the summary.
    ours = tmp_path / "ours.jsonl"
    with Server(record=ours) as srv:
        conn = srv.connect()
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        conn.recv(timeout=WAIT)
    own = " ".join([*cli_cmd, "stdio"])
    assert subprocess.run([*cli_cmd, "verify", str(ours), "--upstream", own], timeout=WAIT).returncode == 0
    other = f"{own} --server-name other"
    done = subprocess.run(
        [*cli_cmd, "verify", str(ours), "--upstream", other], capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        'seq 1 initialize (memory-1): /result/serverInfo/name: recorded "everything-mcp", got "other"',
        'seq 1 initialize (memory-1): /result/serverInfo/title: recorded "everything-mcp test server", got (absent)',
        "1 requests sent, 1 answered differently",
    ]
    ignoring = subprocess.run(
        [*cli_cmd, "verify", str(ours), "--upstream", other, "--ignore", "/result/serverInfo", "--json"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert ignoring.returncode == 0 and json.loads(ignoring.stdout) == {"requests": 1, "differ": []}
    as_json = subprocess.run(
        [*cli_cmd, "verify", str(ours), "--upstream", other, "--json"], capture_output=True, text=True, timeout=WAIT
    )
    (differs,) = json.loads(as_json.stdout)["differ"]
    assert differs["seq"] == 1 and differs["conn"] == "memory-1" and differs["method"] == "initialize"
    assert differs["differences"][0] == {
        "path": "/result/serverInfo/name",
        "recorded": "everything-mcp",
        "got": "other",
    }

    missing = subprocess.run(
        [*cli_cmd, "verify", str(tmp_path / "none.jsonl"), "--upstream", other],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert missing.returncode == 2 and "none.jsonl" in missing.stderr
