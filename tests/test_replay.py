"""Replay: the official client records a session against the `everything` catalog, in each era and
over stdio and HTTP, and the same client script passes against `Server.from_recording` of it;
requests the recording lacks get the documented error at once, recorded notifications and server
requests arrive where they were, fault rules act on replayed answers, the CLI's `replay` serves
files."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from collections import Counter
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError, StdioServerParameters, types

from everything_mcp import ConfigError, Server, load_records

from conftest import WAIT, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

NOT_RECORDED = -32099
PROGRESS = [(1.0, 2.0, None), (2.0, 2.0, None)]


class Seen:
    """What the client was told on the way: progress, sampling requests."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.sampled: list[Any] = []

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def sample(self, _context: object, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.sampled.append(params.messages[0].content)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="a reply"), model="replayed-model"
        )


async def script(srv: Server, transport: str, mode: str) -> tuple[list[Any], Seen]:
    """One client session: what it got back, and what it was told on the way."""
    seen = Seen()
    target: Any = srv.start_http() if transport == "http" else StdioServerParameters(**srv.stdio_params)
    got: list[Any] = []
    with anyio.fail_after(WAIT):
        async with Client(target, mode=mode, sampling_callback=seen.sample, read_timeout_seconds=WAIT) as client:
            got.append(client.protocol_version)
            got.append([t.name for t in (await client.list_tools()).tools])
            got.append(texts(await client.call_tool("echo", {"message": "hi"})))
            got.append(texts(await client.call_tool("get-sum", {"a": 2, "b": 3.5})))
            r = await client.call_tool(
                "trigger-long-running-operation", {"duration": 0.02, "steps": 2}, progress_callback=seen.on_progress
            )
            got.append(texts(r))
            got.append(texts(await client.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 9})))
            contents = (await client.read_resource("demo://resource/static/document/architecture.md")).contents
            got.append([c.model_dump(exclude_none=True) for c in contents])
            prompt = await client.get_prompt("simple-prompt")
            got.append([m.model_dump(exclude_none=True) for m in prompt.messages])
    return got, seen


def shape(path: pathlib.Path | list[Any]) -> Counter[tuple[str, str, str | None]]:
    """The frames of a recording as a multiset of (direction, kind, method)."""
    records = load_records(path) if isinstance(path, pathlib.Path) else path
    return Counter((r.dir, r.kind, r.method) for r in records if r.kind != "http")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_recorded_session_replays_to_the_same_client_script(
    tmp_path: pathlib.Path, transport: str, mode: str
) -> None:
    recording = tmp_path / "session.jsonl"
    with Server(record=recording) as srv:
        recorded, told = await script(srv, transport, mode)
    assert recorded[0] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert told.progress == PROGRESS
    assert len(told.sampled) == 1

    with Server.from_recording(recording) as replay:
        replayed, retold = await script(replay, transport, mode)
        assert replayed == recorded
        assert retold.progress == told.progress
        assert retold.sampled == told.sampled
        # The replay's wire: the same frames, in both directions.
        assert shape(list(replay.traffic)) == shape(recording)
        assert not [r for r in list(replay.traffic) if r.kind == "error"]


async def test_a_request_not_recorded_gets_the_documented_error_at_once(tmp_path: pathlib.Path) -> None:
    recording = tmp_path / "session.jsonl"
    with Server(record=recording) as srv:
        await script(srv, "stdio", "legacy")
    with Server.from_recording(recording) as replay:
        with anyio.fail_after(WAIT):
            params = StdioServerParameters(**replay.stdio_params)
            async with Client(params, mode="legacy", sampling_callback=Seen().sample) as client:
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("echo", {"message": "not hi"})
                # The same request again gets its recorded answer: the error used nothing up.
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
        error = raised.value.error
        (echo,) = [r for r in load_records(recording) if r.dir == "in" and (r.params or {}).get("name") == "echo"]
        assert error.code == NOT_RECORDED
        assert error.message == (
            f"no recorded answer for tools/call: the closest recorded request (seq {echo.seq}, tools/call) "
            "differs at /params/arguments/message"
        )
        assert error.data is not None
        assert error.data["replay"] == "not_recorded" and error.data["method"] == "tools/call"
        assert error.data["differences"] == [{"path": "/params/arguments/message", "recorded": "hi", "got": "not hi"}]
        closest = error.data["closest"]
        assert closest["seq"] == echo.seq and closest["file"] == 1
        assert closest["request"]["params"]["arguments"] == {"message": "hi"}
        # On the record, like any answer.
        (miss,) = [r for r in list(replay.traffic) if r.kind == "error"]
        assert miss.dir == "out" and miss.msg["error"]["code"] == NOT_RECORDED


