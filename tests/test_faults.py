"""Scripted faults (docs/faults.md): a rule's match picks frames from the client, its action
answers an error instead, drops the frame or serves it late, and its handle counts its hits. The
official `mcp` client sees each, in both eras (`auto` speaks 2026-07-28, `legacy` the
handshake) and on both transports; the CLI reads the same rules from `--faults FILE`."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError, StdioServerParameters

from everything_mcp import ConfigError, Server

from conftest import SERVER_CMD, WAIT, envelope, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

BOOM = {"error": {"code": -32000, "message": "boom", "data": {"why": "scripted"}}}


def target(srv: Server, transport: str) -> Any:
    """What the official client connects to: the server's HTTP endpoint or its stdio relay."""
    if transport == "http":
        return srv.start_http()
    return StdioServerParameters(**srv.stdio_params)


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_error_on_the_nth_call_only(mode: str, transport: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match={"method": "tools/call", "name": "echo", "nth": 2}, action=BOOM)
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode) as client:  # type: ignore[arg-type]
                first = await client.call_tool("echo", {"message": "one"})
                assert texts(first) == ["Echo: one"]
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("echo", {"message": "two"})
                error = raised.value.error
                assert (error.code, error.message, error.data) == (-32000, "boom", {"why": "scripted"})
                third = await client.call_tool("echo", {"message": "three"})
                assert texts(third) == ["Echo: three"]
                # Another tool's calls are not counted.
                await client.call_tool("get-sum", {"a": 1, "b": 2})
        assert rule.hits == 1
        # The wire shows the scripted error as the answer to the second call.
        calls = [r for r in srv.traffic if r.method == "tools/call" and r.dir == "in"]
        answers = {r.id: r for r in srv.traffic if r.dir == "out" and r.kind == "error"}
        assert [c.id for c in calls if c.id in answers] == [calls[1].id]
        assert answers[calls[1].id].msg["error"] == BOOM["error"]
        # The frame the rule acted on carries its mark; the others none.
        assert [c.fault for c in calls] == [None, {"rule": rule.id, "action": "error"}, None, None]


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_dropped_request_is_never_answered_and_the_next_is(mode: str, transport: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match={"method": "tools/call", "first": 1}, action={"drop": True})
        async with Client(target(srv, transport), mode=mode, read_timeout_seconds=1.0) as client:  # type: ignore[arg-type]
            with pytest.raises(MCPError) as raised:
                await client.call_tool("echo", {"message": "lost"})
            assert "timed out" in raised.value.error.message
            answered = await client.call_tool("echo", {"message": "kept"})
            assert texts(answered) == ["Echo: kept"]
        assert rule.hits == 1
        dropped = next(r for r in srv.traffic if r.method == "tools/call")
        assert not [r for r in srv.traffic if r.dir == "out" and r.id == dropped.id]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_http_status_answers_the_post_instead(mode: str) -> None:
    """`http_status` answers the POST (headers and body as given, recorded with that status and
    the rule's mark); the client sees the failure and its next call is served."""
    with Server(catalogs=["everything"]) as srv:
        busy = {"http_status": 503, "headers": {"Retry-After": "1"}, "body": "busy"}
        rule = srv.faults.add(match={"method": "tools/call", "first": 1}, action=busy)
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode=mode) as client:  # type: ignore[arg-type]
                with pytest.raises(Exception) as raised:
                    await client.call_tool("echo", {"message": "x"})
                # The SDK's words for it differ by mode: the 503 itself, or "an error response".
                assert "503" in repr(raised.value) or "error response" in repr(raised.value)
                assert texts(await client.call_tool("echo", {"message": "y"})) == ["Echo: y"]
        assert rule.hits == 1
        hit = next(r for r in srv.traffic if r.method == "tools/call")
        assert hit.http is not None and hit.http["status"] == 503
        assert hit.fault == {"rule": rule.id, "action": "http_status"}


async def test_an_http_status_on_the_wire_and_not_on_stdio() -> None:
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http()
        unauthorized = {"http_status": 401, "headers": {"WWW-Authenticate": 'Bearer realm="lab"'}}
        srv.faults.add(match={"method": "tools/list"}, action=unauthorized)
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": envelope()},
        }
        answer = httpx.post(url, json=body, headers=headers, timeout=WAIT)
        assert (answer.status_code, answer.headers["www-authenticate"], answer.text) == (401, 'Bearer realm="lab"', "")
        # An HTTP rule matches no stdio frame: the relayed stdio client is served.
        async with Client(StdioServerParameters(**srv.stdio_params), mode="legacy") as client:
            assert (await client.list_tools()).tools


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_delay_serves_late_and_others_meanwhile(mode: str, transport: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(match={"method": "tools/call", "name": "echo"}, action={"delay_ms": 400})
        finished: list[str] = []
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode) as client:  # type: ignore[arg-type]

                async def slow() -> None:
                    await client.call_tool("echo", {"message": "late"})
                    finished.append("echo")

                started = time.monotonic()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(slow)
                    await client.call_tool("get-sum", {"a": 1, "b": 2})
                    finished.append("get-sum")
                assert time.monotonic() - started >= 0.4
        assert finished == ["get-sum", "echo"]


