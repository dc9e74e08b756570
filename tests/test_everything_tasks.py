"""The `everything` catalog's task tools, driven with raw JSON-RPC (the official `mcp` 2.x client
has no tasks API): `simulate-research-query` in both eras (its statuses, notifications, every
clarification outcome and the report) over stdio and HTTP, and the client-hosted task demos
`trigger-sampling-request-async` / `trigger-elicitation-request-async`, where this test plays the
client that runs the task (answering `tasks/get` and `tasks/result`) or answers at once.

Every server runs with a 20 ms tick: the research stages and the async tools' polls take that
instead of the reference's second each."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from everything_mcp import Server

from conftest import WAIT, StdioServer, envelope, init_params

Frame = dict[str, Any]
Answer = Callable[[Frame], Frame]
"""Answers a server → client request: `{"result": …}` or `{"error": …}`."""

TICK = ("--tick-ms", "20")
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
ASYNC_CAPS = {
    "sampling": {},
    "elicitation": {},
    "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}},
}
"""A client that runs sampling and elicitation requests as tasks when asked to."""

GATHERING = "Gathering sources..."
PLAIN_REPORT = """# Research Report: rust

## Research Parameters
- **Topic**: rust


## Synthesis
This research query was processed through 4 stages:
- Stage 1: Gathering sources ✓
- Stage 2: Analyzing content ✓
- Stage 3: Synthesizing findings ✓
- Stage 4: Generating report ✓

---

## About This Demo (SEP-1686: Tasks)

This tool demonstrates MCP's task-based execution pattern for long-running operations:

**Task Lifecycle Demonstrated:**
1. `tools/call` with `task` parameter → Server returns `CreateTaskResult` (not the final result)
2. Client polls `tasks/get` → Server returns current status and `statusMessage`
3. Status progressed: `working` → `completed`
4. Client calls `tasks/result` → Server returns this final result


**Key Concepts:**
- Tasks enable "call now, fetch later" patterns
- `statusMessage` provides human-readable progress updates
- Tasks have TTL (time-to-live) for automatic cleanup
- `pollInterval` suggests how often to check status
- Elicitation requests use `relatedTask` to queue via tasks/result (works on all transports)

*This is a simulated research report from the Everything MCP Server.*
"""
"""The reference's report for an unambiguous run (blank lines included)."""


def rpc(id: int | str, method: str, params: dict[str, Any] | None = None) -> Frame:
    msg: Frame = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def research(id: int, topic: str, ambiguous: bool = False, task: bool = True) -> Frame:
    params: dict[str, Any] = {"name": "simulate-research-query", "arguments": {"topic": topic, "ambiguous": ambiguous}}
    if task:
        params["task"] = {"ttl": 60000}  # ignored: the reference fixes 300 s
    return rpc(id, "tools/call", params)


def no_requests(request: Frame) -> Frame:
    raise AssertionError(f"unexpected server request {request}")


def read_until(
    incoming: Iterator[Frame], reply: Callable[[Frame], None], answer: Answer, done: Callable[[Frame], bool]
) -> list[Frame]:
    """Reads frames until one satisfies `done`, answering every server request on the way;
    returns every frame read, the last one included."""
    seen = []
    for frame in incoming:
        seen.append(frame)
        if "method" in frame and "id" in frame:
            reply({"jsonrpc": "2.0", "id": frame["id"], **answer(frame)})
        if done(frame):
            return seen
    raise AssertionError(f"the stream ended first; read {seen}")


def response_to(id: int | str) -> Callable[[Frame], bool]:
    return lambda f: "method" not in f and f.get("id") == id


def statuses(frames: list[Frame]) -> list[tuple[str, str | None]]:
    """(status, statusMessage) of every `notifications/tasks/status` among `frames`."""
    return [
        (f["params"]["status"], f["params"].get("statusMessage"))
        for f in frames
        if f.get("method") == "notifications/tasks/status"
    ]


def is_completed(frame: Frame) -> bool:
    return frame.get("method") == "notifications/tasks/status" and frame["params"]["status"] == "completed"