async def test_a_fault_rule_applies_to_a_replayed_answer(tmp_path: pathlib.Path) -> None:
    recording = tmp_path / "session.jsonl"
    with Server(record=recording) as srv:
        await script(srv, "http", "auto")
    with Server.from_recording(recording) as replay:
        replay.faults.add(
            match={"method": "tools/call", "name": "echo"}, action={"error": {"code": -32000, "message": "boom"}}
        )
        url = replay.start_http()
        with anyio.fail_after(WAIT):
            async with Client(url) as client:
                with pytest.raises(MCPError, match="boom"):
                    await client.call_tool("echo", {"message": "hi"})
                replay.faults.clear()
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
                assert texts(await client.call_tool("get-sum", {"a": 2, "b": 3.5})) == ["The sum of 2 and 3.5 is 5.5."]
        # The report reads a replaying server's traffic as any other's.
        assert replay.report().client().name == "mcp"


def raw_lines(path: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def handshake(tmp_path: pathlib.Path) -> pathlib.Path:
    """A recording of a raw handshake-era session: initialize, tools/call echo twice."""
    recording = tmp_path / "raw.jsonl"
    with Server(record=recording) as srv:
        conn = srv.connect()
        for line in [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params()},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "a"}},
            },
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "b"}},
            },
        ]:
            conn.send(json.dumps(line))
        answered: set[Any] = set()
        while answered != {1, 2, 3}:
            answered.add(json.loads(conn.recv(timeout=WAIT) or "{}").get("id"))
            answered.discard(None)
    return recording


def init_params() -> dict[str, Any]:
    return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def test_matching_strictness_order_and_repeat(tmp_path: pathlib.Path) -> None:
    recording = handshake(tmp_path)
    call = {"name": "echo", "arguments": {"message": "b"}}

    def answers(replay: Server, *requests: dict[str, Any]) -> list[dict[str, Any]]:
        conn = replay.connect()
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params()}))
        out = [json.loads(conn.recv(timeout=WAIT) or "null")]
        for r in requests:
            conn.send(json.dumps({"jsonrpc": "2.0", **r}))
            out.append(json.loads(conn.recv(timeout=WAIT) or "null"))
        return out

    # Any order (the default): b before a; ids are not compared; used up, the last again.
    with Server.from_recording(recording) as replay:
        got = answers(
            replay,
            {"id": 70, "method": "tools/call", "params": call},
            {"id": 71, "method": "tools/call", "params": call},
        )
        assert got[1] == {"jsonrpc": "2.0", "id": 70, "result": {"content": [{"type": "text", "text": "Echo: b"}]}}
        assert got[2]["id"] == 71 and got[2]["result"] == got[1]["result"]
    # Exact: the ids count too.
    with Server.from_recording(recording, ignore=[]) as replay:
        got = answers(
            replay,
            {"id": 70, "method": "tools/call", "params": call},
            {"id": 3, "method": "tools/call", "params": call},
        )
        assert got[1]["error"]["code"] == NOT_RECORDED
        assert got[1]["error"]["data"]["differences"] == [{"path": "/id", "recorded": 3, "got": 70}]
        assert got[2]["result"]["content"][0]["text"] == "Echo: b"
    # A path left out: any message matches.
    with Server.from_recording(recording, ignore=["/id", "/params/arguments/message"]) as replay:
        got = answers(
            replay, {"id": 5, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "z"}}}
        )
        assert got[1]["result"]["content"][0]["text"] == "Echo: a"
    # In recorded order: b first is out of order; used up without repeat is an error.
    with Server.from_recording(recording, order="recorded", repeat=False) as replay:
        got = answers(
            replay,
            {"id": 5, "method": "tools/call", "params": call},
            {"id": 6, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "a"}}},
            {"id": 7, "method": "tools/call", "params": call},
            {"id": 8, "method": "tools/call", "params": call},
        )
        assert got[1]["error"]["data"]["replay"] == "out_of_order"
        assert got[1]["error"]["message"] == "tools/call is not the next recorded request: that is tools/call (seq 5)"
        assert [g["result"]["content"][0]["text"] for g in got[2:4]] == ["Echo: a", "Echo: b"]
        assert got[4]["error"]["data"]["replay"] == "used_up"


