"""Tools, resources and prompts written in Python, driven by the official `mcp` client the way a
client builder's test would: closures over test state, async tools with progress, triggers,
side effects, traffic waits and order assertions, runtime add/remove."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any, Literal

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from everything_mcp import ClientError, ConfigError, Context, Server, content

from conftest import texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


async def test_python_tools_with_state_progress_and_side_effects() -> None:
    state = {"calls": 0}
    with Server(catalogs=["none"]) as srv:

        @srv.tool(title="Adder")
        def add(a: int, b: Annotated[int, "the second addend"] = 2) -> int:
            """Add two numbers."""
            state["calls"] += 1
            return a + b

        @srv.tool()
        async def count(steps: int, ctx: Context) -> str:
            """Count with progress."""
            for i in range(steps):
                ctx.progress(i + 1, steps, f"step {i + 1}")
                await anyio.sleep(0)
            return f"counted {steps}"

        @srv.tool()
        def pick(color: Literal["red", "blue"]) -> dict[str, str]:
            return {"color": color}

        @srv.tool()
        def picture() -> list[dict[str, Any]]:
            return [content.text("a picture:"), content.image(b"\x89PNG\r\n\x1a\n", "image/png")]

        url = srv.start_http()
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append((p, total, message))

        with anyio.fail_after(20):
            async with Client(url) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert tools["add"].description == "Add two numbers."
                assert tools["add"].title == "Adder"
                assert tools["add"].input_schema == {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer"},
                        "b": {"type": "integer", "description": "the second addend", "default": 2},
                    },
                    "required": ["a"],
                }
                assert tools["pick"].input_schema["properties"]["color"] == {"enum": ["red", "blue"]}
                r = await client.call_tool("add", {"a": 1})
                assert texts(r) == ["3"] and r.structured_content == {"result": 3}
                assert state["calls"] == 1 and add.call_count == 1 and add.calls[-1].arguments == {"a": 1}

                add.side_effect = [RuntimeError("database is down"), 40]
                r = await client.call_tool("add", {"a": 1})
                assert r.is_error is True and texts(r) == ["RuntimeError: database is down"]
                assert texts(await client.call_tool("add", {"a": 1})) == ["40"]
                assert texts(await client.call_tool("add", {"a": 1, "b": 5})) == ["6"]
                assert isinstance(add.calls[1].error, RuntimeError)

                r = await client.call_tool("count", {"steps": 2}, progress_callback=on_progress)
                assert texts(r) == ["counted 2"]
                assert progress == [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")]
                r = await client.call_tool("pick", {"color": "red"})
                assert r.structured_content == {"color": "red"} and texts(r) == ['{"color": "red"}']
                r = await client.call_tool("pick", {"color": "green"})
                assert r.is_error is True  # validated against the schema from the type hints
                r = await client.call_tool("picture", {})
                assert [c.type for c in r.content] == ["text", "image"]


async def test_resources_triggers_prompts_and_runtime_changes() -> None:
    state = {"v": 1}
    with Server(catalogs=["none"]) as srv:

        @srv.resource("demo://counter")
        def counter() -> str:
            return f"v{state['v']}"

        @srv.resource_template("demo://items/{item}", mime_type="application/json")
        def item(item: str) -> dict[str, str]:
            return {"item": item}

        @srv.prompt(title="Greeting")
        def greet(name: str, punctuation: str = "!") -> str:
            """Greets someone."""
            return f"Hello {name}{punctuation}"

        url = srv.start_http()
        updates: list[str] = []
        changed: list[str] = []

        async def on_message(message: Any) -> None:
            method = getattr(message, "method", "")
            if method == "notifications/resources/updated":
                updates.append(str(message.params.uri))
            elif method.endswith("/list_changed"):
                changed.append(method)

        with anyio.fail_after(20):
            async with Client(url, mode="legacy", message_handler=on_message) as client:
                (first,) = (await client.read_resource("demo://counter")).contents
                assert first.text == "v1"
                await client.subscribe_resource("demo://counter")
                state["v"] = 2
                assert srv.notify_resource_updated("demo://counter") == 1
                while not updates:
                    await anyio.sleep(0.01)
                (second,) = (await client.read_resource("demo://counter")).contents
                assert second.text == "v2"
                srv.traffic.assert_order("resources/subscribe", "notifications/resources/updated", "resources/read")

                (data,) = (await client.read_resource("demo://items/42")).contents
                assert data.text == '{"item": "42"}'
                prompt = (await client.list_prompts()).prompts[0]
                assert (prompt.name, prompt.title, prompt.description) == ("greet", "Greeting", "Greets someone.")
                assert [(a.name, a.required) for a in prompt.arguments or []] == [
                    ("name", True),
                    ("punctuation", False),
                ]
                r = await client.get_prompt("greet", {"name": "Ada"})
                assert r.messages[0].content == TextContent(type="text", text="Hello Ada!")

                @srv.tool()
                def late() -> str:
                    return "added at runtime"

                while "notifications/tools/list_changed" not in changed:
                    await anyio.sleep(0.01)
                assert texts(await client.call_tool("late", {})) == ["added at runtime"]
                assert srv.remove(late)
                assert "late" not in [t.name for t in (await client.list_tools()).tools]


async def test_sampling_and_elicitation_from_a_python_tool() -> None:
    from mcp.types import CreateMessageResult, ElicitResult

    async def sample(context: Any, params: Any) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="42"), model="m")

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada"})

    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        def ask(ctx: Context) -> str:
            answer = ctx.sample("What is the answer?")
            user = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
            return f"{answer['content']['text']} for {user['content']['name']}"

        @srv.tool()
        def roots(ctx: Context) -> str:
            try:
                return str(ctx.list_roots())
            except ClientError as e:
                return f"no roots: {e}"

        url = srv.start_http()
        with anyio.fail_after(20):
            async with Client(url, mode="legacy", sampling_callback=sample, elicitation_callback=elicit) as client:
                assert texts(await client.call_tool("ask", {})) == ["42 for Ada"]
                (text,) = texts(await client.call_tool("roots", {}))
                assert text == 'no roots: the client did not declare the "roots" capability needed for roots/list'


def test_wait_for_and_assert_order_fail_with_the_traffic_table() -> None:
    with Server() as srv:
        conn = srv.connect()
        conn.send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
        assert srv.traffic.wait_for("ping", timeout=5).id == 1
        with pytest.raises(AssertionError) as raised:
            srv.traffic.wait_for("tools/call", timeout=0.05, name="echo")
        message = str(raised.value)
        assert message.startswith("no tools/call with {'name': 'echo'} within 0.05 s; the traffic was:\n")
        assert "   1 in  request      1      -         ping" in message
        with pytest.raises(AssertionError) as raised:
            srv.traffic.assert_order("ping", "tools/list")
        assert str(raised.value).startswith("expected 'tools/list' after ping; the traffic was:")
        assert [r.method for r in srv.traffic.requests()] == ["ping"]
        assert [r.method for r in srv.traffic.responses()] == ["ping"]


def test_wait_for_on_a_stopped_server_gives_up_at_once() -> None:
    import math

    with Server() as srv:
        srv.connect().send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
        srv.traffic.wait_for("ping", timeout=5)
    # Nothing can arrive any more: no waiting out the (infinite) timeout.
    with pytest.raises(AssertionError, match="no tools/call within inf s"):
        srv.traffic.wait_for("tools/call", timeout=math.inf)


async def test_stdio_clients_reach_the_in_process_server() -> None:
    from mcp import StdioServerParameters

    with Server(catalogs=["none"]) as srv:
        seen: list[str] = []

        @srv.tool()
        def hello(name: str) -> str:
            seen.append(name)
            return f"hi {name}"

        command = srv.stdio_command
        assert command[:3] == [sys.executable, "-m", "everything_mcp.relay"]
        with anyio.fail_after(20):
            async with Client(StdioServerParameters(**srv.stdio_params)) as client:
                assert texts(await client.call_tool("hello", {"name": "stdio"})) == ["hi stdio"]
            assert seen == ["stdio"]
            calls = srv.traffic.requests("tools/call")
            assert calls[0].transport == "stdio" and calls[0].params["name"] == "hello"
            while srv.session_count:  # the relay exited with the client: the connection ended
                await anyio.sleep(0.01)


async def test_custom_methods_completions_and_asking_from_the_test() -> None:
    from mcp.types import ListRootsResult, PromptReference, Root

    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///project", name="project")])

    with Server(catalogs=["none"]) as srv:

        @srv.method("vendor/echo")
        def vendor_echo(text: str) -> dict[str, str]:
            return {"echoed": text}

        @srv.prompt()
        def team(department: str) -> str:
            return f"Team {department}"

        @srv.completion("team", "department")
        def departments(value: str, arguments: dict[str, str]) -> list[str]:
            return [d for d in ["Engineering", "Sales"] if d.startswith(value)]

        url = srv.start_http()
        with anyio.fail_after(20):
            async with Client(url, mode="legacy", list_roots_callback=roots) as client:
                c = await client.complete(
                    PromptReference(type="ref/prompt", name="team"), {"name": "department", "value": "E"}
                )
                assert c.completion.values == ["Engineering"]
                answers = await anyio.to_thread.run_sync(lambda: srv.ask("roots/list"))
                (answer,) = answers.values()
                assert answer == {"roots": [{"uri": "file:///project", "name": "project"}]}
            conn = srv.connect()
            hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
            conn.recv(timeout=5)
            conn.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "vendor/echo", "params": {"text": "x"}}))
            assert json.loads(conn.recv(timeout=5) or "") == {"jsonrpc": "2.0", "id": 1, "result": {"echoed": "x"}}
            assert vendor_echo.calls[0].arguments == {"text": "x"}


def test_notification_triggers_from_the_test() -> None:
    with Server(catalogs=["none"]) as srv:
        conn = srv.connect()
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        conn.recv(timeout=5)
        assert srv.progress("tok", 1, 2, "half") == 1
        assert json.loads(conn.recv(timeout=5) or "") == {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "tok", "progress": 1, "total": 2, "message": "half"},
        }
        assert srv.log("warning", {"disk": "full"}) == 1
        assert json.loads(conn.recv(timeout=5) or "")["params"] == {"level": "warning", "data": {"disk": "full"}}
        assert srv.notify("notifications/custom", {"x": 1}, session="nobody") == 0


def test_side_effect_items_and_reassignment_and_infinite_timeouts() -> None:
    import asyncio
    import math

    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        async def patient() -> str:
            try:
                await asyncio.wait_for(asyncio.sleep(1), 0.01)  # its own TimeoutError, handled
            except TimeoutError:
                return "inner timeout handled"
            return "no timeout"

        @srv.tool()
        def value() -> int:
            return 100

        conn = srv.connect()
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        conn.recv(timeout=5)

        def call(id: int, name: str) -> Any:
            conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}}))
            return json.loads(conn.recv(timeout=5) or "")["result"]

        assert call(1, "patient")["content"][0]["text"] == "inner timeout handled"
        value.side_effect = [1, ValueError("nope")]
        assert call(2, "value")["content"][0]["text"] == "1"
        assert call(3, "value") == {"content": [{"type": "text", "text": "ValueError: nope"}], "isError": True}
        assert call(4, "value")["content"][0]["text"] == "100"  # the iterable is used up
        value.side_effect = [7]  # a new side effect starts afresh
        assert call(5, "value")["content"][0]["text"] == "7"
        assert srv.traffic.wait_for("tools/call", timeout=math.inf).id == 1


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_aask_lets_an_in_process_async_client_answer(transport: str) -> None:
    from mcp import StdioServerParameters
    from mcp.types import ListRootsResult, Root

    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///project", name="project")])

    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        async def client_roots(ctx: Context) -> list[dict[str, Any]]:
            return await ctx.alist_roots()  # the package's loop keeps running while the client answers

        target: Any = StdioServerParameters(**srv.stdio_params) if transport == "stdio" else srv.start_http()
        with anyio.fail_after(20):
            async with Client(target, mode="legacy", list_roots_callback=roots) as client:
                session = (await srv.traffic.await_for("notifications/initialized")).conn
                # srv.ask would block this thread, the one the client answers on.
                answers = await srv.aask("roots/list")
                assert answers == {session: {"roots": [{"uri": "file:///project", "name": "project"}]}}
                assert await srv.aask("roots/list", session=session, timeout=10) == answers
                r = await client.call_tool("client_roots", {})
                assert r.structured_content == {"result": [{"uri": "file:///project", "name": "project"}]}
            asked = srv.traffic.requests("roots/list", dir="out")
            assert len(asked) == 3 and {r.conn for r in asked} == {session}

        # A client that never answers: aask gives up after its timeout, the loop never blocked.
        conn = srv.connect()
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "t", "version": "1"},
        }
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        conn.recv(timeout=5)
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        with pytest.raises(ClientError, match=r"no answer within 0\.05 s"):
            await srv.aask("roots/list", session=conn.id, timeout=0.05)
        assert json.loads(conn.recv(timeout=5) or "")["method"] == "roots/list"


def test_a_cancelled_request_cancels_its_async_handler() -> None:
    import asyncio
    import threading

    started, cancelled = threading.Event(), threading.Event()
    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        async def wait_forever() -> str:
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "unreachable"

        @srv.tool()
        async def quick(n: int) -> int:
            await asyncio.sleep(0)
            return n * 2

        conn = srv.connect()
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        conn.recv(timeout=5)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait_forever"}}
        conn.send(json.dumps(call))
        assert started.wait(10)
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}))
        assert cancelled.wait(10)
        # The handler saw the cancellation before its task finished: the call's record is
        # completed by the task's done-callback, which may run after `quick` is scheduled (the
        # loop thread can be switched out between the two), so it is waited for, not assumed.
        (waited,) = wait_forever.calls
        deadline = time.monotonic() + 10
        while not waited.ended and time.monotonic() < deadline:
            time.sleep(0.005)  # no event marks the record's completion; bounded
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "quick", "arguments": {"n": 21}}}
        conn.send(json.dumps(call))
        answer = json.loads(conn.recv(timeout=5) or "")
        assert answer["id"] == 2 and answer["result"]["structuredContent"] == {"result": 42}
        assert [r.id for r in srv.traffic.responses("tools/call")] == [2]  # none for the cancelled one
        (record,) = quick.calls
        assert record.result == 42 and record.error is None and record.ended >= record.started
        assert isinstance(waited.error, asyncio.CancelledError) and waited.ended >= waited.started


def _initialized(srv: Server, capabilities: dict[str, Any] | None = None) -> Any:
    """An in-process connection past the handshake (2025-11-25)."""
    conn = srv.connect()
    client = {"name": "t", "version": "1"}
    hello = {"protocolVersion": "2025-11-25", "capabilities": capabilities or {}, "clientInfo": client}
    conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
    conn.recv(timeout=5)
    conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return conn


def _call(conn: Any, id: int, name: str, arguments: dict[str, Any] | None = None) -> None:
    params = {"name": name, "arguments": arguments or {}}
    conn.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))


def test_a_sync_handler_blocked_in_its_own_code_does_not_hold_up_the_next_call() -> None:
    import threading

    entered, release = threading.Event(), threading.Event()
    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        def stuck() -> str:
            entered.set()
            release.wait(20)  # blocks its thread in the user's code: the server cannot see why
            return "released"

        @srv.tool()
        def quick(n: int) -> int:
            return n + 1

        conn = _initialized(srv)
        try:
            _call(conn, 1, "stuck")
            assert entered.wait(10)
            _call(conn, 2, "quick", {"n": 41})
            answer = json.loads(conn.recv(timeout=10) or "")
            assert answer["id"] == 2 and answer["result"]["structuredContent"] == {"result": 42}
        finally:
            release.set()
        answer = json.loads(conn.recv(timeout=10) or "")
        assert answer["id"] == 1 and answer["result"]["content"][0]["text"] == "released"


def test_a_sync_handler_waiting_for_the_client_does_not_hold_up_the_next_call() -> None:
    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        def client_roots(ctx: Context) -> Any:
            return ctx.list_roots()  # a runner waits here while the client thinks

        @srv.tool()
        def quick(n: int) -> int:
            return n + 1

        conn = _initialized(srv, {"roots": {}})
        _call(conn, 1, "client_roots")
        asked = json.loads(conn.recv(timeout=10) or "")
        assert asked["method"] == "roots/list"
        _call(conn, 2, "quick", {"n": 1})  # answered before the client answers the ask
        answer = json.loads(conn.recv(timeout=10) or "")
        assert answer["id"] == 2 and answer["result"]["structuredContent"] == {"result": 2}
        roots = {"roots": [{"uri": "file:///p", "name": "p"}]}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": roots}))
        answer = json.loads(conn.recv(timeout=10) or "")
        assert answer["id"] == 1 and answer["result"]["structuredContent"] == {"result": roots["roots"]}


def test_a_side_effect_runs_where_its_kind_belongs() -> None:
    import threading

    def thread_name(**_: Any) -> str:
        return threading.current_thread().name

    async def on_loop(**_: Any) -> str:
        return threading.current_thread().name

    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        async def coroutine() -> str:
            return threading.current_thread().name

        @srv.tool()
        def plain() -> str:
            return threading.current_thread().name

        conn = _initialized(srv)
        ids = iter(range(1, 100))

        def ran_on(name: str) -> str:
            _call(conn, next(ids), name)
            text: str = json.loads(conn.recv(timeout=10) or "")["result"]["content"][0]["text"]
            return text

        assert ran_on("coroutine") == "everything-mcp-asyncio"
        assert ran_on("plain") != "everything-mcp-asyncio"
        coroutine.side_effect = thread_name  # a sync stand-in may block: not on the loop
        plain.side_effect = on_loop  # an async one runs on the loop
        assert ran_on("coroutine") != "everything-mcp-asyncio"
        assert ran_on("plain") == "everything-mcp-asyncio"
        coroutine.reset()
        plain.side_effect = [ValueError("nope")]  # values and exceptions keep the function's place
        assert ran_on("coroutine") == "everything-mcp-asyncio"
        _call(conn, 50, "plain")
        assert json.loads(conn.recv(timeout=10) or "")["result"]["isError"] is True


def test_a_handle_keeps_its_newest_calls_and_counts_the_dropped() -> None:
    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        def double(n: int) -> int:
            return 2 * n

        double.keep_calls = 8  # trimmed to 8 once past 8 + 8 // 8
        conn = _initialized(srv)
        for i in range(1, 21):
            _call(conn, i, "double", {"n": i})
            assert json.loads(conn.recv(timeout=10) or "")["result"]["structuredContent"] == {"result": 2 * i}
        assert double.call_count == 20 and 8 <= len(double.calls) <= 9
        assert double.calls_dropped == 20 - len(double.calls)
        assert [c.arguments["n"] for c in double.calls] == list(range(21 - len(double.calls), 21))
        double.reset()
        assert double.call_count == 0 and double.calls_dropped == 0 and not double.calls


def test_a_handle_keeps_calls_within_its_bytes_and_counts_the_dropped() -> None:
    """A call's size is its arguments and its answer as JSON text; past ``keep_calls_bytes`` the
    oldest calls go, down to seven eighths of it, and are counted."""
    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        def shout(text: str) -> str:
            return text.upper()

        shout.keep_calls_bytes = 5000
        conn = _initialized(srv)
        size = len('{"text":""}') + 1000 + 1000  # the arguments, then the text answered
        for i in range(1, 11):
            _call(conn, i, "shout", {"text": "x" * 1000})
            assert json.loads(conn.recv(timeout=10) or "")["result"]["content"][0]["text"] == "X" * 1000
            assert [c.size for c in shout.calls] == [size] * min(i, 2)
        # The third call's arguments passed 5,000 bytes: the oldest went, down to <= 4,375.
        assert shout.call_count == 10 and shout.calls_dropped == 8 and shout.calls_bytes == 2 * size
        shout.keep_calls_bytes = 1  # the newest call stays, however large
        _call(conn, 11, "shout", {"text": "y"})
        assert conn.recv(timeout=10)
        assert [c.arguments["text"] for c in shout.calls] == ["y"] and shout.calls_dropped == 10
        shout.reset()
        assert shout.calls_bytes == 0 and shout.calls_dropped == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
def test_sync_handlers_share_a_bounded_pool() -> None:
    import os
    import threading

    def runtime_threads() -> int:
        names = (open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task"))
        return sum(name.startswith("everything-mcp") and name != "everything-mcp-asyncio" for name in names)

    lock, release = threading.Condition(), threading.Event()
    running = peak = 0
    with Server(catalogs=["none"], worker_threads=2) as srv:

        @srv.tool()
        def hold(n: int) -> str:
            nonlocal running, peak
            with lock:
                running += 1
                peak = max(peak, running)
                lock.notify_all()
            release.wait(20)  # the GIL is released: only the pool's bound limits how many wait here
            with lock:
                running -= 1
            return "released"

        conn = srv.connect()
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        conn.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
        conn.recv(timeout=5)
        for i in range(1, 101):
            call = {"name": "hold", "arguments": {"n": i}}
            conn.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}))
        try:
            # Frames are dispatched in order: once the last is in, every call has been started.
            srv.traffic.wait_for("tools/call", timeout=10, arguments={"n": 100})
            with lock:
                assert lock.wait_for(lambda: running >= 64, timeout=20)
            assert runtime_threads() <= 64 + 2  # the blocking pool plus the two workers
            assert peak == 64
        finally:
            release.set()
        answers = [json.loads(conn.recv(timeout=20) or "null") for _ in range(100)]
        assert sorted(a["id"] for a in answers) == list(range(1, 101))


def test_a_built_in_method_name_cannot_be_taken_and_a_missing_session_is_answered() -> None:
    with Server(catalogs=["none"]) as srv:
        with pytest.raises(ConfigError, match="tools/list is a built-in method"):

            @srv.method("tools/list")
            def shadow() -> dict[str, str]:
                return {}

        assert srv.ask("roots/list", session="nobody", timeout=5) == {
            "nobody": {"error": {"code": -32603, "message": "no such open session"}}
        }
