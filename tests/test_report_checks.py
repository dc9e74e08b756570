"""The report's checks of how a client answered, what it declared, what it did after a fault,
its HTTP habits and the server's latency per method (docs/report.md, "Checks"). Real runs of the
official `mcp` client in both eras (`mode="legacy"`: the handshake; the default: 2026-07-28), raw
JSON-RPC frames over an in-process connection, and raw HTTP with httpx for the habits the
official client does not have; each asserted to the status, the detail and the records shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError, StdioServerParameters, types

from everything_mcp import Server
from everything_mcp.report import Check, ClientReport, of_files

from conftest import WAIT, accept_an_elicitation, counter_resource, envelope

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

SSE = {"Accept": "text/event-stream"}
POST = {"Accept": "application/json, text/event-stream"}


def status(client: ClientReport, id: str) -> tuple[str, str]:
    """A check's status and detail."""
    c = client.check(id)
    return c.status, c.detail


def seqs_of(srv: Server, **where: Any) -> list[int]:
    """The `seq` of the records whose attributes are all `where`'s."""
    return [r.seq for r in srv.traffic if all(getattr(r, k) == v for k, v in where.items())]


class Raw:
    """A raw JSON-RPC client on an in-process connection: sends frames, reads the server's."""

    def __init__(self, srv: Server, name: str = "raw", capabilities: dict[str, Any] | None = None) -> None:
        self.conn = srv.connect()
        self.name = name
        self.capabilities = capabilities or {}

    def send(self, message: dict[str, Any]) -> None:
        self.conn.send(json.dumps(message))

    def recv(self) -> Any:
        frame = self.conn.recv(timeout=WAIT)
        assert frame is not None, "nothing from the server"
        return json.loads(frame)

    def request(self, id: int, method: str, params: dict[str, Any] | None = None) -> Any:
        self.send({"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params else {})})
        return self.recv()

    def handshake(self) -> None:
        info = {"name": self.name, "version": "1"}
        init = {"protocolVersion": "2025-11-25", "capabilities": self.capabilities, "clientInfo": info}
        assert "result" in self.request(0, "initialize", init)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


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


# faults.reaction


async def test_the_reaction_to_every_fault_rule() -> None:
    """The official client retries a call answered with an error, cancels a call the server
    never answers (its timeout) and goes on after a 503."""
    with Server(catalogs=["everything"]) as srv:
        boom = {"error": {"code": -32000, "message": "boom"}}
        srv.faults.add(id="boom", match={"method": "tools/call", "name": "echo", "nth": 1}, action=boom)
        srv.faults.add(id="lost", match={"method": "tools/call", "name": "get-sum"}, action={"drop": True})
        srv.faults.add(id="busy", match={"method": "resources/list"}, action={"http_status": 503})
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                with pytest.raises(MCPError, match="boom"):
                    await client.call_tool("echo", {"message": "one"})
                await client.call_tool("echo", {"message": "two"})
                with pytest.raises(MCPError):
                    await client.call_tool("get-sum", {"a": 1, "b": 2}, read_timeout_seconds=0.2)
                with pytest.raises(MCPError):
                    await client.list_resources()
                await client.list_prompts()
        mine = srv.report().client("mcp")
        assert status(mine, "faults.reaction") == (
            "pass",
            "boom error: retried; lost drop: cancelled; busy http_status: went on",
        )
        echo_again = [r.seq for r in srv.traffic.requests("tools/call") if r.params["name"] == "echo"][1]
        (cancel,) = seqs_of(srv, dir="in", method="notifications/cancelled")
        (prompts,) = seqs_of(srv, dir="in", kind="request", method="prompts/list")
        assert mine.check("faults.reaction").seqs == (echo_again, cancel, prompts)


async def test_a_client_that_stops_after_a_fault_fails() -> None:
    """The official client's call fails with a scripted error, and the client ends its
    session: nothing more was asked (its DELETE is no request)."""
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(id="boom", match={"method": "tools/call"}, action={"error": {"code": -32000, "message": "boom"}})
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                with pytest.raises(MCPError, match="boom"):
                    await client.call_tool("echo", {"message": "one"})
        mine = srv.report().client("mcp")
        assert status(mine, "faults.reaction") == ("fail", "boom error: stopped")
        (call,) = seqs_of(srv, dir="in", kind="request", method="tools/call")
        assert mine.check("faults.reaction").seqs == (call,)
        assert status(mine, "faults.retry_503") == ("not exercised", "")


def test_without_faults_the_reaction_is_not_exercised() -> None:
    with Server(catalogs=["none"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.request(1, "ping")
        assert status(srv.report().client("raw"), "faults.reaction") == ("not exercised", "")


# http.standalone_get_conflict, http.get_before_initialize


def _initialize(http: httpx.Client, url: str, name: str) -> dict[str, str]:
    """The handshake over Streamable HTTP; the headers of the session's later requests."""
    info = {"name": name, "version": "1"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
    answer = http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, headers=POST)
    assert answer.status_code == 200
    session = {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=note, headers=POST | session).status_code == 202
    return session


def test_a_get_before_initialize_and_a_second_get_again_and_again() -> None:
    """A raw HTTP client opens GET /mcp before it has a session (400), then initializes, opens
    the standalone stream, and opens it twice more while it is open (409, 409): the TypeScript
    SDK's habit that disconnects Gemini CLI. The sessionless GET is the client's: the next
    initialize of the recording is its."""
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            assert http.get(url, headers=SSE).status_code == 400
            session = _initialize(http, url, "gemini-ish")
            with http.stream("GET", url, headers=SSE | session) as stream:
                assert stream.status_code == 200
                assert [http.get(url, headers=SSE | session).status_code for _ in range(2)] == [409, 409]
        gets = [r for r in srv.traffic if r.kind == "http" and r.http["method"] == "GET"]
        assert [(r.conn, r.http["status"]) for r in gets] == [
            ("-", 400),
            (session["mcp-session-id"], 200),
            (session["mcp-session-id"], 409),
            (session["mcp-session-id"], 409),
        ]
        report = srv.report()
        assert [c.name for c in report.clients] == ["gemini-ish"]  # nothing left under conn "-"
        mine = report.client()
        assert status(mine, "http.standalone_get_conflict") == ("fail", "409 \N{MULTIPLICATION SIGN}2")
        assert mine.check("http.standalone_get_conflict").seqs == (gets[2].seq, gets[3].seq)
        assert status(mine, "http.get_before_initialize") == ("fail", "GET without a session \N{MULTIPLICATION SIGN}1")
        assert mine.check("http.get_before_initialize").seqs == (gets[0].seq,)


def test_one_409_is_tolerated() -> None:
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            session = _initialize(http, url, "once")
            with http.stream("GET", url, headers=SSE | session):
                assert http.get(url, headers=SSE | session).status_code == 409
        gets = [r.seq for r in srv.traffic if r.kind == "http" and r.http["method"] == "GET"]
        mine = srv.report().client("once")
        assert status(mine, "http.standalone_get_conflict") == ("pass", "409 \N{MULTIPLICATION SIGN}1")
        assert mine.check("http.standalone_get_conflict").seqs == tuple(gets)
        assert status(mine, "http.get_before_initialize") == ("pass", "GET with its session \N{MULTIPLICATION SIGN}2")


async def test_the_official_client_opens_one_stream_with_its_session() -> None:
    with Server(catalogs=["none"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy") as client:
                await client.send_ping()
        mine = srv.report().client("mcp")
        (get,) = [r.seq for r in srv.traffic if r.kind == "http" and r.http["method"] == "GET"]
        assert status(mine, "http.standalone_get_conflict") == ("pass", "409 \N{MULTIPLICATION SIGN}0")
        assert status(mine, "http.get_before_initialize") == ("pass", "GET with its session \N{MULTIPLICATION SIGN}1")
        assert mine.check("http.get_before_initialize").seqs == (get,)
    # Over stdio, and in 2026-07-28 over HTTP (no session, no standalone stream), no GET.
    with Server(catalogs=["none"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params), mode="legacy") as client:
                await client.send_ping()
            async with Client(srv.start_http()) as client:
                await client.list_tools()
        for mine in srv.report().clients:
            assert status(mine, "http.standalone_get_conflict") == ("not exercised", "")
            assert status(mine, "http.get_before_initialize") == ("not exercised", "")
        assert sorted((c.era, c.transport) for c in srv.report().clients) == [
            ("handshake", "stdio"),
            ("stateless", "http"),
        ]


def test_a_sessionless_get_no_initialize_follows_stays_unattributed() -> None:
    """With no initialize after it, the GET names no client: it is reported under the client
    `?` of `conn: "-"`, which fails the check."""
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            session = _initialize(http, url, "early")
            assert http.get(url, headers=SSE).status_code == 400
        early, nobody = srv.report().clients
        assert (early.name, nobody.name) == ("early", "?")
        assert status(early, "http.get_before_initialize") == ("not exercised", "")
        once = "GET without a session \N{MULTIPLICATION SIGN}1"
        assert status(nobody, "http.get_before_initialize") == ("fail", once)
        assert session


def test_a_get_refused_for_the_2026_revision_is_not_a_handshake_habit() -> None:
    """A GET naming 2026-07-28 is refused 405 outside any session; it is neither given to the
    client that initializes next nor counted as a GET before initialize."""
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with httpx.Client(timeout=WAIT) as http:
            assert http.get(url, headers=SSE | {"MCP-Protocol-Version": "2026-07-28"}).status_code == 405
            _initialize(http, url, "later")
        later = srv.report().client("later")
        assert status(later, "http.get_before_initialize") == ("not exercised", "")
        assert status(srv.report().client("?"), "http.get_before_initialize") == ("not exercised", "")


def test_several_record_files_attribute_their_own_sessionless_gets(tmp_path: Path) -> None:
    """Read together, each file's connections are `FILE:conn`, its sessionless GETs `FILE:-`:
    each goes to the next initialize of its own file."""
    files = []
    for name, early in [("early", True), ("proper", False)]:
        path = tmp_path / f"{name}.jsonl"
        with Server(catalogs=["none"], record=str(path)) as srv:
            url = srv.start_http()
            with httpx.Client(timeout=WAIT) as http:
                if early:
                    assert http.get(url, headers=SSE).status_code == 400
                session = _initialize(http, url, name)
                with http.stream("GET", url, headers=SSE | session) as stream:
                    assert stream.status_code == 200
        files.append(str(path))
    report = of_files(files)
    assert [c.name for c in report.clients] == ["early", "proper"]
    assert status(report.client("early"), "http.get_before_initialize") == (
        "fail",
        "GET without a session \N{MULTIPLICATION SIGN}1",
    )
    assert status(report.client("proper"), "http.get_before_initialize") == (
        "pass",
        "GET with its session \N{MULTIPLICATION SIGN}1",
    )
    data = report.to_json()
    assert {"detail", "seqs"} <= set(data["clients"][0]["checks"][0])
    assert set(data["clients"][0]["latency"]) == {"initialize"}


# latency


def test_latency_per_method() -> None:
    with Server(catalogs=["everything"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.recv()  # the tools/list_changed the catalog announces
        for id in (1, 2, 3):
            raw.request(id, "tools/call", {"name": "echo", "arguments": {"message": str(id)}})
        raw.request(4, "nope/nope")
        mine = srv.report().client("raw")
        calls = sorted(r.latency_ms for r in srv.traffic if r.dir == "out" and r.method == "tools/call")
        assert len(calls) == 3
        assert list(mine.latency) == ["initialize", "nope/nope", "tools/call"]
        assert mine.latency["tools/call"] == {
            "count": 3,
            "p50_ms": round(calls[1], 3),
            "max_ms": round(calls[2], 3),
        }
        assert mine.latency["nope/nope"]["count"] == 1  # an error is an answer too
        table = srv.report().table()
        p50, top = mine.latency["tools/call"]["p50_ms"], mine.latency["tools/call"]["max_ms"]
        assert f"\n  latency  {'tools/call':<30} n=3      p50 {p50} ms  max {top} ms\n" in table
        data = mine.to_json()
        assert data["latency"] == mine.latency
        assert json.loads(srv.report().dumps())["clients"][0]["latency"] == mine.latency


# detail in --json and in the table


def test_every_check_has_a_detail_in_json() -> None:
    check = Check("asks.elicitation", "answers", "pass", (3, 4), "accept 2, decline 1")
    assert check.to_json() == {
        "id": "asks.elicitation",
        "description": "answers",
        "status": "pass",
        "seqs": [3, 4],
        "detail": "accept 2, decline 1",
    }
    assert Check("cancel.sent", "cancels", "not exercised").to_json()["detail"] == ""
    with Server(catalogs=["none"]) as srv:
        raw = Raw(srv)
        raw.handshake()
        raw.request(1, "nope/nope")
        (client,) = json.loads(srv.report().dumps())["clients"]
        assert all(set(c) == {"id", "description", "status", "seqs", "detail"} for c in client["checks"])
        unknown = next(c for c in client["checks"] if c["id"] == "errors.unknown_method")
        assert (unknown["status"], unknown["detail"]) == ("fail", "-32601 for nope/nope")
        assert "  FAIL errors.unknown_method" in srv.report().table()
        assert " (no -32601; a server/discover probe aside): -32601 for nope/nope\n" in srv.report().table()


def test_a_stateless_client_subscribes_with_a_listen_stream() -> None:
    """2026-07-28 has no resources/subscribe: a listen stream whose
    `notifications.resourceSubscriptions` names the resource is level 4, and the ladder goes on
    to 7 with the update it receives and its re-read."""
    with Server(catalogs=["none"]) as srv:
        state = counter_resource(srv)

        conn = srv.connect()
        meta = {"_meta": envelope()}

        def call(id: int, method: str, **params: Any) -> Any:
            conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, **meta}}))
            return json.loads(conn.recv(WAIT) or "null")

        call(1, "resources/list")
        call(2, "resources/read", uri="demo://counter")
        listen = {"notifications": {"resourceSubscriptions": ["demo://counter"]}, **meta}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen", "params": listen}))
        assert json.loads(conn.recv(WAIT) or "null")["method"] == "notifications/subscriptions/acknowledged"
        state["v"] = 2
        assert srv.notify_resource_updated("demo://counter") == 1
        assert json.loads(conn.recv(WAIT) or "null")["method"] == "notifications/resources/updated"
        assert call(4, "resources/read", uri="demo://counter")["result"]["contents"][0]["text"] == "v2"
        mine = srv.report().client()
        assert (mine.era, mine.level()) == ("stateless", 7)
        assert mine.check("subscription.subscribed").seqs == (seqs_of(srv, method="subscriptions/listen")[0],)
        conn.close()