def text(result: Frame) -> str:
    (content,) = result["content"]
    assert content["type"] == "text"
    return str(content["text"])


# --- stdio ------------------------------------------------------------------------------------


class Stdio:
    """A `python -m everything_mcp stdio` subprocess after the handshake with `capabilities`."""

    def __init__(self, capabilities: dict[str, Any] | None = None, *args: str) -> None:
        self.server = StdioServer("stdio", *TICK, *args)
        params = init_params()
        params["capabilities"] = capabilities or {}
        self.server.send(rpc(0, "initialize", params))
        assert self.server.recv()["id"] == 0
        self.server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def frames(self) -> Iterator[Frame]:
        while True:
            yield self.server.recv()

    def exchange(self, message: Frame, answer: Answer = no_requests) -> tuple[Frame, list[Frame]]:
        """Sends `message`; reads (answering server requests) up to its response."""
        self.server.send(message)
        seen = read_until(self.frames(), self.server.send, answer, response_to(message["id"]))
        return seen[-1], seen[:-1]

    def read_until(self, done: Callable[[Frame], bool], answer: Answer = no_requests) -> list[Frame]:
        return read_until(self.frames(), self.server.send, answer, done)


@pytest.fixture
def stdio_plain() -> Iterator[Stdio]:
    s = Stdio()
    yield s
    s.server.stop()


