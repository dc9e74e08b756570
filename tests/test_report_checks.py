"""The report's checks of how a client answered, what it declared, whether it honoured a
cancel, followed pagination and caused errors (docs/report.md, "Checks"); what it did after a
fault, its HTTP habits and latency are in test_report_habits.py. Real runs of the
official `mcp` client in both eras (`mode="legacy"`: the handshake; the default: 2026-07-28), raw
JSON-RPC frames over an in-process connection, and raw HTTP with httpx for the habits the
official client does not have; each asserted to the status, the detail and the records shown."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters, types

from everything_mcp import Server

from conftest import WAIT, accept_an_elicitation, envelope
from report_support import Raw, seqs_of, status

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

# asks.*: how the server's questions were answered


async def test_how_the_official_client_answered_each_question_and_the_capabilities_it_declared() -> None:
    """Elicitations accepted twice and declined once; two samplings answered; a roots/list
    answered with an error (no roots callback, so no roots capability): every question
    answered, and only declared capabilities used."""
    actions = iter(["accept", "accept", "decline"])

    async def elicit(_context: object, _params: object) -> types.ElicitResult:
        action = next(actions)
        return types.ElicitResult(action=action, content={"ok": True} if action == "accept" else None)  # type: ignore[arg-type]

    async def sample(_context: object, _params: object) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="ok"), model="m")

    form = {"message": "ok?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}
    with Server(catalogs=["none"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(
                srv.start_http(), mode="legacy", elicitation_callback=elicit, sampling_callback=sample
            ) as client:
                for _ in range(3):
                    await srv.aask("elicitation/create", form)
                for _ in range(2):
                    await srv.aask("sampling/createMessage", {"messages": [], "maxTokens": 5})
                (answer,) = (await srv.aask("roots/list")).values()
                assert "error" in answer
                await client.send_ping()
        mine = srv.report().client("mcp")
        assert status(mine, "asks.elicitation") == ("pass", "accept 2, decline 1")
        assert status(mine, "asks.sampling") == ("pass", "result 2, error 0")
        assert status(mine, "asks.roots") == ("pass", "result 0, error 1")
        assert status(mine, "lifecycle.capabilities") == ("pass", "declared elicitation, sampling")
        # The proof of a pass: the first use, the answer to the first elicitation.
        first_answer = seqs_of(srv, dir="in", kind="response", method="elicitation/create")[0]
        assert mine.check("lifecycle.capabilities").seqs == (first_answer,)


def asked_roots(srv: Server) -> tuple[Raw, dict[str, Any]]:
    """A raw client that declared roots, and the roots/list a fault rule asks it along with its
    first ping."""
    srv.faults.add(match={"method": "ping"}, action={"ask": {"method": "roots/list"}})
    raw = Raw(srv, capabilities={"roots": {}})
    raw.handshake()
    replies = [raw.request(1, "ping"), raw.recv()]
    (asked,) = [m for m in replies if m.get("method") == "roots/list"]
    return raw, asked


def test_a_question_left_unanswered_is_counted() -> None:
    """A raw client answers one roots/list with a result and leaves the next unanswered."""
    with Server(catalogs=["none"]) as srv:
        raw, asked = asked_roots(srv)
        raw.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}})
        replies = [raw.request(2, "ping"), raw.recv()]
        assert [m.get("method") for m in replies].count("roots/list") == 1
        raw.request(3, "tools/list")
        mine = srv.report().client("raw")
        unanswered = seqs_of(srv, dir="out", kind="request", method="roots/list")[1]
        assert status(mine, "asks.roots") == ("fail", "result 1, error 0, unanswered 1")
        assert mine.check("asks.roots").seqs == (unanswered,)
        assert status(mine, "lifecycle.capabilities") == ("pass", "declared roots")


# lifecycle.capabilities


async def test_the_official_client_announces_roots_it_never_declared() -> None:
    """Without a roots callback the official client declares no roots, yet it sends
    notifications/roots/list_changed when told to: a capability used undeclared."""
    with Server(catalogs=["none"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params), mode="legacy") as client:
                await client.send_roots_list_changed()
                await client.send_ping()
        mine = srv.report().client("mcp")
        assert status(mine, "lifecycle.capabilities") == (
            "fail",
            "sent notifications/roots/list_changed without declaring roots.listChanged",
        )
        assert mine.check("lifecycle.capabilities").seqs == tuple(
            seqs_of(srv, dir="in", method="notifications/roots/list_changed")
        )


def test_an_answer_with_a_result_to_a_question_the_client_could_not_have_been_asked() -> None:
    """A raw client without `sampling` answers a sampling/createMessage with a result."""
    with Server(catalogs=["none"]) as srv:
        ask = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
        srv.faults.add(match={"method": "ping"}, action={"ask": ask})
        raw = Raw(srv, capabilities={"roots": {"listChanged": True}})
        raw.handshake()
        replies = [raw.request(1, "ping"), raw.recv()]
        (asked,) = [m for m in replies if m.get("method") == "sampling/createMessage"]
        result = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
        raw.send({"jsonrpc": "2.0", "id": asked["id"], "result": result})
        raw.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        raw.request(2, "ping")
        mine = srv.report().client("raw")
        answer = seqs_of(srv, dir="in", kind="response", method="sampling/createMessage")
        assert status(mine, "lifecycle.capabilities") == (
            "fail",
            "answered sampling/createMessage with a result without declaring sampling",
        )
        assert mine.check("lifecycle.capabilities").seqs == tuple(answer)


async def test_in_2026_the_envelope_declares_and_a_retry_uses() -> None:
    """The official client in 2026-07-28 declares elicitation in every envelope and answers the
    input_required round with it: passes. A raw client that answers the same round with an
    envelope declaring nothing fails."""

    with Server(catalogs=["conformance"]) as srv:
        await accept_an_elicitation(srv)
        mine = srv.report().client("mcp")
        assert mine.era == "stateless"
        assert status(mine, "lifecycle.capabilities") == ("pass", "declared elicitation")
        assert status(mine, "asks.mrtr_retried")[0] == "pass"
    with Server(catalogs=["conformance"]) as srv:
        raw = Raw(srv)
        call = {"name": "test_elicitation", "arguments": {"message": "ok?"}}
        first = raw.request(1, "tools/call", {**call, "_meta": envelope({"elicitation": {}}, client="raw")})
        round_ = first["result"]
        assert round_["resultType"] == "input_required"
        (key,) = round_["inputRequests"]
        retry = {
            **call,
            "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
            "requestState": round_["requestState"],
            "_meta": envelope({}, client="raw"),
        }
        raw.request(2, "tools/call", retry)
        mine = srv.report().client("raw")
        assert status(mine, "lifecycle.capabilities") == (
            "fail",
            f"answered elicitation/create ({key}) with a result without declaring elicitation",
        )
        assert mine.check("lifecycle.capabilities").seqs == tuple(seqs_of(srv, dir="in", kind="request", id=2))


# cancel.honoured


async def test_the_official_client_does_not_answer_a_question_the_server_cancelled() -> None:
    """The server asks for a sample, then cancels the question (`notifications/cancelled`);
    the official client drops its callback and never answers."""
    waiting = anyio.Event()

    async def sample(_context: object, _params: object) -> types.CreateMessageResult:
        waiting.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    with Server(catalogs=["none"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(
                StdioServerParameters(**srv.stdio_params), mode="legacy", sampling_callback=sample
            ) as client:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(srv.aask, "sampling/createMessage", {"messages": [], "maxTokens": 5})
                    await waiting.wait()
                    (asked,) = [r for r in srv.traffic if r.dir == "out" and r.method == "sampling/createMessage"]
                    srv.notify("notifications/cancelled", {"requestId": asked.id, "reason": "no longer needed"})
                    # Ordered after the cancel on the same pipe: once answered, the cancel was read.
                    await client.send_ping()
                    tasks.cancel_scope.cancel()
                await client.send_ping()
        mine = srv.report().client("mcp")
        (cancel,) = seqs_of(srv, dir="out", method="notifications/cancelled")
        assert status(mine, "cancel.honoured") == ("pass", "0 of 1 cancelled requests answered after the cancel")
        assert mine.check("cancel.honoured").seqs == (cancel,)
        # A question the server withdrew is not one left unanswered.
        assert status(mine, "asks.sampling") == ("not exercised", "")


def test_a_client_that_answers_a_cancelled_question_fails() -> None:
    with Server(catalogs=["none"]) as srv:
        raw, asked = asked_roots(srv)
        assert srv.notify("notifications/cancelled", {"requestId": asked["id"]}) == 1
        assert raw.recv()["method"] == "notifications/cancelled"
        raw.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}})
        raw.request(2, "ping")
        mine = srv.report().client("raw")
        late = seqs_of(srv, dir="in", kind="response", id=asked["id"])
        assert status(mine, "cancel.honoured") == ("fail", "1 of 1 cancelled requests answered after the cancel")
        assert mine.check("cancel.honoured").seqs == tuple(late)


def test_a_cancel_that_names_no_request_of_the_server_is_not_exercised() -> None:
    with Server(catalogs=["none"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        srv.notify("notifications/cancelled", {"requestId": 99})
        raw.recv()
        raw.request(1, "ping")
        assert status(srv.report().client("raw"), "cancel.honoured") == ("not exercised", "")


# pagination.followed


async def _all_pages(client: Client, method: str, stop_after: int | None = None) -> int:
    """Lists `method` (`tools`, `prompts`) page after page, to the end, to a repeated cursor, or
    to `stop_after` pages; how many pages it took."""
    cursor: str | None = None
    seen: set[str] = set()
    pages = 0
    while True:
        lister = client.list_tools if method == "tools" else client.list_prompts
        page = await lister(cursor=cursor, cache_mode="refresh")
        pages += 1
        cursor = page.next_cursor
        if cursor is None or cursor in seen or pages == stop_after:
            return pages
        seen.add(cursor)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_following_every_list_to_its_last_page(mode: str) -> None:
    with Server(catalogs=["everything"], page_size=2) as srv:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params), mode=mode) as client:
                prompts = await _all_pages(client, "prompts")
                tools = await _all_pages(client, "tools")
        assert (prompts, tools) == (2, 7)
        mine = srv.report().client("mcp")
        assert status(mine, "pagination.followed") == ("pass", "prompts/list to page 2; tools/list to page 7")
        second = next(r.seq for r in srv.traffic.requests("prompts/list") if (r.params or {}).get("cursor"))
        assert mine.check("pagination.followed").seqs == (second,)


async def test_stopping_a_list_early_fails_and_says_where() -> None:
    with Server(catalogs=["everything"], page_size=2) as srv:
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                assert await _all_pages(client, "prompts") == 2
                assert await _all_pages(client, "tools", stop_after=3) == 3
        mine = srv.report().client("mcp")
        assert status(mine, "pagination.followed") == ("fail", "tools/list stopped after page 3")
        third = [r for r in srv.traffic.responses("tools/list") if r.dir == "out"][2]
        assert mine.check("pagination.followed").seqs == (third.seq,)


async def test_a_repeated_cursor_ends_a_list() -> None:
    """`pagination-bugs`: tools/list's later pages repeat their cursor. A client that stops
    there followed the list to its end, and did not loop."""
    with Server(catalogs=["everything"], page_size=2) as srv:
        srv.faults.preset("pagination-bugs")
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params), mode="legacy") as client:
                assert await _all_pages(client, "tools") == 2
        mine = srv.report().client("mcp")
        assert status(mine, "pagination.followed") == ("pass", "tools/list to page 2")
        assert mine.check("pagination.stops_at_repeat").status == "pass"


# errors.unknown_method, errors.invalid_arguments


def test_an_unknown_method_fails() -> None:
    with Server(catalogs=["everything"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.recv()  # the tools/list_changed the catalog announces
        assert raw.request(1, "tools/list")["result"]
        assert raw.request(2, "tools/frobnicate")["error"]["code"] == -32601
        mine = srv.report().client("raw")
        assert status(mine, "errors.unknown_method") == ("fail", "-32601 for tools/frobnicate")
        assert mine.check("errors.unknown_method").seqs == tuple(seqs_of(srv, dir="out", kind="error"))


async def test_the_server_discover_probe_of_a_2x_client_is_fine() -> None:
    """The official client in its default mode probes `server/discover`; a handshake-only
    server answers -32601 and the client falls back to `initialize`: not an unknown method."""
    with Server(catalogs=["everything"], era="handshake") as srv:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params)) as client:
                assert client.protocol_version == "2025-11-25"
                await client.list_tools()
        (probe,) = [r for r in srv.traffic if r.dir == "out" and r.method == "server/discover"]
        assert probe.msg["error"]["code"] == -32601
        mine = srv.report().client("mcp")
        assert status(mine, "errors.unknown_method") == ("pass", "")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_arguments_a_tool_or_a_prompt_refused(mode: str) -> None:
    """`get-sum` with a string is answered with an isError result (`Invalid arguments for tool`,
    as the reference server does); `args-prompt` without its required `city` with -32602."""
    with Server(catalogs=["everything"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params), mode=mode) as client:
                good = await client.call_tool("get-sum", {"a": 1, "b": 2})
                assert not good.is_error
                bad = await client.call_tool("get-sum", {"a": "one", "b": 2})
                assert bad.is_error
                assert "Invalid arguments for tool get-sum" in bad.content[0].text  # type: ignore[union-attr]
                with pytest.raises(MCPError) as refused:
                    await client.get_prompt("args-prompt", {})
                assert refused.value.error.code == -32602
        mine = srv.report().client("mcp")
        assert status(mine, "errors.invalid_arguments") == ("fail", "tools/call get-sum, prompts/get args-prompt")
        bad_answer = [r for r in srv.traffic.responses("tools/call") if r.dir == "out"][1]
        (prompt_answer,) = [r for r in srv.traffic if r.dir == "out" and r.method == "prompts/get"]
        assert mine.check("errors.invalid_arguments").seqs == (bad_answer.seq, prompt_answer.seq)
        assert status(mine, "errors.unknown_method") == ("pass", "")


async def test_valid_arguments_pass_and_a_scripted_refusal_is_not_the_clients() -> None:
    with Server(catalogs=["everything"]) as srv:
        refusal = {"content": [{"type": "text", "text": "Invalid arguments, says the fault"}], "isError": True}
        srv.faults.add(match={"method": "tools/call", "nth": 2}, action={"result": refusal})
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                await client.call_tool("echo", {"message": "hi"})
                assert (await client.call_tool("echo", {"message": "again"})).is_error
        mine = srv.report().client("mcp")
        assert status(mine, "errors.invalid_arguments") == ("pass", "")
        first = next(r for r in srv.traffic.responses("tools/call") if r.dir == "out")
        assert mine.check("errors.invalid_arguments").seqs == (first.seq,)
