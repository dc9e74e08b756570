"""Fault rules that change what the client receives (docs/faults.md): a result instead of the
tool's (an `isError` one, one that breaks the tool's `outputSchema`), and the answer changed on
its way out — another id, sent twice, no `jsonrpc`, not JSON, cut short, padded, members set or
taken out by JSON pointer — and rules of direction `out` that drop or change notifications. The
official `mcp` client sees each, in both of its modes (`auto` speaks 2026-07-28, `legacy` the
handshake) and over HTTP and stdio; the traffic shows what went on the wire, marked."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters, types

from everything_mcp import ConfigError, Server

from conftest import MODES, STATELESS, WAIT, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

TRANSPORTS = pytest.mark.parametrize("transport", ["http", "stdio"])
ECHO = {"method": "tools/call", "name": "echo"}


def target(srv: Server, transport: str) -> Any:
    if transport == "http":
        return srv.start_http()
    return StdioServerParameters(**srv.stdio_params)


def answers(srv: Server) -> list[Any]:
    """The server's answers to `tools/call` requests, in wire order (records of responses and
    errors, and of frames a change made invalid)."""
    calls = {r.id for r in srv.traffic if r.dir == "in" and r.method == "tools/call"}
    return [r for r in srv.traffic if r.dir == "out" and (r.id in calls or r.kind == "invalid")]


@TRANSPORTS
@MODES
async def test_a_result_instead_of_the_tools(mode: str, transport: str) -> None:
    failed = {"content": [{"type": "text", "text": "scripted failure"}], "isError": True}
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match=ECHO | {"first": 1}, action={"result": failed})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode) as client:
                first = await client.call_tool("echo", {"message": "x"})
                assert (first.is_error, texts(first)) == (True, ["scripted failure"])
                second = await client.call_tool("echo", {"message": "y"})
                assert (second.is_error, texts(second)) == (False, ["Echo: y"])
        assert rule.hits == 1
        sent = answers(srv)[0].msg["result"]
        # As given (in 2026-07-28 completed as any result: its resultType and the server's _meta).
        assert {k: sent[k] for k in failed} == failed


@MODES
async def test_a_result_that_breaks_the_tools_output_schema(mode: str) -> None:
    """`get-structured-content` declares an `outputSchema`; the official client checks the
    structured content against it and refuses the call."""
    wrong = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"temperature": "hot"}}
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(match={"method": "tools/call", "name": "get-structured-content"}, action={"result": wrong})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, "http"), mode=mode) as client:
                await client.list_tools()  # the client learns the output schema
                with pytest.raises(RuntimeError, match=r"^Invalid structured content returned by tool get-structured"):
                    await client.call_tool("get-structured-content", {"location": "New York"})
                # The connection is still usable.
                assert texts(await client.call_tool("echo", {"message": "still"})) == ["Echo: still"]


@TRANSPORTS
@MODES
async def test_an_answer_with_another_id_never_answers_the_request(mode: str, transport: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match=ECHO | {"nth": 1}, action={"wrong_id": True})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode, read_timeout_seconds=1.0) as client:
                if (mode, transport) == ("legacy", "http"):
                    # A client truth: the official client over Streamable HTTP takes the first
                    # response on a POST's SSE stream as that POST's answer and writes the
                    # request's id over the one sent (its resumption code does), so it never
                    # sees a wrong id there.
                    assert texts(await client.call_tool("echo", {"message": "lost"})) == ["Echo: lost"]
                else:
                    with pytest.raises(MCPError) as raised:
                        await client.call_tool("echo", {"message": "lost"})
                    assert "timed out" in raised.value.error.message.lower()
                assert texts(await client.call_tool("echo", {"message": "next"})) == ["Echo: next"]
        call = next(r for r in srv.traffic if r.dir == "in" and r.method == "tools/call")
        sent = next(r for r in srv.traffic if r.dir == "out" and r.fault is not None)
        assert sent.fault == {"rule": rule.id, "action": "wrong_id"}
        wrong = call.id + 1_000_000 if isinstance(call.id, int) else f"wrong-{call.id}"
        assert sent.msg["id"] == wrong
        assert call.fault == {"rule": rule.id, "action": "wrong_id"}


@TRANSPORTS
@MODES
async def test_a_duplicated_answer_is_sent_twice_and_the_client_goes_on(mode: str, transport: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(match=ECHO | {"nth": 1}, action={"duplicate": True})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode) as client:
                if (mode, transport) == ("auto", "http"):
                    # 2026-07-28 over HTTP answers in a JSON body: two copies of the answer are
                    # not one JSON value, and the client says so.
                    with pytest.raises(MCPError, match="Failed to parse JSON response"):
                        await client.call_tool("echo", {"message": "twice"})
                else:
                    assert texts(await client.call_tool("echo", {"message": "twice"})) == ["Echo: twice"]
                assert texts(await client.call_tool("echo", {"message": "once"})) == ["Echo: once"]
        sent = answers(srv)
        assert [r.msg["result"]["content"][0]["text"] for r in sent] == ["Echo: twice", "Echo: twice", "Echo: once"]
        assert sent[0].id == sent[1].id and sent[0].raw == sent[1].raw
        assert [r.fault is not None for r in sent] == [True, True, False]


@TRANSPORTS
@MODES
@pytest.mark.parametrize(
    "change",
    [{"no_jsonrpc": True}, {"not_json": "<html>502 Bad Gateway</html>"}, {"truncate": 20}],
    ids=["no_jsonrpc", "not_json", "truncate"],
)
async def test_a_malformed_answer_is_not_taken_for_the_result(
    mode: str, transport: str, change: dict[str, Any]
) -> None:
    """The client cannot read the answer as the response to its call: the call fails (or times
    out) and the next one works."""
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match=ECHO | {"nth": 1}, action=change)
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode, read_timeout_seconds=1.0) as client:
                with pytest.raises(Exception):  # noqa: B017 - the SDK's parse error or its timeout
                    await client.call_tool("echo", {"message": "broken"})
                assert texts(await client.call_tool("echo", {"message": "fine"})) == ["Echo: fine"]
        mark = {"rule": rule.id, "action": next(iter(change))}
        marked = [r for r in srv.traffic if r.dir == "out" and r.fault == mark]
        assert len(marked) == 1
        raw = marked[0].raw
        if "not_json" in change:
            assert raw == change["not_json"] and marked[0].kind == "invalid"
        elif "truncate" in change:
            assert len(raw) == 20 and marked[0].kind == "invalid"
        else:
            assert '"jsonrpc"' not in raw and json.loads(raw)["result"]["content"][0]["text"] == "Echo: broken"


@TRANSPORTS
@MODES
async def test_an_oversized_answer_is_still_the_answer(mode: str, transport: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(match=ECHO, action={"oversize": 1_000_000})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode) as client:
                assert texts(await client.call_tool("echo", {"message": "big"})) == ["Echo: big"]
        (sent,) = answers(srv)
        assert len(sent.raw) >= 1_000_000


async def test_an_older_revision_offered_on_initialize() -> None:
    """The handshake: `initialize` answered with an older revision than the client asked for;
    the client takes it (2025-03-26 is one it speaks)."""
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match={"method": "initialize"}, action={"set": {"/result/protocolVersion": "2025-03-26"}})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, "stdio"), mode="legacy") as client:
                assert client.protocol_version == "2025-03-26"
        assert rule.hits == 1


@MODES
async def test_capabilities_withheld_and_added(mode: str) -> None:
    """The capabilities the client reads come from `initialize` (handshake) or
    `server/discover` (2026-07-28): a rule takes `prompts` out and puts `completions` in."""
    method = "initialize" if mode == "legacy" else "server/discover"
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(
            match={"method": method},
            action={
                "remove": ["/result/capabilities/prompts"],
                "set": {"/result/capabilities/experimental": {"x": {}}},
            },
        )
        with anyio.fail_after(WAIT):
            async with Client(target(srv, "http"), mode=mode) as client:
                caps = client.server_capabilities
                assert caps is not None
                assert caps.prompts is None and caps.tools is not None
                assert caps.experimental == {"x": {}}


@TRANSPORTS
@MODES
async def test_outgoing_notifications_dropped_and_changed(mode: str, transport: str) -> None:
    """Direction `out`: the second progress notification goes backwards, the third names a
    token nobody asked for, and log messages never leave."""
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with Server(catalogs=["everything"]) as srv:
        back = srv.faults.add(
            match={"direction": "out", "method": "notifications/progress", "nth": 2},
            action={"set": {"/params/progress": 0}},
        )
        stray = srv.faults.add(
            match={"direction": "out", "method": "notifications/progress", "nth": 3},
            action={"set": {"/params/progressToken": "nobody-asked"}},
        )
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode) as client:
                result = await client.call_tool(
                    "trigger-long-running-operation", {"duration": 0.03, "steps": 4}, progress_callback=on_progress
                )
                assert texts(result)[0].startswith("Long running operation completed")
        assert (back.hits, stray.hits) == (1, 1)
        sent = [r for r in srv.traffic if r.dir == "out" and r.method == "notifications/progress"]
        assert [r.msg["params"]["progress"] for r in sent] == [1, 0, 3, 4]
        assert sent[2].msg["params"]["progressToken"] == "nobody-asked"
        assert [r.fault["action"] if r.fault else None for r in sent] == [None, "set", "set", None]
        # What the client made of it: the stray token is not its call's.
        assert progress == [1, 0, 4]


def test_bad_changes_name_the_member() -> None:
    with Server(catalogs=["none"]) as srv:
        for rule, field in [
            ({"action": {"drop": True, "duplicate": True}}, "action"),
            ({"action": {"result": [1]}}, "action.result"),
            ({"action": {"result": {}, "error": {"code": 1, "message": "m"}}}, "action"),
            ({"action": {"set": {"result": 1}}}, "action.set"),
            ({"action": {"remove": ["x"]}}, "action.remove"),
            ({"match": {"direction": "out"}, "action": {"error": {"code": 1, "message": "m"}}}, "action.error"),
            ({"match": {"direction": "out", "name": "echo"}, "action": {"drop": True}}, "match.name"),
            ({"match": {"direction": "sideways"}, "action": {"drop": True}}, "match.direction"),
        ]:
            with pytest.raises(ConfigError, match=rf"^invalid fault rule: {field.replace('.', '[.]')}: "):
                srv.faults.add_rule(rule)


@MODES
async def test_a_rule_for_one_client_by_its_name(mode: str) -> None:
    """`match.client` is the client's `clientInfo.name` (from `initialize`, or each 2026-07-28
    request's `_meta`)."""
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http()
        srv.faults.add(match=ECHO | {"client": "picky"}, action={"error": {"code": -32000, "message": "not you"}})
        with anyio.fail_after(WAIT):
            picky = types.Implementation(name="picky", version="1")
            async with Client(url, mode=mode, client_info=picky) as client:
                with pytest.raises(MCPError, match="not you"):
                    await client.call_tool("echo", {"message": "x"})
            async with Client(url, mode=mode) as client:
                assert texts(await client.call_tool("echo", {"message": "x"})) == ["Echo: x"]
                if mode == "auto":
                    assert client.protocol_version == STATELESS