async def test_a_delayed_error_and_a_rule_per_era() -> None:
    """`delay_ms` with `error`: the error, late. `era` limits a rule to one era's clients."""
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http()
        late = {**BOOM, "delay_ms": 50}
        stateless = srv.faults.add(match={"method": "tools/call", "era": "stateless"}, action=late)
        handshake = srv.faults.add(match={"method": "prompts/list", "revision": "2025-11-25"}, action=BOOM)
        with anyio.fail_after(WAIT):
            async with Client(url, mode="auto") as client:
                with pytest.raises(MCPError, match="boom"):
                    await client.call_tool("echo", {"message": "x"})
                assert (await client.list_prompts()).prompts
            async with Client(url, mode="legacy") as client:
                assert texts(await client.call_tool("echo", {"message": "x"})) == ["Echo: x"]
                with pytest.raises(MCPError, match="boom"):
                    await client.list_prompts()
        assert (stateless.hits, handshake.hits) == (1, 1)


async def test_a_rule_handle_counts_lists_and_removes() -> None:
    with Server(catalogs=["everything"]) as srv:
        conn = srv.connect()
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _init()}))
        json.loads(conn.recv(WAIT))
        with srv.faults.add(match={"method": "ping", "every": 2}, action=BOOM, id="odd") as rule:
            assert [r.id for r in srv.faults.rules] == ["odd"]
            answers = [_ping(conn, i) for i in range(1, 5)]
            assert ["error" in a for a in answers] == [False, True, False, True]
            assert rule.hits == 2 and rule.active
        assert not rule.active and rule.hits == 2 and len(srv.faults) == 0
        assert "error" not in _ping(conn, 5)
        with pytest.raises(ConfigError, match="already in force"):
            srv.faults.add(action={"drop": True}, id="x")
            srv.faults.add(action={"drop": True}, id="x")


def test_a_seeded_probability_hits_the_same_frames_every_run() -> None:
    def pattern(seed: int) -> list[bool]:
        with Server(catalogs=["none"]) as srv:
            srv.faults.add(match={"method": "ping", "probability": 0.5, "seed": seed}, action=BOOM)
            conn = srv.connect()
            conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _init()}))
            json.loads(conn.recv(WAIT))
            return ["error" in _ping(conn, i) for i in range(1, 41)]

    first, again, other = pattern(7), pattern(7), pattern(8)
    assert first == again
    assert first != other
    assert 5 < sum(first) < 35


def test_bad_rules_name_the_member_and_the_problem() -> None:
    with Server(catalogs=["none"]) as srv:
        cases = [
            ({"match": {"methd": "x"}, "action": {"drop": True}}, "match.methd: unknown field `methd`"),
            ({"match": {"nth": "2"}, "action": {"drop": True}}, "match.nth: invalid type: string"),
            ({"match": {"nth": 0}, "action": {"drop": True}}, "match.nth: counts from 1, got 0"),
            (
                {"action": {}},
                'action: needs one of "error", "drop": true, "delay_ms", "after_cancel": true',
            ),
            ({"action": {"error": {"code": 1}}}, "action.error.message: missing field `message`"),
            ({"match": {"era": "modern"}, "action": {"drop": True}}, "match.era: unknown variant `modern`"),
            ({"match": {"probability": 2}, "action": {"drop": True}}, "match.probability: must be between 0 and 1"),
        ]
        for rule, message in cases:
            with pytest.raises(ConfigError) as raised:
                srv.faults.add_rule(rule)
            assert message in str(raised.value), rule
        assert len(srv.faults) == 0
        # A file's rules go in all together, or none of them.
        text = '[\n  {"action": {"drop": true}},\n  {"action": {"dorp": true}}\n]'
        with pytest.raises(ConfigError, match=r"line 3, rule 2: action.dorp: unknown field `dorp`"):
            srv.faults.load_text(text)
        assert len(srv.faults) == 0


@pytest.mark.everything_mcp(catalogs=["everything"], faults=[{"match": {"method": "tools/call"}, "action": BOOM}])
async def test_the_fixture_marker_takes_rules(everything_mcp: Server) -> None:
    (rule,) = everything_mcp.faults.rules
    async with Client(everything_mcp.http_url) as client:
        with pytest.raises(MCPError, match="boom"):
            await client.call_tool("echo", {"message": "x"})
    assert rule.hits == 1


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_cli_reads_a_fault_file(tmp_path: Path, mode: str) -> None:
    rules = tmp_path / "faults.json"
    rules.write_text(json.dumps({"rules": [{"match": {"method": "tools/call", "nth": 1}, "action": BOOM}]}))
    command, *args = SERVER_CMD
    params = StdioServerParameters(command=command, args=[*args, "stdio", "--faults", str(rules)])
    with anyio.fail_after(WAIT):
        async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
            with pytest.raises(MCPError, match="boom"):
                await client.call_tool("echo", {"message": "x"})
            assert texts(await client.call_tool("echo", {"message": "y"})) == ["Echo: y"]


