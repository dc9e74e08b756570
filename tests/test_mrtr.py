"""Multi-round-trip requests (MRTR, SEP-2322) in the stateless era (2026-07-28): raw rounds over
stdio and HTTP, the sealed requestState, re-asks, -32021, and the official `mcp` client answering
input requests with its callbacks (the same tools in the handshake era send real requests)."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

from everything_mcp import Context, Handle, InputRequired, Server

from conftest import WAIT, StdioServer, envelope

pytestmark = pytest.mark.anyio

ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}


def meta(caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return envelope(ALL_CAPS if caps is None else caps)


def call(name: str, caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {}, "_meta": meta(caps), **extra}


def decode_state(token: str) -> Any:
    """The signed (not encrypted) payload of a requestState, for assertions only."""
    import base64

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_rounds_over_stdio_replay_earlier_answers(stdio: StdioServer) -> None:
    r1 = stdio.request(1, "tools/call", call("test_input_required_result_multi_round"))["result"]
    assert r1["resultType"] == "input_required"
    assert r1["inputRequests"] == {
        "step1": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Step 1: What is your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
        }
    }
    assert r1["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "everything-mcp"
    ada = {"action": "accept", "content": {"name": "Ada"}}
    r2 = stdio.request(
        2,
        "tools/call",
        call(
            "test_input_required_result_multi_round",
            inputResponses={"step1": ada},
            requestState=r1["requestState"],
        ),
    )["result"]
    assert list(r2["inputRequests"]) == ["step2"]
    assert r2["inputRequests"]["step2"]["params"]["message"] == "Step 2: What is your favorite color?"
    assert r2["requestState"] != r1["requestState"]
    # The earlier answer rides in the state; this round only carries step2's.
    r3 = stdio.request(
        3,
        "tools/call",
        call(
            "test_input_required_result_multi_round",
            inputResponses={"step2": {"action": "accept", "content": {"color": "blue"}}},
            requestState=r2["requestState"],
        ),
    )
    assert r3["result"]["content"] == [{"type": "text", "text": "Hello Ada, your favorite color is blue"}]
    assert r3["result"]["resultType"] == "complete"


def test_several_inputs_in_one_round_and_roots_without_params(stdio: StdioServer) -> None:
    r1 = stdio.request(1, "tools/call", call("test_input_required_result_multiple_inputs"))["result"]
    assert list(r1["inputRequests"]) == ["user_name", "greeting", "client_roots"]
    assert r1["inputRequests"]["client_roots"] == {"method": "roots/list"}
    assert r1["inputRequests"]["greeting"]["params"]["maxTokens"] == 50
    answers = {
        "user_name": {"action": "accept", "content": {"name": "Ada"}},
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"},
        "client_roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
    }
    r2 = stdio.request(
        2,
        "tools/call",
        call("test_input_required_result_multiple_inputs", inputResponses=answers, requestState=r1["requestState"]),
    )
    assert r2["result"]["content"][0]["text"] == "All inputs received: name=Ada, greeting=Hi, roots=2"


def test_unknown_or_missing_answers_re_ask_never_error(stdio: StdioServer) -> None:
    name = "test_input_required_result_elicitation"
    r1 = stdio.request(1, "tools/call", call(name))["result"]
    wrong = stdio.request(
        2, "tools/call", call(name, inputResponses={"bogus": {"action": "accept"}}, requestState=r1["requestState"])
    )["result"]
    assert wrong["resultType"] == "input_required" and list(wrong["inputRequests"]) == ["user_name"]
    garbage = stdio.request(
        3, "tools/call", call(name, inputResponses={"user_name": 12345}, requestState=r1["requestState"])
    )["result"]
    assert garbage["resultType"] == "input_required"
    ok = stdio.request(
        4,
        "tools/call",
        call(
            name,
            inputResponses={"user_name": {"action": "accept", "content": {"name": "Alice"}}, "extra": {"action": "x"}},
            requestState=wrong["requestState"],
        ),
    )["result"]
    assert ok["content"] == [{"type": "text", "text": "Hello, Alice!"}]


def test_the_state_is_sealed_and_bound_to_its_request(stdio: StdioServer) -> None:
    r1 = stdio.request(1, "tools/call", call("test_input_required_result_tampered_state"))["result"]
    state = r1["requestState"]
    assert state.startswith("v1.")
    assert decode_state(state)["t"] == "test_input_required_result_tampered_state"
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    for i, (token, reason) in enumerate(
        [(state + "-TAMPERED", "invalid_request_state"), ("garbage", "invalid_request_state")], start=2
    ):
        r = stdio.request(
            i,
            "tools/call",
            call("test_input_required_result_tampered_state", inputResponses=answer, requestState=token),
        )
        assert r["error"]["code"] == -32602 and r["error"]["data"] == {"reason": reason}, r
    # The same state replayed on another tool is refused too.
    moved = stdio.request(
        5, "tools/call", call("test_input_required_result_request_state", inputResponses=answer, requestState=state)
    )
    assert moved["error"]["data"] == {"reason": "request_state_mismatch"}
    # Untouched, it carries the handler's own state back: state-ok.
    ok = stdio.request(
        6, "tools/call", call("test_input_required_result_tampered_state", inputResponses=answer, requestState=state)
    )
    assert ok["result"]["content"][0]["text"] == "state-ok: confirmed=true"


def test_a_capability_the_client_lacks_is_32021_and_only_declared_ones_are_asked(stdio: StdioServer) -> None:
    r = stdio.request(1, "tools/call", call("test_missing_capability", caps={}))
    assert r["error"]["code"] == -32021
    assert r["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    r = stdio.request(2, "tools/call", call("test_input_required_result_elicitation", caps={"sampling": {}}))
    assert r["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    r = stdio.request(3, "tools/call", call("test_input_required_result_capabilities", caps={"sampling": {}}))
    assert list(r["result"]["inputRequests"]) == ["greeting"]


def test_a_prompt_asks_too(stdio: StdioServer) -> None:
    params = {"name": "test_input_required_result_prompt", "_meta": meta()}
    r1 = stdio.request(1, "prompts/get", params)["result"]
    assert list(r1["inputRequests"]) == ["user_context"]
    answer = {"user_context": {"action": "accept", "content": {"context": "tests"}}}
    r2 = stdio.request(2, "prompts/get", {**params, "inputResponses": answer, "requestState": r1["requestState"]})
    assert r2["result"]["messages"][0]["content"]["text"] == "Use this context: tests"


def test_rounds_over_http_and_their_status_codes() -> None:
    with Server(catalogs=["conformance"]) as srv:
        srv.start_http()
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
        }

        def post(id: int, params: dict[str, Any]) -> httpx.Response:
            body = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
            return http.post("/mcp", json=body, headers={**headers, "Mcp-Name": params["name"]})

        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            r1 = post(1, call("test_input_required_result_request_state"))
            assert r1.status_code == 200 and r1.headers["content-type"].startswith("application/json")
            first = r1.json()["result"]
            assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["confirm"]
            answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
            tampered = post(
                2, call("test_input_required_result_request_state", inputResponses=answer, requestState="v1.x.y")
            )
            assert tampered.status_code == 400 and tampered.json()["error"]["code"] == -32602
            missing = post(3, call("test_missing_capability", caps={}))
            assert missing.status_code == 400 and missing.json()["error"]["code"] == -32021
            r2 = post(
                4,
                call(
                    "test_input_required_result_request_state",
                    inputResponses=answer,
                    requestState=first["requestState"],
                ),
            )
            assert r2.status_code == 200
            assert r2.json()["result"]["content"][0]["text"] == "state-ok: confirmed=true"
        # No server → client request was ever sent in this era.
        assert srv.traffic.requests(dir="out") == []


async def sample(context: Any, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="Paris"), model="fake")


async def elicit(context: Any, params: Any) -> ElicitResult:
    schema = params.requested_schema or {}
    fields = list(schema.get("properties", {}))
    return ElicitResult(action="accept", content={f: f"{f}-value" for f in fields if f in ("name", "colour")})


async def roots(context: Any) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///project", name="project")])


def python_tools(srv: Server) -> Handle:
    @srv.tool()
    def elicit_twice(ctx: Context) -> str:
        ctx.state["runs"] = ctx.state.get("runs", 0) + 1
        name = ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name")
        colour = ctx.elicit(
            f"Hi {name['content']['name']}, colour?",
            {"type": "object", "properties": {"colour": {"type": "string"}}},
            key="colour",
        )
        return f"{name['content']['name']} likes {colour['content']['colour']} (runs seen: {ctx.state['runs']})"

    @srv.tool()
    async def ask_both(ctx: Context) -> str:
        answers = await ctx.aask_all(
            {
                "llm": ("sampling/createMessage", {"messages": [], "maxTokens": 5}),
                "roots": ("roots/list", None),
            }
        )
        return f"{answers['llm']['content']['text']} / {answers['roots']['roots'][0]['uri']}"

    @srv.tool()
    async def async_rounds(ctx: Context) -> str:
        try:
            name = await ctx.aelicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
            found = await ctx.alist_roots()
        except Exception as e:  # InputRequired is a BaseException: it is not caught here
            return f"caught {e!r}"
        return f"{name['content']['name']} has {len(found)} root(s)"

    return elicit_twice


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")
async def test_the_sdk_client_answers_input_requests_with_its_callbacks(transport: str, mode: str) -> None:
    with Server(catalogs=["everything", "conformance"]) as srv:
        twice = python_tools(srv)
        target: Any = StdioServerParameters(**srv.stdio_params) if transport == "stdio" else srv.start_http()
        with anyio.fail_after(30):
            async with Client(
                target,
                mode=mode,  # type: ignore[arg-type]
                read_timeout_seconds=10,
                sampling_callback=sample,
                elicitation_callback=elicit,
                list_roots_callback=roots,
            ) as client:
                stateless = mode == "auto"
                assert client.protocol_version == ("2026-07-28" if stateless else "2025-11-25")
                r = await client.call_tool("trigger-sampling-request", {"prompt": "capital?"})
                assert isinstance(r.content[0], TextContent) and '"text": "Paris"' in r.content[0].text
                r = await client.call_tool("get-roots-list", {})
                assert isinstance(r.content[0], TextContent) and "file:///project" in r.content[0].text
                r = await client.call_tool("test_input_required_result_multiple_inputs", {})
                assert r.content == [
                    TextContent(type="text", text="All inputs received: name=name-value, greeting=Paris, roots=1")
                ]
                r = await client.call_tool("elicit_twice", {})
                runs = 3 if stateless else 1
                assert r.content == [
                    TextContent(type="text", text=f"name-value likes colour-value (runs seen: {runs})")
                ]
                r = await client.call_tool("ask_both", {})
                assert r.content == [TextContent(type="text", text="Paris / file:///project")]
                r = await client.call_tool("async_rounds", {})
                assert r.content == [TextContent(type="text", text="name-value has 1 root(s)")]
        # A Python handler runs once per round; its Handle records every run (the first two end
        # with InputRequired, the last with the result).
        assert len(twice.calls) == (3 if stateless else 1)
        assert all(isinstance(c.error, InputRequired) for c in twice.calls[:-1])
        assert twice.calls[-1].result is not None and twice.calls[-1].error is None
        pushed = srv.traffic.requests(dir="out")
        if stateless:
            assert pushed == []
            calls = [c for c in srv.traffic.requests("tools/call") if c.msg["params"]["name"] == "elicit_twice"]
            assert len(calls) == 3
            assert all(
                c.msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28" for c in calls
            )
            assert "requestState" not in calls[0].msg["params"] and "requestState" in calls[2].msg["params"]
        else:
            assert {r.method for r in pushed} >= {"sampling/createMessage", "elicitation/create", "roots/list"}


def test_the_stdio_subprocess_serves_a_python_free_round_trip() -> None:
    # The same rounds through `python -m everything_mcp` with the everything catalog's tools.
    srv = StdioServer("stdio")
    try:
        r1 = srv.request(1, "tools/call", {**call("trigger-elicitation-request")})["result"]
        assert r1["inputRequests"]["1"]["method"] == "elicitation/create"
        assert r1["inputRequests"]["1"]["params"]["mode"] == "form"
        # URL mode: the random elicitation id is carried between rounds, so the question is stable.
        url_caps = {"elicitation": {"url": {}}}
        args = {"url": "https://example.com/flow"}
        r1 = srv.request(2, "tools/call", {**call("trigger-url-elicitation", caps=url_caps), "arguments": args})
        ask = r1["result"]["inputRequests"]["1"]
        assert ask["params"]["mode"] == "url"
        id = ask["params"]["elicitationId"]
        answer = {"1": {"action": "accept"}}
        r2 = srv.request(
            3,
            "tools/call",
            {
                **call("trigger-url-elicitation", caps=url_caps),
                "arguments": args,
                "inputResponses": answer,
                "requestState": r1["result"]["requestState"],
            },
        )
        text = r2["result"]["content"][0]["text"]
        assert (
            text == f"✅ User completed the URL elicitation flow.\nElicitation ID: {id}\nURL: https://example.com/flow"
        )
        # The error path (-32042) then a retry that proceeds, though each stateless request has a
        # session of its own.
        err_args = {"url": "https://example.com/err", "errorPath": True}
        r = srv.request(4, "tools/call", {**call("trigger-url-elicitation", caps=url_caps), "arguments": err_args})
        assert r["error"]["code"] == -32042
        r = srv.request(5, "tools/call", {**call("trigger-url-elicitation", caps=url_caps), "arguments": err_args})
        assert r["result"]["resultType"] == "input_required"
    finally:
        srv.stop()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")
async def test_the_everything_client_tools_end_with_the_same_texts_in_both_eras() -> None:
    calls = [
        ("trigger-sampling-request", {"prompt": "capital?"}),
        ("trigger-elicitation-request", {}),
        ("get-roots-list", {}),
        ("test_input_required_result_request_state", {}),
        ("test_input_required_result_prompt", None),
    ]
    seen: dict[str, list[Any]] = {}
    with Server(catalogs=["everything", "conformance"]) as srv:
        for mode in ("auto", "legacy"):
            with anyio.fail_after(30):
                async with Client(
                    StdioServerParameters(**srv.stdio_params),
                    mode=mode,  # type: ignore[arg-type]
                    read_timeout_seconds=10,
                    sampling_callback=sample,
                    elicitation_callback=elicit,
                    list_roots_callback=roots,
                ) as client:
                    out = seen.setdefault(mode, [])
                    for name, args in calls:
                        if args is None:
                            r: Any = await client.get_prompt(name)
                            out.append([m.content for m in r.messages])
                        else:
                            r = await client.call_tool(name, args)
                            out.append(r.content)
    assert seen["auto"] == seen["legacy"]


def test_a_round_that_spoke_first_ends_its_sse_stream_with_input_required() -> None:
    with Server(catalogs=["none"]) as srv:

        @srv.tool()
        def progress_then_ask(ctx: Context) -> str:
            ctx.progress(1, 2, "asking")
            answer = ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="n")
            return str(answer["content"]["name"])

        srv.start_http()
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "progress_then_ask",
        }
        params = {"name": "progress_then_ask", "arguments": {}, "_meta": {**meta(), "progressToken": 7}}
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            r = http.post("/mcp", json=body, headers=headers)
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            frames = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]
            assert [f.get("method") for f in frames] == ["notifications/progress", None]
            assert frames[1]["result"]["resultType"] == "input_required"
            answer = {"n": {"action": "accept", "content": {"name": "Ada"}}}
            again = {**params, "inputResponses": answer, "requestState": frames[1]["result"]["requestState"]}
            r = http.post("/mcp", json={**body, "id": 2, "params": again}, headers=headers)
            frames = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]
            assert frames[-1]["result"]["content"] == [{"type": "text", "text": "Ada"}]