def test_bad_recordings_and_options_are_config_errors(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"v":2,"seq":1,"dir":"in"}\nnot json\n')
    with pytest.raises(ConfigError, match=r"invalid recording: .*bad.jsonl line 2: not a traffic record"):
        Server.from_recording(bad)
    with pytest.raises(ConfigError, match="is not a JSON Pointer"):
        Server.from_recording(handshake(tmp_path), ignore=["params"])
    with pytest.raises(ConfigError, match='replay order "sideways" is not one of "any", "recorded"'):
        Server.from_recording(handshake(tmp_path), order="sideways")
    with pytest.raises(ConfigError, match="does not exist yet, and no upstream was given to record it from"):
        Server.from_recording(tmp_path / "missing.jsonl")


def test_the_cli_replays_files_on_stdio(tmp_path: pathlib.Path, cli_cmd: list[str]) -> None:
    recording = handshake(tmp_path)
    lines = [
        {"jsonrpc": "2.0", "id": "x", "method": "initialize", "params": init_params()},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "a"}}},
        {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "c"}}},
    ]
    replayed = tmp_path / "replayed.jsonl"
    done = subprocess.run(
        [*cli_cmd, "replay", str(recording), "--record", str(replayed)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    recorded_init = next(r for r in raw_lines(recording) if r["dir"] == "out" and r["method"] == "initialize")
    assert out[0] == {"jsonrpc": "2.0", "id": "x", "result": recorded_init["msg"]["result"]}
    # What followed notifications/initialized in the recording follows it again.
    assert out[1] == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    # The two calls are served concurrently: their answers come in either order.
    by_id = {o["id"]: o for o in out[2:]}
    assert by_id[9] == {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "Echo: a"}]}}
    assert by_id[10]["error"]["code"] == NOT_RECORDED
    assert [r["method"] for r in raw_lines(replayed) if r["dir"] == "in"] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/call",
    ]


def test_the_cli_help_names_the_replay_command(cli_cmd: list[str]) -> None:
    done = subprocess.run([*cli_cmd, "replay", "--help"], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0
    assert "Usage: everything-mcp replay [OPTIONS] <FILE>..." in done.stdout
    for flag in ["--http", "--sse", "--ignore <PATH>", "--exact", "--order <ORDER>", "--no-repeat", "--record <FILE>"]:
        assert flag in done.stdout, flag


def test_python_m_without_files_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "everything_mcp", "replay"], capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 2 and "<FILE>" in done.stderr


async def test_the_cli_replays_over_http_with_the_control_api(tmp_path: pathlib.Path, cli_cmd: list[str]) -> None:
    recording = tmp_path / "session.jsonl"
    with Server(record=recording) as srv:
        await script(srv, "http", "auto")
    proc = subprocess.Popen(
        [*cli_cmd, "replay", str(recording), "--http", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        announced = json.loads(proc.stderr.readline())
        base = announced["base_url"]
        with anyio.fail_after(WAIT):
            async with httpx.AsyncClient(base_url=base, timeout=WAIT) as http:
                rule = {
                    "match": {"method": "tools/call", "name": "get-sum"},
                    "action": {"error": {"code": -32000, "message": "boom"}},
                }
                assert (await http.post("/_control/faults", json=rule)).status_code == 201
                async with Client(announced["url"], sampling_callback=Seen().sample) as client:
                    assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
                    with pytest.raises(MCPError, match="boom"):
                        await client.call_tool("get-sum", {"a": 2, "b": 3.5})
                    with pytest.raises(MCPError) as raised:
                        await client.call_tool("echo", {"message": "other"})
                    assert raised.value.error.code == NOT_RECORDED
                traffic = (await http.get("/_control/traffic")).text.splitlines()
                assert any('"Echo: hi"' in line for line in traffic)
                assert (await http.get("/_lab/")).status_code == 200
    finally:
        proc.terminate()
        assert proc.wait(timeout=WAIT) == 0
        proc.stderr.close()


async def test_a_session_over_legacy_sse_replays_over_legacy_sse(tmp_path: pathlib.Path) -> None:
    from mcp.client.sse import sse_client

    async def session(srv: Server) -> list[Any]:
        srv.start_http()
        seen = Seen()
        with anyio.fail_after(WAIT):
            transport = sse_client(srv.sse_url or "", timeout=WAIT)
            async with Client(transport, mode="legacy", sampling_callback=seen.sample) as client:
                echo = texts(await client.call_tool("echo", {"message": "hi"}))
                sampled = texts(await client.call_tool("trigger-sampling-request", {"prompt": "x", "maxTokens": 9}))
        return [echo, sampled, seen.sampled]

    recording = tmp_path / "sse.jsonl"
    with Server(record=recording) as srv:
        recorded = await session(srv)
    assert {r.transport for r in load_records(recording) if r.kind != "http"} == {"sse"}
    with Server.from_recording(recording) as replay:
        assert await session(replay) == recorded