def test_research_query_over_stdio(stdio_plain: Stdio) -> None:
    s = stdio_plain
    tools, _ = s.exchange(rpc(1, "tools/list"))
    (tool,) = [t for t in tools["result"]["tools"] if t["name"] == "simulate-research-query"]
    assert tools["result"]["tools"][-1] is tool  # after the 12 static tools, as the reference
    assert tool["title"] == "Simulate Research Query"
    assert tool["execution"] == {"taskSupport": "required"}
    assert tool["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert tool["inputSchema"]["required"] == ["topic"]
    assert tool["inputSchema"]["properties"]["ambiguous"]["default"] is False

    # Without a task: the reference's isError result.
    refused, _ = s.exchange(research(2, "rust", task=False))
    assert refused["result"] == {
        "content": [
            {
                "type": "text",
                "text": "MCP error -32601: Tool simulate-research-query requires task augmentation "
                "(taskSupport: 'required')",
            }
        ],
        "isError": True,
    }

    # With a task; `ambiguous` changes nothing for a client that cannot be asked.
    created, before = s.exchange(research(3, "rust", ambiguous=True))
    task = created["result"]["task"]
    assert re.fullmatch(r"[0-9a-f]{32}", task["taskId"])
    assert (task["status"], task["ttl"], task["pollInterval"], task["statusMessage"]) == (
        "working",
        300000,
        1000,
        GATHERING,
    )
    # The first status notification precedes the CreateTaskResult.
    assert statuses(before)[-1:] == [("working", GATHERING)]
    rest = s.read_until(is_completed)
    assert statuses(rest) == [
        ("working", "Analyzing content..."),
        ("working", "Synthesizing findings..."),
        ("working", "Generating report..."),
        ("completed", "Generating report..."),
    ]
    assert all(f["params"]["taskId"] == task["taskId"] for f in rest)

    got, _ = s.exchange(rpc(4, "tasks/get", {"taskId": task["taskId"]}))
    assert got["result"]["status"] == "completed"
    result, _ = s.exchange(rpc(5, "tasks/result", {"taskId": task["taskId"]}))
    assert result["result"] == {
        "content": [{"type": "text", "text": PLAIN_REPORT}],
        "_meta": {RELATED: {"taskId": task["taskId"]}},
    }
    listed, _ = s.exchange(rpc(6, "tasks/list"))
    assert [t["taskId"] for t in listed["result"]["tasks"]] == [task["taskId"]]


def clarify_with(reply: Frame) -> tuple[Answer, list[Frame]]:
    """An answer to the research's elicitation (and the requests it got)."""
    asked: list[Frame] = []

    def answer(request: Frame) -> Frame:
        assert request["method"] == "elicitation/create"
        asked.append(request)
        return reply

    return answer, asked


@pytest.mark.parametrize(
    ("reply", "clarification"),
    [
        ({"result": {"action": "accept", "content": {"interpretation": "snake"}}}, "snake"),
        ({"result": {"action": "accept", "content": {}}}, "User accepted without selection"),
        ({"result": {"action": "decline"}}, "User declined - using default interpretation"),
        ({"result": {"action": "cancel"}}, "User cancelled - using default interpretation"),
        ({"error": {"code": -32603, "message": "no user here"}}, "technical (default - elicitation unavailable)"),
    ],
)
def test_ambiguous_research_asks_inline_over_stdio(reply: Frame, clarification: str) -> None:
    s = Stdio({"elicitation": {}})
    try:
        created, _ = s.exchange(research(1, "Monty Python", ambiguous=True))
        task_id = created["result"]["task"]["taskId"]
        answer, asked = clarify_with(reply)
        rest = s.read_until(is_completed, answer)
        found = 'Found multiple interpretations for "Monty Python". Requesting clarification...'
        # As the reference: input_required twice (the tool's own update, then the ask's), the
        # request, and the tool's own way back to working.
        assert statuses(rest) == [
            ("working", "Analyzing content..."),
            ("working", "Synthesizing findings..."),
            ("input_required", found),
            ("input_required", found),
            ("working", f'Continuing with interpretation: "{clarification}"...'),
            ("working", "Generating report..."),
            ("completed", "Generating report..."),
        ]
        (request,) = asked
        assert rest.index(request) == 4  # inline on stdio, after the input_required notifications
        assert request["params"] == {
            "message": 'The research query "Monty Python" could have multiple interpretations. '
            "Please clarify what you're looking for:",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "interpretation": {
                        "type": "string",
                        "title": "Clarification",
                        "description": "Which interpretation of the topic do you mean?",
                        "oneOf": [
                            {"const": "programming", "title": "Python programming language"},
                            {"const": "snake", "title": "Python snake species"},
                            {"const": "comedy", "title": "Monty Python comedy group"},
                        ],
                    }
                },
                "required": ["interpretation"],
            },
            "_meta": {RELATED: {"taskId": task_id}},
        }
        result, _ = s.exchange(rpc(2, "tasks/result", {"taskId": task_id}))
        report = text(result["result"])
        assert report.startswith(
            f"# Research Report: Monty Python ({clarification})\n\n## Research Parameters\n"
            f"- **Topic**: Monty Python\n- **Clarification**: {clarification}\n\n## Synthesis\n"
        )
        assert "Status progressed: `working` → `input_required` → `working` → `completed`\n" in report
        if "unavailable" in clarification:
            outcome = "**Note:** Elicitation failed and a default interpretation was used."
        else:
            outcome = f'After receiving clarification ("{clarification}"), the task resumed processing and completed.'
        assert f"while awaiting user input.\n{outcome}\n\n**Key Concepts:**" in report
    finally:
        s.server.stop()


# --- HTTP -------------------------------------------------------------------------------------


def sse_frames(r: httpx.Response) -> Iterator[Frame]:
    """The JSON-RPC messages of a streamed SSE response, as they arrive."""
    data: list[str] = []
    for line in r.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            payload = "\n".join(data)
            data = []
            if payload:
                yield json.loads(payload)


HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Http:
    """A Streamable HTTP session (raw httpx) after the handshake with `capabilities`."""

    def __init__(self, server: Server, capabilities: dict[str, Any]) -> None:
        self.http = httpx.Client(base_url=server.base_url or "", timeout=WAIT)
        params = init_params()
        params["capabilities"] = capabilities
        r = self.http.post("/mcp", json=rpc(0, "initialize", params), headers=HEADERS)
        assert r.status_code == 200, r.text
        self.session = r.headers["mcp-session-id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    def post(self, message: Frame) -> httpx.Response:
        return self.http.post("/mcp", json=message, headers={**HEADERS, "mcp-session-id": self.session})

    def reply(self, message: Frame) -> None:
        r = self.post(message)
        assert (r.status_code, r.content) == (202, b"")

    def exchange(self, message: Frame, answer: Answer = no_requests) -> tuple[Frame, list[Frame]]:
        """POSTs `message` and reads its SSE stream up to the response, answering the server's
        requests on it with POSTs while the stream stays open."""
        headers = {**HEADERS, "mcp-session-id": self.session}
        with self.http.stream("POST", "/mcp", content=json.dumps(message).encode(), headers=headers) as r:
            assert r.status_code == 200
            seen = read_until(sse_frames(r), self.reply, answer, response_to(message["id"]))
        return seen[-1], seen[:-1]


@pytest.fixture
def http_server() -> Iterator[Server]:
    with Server(tick=0.02) as srv:
        srv.start_http()
        yield srv


def test_ambiguous_research_asks_on_the_tasks_result_stream_over_http(http_server: Server) -> None:
    h = Http(http_server, {"elicitation": {}})
    created, _ = h.exchange(research(1, "rust", ambiguous=True))
    task_id = created["result"]["task"]["taskId"]
    assert created["result"]["task"]["statusMessage"] == GATHERING
    # The call's stream is over: the question waits in the task until a tasks/result stream opens.
    queued = http_server.traffic.wait_for("elicitation/create", timeout=WAIT)
    assert queued.dir == "out"
    got, _ = h.exchange(rpc(2, "tasks/get", {"taskId": task_id}))
    assert got["result"]["status"] == "input_required"
    assert got["result"]["statusMessage"] == 'Found multiple interpretations for "rust". Requesting clarification...'
    answer, asked = clarify_with({"result": {"action": "accept", "content": {"interpretation": "historical"}}})
    result, before = h.exchange(rpc(3, "tasks/result", {"taskId": task_id}), answer)
    (request,) = asked
    assert before[0] is request  # delivered on the tasks/result stream
    assert request["params"]["_meta"] == {RELATED: {"taskId": task_id}}
    assert [o["const"] for o in request["params"]["requestedSchema"]["properties"]["interpretation"]["oneOf"]] == [
        "technical",
        "historical",
        "current",
    ]
    assert result["result"]["_meta"] == {RELATED: {"taskId": task_id}}
    assert text(result["result"]).startswith("# Research Report: rust (historical)\n")


# --- client-hosted tasks ----------------------------------------------------------------------


class ClientTasks:
    """The client side of client-hosted tasks: runs each task-augmented request as a task whose
    polls answer `polls` in turn, then `tasks/result` with `outcome`; or answers at once with
    `outcome` when `sync`."""

    def __init__(self, polls: list[Frame], outcome: Frame, sync: bool = False) -> None:
        self.polls = polls
        self.outcome = outcome
        self.sync = sync
        self.requests: list[Frame] = []

    def __call__(self, request: Frame) -> Frame:
        self.requests.append(request)
        method = request["method"]
        if method in ("sampling/createMessage", "elicitation/create"):
            if self.sync:
                return {"result": self.outcome}
            return {"result": {"task": {"taskId": "client-task-1", "status": "working", "ttl": 60000}}}
        assert request["params"] == {"taskId": "client-task-1"}
        if method == "tasks/get":
            return {"result": {"taskId": "client-task-1", "ttl": 60000, **self.polls.pop(0)}}
        assert method == "tasks/result"
        return {"result": self.outcome}


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m", "stopReason": "endTurn"}


def test_async_tools_are_listed_only_to_clients_that_run_such_tasks() -> None:
    def listed(capabilities: dict[str, Any]) -> list[str]:
        s = Stdio(capabilities)
        try:
            tools, _ = s.exchange(rpc(1, "tools/list"))
        finally:
            s.server.stop()
        # A stateless request with the same capabilities: no client-hosted tasks in 2026.
        srv = StdioServer("stdio")
        try:
            stateless = srv.request(1, "tools/list", {"_meta": envelope(capabilities)})
        finally:
            srv.stop()
        assert [t["name"] for t in stateless["result"]["tools"]][-1] == "simulate-research-query"
        assert not [t for t in stateless["result"]["tools"] if t["name"].endswith("-async")]
        return [t["name"] for t in tools["result"]["tools"]][-3:]

    assert listed(ASYNC_CAPS) == [
        "simulate-research-query",
        "trigger-sampling-request-async",
        "trigger-elicitation-request-async",
    ]
    assert listed({"sampling": {}, "elicitation": {}})[-1] == "simulate-research-query"
    only_sampling = {"sampling": {}, "tasks": {"requests": {"sampling": {"createMessage": {}}}}}
    assert listed(only_sampling)[-1] == "trigger-sampling-request-async"


@pytest.fixture
def stdio_async() -> Iterator[Stdio]:
    s = Stdio(ASYNC_CAPS)
    yield s
    s.server.stop()


def test_async_sampling_polls_the_clients_task_over_stdio(stdio_async: Stdio) -> None:
    s = stdio_async
    tools, _ = s.exchange(rpc(1, "tools/list"))
    (tool,) = [t for t in tools["result"]["tools"] if t["name"] == "trigger-sampling-request-async"]
    assert tool["title"] == "Trigger Async Sampling Request Tool"
    assert tool["execution"] == {"taskSupport": "forbidden"}
    assert tool["annotations"]["openWorldHint"] is True

    client = ClientTasks([{"status": "working", "statusMessage": "thinking"}, {"status": "completed"}], SAMPLED)
    call = rpc(2, "tools/call", {"name": "trigger-sampling-request-async", "arguments": {"prompt": "hi"}})
    result, _ = s.exchange(call, client)
    assert text(result["result"]) == (
        "[COMPLETED] Async sampling completed!\n\n**Progress:**\nTask created: client-task-1\n"
        "Poll 1: working - thinking\nPoll 2: completed\n\n**Result:**\n" + json.dumps(SAMPLED, indent=2)
    )
    create, *rest = client.requests
    assert create["params"] == {
        "task": {"ttl": 300000},
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Resource trigger-sampling-request-async context: hi"}}
        ],
        "systemPrompt": "You are a helpful test server.",
        "maxTokens": 100,
        "temperature": 0.7,
    }
    assert [r["method"] for r in rest] == ["tasks/get", "tasks/get", "tasks/result"]

    # A client that answers at once: the answer as the reference's schema keeps it.
    client = ClientTasks(
        [], {"_meta": {"x": 1}, "model": "m", "content": SAMPLED["content"], "role": "assistant"}, sync=True
    )
    result, _ = s.exchange(call | {"id": 3}, client)
    shown = {"role": "assistant", "content": SAMPLED["content"], "model": "m"}
    assert text(result["result"]) == "[SYNC] Client executed synchronously:\n" + json.dumps(shown, indent=2)


