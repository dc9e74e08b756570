"""The control API (`/_control/`, docs/control-api.md): a test suite in any language scripts the
server over plain HTTP — fault rules in, their hits out, notifications, the traffic, a reset —
while a real client (the official `mcp` client, in both eras) talks to `/mcp`."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError
from mcp.types import LoggingMessageNotificationParams

from everything_mcp import Server

from conftest import WAIT, texts

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

BOOM = {"error": {"code": -32000, "message": "boom"}}


def control(srv: Server) -> httpx.Client:
    """A plain HTTP client of the server's control API."""
    return httpx.Client(base_url=f"{srv.base_url}/_control", timeout=WAIT)


def test_the_index_names_the_api_and_its_endpoints() -> None:
    with Server(catalogs=["none"], name="lab") as srv:
        srv.start_http()
        with control(srv) as api:
            index = api.get("/").json()
            assert index["api"] == 1 and index["server"]["name"] == "lab"
            assert "POST /_control/faults" in index["endpoints"]
            missing = api.get("/nothing")
            assert missing.status_code == 404 and "GET /_control/ lists them" in missing.json()["error"]["message"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_fault_posted_over_http_is_what_the_client_sees(mode: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http()
        with control(srv) as api:
            rule = {"match": {"method": "tools/call", "name": "echo", "first": 1}, "action": BOOM}
            added = api.post("/faults", json=rule)
            assert added.status_code == 201
            rule_id = added.json()["id"]
            assert added.json()["rule"] == {**rule, "id": rule_id, "hits": 0}
            with anyio.fail_after(WAIT):
                async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
                    with pytest.raises(MCPError, match="boom"):
                        await client.call_tool("echo", {"message": "one"})
                    assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
            assert api.get(f"/faults/{rule_id}").json()["hits"] == 1
            assert api.get("/faults").json()["rules"][0]["hits"] == 1
            # The traffic, as JSON lines: the hit frame carries the rule's mark.
            lines = api.get("/traffic", params={"since": 0})
            assert lines.headers["content-type"] == "application/x-ndjson"
            records = [json.loads(line) for line in lines.text.splitlines()]
            calls = [r for r in records if r["method"] == "tools/call" and r["dir"] == "in"]
            assert [c.get("fault") for c in calls] == [{"rule": rule_id, "action": "error"}, None]
            last = records[-1]["seq"]
            assert api.get("/traffic", params={"since": last}).text == ""
            assert api.delete(f"/faults/{rule_id}").status_code == 204
            gone = api.delete(f"/faults/{rule_id}")
            assert gone.status_code == 404 and gone.json()["error"]["field"] == "id"


def test_bad_bodies_get_a_400_naming_the_field_and_the_server_goes_on() -> None:
    with Server(catalogs=["everything"]) as srv:
        srv.start_http()
        with control(srv) as api:
            cases: list[tuple[Any, str, str]] = [
                ({"match": {"methd": "x"}, "action": {"drop": True}}, "match.methd", "unknown field `methd`"),
                ({"match": {"nth": 0}, "action": {"drop": True}}, "match.nth", "counts from 1"),
                ({"action": {"error": {"code": "x", "message": "m"}}}, "action.error.code", "invalid type"),
                ({"match": {}}, "action", "missing field `action`"),
                ("not json", "", "expected"),
            ]
            for body, field, message in cases:
                answer = api.post("/faults", content=body if isinstance(body, str) else json.dumps(body))
                assert answer.status_code == 400, body
                error = answer.json()["error"]
                assert error["field"] == field and message in error["message"], (body, error)
            for body, field in [
                ({"log": {"level": "loud", "data": 1}}, "log.level"),
                ({"list_changed": "widgets"}, "list_changed"),
                ({"shout": 1}, "shout"),
                ([], ""),
            ]:
                answer = api.post("/notify", json=body)
                assert answer.status_code == 400 and answer.json()["error"]["field"] == field, body
            assert api.get("/traffic", params={"since": "x"}).json()["error"]["field"] == "since"
            assert api.get("/faults").json() == {"rules": []}
        assert httpx.get(f"{srv.base_url}/health", timeout=WAIT).json() == {"status": "ok"}


BODY_ENDPOINTS = [
    "/faults",
    "/tools",
    "/resources",
    "/prompts",
    "/clock/advance",
    "/notify",
    "/ask",
    "/auth/clients",
    "/auth/tokens/revoke",
    "/auth/documents",
    "/auth/consent",
]
"""Every control API endpoint that reads a JSON body."""


@pytest.mark.parametrize("path", BODY_ENDPOINTS)
def test_a_body_that_is_not_utf8_gets_a_400_everywhere(path: str) -> None:
    # Read lossily, `{"seconds": "\ufffd"}` named a member; every endpoint refuses the body.
    with Server(catalogs=["everything"], clock="manual") as srv:
        srv.start_http(auth="oauth")
        with control(srv) as api:
            answer = api.post(path, content=b'{"seconds": 1, "method": "ping", "x": "\xff"}')
            assert answer.status_code == 400, answer.text
            assert answer.json()["error"]["field"] == ""
        assert httpx.get(f"{srv.base_url}/health", timeout=WAIT).json() == {"status": "ok"}


async def test_notify_reaches_the_connected_client() -> None:
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http()
        logged = anyio.Event()
        seen: list[Any] = []

        async def on_log(params: LoggingMessageNotificationParams) -> None:
            seen.append(params.data)
            logged.set()

        with control(srv) as api:
            with anyio.fail_after(WAIT):
                async with Client(url, mode="legacy", logging_callback=on_log) as client:
                    await client.list_tools()
                    sent = api.post("/notify", json={"log": {"level": "warning", "data": {"n": 1}, "logger": "lab"}})
                    assert sent.json() == {"sent": 1}
                    await logged.wait()
            assert seen == [{"n": 1}]
            assert api.post("/notify", json={"resource_updated": "demo://nothing"}).json() == {"sent": 0}


def test_reset_takes_rules_and_traffic_back_to_the_start() -> None:
    with Server(catalogs=["none"]) as srv:
        srv.start_http()
        with control(srv) as api:
            api.post("/faults", json={"action": {"drop": True}})
            assert len(srv.traffic) == 0 and len(srv.faults) == 1
            conn = srv.connect()
            conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            srv.traffic.wait_for("notifications/initialized", timeout=WAIT)
            assert api.post("/reset").status_code == 204
            assert len(srv.faults) == 0 and len(srv.traffic) == 0


def test_a_token_guards_the_api_and_the_api_can_be_off() -> None:
    with Server(catalogs=["none"]) as srv:
        srv.start_http(control_token="s3cret")
        with control(srv) as api:
            refused = api.get("/faults")
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
            assert api.get("/faults", headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert api.get("/faults", headers={"Authorization": "Bearer s3cret"}).json() == {"rules": []}
            # The Host/Origin guard stands in front of it as of /mcp.
            foreign = api.get("/faults", headers={"Authorization": "Bearer s3cret", "Origin": "https://evil.example"})
            assert foreign.status_code == 403
    with Server(catalogs=["none"]) as srv:
        srv.start_http(control=False)
        assert httpx.get(f"{srv.base_url}/_control/", timeout=WAIT).status_code == 404


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_canned_tool_answers_its_results_in_turn(mode: str) -> None:
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        sunny = {"content": [{"type": "text", "text": "sunny"}]}
        rain = {"content": [{"type": "text", "text": "rain"}]}
        weather = {
            "name": "weather",
            "description": "The weather, canned.",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "results": [sunny, {"error": {"code": -32000, "message": "no forecast", "data": {"retry": True}}}, rain],
        }
        with control(srv) as api:
            assert api.post("/tools", json=weather).json() == {"name": "weather"}
            with anyio.fail_after(WAIT):
                async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
                    (listed,) = (await client.list_tools()).tools
                    assert (listed.name, listed.description) == ("weather", "The weather, canned.")
                    assert texts(await client.call_tool("weather", {"city": "Oslo"})) == ["sunny"]
                    with pytest.raises(MCPError) as raised:
                        await client.call_tool("weather", {"city": "Oslo"})
                    error = raised.value.error
                    assert (error.code, error.message, error.data) == (-32000, "no forecast", {"retry": True})
                    for _ in range(2):  # the last answer repeats
                        assert texts(await client.call_tool("weather", {"city": "Oslo"})) == ["rain"]
                    assert api.delete("/tools/weather").status_code == 204
                    assert (await client.list_tools()).tools == []
            assert api.delete("/tools/weather").status_code == 404
            for body, field in [
                ({"name": "t"}, ""),
                ({"name": "t", "results": []}, "results"),
                ({"name": "t", "results": [sunny, 3]}, "results[1]"),
                ({"name": "t", "result": sunny, "results": [sunny]}, "results"),
                ({"name": "t", "result": {"error": {"code": "x", "message": "m"}}}, "results[0]"),
                ({"nme": "t", "result": sunny}, "nme"),
            ]:
                answer = api.post("/tools", json=body)
                assert answer.status_code == 400 and answer.json()["error"]["field"] == field, (body, answer.text)


def test_a_stdio_server_serves_the_api_on_a_loopback_port() -> None:
    """`stdio --control-port 0` announces its control URL on stderr; a rule posted there acts on
    the stdio client's frames."""
    from conftest import StdioServer

    server = StdioServer("stdio", "--catalog", "none", "--control-port", "0", "--control-token", "t")
    try:
        assert server.proc.stderr is not None
        announced = json.loads(server.proc.stderr.readline())
        assert announced["event"] == "control" and announced["url"].startswith("http://127.0.0.1:")
        auth = {"Authorization": "Bearer t"}
        rule = {"match": {"method": "ping", "transport": "stdio"}, "action": BOOM}
        added = httpx.post(announced["url"] + "faults", json=rule, headers=auth, timeout=WAIT)
        assert added.status_code == 201
        server.initialize()
        assert server.request(1, "ping")["error"] == BOOM["error"]
        hits = httpx.get(announced["url"] + "faults", headers=auth, timeout=WAIT).json()["rules"][0]["hits"]
        assert hits == 1
    finally:
        server.stop()


def test_a_preset_over_http() -> None:
    with Server(catalogs=["none"]) as srv:
        srv.start_http()
        with control(srv) as api:
            added = api.post("/faults/presets/flaky-network", params={"seed": 3})
            assert added.status_code == 201 and added.json() == {"ids": ["flaky-network-1", "flaky-network-2"]}
            assert [r["match"]["seed"] for r in api.get("/faults").json()["rules"]] == [3, 4]
            unknown = api.post("/faults/presets/chaos")
            assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "preset"
            assert "known: flaky-network" in unknown.json()["error"]["message"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_canned_resource_and_prompt_answer_in_turn(mode: str) -> None:
    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        v1 = {"contents": [{"uri": "test://status", "mimeType": "text/plain", "text": "v1"}]}
        v2 = {"contents": [{"uri": "test://status", "mimeType": "text/plain", "text": "v2"}]}
        hello = {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}]}
        with control(srv) as api:
            status = {"uri": "test://status", "name": "status", "results": [v1, v2]}
            assert api.post("/resources", json=status).json() == {"uri": "test://status"}
            assert api.post("/resources", json={"uri": "test://motd", "text": "hi"}).json() == {"uri": "test://motd"}
            greet = {
                "name": "greet",
                "description": "A canned prompt.",
                "arguments": [{"name": "who", "required": False}],
                "results": [hello, {"error": {"code": -32002, "message": "no more greetings"}}],
            }
            assert api.post("/prompts", json=greet).json() == {"name": "greet"}
            with anyio.fail_after(WAIT):
                async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
                    listed = (await client.list_resources()).resources
                    assert [(str(r.uri), r.name, r.mime_type) for r in listed] == [
                        ("test://status", "status", "text/plain"),
                        ("test://motd", "test://motd", "text/plain"),
                    ]
                    reads = [await client.read_resource("test://status") for _ in range(3)]
                    assert [r.contents[0].text for r in reads] == ["v1", "v2", "v2"]  # type: ignore[union-attr]
                    motd = await client.read_resource("test://motd")
                    assert motd.contents[0].text == "hi"  # type: ignore[union-attr]
                    (prompt,) = (await client.list_prompts()).prompts
                    assert (prompt.name, prompt.description, [a.name for a in prompt.arguments or []]) == (
                        "greet",
                        "A canned prompt.",
                        ["who"],
                    )
                    got = await client.get_prompt("greet", {"who": "you"})
                    assert got.messages[0].content.text == "Say hello"  # type: ignore[union-attr]
                    with pytest.raises(MCPError) as raised:
                        await client.get_prompt("greet", {})
                    assert (raised.value.error.code, raised.value.error.message) == (-32002, "no more greetings")
                    assert api.delete("/resources", params={"uri": "test://motd"}).status_code == 204
                    assert api.delete("/prompts/greet").status_code == 204
                    assert [str(r.uri) for r in (await client.list_resources()).resources] == ["test://status"]
                    assert (await client.list_prompts()).prompts == []
            assert api.delete("/prompts/greet").status_code == 404
            assert api.delete("/resources").status_code == 400
            # A reset takes out what the control API registered.
            assert api.post("/reset").status_code == 204
            with anyio.fail_after(WAIT):
                async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
                    assert (await client.list_resources()).resources == []
            for path, body, field in [
                ("/resources", {"name": "x", "text": "t"}, "uri"),
                ("/resources", {"uri": "u:x"}, ""),
                ("/resources", {"uri": "u:x", "text": "t", "result": v1}, "text"),
                ("/resources", {"uri": "u:x", "result": {"text": "t"}}, "results[0]"),
                ("/prompts", {"name": "p", "result": {"message": []}}, "results[0]"),
                ("/prompts", {"name": "p", "arguments": {}, "result": hello}, "arguments"),
            ]:
                refused = api.post(path, json=body)
                assert refused.status_code == 400 and refused.json()["error"]["field"] == field, (body, refused.text)


def test_the_traffic_stream_sends_each_record_as_it_is_recorded() -> None:
    """`GET /_control/traffic/stream`: an SSE event per record (`id` = `seq`), the ones kept
    first, then live ones; a reconnect with `Last-Event-ID` goes on after that record."""
    with Server(catalogs=["none"]) as srv:
        srv.start_http()
        conn = srv.connect()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        conn.send(json.dumps(ping))
        conn.recv(timeout=WAIT)
        with httpx.Client(base_url=f"{srv.base_url}/_control", timeout=WAIT) as api:
            with api.stream("GET", "/traffic/stream") as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                events = stream.iter_lines()

                def next_record() -> tuple[int, dict[str, Any]]:
                    seq = data = None
                    for line in events:
                        if line.startswith("id: "):
                            seq = int(line[4:])
                        elif line.startswith("data: "):
                            data = json.loads(line[6:])
                        elif line == "" and data is not None:
                            assert seq == data["seq"]
                            return seq, data
                    raise AssertionError("the stream ended")

                assert [next_record()[1]["dir"] for _ in range(2)] == ["in", "out"]
                conn.send(json.dumps({**ping, "id": 2}))
                live = next_record()[1]
                assert (live["dir"], live["msg"]["id"]) == ("in", 2)
            with api.stream("GET", "/traffic/stream", headers={"Last-Event-ID": "2"}) as resumed:
                first = next(line for line in resumed.iter_lines() if line.startswith("id: "))
                assert first == "id: 3"
            assert api.get("/traffic/stream", params={"since": "x"}).status_code == 400


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_any_notification_and_a_question_to_the_clients(mode: str) -> None:
    """`POST /_control/notify {"notification": …}` sends any notification; `POST /_control/ask`
    asks the connected clients (a handshake-era session answers `roots/list`; the stateless
    era has no session to ask, so nobody is asked)."""
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        seen.append(str(getattr(getattr(message, "root", message), "method", "")))

    async def roots(_context: Any) -> Any:
        from mcp import types

        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    with Server(catalogs=["none"]) as srv:
        url = srv.start_http()
        with control(srv) as api, anyio.fail_after(WAIT):
            async with Client(url, mode=mode, message_handler=on_message, list_roots_callback=roots) as client:
                await client.list_tools()
                note = {"notification": {"method": "notifications/tools/list_changed"}}
                sent = await anyio.to_thread.run_sync(lambda: api.post("/notify", json=note).json())
                asked = await anyio.to_thread.run_sync(lambda: api.post("/ask", json={"method": "roots/list"}).json())
                if mode == "legacy":
                    assert sent == {"sent": 1}
                    while "notifications/tools/list_changed" not in seen:
                        await anyio.sleep(0.005)
                    (answer,) = asked["answers"].values()
                    assert answer["roots"] == [{"uri": "file:///work", "name": "work"}]
                else:
                    assert sent == {"sent": 0} and asked == {"answers": {}}
        for body, field in [
            ({"notification": {}}, "notification.method"),
            ({"notification": 3}, "notification"),
        ]:
            assert api_post(srv, "/notify", body) == (400, field)
        assert api_post(srv, "/ask", {"methd": "roots/list"}) == (400, "methd")


def api_post(srv: Server, path: str, body: Any) -> tuple[int, str]:
    """A control API POST's status and, for an error, the field it names."""
    with control(srv) as api:
        r = api.post(path, json=body)
        return r.status_code, r.json().get("error", {}).get("field", "")


def test_srv_reset_takes_rules_traffic_and_the_clock_back() -> None:
    with Server(catalogs=["none"], clock="manual") as srv:
        srv.faults.add(action={"drop": True})
        conn = srv.connect()
        conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        srv.traffic.wait_for("notifications/initialized", timeout=WAIT)
        srv.clock.advance(5)
        srv.reset()
        assert (len(srv.faults), len(srv.traffic), srv.clock.elapsed) == (0, 0, 0)


def test_a_whole_fault_file_goes_in_together_or_not_at_all() -> None:
    """`POST /_control/faults` with a fault file (an array, or `{"rules": [...]}`): Python's
    `srv.faults.load_text` for a test suite in another language."""
    with Server(catalogs=["none"]) as srv:
        srv.start_http()
        with control(srv) as api:
            rules = [{"match": {"method": "ping"}, "action": {"drop": True}}, {"action": {"delay_ms": 5}}]
            added = api.post("/faults", json={"rules": rules})
            assert (added.status_code, len(added.json()["ids"])) == (201, 2)
            assert len(srv.faults) == 2
            refused = api.post("/faults", json=[{"action": {"drop": True}}, {"action": {"dorp": True}}])
            assert refused.status_code == 400 and refused.json()["error"]["field"] == "rules"
            assert "rule 2: action.dorp: unknown field" in refused.json()["error"]["message"]
            assert len(srv.faults) == 2