def test_the_cli_refuses_a_bad_fault_file_naming_its_line(tmp_path: Path) -> None:
    rules = tmp_path / "faults.json"
    rules.write_text('[\n  {"match": {"method": "tools/call"},\n   "action": {"eror": {}}}\n]\n')
    out = subprocess.run(
        [*SERVER_CMD, "stdio", "--faults", str(rules)],
        capture_output=True,
        text=True,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2
    assert f"--faults {rules}: invalid fault rule: line 2, rule 1: action.eror: unknown field `eror`" in out.stderr
    missing = subprocess.run(
        [*SERVER_CMD, "stdio", "--faults", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert missing.returncode == 2 and "No such file or directory" in missing.stderr


def _init() -> dict[str, Any]:
    return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def _ping(conn: Any, id: int) -> dict[str, Any]:
    conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "ping"}))
    answer: dict[str, Any] = json.loads(conn.recv(WAIT))
    assert answer["id"] == id
    return answer


async def test_the_version_skew_preset_makes_a_2026_client_fall_back() -> None:
    with Server(catalogs=["everything"]) as srv:
        (rule,) = srv.faults.preset("version-skew")
        assert rule.id == "version-skew-1"
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http()) as client:
                assert client.protocol_version == "2025-11-25"
                assert texts(await client.call_tool("echo", {"message": "x"})) == ["Echo: x"]
        assert rule.hits == 1


def test_presets_are_seeded_and_an_unknown_one_names_the_known(tmp_path: Path) -> None:
    with Server(catalogs=["none"]) as srv:
        flaky = srv.faults.preset("flaky-network", seed=42)
        assert [r.id for r in flaky] == ["flaky-network-1", "flaky-network-2"]
        assert [r.spec["match"]["seed"] for r in flaky] == [42, 43]
        known = (
            "flaky-network, slow-server, version-skew, ignore-cancel, session-expiry, pagination-bugs,"
            " auth-2025-03-26, auth-2025-03-26-no-metadata"
        )
        with pytest.raises(ConfigError, match=f'unknown fault preset "chaos" \\(known: {known}\\)'):
            srv.faults.preset("chaos")
    out = subprocess.run(
        [*SERVER_CMD, "stdio", "--faults-preset", "chaos"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2 and f"(known: {known})" in out.stderr


@pytest.mark.everything_mcp(catalogs=["none"], faults=["ignore-cancel", {"action": {"delay_ms": 1}}])
def test_the_marker_takes_preset_names_too(everything_mcp: Server) -> None:
    assert [r.id for r in everything_mcp.faults.rules] == ["ignore-cancel-1", "r1"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_pagination_bugs_preset(mode: str) -> None:
    """With pages of 1: a client that follows `nextCursor` meets a repeated cursor, an empty one,
    pages that never end and a valid cursor refused. A correct client stops at each (here: the
    official client's pages, followed by hand)."""
    with Server(catalogs=["everything"], page_size=1) as srv:
        srv.faults.preset("pagination-bugs")
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode=mode) as client:
                first = await client.list_tools(cache_mode="bypass")
                assert first.next_cursor
                second = await client.list_tools(cursor=first.next_cursor, cache_mode="bypass")
                assert second.next_cursor == first.next_cursor  # the cursor repeats
                resources = await client.list_resources(cache_mode="bypass")
                assert resources.next_cursor == ""  # an empty cursor: the end, or a bug
                prompts = await client.list_prompts(cache_mode="bypass")
                for _ in range(5):  # never ends
                    assert prompts.next_cursor == "more"
                    prompts = await client.list_prompts(cursor=prompts.next_cursor, cache_mode="bypass")
                templates = await client.list_resource_templates(cache_mode="bypass")
                assert templates.next_cursor
                with pytest.raises(MCPError, match="invalid cursor"):
                    await client.list_resource_templates(cursor=templates.next_cursor, cache_mode="bypass")
        hits = {r.id: r.hits for r in srv.faults.rules}
        assert hits == {"pagination-bugs-1": 1, "pagination-bugs-2": 1, "pagination-bugs-3": 6, "pagination-bugs-4": 1}


async def test_the_session_expiry_preset() -> None:
    """Every third `tools/call` of the handshake era ends its session (`404`): the official
    client does not start a new session by itself, so a fresh one is needed (what a correct
    client does on its own)."""
    with Server(catalogs=["everything"]) as srv:
        srv.faults.preset("session-expiry")
        url = srv.start_http()
        with anyio.fail_after(WAIT):
            async with Client(url, mode="legacy") as client:
                for n in range(2):
                    await client.call_tool("echo", {"message": str(n)})
                with pytest.raises(MCPError, match="Session terminated"):
                    await client.call_tool("echo", {"message": "third"})
            async with Client(url, mode="legacy") as client:
                assert texts(await client.call_tool("echo", {"message": "again"})) == ["Echo: again"]