def test_async_elicitation_over_stdio(stdio_async: Stdio) -> None:
    s = stdio_async
    call = rpc(1, "tools/call", {"name": "trigger-elicitation-request-async", "arguments": {}})
    waiting = {"status": "input_required", "statusMessage": "waiting for the user"}
    accepted = {"action": "accept", "content": {"name": "Ada", "favoriteColor": "Blue", "agreeToTerms": True}}
    client = ClientTasks([waiting, waiting, {"status": "completed"}], accepted)
    result, _ = s.exchange(call, client)
    assert result["result"]["content"] == [
        {"type": "text", "text": "[COMPLETED] User provided the requested information!"},
        {"type": "text", "text": "User inputs:\n- Name: Ada\n- Favorite Color: Blue\n- Agreed to terms: true"},
        {
            "type": "text",
            # Poll 2 is not shown: still input_required, and neither the first nor a tenth.
            "text": "\nProgress:\nTask created: client-task-1\nPoll 1: input_required - waiting for the user\n"
            "Poll 3: completed\n\nRaw result: " + json.dumps(accepted, indent=2),
        },
    ]
    params = client.requests[0]["params"]
    assert params["task"] == {"ttl": 600000}
    assert params["message"] == "Please provide inputs for the following fields (async task demo):"
    assert list(params["requestedSchema"]["properties"]) == ["name", "favoriteColor", "agreeToTerms"]

    client = ClientTasks([{"status": "failed", "statusMessage": "the user went away"}], {})
    result, _ = s.exchange(call | {"id": 2}, client)
    assert text(result["result"]) == (
        "[FAILED] the user went away\n\nProgress:\nTask created: client-task-1\nPoll 1: failed - the user went away"
    )
    assert [r["method"] for r in client.requests] == ["elicitation/create", "tasks/get"]  # no tasks/result

    client = ClientTasks([], {"action": "decline"}, sync=True)
    result, _ = s.exchange(call | {"id": 3}, client)
    assert text(result["result"]) == '[SYNC] Client executed synchronously:\n{\n  "action": "decline"\n}'


