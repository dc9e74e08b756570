"""Fault rules that change the HTTP answer (docs/faults.md): a session expired on cue, another
`Content-Type`, JSON where SSE was due and the reverse, a body sent slowly, a connection dropped
before or in the middle of the body, an SSE stream closed before its answer (with and without a
replay through `Last-Event-ID`). The official `mcp` client over Streamable HTTP in both of its
modes: the handshake era answers on an SSE stream, 2026-07-28 in a JSON body."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from everything_mcp import ConfigError, Server

from conftest import MODES, WAIT, texts
from oauth_client import leaves

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

FIRST_ECHO = {"method": "tools/call", "name": "echo", "nth": 1}


async def first_and_next(srv: Server, mode: str, action: dict[str, Any], timeout: float = 1.0) -> tuple[Any, list[str]]:
    """Calls echo twice through the official client, the first call hit by `action`: what the
    first call gave (its texts, or the exception it raised) and the second call's texts."""
    rule = srv.faults.add(match=FIRST_ECHO, action=action)
    with anyio.fail_after(WAIT):
        async with Client(srv.start_http(), mode=mode, read_timeout_seconds=timeout) as client:
            try:
                first: Any = texts(await client.call_tool("echo", {"message": "one"}))
            except MCPError as e:
                first = e
            second = texts(await client.call_tool("echo", {"message": "two"}))
    assert rule.hits == 1
    return first, second


@MODES
async def test_a_session_expired_on_cue(mode: str) -> None:
    """The session ends and the request is answered `404`: the official client reports the
    session as gone (handshake era) or the `404` (2026-07-28, which has no session)."""
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(match=FIRST_ECHO, action={"expire_session": True})
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode=mode) as client:
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("echo", {"message": "one"})
                if mode == "legacy":
                    assert raised.value.error.message == "Session terminated"
                    assert srv.session_count == 0
                    with pytest.raises(MCPError, match="Session not found"):
                        await client.call_tool("echo", {"message": "two"})
                else:
                    assert raised.value.error.message == "Not Found"
                    assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
        (expired,) = [r for r in srv.traffic if r.fault]
        assert (expired.method, expired.http["status"], expired.fault["action"]) == (
            "tools/call",
            404,
            "expire_session",
        )


@MODES
async def test_another_content_type(mode: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        first, second = await first_and_next(srv, mode, {"content_type": "text/plain"})
        assert isinstance(first, MCPError) and first.error.message == "Unexpected content type: text/plain"
        assert second == ["Echo: two"]


@MODES
async def test_json_where_sse_was_due_and_the_reverse(mode: str) -> None:
    """A client that accepts both (as the spec has it send) reads either: the official client
    does."""
    with Server(catalogs=["everything"]) as srv:
        first, second = await first_and_next(srv, mode, {"swap_body": True})
        assert (first, second) == (["Echo: one"], ["Echo: two"])


@MODES
async def test_a_slow_drip_body_is_read_whole(mode: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        first, second = await first_and_next(srv, mode, {"drip": {"bytes": 7, "every_ms": 1}})
        assert (first, second) == (["Echo: one"], ["Echo: two"])


async def test_an_sse_stream_closed_before_its_answer_is_resumed_with_last_event_id() -> None:
    """The handshake era's POST stream closes after its priming event; the client reconnects
    with `GET` and `Last-Event-ID`, and the answer is replayed."""
    with Server(catalogs=["everything"]) as srv:
        # The client waits the stream's `retry` (1 s) before it reconnects.
        first, second = await first_and_next(srv, "legacy", {"close_stream": "replay"}, timeout=5.0)
        assert (first, second) == (["Echo: one"], ["Echo: two"])
        resumed = [
            r
            for r in srv.traffic
            if r.http and r.http.get("method") == "GET" and r.http.get("headers", {}).get("last-event-id")
        ]
        assert resumed, "the client resumed the stream"


async def test_an_sse_stream_closed_with_no_replay_leaves_the_call_unanswered() -> None:
    with Server(catalogs=["everything"]) as srv:
        first, second = await first_and_next(srv, "legacy", {"close_stream": "no_replay"})
        assert isinstance(first, MCPError) and "timed out" in first.error.message
        assert second == ["Echo: two"]


async def test_a_json_body_is_no_stream_to_close() -> None:
    """2026-07-28 answers in a JSON body: `replay` changes nothing, `no_replay` leaves the body
    empty, which the client cannot parse."""
    with Server(catalogs=["everything"]) as srv:
        assert await first_and_next(srv, "auto", {"close_stream": "replay"}) == (["Echo: one"], ["Echo: two"])
    with Server(catalogs=["everything"]) as srv:
        first, _ = await first_and_next(srv, "auto", {"close_stream": "no_replay"})
        assert isinstance(first, MCPError) and "Failed to parse JSON response" in first.error.message


async def test_a_connection_dropped_in_an_sse_stream() -> None:
    """Handshake era: dropped before the body, the client says the stream ended without an
    answer; dropped halfway (after the priming event), it resumes the stream and gets it."""
    with Server(catalogs=["everything"]) as srv:
        first, second = await first_and_next(srv, "legacy", {"disconnect": "before_body"})
        assert isinstance(first, MCPError) and first.error.message == "SSE stream ended without a response"
        assert second == ["Echo: two"]
    with Server(catalogs=["everything"]) as srv:
        resumed = await first_and_next(srv, "legacy", {"disconnect": "mid_body"}, timeout=5.0)
        assert resumed == (["Echo: one"], ["Echo: two"])


@pytest.mark.parametrize("where", ["before_body", "mid_body"])
async def test_a_connection_dropped_in_a_json_body_ends_the_official_client(where: str) -> None:
    """A client truth: in 2026-07-28 (a JSON body) the official client does not turn a dropped
    connection into the call's error: its transport task fails, and the whole client with it."""
    with Server(catalogs=["everything"]) as srv:
        srv.faults.add(match=FIRST_ECHO, action={"disconnect": where})
        with anyio.fail_after(WAIT), pytest.raises(BaseExceptionGroup) as raised:
            async with Client(srv.start_http(), read_timeout_seconds=1.0) as client:
                await client.call_tool("echo", {"message": "one"})
        names = [type(e).__name__ for e in leaves(raised.value)]
        assert "RemoteProtocolError" in names, names


def test_http_changes_are_checked_and_match_only_http() -> None:
    with Server(catalogs=["everything"]) as srv:
        for rule, field in [
            ({"action": {"expire_session": True, "error": {"code": 1, "message": "m"}}}, "action.expire_session"),
            ({"action": {"drip": {"bytes": 0, "every_ms": 1}}}, "action.drip.bytes"),
            ({"action": {"disconnect": "sideways"}}, "action.disconnect"),
            ({"action": {"http_status": 503, "content_type": "x/y"}}, "action"),
            (
                {"match": {"direction": "out"}, "action": {"swap_body": True}},
                "action.swap_body",
            ),
        ]:
            with pytest.raises(ConfigError, match=rf"^invalid fault rule: {field.replace('.', '[.]')}: "):
                srv.faults.add_rule(rule)
        # Over stdio the HTTP changes match nothing.
        rule = srv.faults.add(action={"content_type": "text/plain"})
        conn = srv.connect()
        conn.send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
        assert conn.recv(timeout=WAIT) == '{"jsonrpc":"2.0","id":1,"result":{}}'
        assert rule.hits == 0