@TRANSPORTS
@MODES
async def test_a_list_changed_storm_and_a_request_the_client_did_not_declare(mode: str, transport: str) -> None:
    """`notify` sends notifications before the frame is served (on its own stream over HTTP);
    `ask` sends a server → client request whatever the client declared. The official client
    takes each `list_changed`, and answers the `sampling/createMessage` it has no capability for
    with an error."""
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        seen.append(str(getattr(getattr(message, "root", message), "method", "")))

    storm = {"method": "notifications/tools/list_changed", "count": 25}
    sample = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    with Server(catalogs=["everything"]) as srv:
        rule = srv.faults.add(match=ECHO | {"nth": 1}, action={"notify": storm, "ask": sample})
        with anyio.fail_after(WAIT):
            async with Client(target(srv, transport), mode=mode, message_handler=on_message) as client:
                assert texts(await client.call_tool("echo", {"message": "x"})) == ["Echo: x"]
                while seen.count("notifications/tools/list_changed") < 25:
                    await anyio.sleep(0.005)
                if (mode, transport) != ("legacy", "http"):
                    while not [r for r in srv.traffic if r.dir == "in" and r.kind == "error"]:
                        await anyio.sleep(0.005)
        marked = [r for r in srv.traffic if r.dir == "out" and r.fault == {"rule": rule.id, "action": "notify"}]
        assert [r.method for r in marked] == ["notifications/tools/list_changed"] * 25 + ["sampling/createMessage"]
        if (mode, transport) != ("legacy", "http"):
            (refused,) = [r for r in srv.traffic if r.dir == "in" and r.kind == "error"]
            assert refused.id == marked[-1].id and refused.msg["error"]["code"] in (-32600, -32601)