def test_async_sampling_over_http(http_server: Server) -> None:
    h = Http(http_server, ASYNC_CAPS)
    client = ClientTasks([{"status": "working"}, {"status": "completed"}], SAMPLED)
    call = rpc(
        1, "tools/call", {"name": "trigger-sampling-request-async", "arguments": {"prompt": "hi", "maxTokens": 5}}
    )
    result, _ = h.exchange(call, client)
    assert text(result["result"]).startswith(
        "[COMPLETED] Async sampling completed!\n\n**Progress:**\nTask created: client-task-1\n"
        "Poll 1: working\nPoll 2: completed\n\n**Result:**\n{"
    )
    assert client.requests[0]["params"]["maxTokens"] == 5


# --- the stateless era ------------------------------------------------------------------------


def test_research_query_in_the_stateless_era() -> None:
    srv = StdioServer("stdio", *TICK)
    try:

        def stateless(id: int, method: str, params: dict[str, Any], capabilities: dict[str, Any]) -> Frame:
            reply = srv.request(id, method, {**params, "_meta": envelope(capabilities)})
            assert isinstance(reply, dict)
            return reply

        caps = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}
        arguments = {"name": "simulate-research-query", "arguments": {"topic": "rust", "ambiguous": True}}
        # A client without the tasks extension cannot call a task-only tool.
        refused = stateless(1, "tools/call", arguments, {"elicitation": {}})
        assert refused["error"]["code"] == -32021
        assert refused["error"]["data"]["requiredCapabilities"] == {"extensions": {TASKS_EXTENSION: {}}}

        created = stateless(2, "tools/call", arguments, caps)["result"]
        assert (created["resultType"], created["status"], created["statusMessage"]) == ("task", "working", GATHERING)
        assert (created["ttlMs"], created["pollIntervalMs"]) == (300000, 1000)
        task_id = created["taskId"]

        def poll_until(status: str) -> Frame:
            deadline = time.monotonic() + WAIT
            while True:
                got = stateless(3, "tasks/get", {"taskId": task_id}, caps)["result"]
                if got["status"] == status:
                    return got
                assert time.monotonic() < deadline, got
                time.sleep(0.01)

        waiting = poll_until("input_required")
        assert waiting["statusMessage"] == 'Found multiple interpretations for "rust". Requesting clarification...'
        ((key, request),) = waiting["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["requestedSchema"]["required"] == ["interpretation"]
        assert RELATED not in request["params"].get("_meta", {})
        answer = {"action": "accept", "content": {"interpretation": "current"}}
        updated = stateless(4, "tasks/update", {"taskId": task_id, "inputResponses": {key: answer}}, caps)
        assert "error" not in updated
        done = poll_until("completed")
        assert text(done["result"]).startswith("# Research Report: rust (current)\n")
        assert "`working` → `input_required` → `working` → `completed`" in text(done["result"])
    finally:
        srv.stop()
