"""A bounded soak: one native `everything-mcp http` and one `everything-mcp stdio`, driven for a
given time with mixed load over every transport and era, their resident memory, open file
descriptors and threads sampled every second (docs/reliability.md, "Soak").

The servers are the native command (`$EVERYTHING_MCP_BINARY`, else `everything-mcp` on `PATH`,
else the one beside this Python), started with their defaults except what the soak needs:
`http --port 0 --session-timeout S` (so the sessions the load abandons are reaped within the
run: the default is 30 minutes) and `stdio --control-port 0` (so fault rules reach it through
the control API). Five load workers, paced to `--rate` requests/s in all:

- Streamable HTTP, handshake era: one worker of 2025-11-25 sessions, one of 2025-03-26 sessions
  (without `MCP-Protocol-Version`, which that revision did not have). Each session is a new
  client (its own connections): `initialize`, `notifications/initialized`, a third of them the
  standalone `GET` stream, 3 to 24 calls (some three at once), then `DELETE` (three in four) or
  abandoned: its connections closed without a `DELETE`, left to the idle timeout. One deleted
  session in eight is asked again, which must be `404` `-32001`.
- Streamable HTTP, stateless (2026-07-28): the envelope and the SEP-2243 headers on every POST,
  `server/discover` now and then, a `subscriptions/listen` stream opened and dropped every ~40
  calls, and a new client every ~100 calls.
- Legacy HTTP+SSE: `GET /sse` + `POST /message`, a new connection every 3 to 24 calls, by turns
  a 2024-11-05 handshake and an enveloped 2026-07-28 connection; closing the stream ends it.
- stdio: one 2025-06-18 connection for the whole run, requests pipelined by three at times.

The calls are a mix of `echo`, `get-sum`, `get-tiny-image`, `get-structured-content`,
`get-annotated-message`, `trigger-long-running-operation` (with a progress token), `tools/list`,
`resources/read`, `prompts/get` and `ping` (`server/discover` in 2026-07-28); every
`--large-every`th call is an `echo` of `--large-bytes` (256 KiB). Fault rules are put in force on
both servers through `POST /_control/faults` (`RULES`): an error on 30% of `get-sum`, a late error
on every 5th `get-structured-content`, a delay on every 3rd `get-tiny-image`, a scripted `isError`
result on 25% of `get-annotated-message`, and `503` on every 4th stateless `resources/read` over
Streamable HTTP. Every answer is checked: the echo of its message, the sum, ... or exactly the
answer of a rule; anything else is an unexpected error, and so is a dropped connection, a
timeout, a stream that ends early, a frame with an id nobody sent. Every request id is unique
(one counter for the run; the stateless worker's are strings). At the end each rule's `hits`
must equal the answers it made that the load saw.

The lab is on, on both servers (the CLI's default on loopback, and on the stdio server's control
port: the newest 100,000 records kept, within 64 MiB): the soak reads each `/_lab/` once and
then, as the page does, follows `GET /_control/traffic/stream` for the whole run (every
record's `seq` in order, gaps only where a `dropped` event accounts for them) and asks
`GET /_control/report` once a second (`501` from the native command, whose report is the Python
package's). Before the load, the prefill fills each server's lab memory to 90% of its byte bound
with large echoes, 8 at a time, each batch once the feed has read the last: what grows after
that is not the ring filling up as designed. The warm-up is the prefill and the first
`--warmup` (20%) of the load; `--seconds` counts the load only. `--late-feed` opens a second
feed from seq 0 halfway through, as a lab page opened on a busy server, and times it.

Fails (exit 1) on any unexpected answer, if RSS after the warm-up grows by more than
`max(--rss-growth-mib, --rss-growth-pct of the warm-up RSS)`, if RSS ever exceeds `--rss-max-mib`,
if the open fds or threads at the end of the load exceed their warm-up value plus `--fd-slack` /
`--thread-slack`, or if a server does not exit 0 when stopped. A run shorter than 30 s is a smoke
run (`tests/test_soak.py`'s 5 s): no prefill, and only the absolute RSS bound. Prints a table
and, last, one JSON line of the figures (`--samples FILE`: every reading as JSON lines).

    python -m bench.soak [--seconds 60] [--rate 150] [--large-every 50] [...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import shutil
import signal
import ssl
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

KIB = 1024
MIB = 1024 * 1024

STATELESS = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
}
"""The 2026-07-28 envelope of every stateless request."""

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TIMEOUT_S = 30.0
"""Any one request, stream event or server start fails after this."""

SCRIPTED_RESULT = {"content": [{"type": "text", "text": "soak: scripted failure"}], "isError": True}
RULES: list[dict[str, Any]] = [
    {
        "id": "soak-error",
        "match": {"method": "tools/call", "name": "get-sum", "probability": 0.3, "seed": 11},
        "action": {"error": {"code": -32050, "message": "soak: scripted error", "data": {"rule": "soak-error"}}},
    },
    {
        "id": "soak-late-error",
        "match": {"method": "tools/call", "name": "get-structured-content", "every": 5},
        "action": {"delay_ms": 30, "error": {"code": -32051, "message": "soak: late error"}},
    },
    {
        "id": "soak-delay",
        "match": {"method": "tools/call", "name": "get-tiny-image", "every": 3, "seed": 5},
        "action": {"delay_ms": [10, 60]},
    },
    {
        "id": "soak-result",
        "match": {"method": "tools/call", "name": "get-annotated-message", "probability": 0.25, "seed": 13},
        "action": {"result": SCRIPTED_RESULT},
    },
    {
        "id": "soak-503",
        "match": {"method": "resources/read", "transport": "http", "era": "stateless", "every": 4},
        "action": {"http_status": 503, "headers": {"Retry-After": "0"}, "body": "soak: busy"},
    },
]
"""The fault rules put in force on both servers; `judge` knows the answer of each."""
ERRORS = {rule["id"]: rule["action"]["error"] for rule in RULES if "error" in rule["action"]}
RULE_TOOL = {rule["id"]: rule["match"].get("name", rule["match"]["method"]) for rule in RULES}
STATELESS_READS = "resources/read over Streamable HTTP, 2026-07-28"
EVERY = {
    "soak-late-error": ("get-structured-content", 5),
    "soak-delay": ("get-tiny-image", 3),
    "soak-503": (STATELESS_READS, 4),
}
"""Rules that act on every nth matching call: their hits follow from the calls the load made
(counted under these names)."""
UNSEEN = {"soak-delay"}
"""Rules whose answers look like any other (a delay)."""

RESOURCE = "demo://resource/static/document/architecture.md"
GONE = "session-gone"
"""Not a rule: the `404` of a deleted session asked again, which the load expects as well."""

MIX: list[tuple[str, int]] = [
    ("echo", 36),
    ("get-sum", 14),
    ("get-tiny-image", 8),
    ("get-structured-content", 8),
    ("get-annotated-message", 8),
    ("tools/list", 6),
    ("resources/read", 8),
    ("prompts/get", 5),
    ("ping", 5),
    ("trigger-long-running-operation", 2),
]
"""What the calls are, by weight (`ping` is `server/discover` in 2026-07-28)."""


class Unexpected(Exception):
    """An answer the load did not expect: the run fails."""


# --------------------------------------------------------------------------------------------------
# Figures


@dataclass
class Tally:
    """What one transport (and era) of the load did."""

    sessions: int = 0
    closed: int = 0
    abandoned: int = 0
    requests: int = 0
    large: int = 0
    expected: int = 0
    unexpected: int = 0
    notifications: int = 0


@dataclass
class Sample:
    """One reading of a server process: seconds since the first reading (before the prefill),
    RSS KiB, open fds, threads."""

    t: float
    rss_kb: int
    fds: int
    threads: int


def sample(pid: int, t: float) -> Sample:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return Sample(
        round(t, 2), int(fields["VmRSS"].split()[0]), len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"])
    )


@dataclass
class Lab:
    """What the lab's feed (`GET /_control/traffic/stream`) delivered."""

    records: int = 0
    dropped: int = 0
    mib: float = 0.0
    last_seq: int = 0
    reconnects: int = 0
    reports: int = 0


# --------------------------------------------------------------------------------------------------
# Server-sent events


Event = tuple[str, bytes, "str | None"]
"""An SSE event: its type, its data (the `data:` lines joined) and its id."""


class SseParser:
    """Turns SSE lines (bytes, without their line ends) into events, one per blank line that
    ends an event with data."""

    def __init__(self) -> None:
        self.event = "message"
        self.data: list[bytes] = []
        self.id: str | None = None

    def feed(self, line: bytes) -> Event | None:
        if not line:
            out = (self.event, b"\n".join(self.data), self.id) if self.data else None
            self.event, self.data, self.id = "message", [], None
            return out
        if line.startswith(b":"):
            return None
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if name == b"data":
            self.data.append(value)
        elif name == b"event":
            self.event = value.decode()
        elif name == b"id":
            self.id = value.decode()
        return None


async def sse_events(response: httpx.Response) -> AsyncIterator[Event]:
    """The events of a streamed SSE response as they arrive. Lines are split from the raw
    bytes: the lab's feed carries hundreds of MiB, and decoding it to text first would cost the
    load generator the CPU it needs to keep up."""
    parser, pending = SseParser(), bytearray()
    async for chunk in response.aiter_raw():
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            line = bytes(pending[start : end - 1 if end > start and pending[end - 1] == 13 else end])
            start = end + 1
            if (event := parser.feed(line)) is not None:
                yield event
        del pending[:start]


def frames_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC frames of a POST's answer: a JSON body's one, or an SSE body's events (a
    priming event, with empty data, carries none)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        parser, frames = SseParser(), []
        for line in [*response.content.splitlines(), b""]:
            event = parser.feed(line)
            if event and event[1]:
                if event[0] != "message":
                    raise Unexpected(f"SSE event {event[0]!r} on a POST stream")
                frames.append(json.loads(event[1]))
        return frames
    if not response.content:
        return []
    body = response.json()
    if not isinstance(body, dict):
        raise Unexpected(f"a JSON body that is not one frame: {response.text[:200]}")
    return [body]


# --------------------------------------------------------------------------------------------------
# The calls and what answers them


@dataclass
class Call:
    """One request of the load: its method and params, and what its answer must be."""

    kind: str
    method: str
    params: dict[str, Any]
    want_text: str | None = None
    large: bool = False

    @property
    def name(self) -> str | None:
        """The `Mcp-Name` header of a 2026-07-28 request."""
        if self.method in ("tools/call", "prompts/get"):
            return str(self.params["name"])
        if self.method == "resources/read":
            return str(self.params["uri"])
        return None


def where(call: Call, answer: dict[str, Any]) -> str:
    """A call and the start of its answer, for a failure's message."""
    return f"{call.kind}: {json.dumps(answer)[:300]}"


def judge(call: Call, answer: dict[str, Any], revision: str) -> str | None:
    """None when `answer` is the normal answer of `call`, or the id of the fault rule whose
    answer it is; raises `Unexpected` otherwise."""
    if "error" in answer:
        error = answer["error"]
        for rule, scripted in ERRORS.items():
            if error == scripted and call.kind == RULE_TOOL[rule]:
                return str(rule)
        raise Unexpected(f"error answer to {where(call, answer)}")
    result = answer.get("result")
    if not isinstance(result, dict):
        raise Unexpected(f"no result in the answer to {where(call, answer)}")
    if revision == STATELESS and result.get("resultType") != "complete":
        raise Unexpected(f"a 2026-07-28 result without resultType complete: {where(call, answer)}")
    if call.kind == "get-annotated-message" and result.get("isError"):
        if result.get("content") == SCRIPTED_RESULT["content"]:
            return "soak-result"
        raise Unexpected(f"isError result: {where(call, answer)}")
    if result.get("isError"):
        raise Unexpected(f"isError result: {where(call, answer)}")
    text = (result.get("content") or [{}])[0].get("text") if "content" in result else None
    if call.want_text is not None and text != call.want_text:
        raise Unexpected(f"not the expected text: {where(call, answer)}")
    checks: dict[str, Callable[[], bool]] = {
        "tools/list": lambda: "echo" in {t.get("name") for t in result.get("tools", [])},
        "resources/read": lambda: result.get("contents", [{}])[0].get("uri") == RESOURCE,
        "prompts/get": lambda: bool(result.get("messages")),
        "ping": lambda: result == {},
        "server/discover": lambda: STATELESS in result.get("supportedVersions", []),
        "get-tiny-image": lambda: any(c.get("type") == "image" for c in result.get("content", [])),
        # structuredContent came with 2025-06-18: before, the text alone carries the object
        "get-structured-content": lambda: isinstance(
            result.get("structuredContent") if revision >= "2025-06-18" else json.loads(str(text)), dict
        ),
        "get-annotated-message": lambda: bool(result.get("content")),
        "trigger-long-running-operation": lambda: str(text).startswith("Long running operation completed"),
    }
    if not checks.get(call.kind, lambda: True)():
        raise Unexpected(f"not the expected result: {where(call, answer)}")
    return None


# --------------------------------------------------------------------------------------------------
# The soak


class Soak:
    """The shared state of a run: ids, the call plan, tallies, failures, and the stop signal."""

    def __init__(self, ns: argparse.Namespace) -> None:
        self.ns = ns
        self.rng = random.Random(ns.seed)
        self.ids = itertools.count(1)
        self.calls = itertools.count(1)
        self.tallies: dict[str, Tally] = {}
        self.failures: list[str] = []
        self.unexpected = 0
        self.stop = asyncio.Event()
        self.observed: dict[str, dict[str, int]] = {"http": {}, "stdio": {}}
        """Per server: the answers of each fault rule seen, and the calls of each kind answered."""
        self.labs = {"http": Lab(), "stdio": Lab()}
        self.late: dict[str, Any] = {}
        """What `--late-feed` measured."""
        self.ssl = ssl.create_default_context()  # shared: a context per client costs ms of CPU
        self.pad_len = ns.large_bytes
        self.pad = "x" * ns.large_bytes

    def tally(self, key: str) -> Tally:
        return self.tallies.setdefault(key, Tally())

    def fail(self, key: str, what: str) -> None:
        self.unexpected += 1
        if key in self.tallies:
            self.tally(key).unexpected += 1
        if len(self.failures) < 20:
            self.failures.append(f"{key}: {what}")
            print(f"soak: UNEXPECTED {key}: {what}", file=sys.stderr, flush=True)

    def new_id(self, stateless: bool = False) -> int | str:
        n = next(self.ids)
        return f"st-{n}" if stateless else n

    def client(self, base: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=base, timeout=TIMEOUT_S, trust_env=False, verify=self.ssl)

    def plan(self, stateless: bool) -> Call:
        """The next call of the mix: every `--large-every`th one a large echo."""
        n = next(self.calls)
        if n % self.ns.large_every == 0:
            message = f"large-{n}-" + self.pad[: self.ns.large_bytes - len(f"large-{n}-")]
            return Call("echo", "tools/call", tool("echo", message=message), f"Echo: {message}", large=True)
        kind = self.rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
        if kind == "echo":
            message = f"soak {n} " + "y" * self.rng.randrange(0, 2048)
            return Call(kind, "tools/call", tool(kind, message=message), f"Echo: {message}")
        if kind == "get-sum":
            a, b = self.rng.randrange(-1000, 1000), self.rng.randrange(0, 1000)
            return Call(kind, "tools/call", tool(kind, a=a, b=b), f"The sum of {a} and {b} is {a + b}.")
        if kind == "get-structured-content":
            return Call(kind, "tools/call", tool(kind, location=self.rng.choice(["New York", "Chicago"])))
        if kind == "get-annotated-message":
            return Call(kind, "tools/call", tool(kind, messageType="success"))
        if kind == "get-tiny-image":
            return Call(kind, "tools/call", tool(kind))
        if kind == "trigger-long-running-operation":
            params = tool(kind, duration=0.05, steps=2)
            params["_meta"] = {"progressToken": f"progress-{n}"}
            return Call(kind, "tools/call", params)
        if kind == "resources/read":
            return Call(kind, kind, {"uri": RESOURCE})
        if kind == "prompts/get":
            return Call(kind, kind, {"name": "simple-prompt"})
        if kind == "ping" and stateless:
            return Call("server/discover", "server/discover", {})
        return Call(kind, kind, {})

    def answered(self, server: str, key: str, call: Call, answer: dict[str, Any], revision: str) -> None:
        """Tallies an answer to `call` from `server`, judged."""
        tally = self.tally(key)
        tally.requests += 1
        tally.large += call.large
        seen = self.observed[server]
        seen[call.kind] = seen.get(call.kind, 0) + 1
        try:
            rule = judge(call, answer, revision)
        except Unexpected as e:
            self.fail(key, str(e))
            return
        if rule is not None:
            tally.expected += 1
            seen[rule] = seen.get(rule, 0) + 1

    def expected(self, server: str, key: str, rule: str, call: Call | None = None) -> None:
        """An answer made at the HTTP level that the load expected (`503`, a gone session)."""
        tally = self.tally(key)
        tally.requests += 1
        tally.expected += 1
        seen = self.observed[server]
        seen[rule] = seen.get(rule, 0) + 1
        if call is not None:
            seen[call.kind] = seen.get(call.kind, 0) + 1


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


class Pacer:
    """Spaces one worker's requests `1 / rate` seconds apart (a worker held up catches up on at
    most a second's worth)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next = time.monotonic()

    async def wait(self, requests: int = 1) -> None:
        now = time.monotonic()
        self.next = max(self.next, now - 1.0) + self.interval * requests
        if self.next > now:
            await asyncio.sleep(self.next - now)


def check_answer(frames: list[dict[str, Any]], id_: int | str, tally: Tally) -> dict[str, Any]:
    """The one answer to request `id_` among a POST's frames; the others must be notifications."""
    answers = [f for f in frames if "id" in f and "method" not in f]
    for f in frames:
        if "method" in f and "id" not in f:
            tally.notifications += 1
        elif "method" in f:
            raise Unexpected(f"a server request on a POST stream: {json.dumps(f)[:200]}")
    if len(answers) != 1 or answers[0].get("id") != id_:
        got = [a.get("id") for a in answers]
        raise Unexpected(f"answers with ids {got} to request {id_!r}")
    if answers[0].get("jsonrpc") != "2.0":
        raise Unexpected(f"not JSON-RPC 2.0: {json.dumps(answers[0])[:200]}")
    return answers[0]


# --------------------------------------------------------------------------------------------------
# Streamable HTTP, handshake era


async def handshake_worker(soak: Soak, base: str, revision: str, pacer: Pacer) -> None:
    """Sessions of `revision`, one after another, until the soak stops."""
    key = f"http {revision}"
    while not soak.stop.is_set():
        try:
            await handshake_session(soak, base, revision, key, pacer)
        except (Unexpected, httpx.HTTPError, OSError, ValueError, asyncio.TimeoutError) as e:
            soak.fail(key, f"{type(e).__name__}: {e}")
            await asyncio.sleep(0.2)


async def handshake_session(soak: Soak, base: str, revision: str, key: str, pacer: Pacer) -> None:
    tally = soak.tally(key)
    async with soak.client(base) as http:
        id_ = soak.new_id()
        init = {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}
        frame = {"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": init}
        await pacer.wait()
        r = await http.post("/mcp", content=json.dumps(frame), headers=ACCEPT)
        if r.status_code != 200 or "mcp-session-id" not in r.headers:
            raise Unexpected(f"initialize: HTTP {r.status_code} {r.text[:200]}")
        answer = check_answer(frames_of(r), id_, tally)
        if answer.get("result", {}).get("protocolVersion") != revision:
            raise Unexpected(f"initialize answered {json.dumps(answer)[:300]}")
        tally.sessions += 1
        tally.requests += 1
        headers = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"]}
        if revision >= "2025-06-18":
            headers["mcp-protocol-version"] = revision
        r = await http.post("/mcp", content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers=headers)
        if r.status_code != 202:
            raise Unexpected(f"notifications/initialized: HTTP {r.status_code} {r.text[:200]}")
        standalone = None
        if soak.rng.random() < 1 / 3:
            standalone = asyncio.create_task(standalone_stream(soak, http, headers, key))
        try:
            for _ in range(soak.rng.randint(3, 24)):
                if soak.stop.is_set():
                    break
                burst = 3 if soak.rng.random() < 0.12 else 1
                await pacer.wait(burst)
                await asyncio.gather(*(handshake_call(soak, http, headers, key) for _ in range(burst)))
            abandon = soak.rng.random() < 0.25 and not soak.stop.is_set()
            if abandon:
                tally.abandoned += 1
                return  # the client closes its connections, the session is left to time out
            r = await http.delete("/mcp", headers=headers)
            if r.status_code != 200:
                raise Unexpected(f"DELETE: HTTP {r.status_code} {r.text[:200]}")
            tally.closed += 1
            if standalone is not None:  # the DELETE ends the session's streams
                await asyncio.wait_for(asyncio.shield(standalone), TIMEOUT_S)
            if soak.rng.random() < 1 / 8:
                await ask_gone(soak, http, headers, key)
        finally:
            if standalone is not None and not standalone.done():
                standalone.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await standalone


async def handshake_call(soak: Soak, http: httpx.AsyncClient, headers: dict[str, str], key: str) -> None:
    call = soak.plan(stateless=False)
    id_ = soak.new_id()
    frame = {"jsonrpc": "2.0", "id": id_, "method": call.method, "params": call.params}
    r = await http.post("/mcp", content=json.dumps(frame), headers=headers)
    if r.status_code != 200:
        raise Unexpected(f"{call.kind}: HTTP {r.status_code} {r.text[:200]}")
    soak.answered("http", key, call, check_answer(frames_of(r), id_, soak.tally(key)), key.split()[1])


async def ask_gone(soak: Soak, http: httpx.AsyncClient, headers: dict[str, str], key: str) -> None:
    """A request on a deleted session: `404` with `-32001`."""
    frame: dict[str, Any] = {"jsonrpc": "2.0", "id": soak.new_id(), "method": "ping", "params": {}}
    r = await http.post("/mcp", content=json.dumps(frame), headers=headers)
    body: dict[str, Any] = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
    if r.status_code != 404 or body.get("error", {}).get("code") != -32001:
        raise Unexpected(f"a deleted session answered HTTP {r.status_code} {r.text[:200]}")
    soak.expected("http", key, GONE)


async def standalone_stream(soak: Soak, http: httpx.AsyncClient, headers: dict[str, str], key: str) -> None:
    """The session's `GET /mcp` stream, read until the server ends it (the session's `DELETE`)
    or the session is abandoned (this task is cancelled)."""
    get_headers = {k: v for k, v in headers.items() if k != "content-type"} | {"accept": "text/event-stream"}
    try:
        async with http.stream("GET", "/mcp", headers=get_headers, timeout=httpx.Timeout(TIMEOUT_S, read=None)) as r:
            if r.status_code != 200:
                raise Unexpected(f"GET /mcp: HTTP {r.status_code}")
            async for event in sse_events(r):
                if event[1]:
                    frame = json.loads(event[1])
                    if "id" in frame:
                        raise Unexpected(f"a request or answer on the standalone stream: {event[1][:200]!r}")
                    soak.tally(key).notifications += 1
    except (Unexpected, httpx.HTTPError, ValueError) as e:
        soak.fail(key, f"standalone stream: {type(e).__name__}: {e}")


# --------------------------------------------------------------------------------------------------
# Streamable HTTP, stateless (2026-07-28)


def stateless_headers(call: Call) -> dict[str, str]:
    headers = {**ACCEPT, "mcp-protocol-version": STATELESS, "mcp-method": call.method}
    if call.name is not None:
        headers["mcp-name"] = call.name
    return headers


async def stateless_worker(soak: Soak, base: str, pacer: Pacer) -> None:
    key = f"http {STATELESS}"
    tally = soak.tally(key)
    while not soak.stop.is_set():
        tally.sessions += 1  # a client: its connections
        try:
            async with soak.client(base) as http:
                listen: asyncio.Task[None] | None = None
                for _ in range(soak.rng.randint(50, 150)):
                    if soak.stop.is_set():
                        break
                    if listen is None and soak.rng.random() < 1 / 40:
                        listen = asyncio.create_task(listen_stream(soak, http, key))
                    elif listen is not None and listen.done():
                        listen = None
                    burst = 3 if soak.rng.random() < 0.12 else 1
                    await pacer.wait(burst)
                    await asyncio.gather(*(stateless_call(soak, http, key) for _ in range(burst)))
                if listen is not None:
                    listen.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await listen
            tally.closed += 1
        except (Unexpected, httpx.HTTPError, OSError, ValueError, asyncio.TimeoutError) as e:
            soak.fail(key, f"{type(e).__name__}: {e}")
            await asyncio.sleep(0.2)


async def stateless_call(soak: Soak, http: httpx.AsyncClient, key: str, call: Call | None = None) -> None:
    call = call or soak.plan(stateless=True)
    id_ = soak.new_id(stateless=True)
    params = {**call.params, "_meta": {**ENVELOPE, **call.params.get("_meta", {})}}
    frame = {"jsonrpc": "2.0", "id": id_, "method": call.method, "params": params}
    r = await http.post("/mcp", content=json.dumps(frame), headers=stateless_headers(call))
    if call.kind == "resources/read" and r.status_code in (200, 503):
        soak.observed["http"][STATELESS_READS] = soak.observed["http"].get(STATELESS_READS, 0) + 1
    if r.status_code == 503 and call.kind == "resources/read":
        if r.text != "soak: busy" or r.headers.get("retry-after") != "0":
            raise Unexpected(f"a 503 that is not the rule's: {r.headers} {r.text[:200]}")
        soak.expected("http", key, "soak-503", call)
        return
    if r.status_code != 200:
        raise Unexpected(f"{call.kind}: HTTP {r.status_code} {r.text[:200]}")
    if "mcp-session-id" in r.headers:
        raise Unexpected("a 2026-07-28 answer with Mcp-Session-Id")
    soak.answered("http", key, call, check_answer(frames_of(r), id_, soak.tally(key)), STATELESS)


async def listen_stream(soak: Soak, http: httpx.AsyncClient, key: str) -> None:
    """A `subscriptions/listen` stream: its acknowledgement, then open for 0.5-2 s, then dropped
    (the client's way to end it)."""
    id_ = soak.new_id(stateless=True)
    notifications = {"toolsListChanged": True, "resourceSubscriptions": [RESOURCE]}
    params = {"notifications": notifications, "_meta": ENVELOPE}
    frame = {"jsonrpc": "2.0", "id": id_, "method": "subscriptions/listen", "params": params}
    headers = {**ACCEPT, "mcp-protocol-version": STATELESS, "mcp-method": "subscriptions/listen"}
    hold = soak.rng.uniform(0.5, 2.0)
    tally = soak.tally(key)
    try:
        async with http.stream("POST", "/mcp", content=json.dumps(frame), headers=headers) as r:
            if r.status_code != 200:
                raise Unexpected(f"subscriptions/listen: HTTP {r.status_code}")
            tally.requests += 1

            async def follow() -> None:
                acknowledged = False
                async for event in sse_events(r):
                    got = json.loads(event[1])
                    meta = got.get("params", {}).get("_meta", {})
                    if "id" in got or meta.get("io.modelcontextprotocol/subscriptionId") != id_:
                        raise Unexpected(f"on a listen stream: {event[1][:200]!r}")
                    if not acknowledged and got.get("method") != "notifications/subscriptions/acknowledged":
                        raise Unexpected(f"a listen stream began with {event[1][:200]!r}")
                    acknowledged = True
                    tally.notifications += 1
                raise Unexpected("a listen stream ended")

            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(follow(), hold)
    except (Unexpected, httpx.HTTPError, ValueError) as e:
        soak.fail(key, f"listen stream: {type(e).__name__}: {e}")


# --------------------------------------------------------------------------------------------------
# Connections with a reader: legacy HTTP+SSE and stdio


class Pipe:
    """Requests by id over a connection whose answers arrive on one stream (legacy SSE, stdio):
    a reader hands each answer to its waiter; an answer nobody waits for is unexpected."""

    def __init__(self, soak: Soak, key: str) -> None:
        self.soak, self.key = soak, key
        self.waiting: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self.closing = False

    def take(self, frame: dict[str, Any]) -> None:
        if "method" in frame and "id" not in frame:
            self.soak.tally(self.key).notifications += 1
            return
        id_ = frame.get("id")
        waiter = self.waiting.pop(id_, None) if "method" not in frame and isinstance(id_, (int, str)) else None
        if waiter is None:
            raise Unexpected(f"a frame nobody waits for: {json.dumps(frame)[:200]}")
        if not waiter.done():
            waiter.set_result(frame)

    def ended(self, why: str) -> None:
        """The stream ended: fails every waiter (and the run, unless the load closed it)."""
        for waiter in self.waiting.values():
            if not waiter.done():
                waiter.set_exception(Unexpected(f"{why} with a request in flight"))
        self.waiting.clear()
        if not self.closing:
            self.soak.fail(self.key, why)

    async def request(
        self, send: Callable[[bytes], Awaitable[None]], method: str, params: dict[str, Any], id_: int | str
    ) -> dict[str, Any]:
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[id_] = waiter
        frame = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        await send(json.dumps(frame).encode())
        answer = await asyncio.wait_for(waiter, TIMEOUT_S)
        if answer.get("jsonrpc") != "2.0":
            raise Unexpected(f"not JSON-RPC 2.0: {json.dumps(answer)[:200]}")
        return answer


async def sse_worker(soak: Soak, base: str, pacer: Pacer) -> None:
    """Legacy HTTP+SSE connections, by turns handshake-era (2024-11-05) and stateless."""
    turn = 0
    while not soak.stop.is_set():
        stateless = turn % 2 == 1
        turn += 1
        key = "sse " + (STATELESS if stateless else "2024-11-05")
        try:
            await sse_connection(soak, base, key, stateless, pacer)
        except (Unexpected, httpx.HTTPError, OSError, ValueError, asyncio.TimeoutError) as e:
            soak.fail(key, f"{type(e).__name__}: {e}")
            await asyncio.sleep(0.2)


async def sse_connection(soak: Soak, base: str, key: str, stateless: bool, pacer: Pacer) -> None:
    tally = soak.tally(key)
    pipe = Pipe(soak, key)
    async with soak.client(base) as http:
        endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def read() -> None:
            try:
                async with http.stream(
                    "GET", "/sse", headers={"accept": "text/event-stream"}, timeout=httpx.Timeout(TIMEOUT_S, read=None)
                ) as r:
                    if r.status_code != 200:
                        raise Unexpected(f"GET /sse: HTTP {r.status_code}")
                    async for event in sse_events(r):
                        if event[0] == "endpoint" and not endpoint.done():
                            endpoint.set_result(event[1].decode())
                        elif event[0] == "message":
                            pipe.take(json.loads(event[1]))
                        else:
                            raise Unexpected(f"SSE event {event[0]!r}")
                pipe.ended("the /sse stream ended")
            except (Unexpected, httpx.HTTPError, ValueError) as e:
                pipe.ended(f"the /sse stream: {type(e).__name__}: {e}")
            if not endpoint.done():
                endpoint.set_exception(Unexpected("no endpoint event"))

        reader = asyncio.create_task(read())
        try:
            path = await asyncio.wait_for(endpoint, TIMEOUT_S)

            async def post(body: bytes) -> None:
                r = await http.post(path, content=body, headers={"content-type": "application/json"})
                if r.status_code != 202:
                    raise Unexpected(f"POST {path}: HTTP {r.status_code} {r.text[:200]}")

            tally.sessions += 1
            if not stateless:
                init = {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "clientInfo": {"name": "soak", "version": "1"},
                }
                await pacer.wait()
                answer = await pipe.request(post, "initialize", init, soak.new_id())
                if answer.get("result", {}).get("protocolVersion") != "2024-11-05":
                    raise Unexpected(f"initialize answered {json.dumps(answer)[:300]}")
                tally.requests += 1
                await post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

            async def one() -> None:
                call = soak.plan(stateless)
                params = (
                    {**call.params, "_meta": {**ENVELOPE, **call.params.get("_meta", {})}} if stateless else call.params
                )
                answer = await pipe.request(post, call.method, params, soak.new_id(stateless))
                soak.answered("http", key, call, answer, key.split()[1])

            for _ in range(soak.rng.randint(3, 24)):
                if soak.stop.is_set():
                    break
                burst = 3 if soak.rng.random() < 0.12 else 1
                await pacer.wait(burst)
                await asyncio.gather(*(one() for _ in range(burst)))
            tally.closed += 1
        finally:
            pipe.closing = True
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


class StdioServer:
    """`everything-mcp stdio --control-port 0`: one connection for the whole run."""

    def __init__(self, proc: asyncio.subprocess.Process, control: str, soak: Soak) -> None:
        self.proc, self.control = proc, control
        self.key = "stdio 2025-06-18"
        self.pipe = Pipe(soak, self.key)
        self.lock = asyncio.Lock()
        self.reader = asyncio.create_task(self.read())

    async def read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while line := await self.proc.stdout.readline():
                self.pipe.take(json.loads(line))
            self.pipe.ended("the server's stdout ended")
        except (Unexpected, ValueError) as e:
            self.pipe.ended(f"stdout: {type(e).__name__}: {e}")

    async def send(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        async with self.lock:
            self.proc.stdin.write(body + b"\n")
            await self.proc.stdin.drain()


async def stdio_open(soak: Soak, server: StdioServer) -> None:
    """The stdio connection's handshake (2025-06-18)."""
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}
    answer = await server.pipe.request(server.send, "initialize", init, soak.new_id())
    if answer.get("result", {}).get("protocolVersion") != "2025-06-18":
        raise Unexpected(f"initialize answered {json.dumps(answer)[:300]}")
    tally = soak.tally(server.key)
    tally.sessions += 1
    tally.requests += 1
    await server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')


async def stdio_call(soak: Soak, server: StdioServer, call: Call | None = None) -> None:
    call = call or soak.plan(stateless=False)
    answer = await server.pipe.request(server.send, call.method, call.params, soak.new_id())
    soak.answered("stdio", server.key, call, answer, "2025-06-18")


async def stdio_worker(soak: Soak, server: StdioServer, pacer: Pacer) -> None:
    while not soak.stop.is_set():
        burst = 3 if soak.rng.random() < 0.15 else 1
        await pacer.wait(burst)
        try:
            await asyncio.gather(*(stdio_call(soak, server) for _ in range(burst)))
        except (Unexpected, OSError, asyncio.TimeoutError) as e:
            soak.fail(server.key, f"{type(e).__name__}: {e}")
            await asyncio.sleep(0.2)
    soak.tally(server.key).closed += 1


# --------------------------------------------------------------------------------------------------
# The lab


async def lab_feed(soak: Soak, server: str, base: str) -> None:
    """Follows `GET /_control/traffic/stream` as the lab page does, for the whole run: every
    record's seq must follow the last, or a `dropped` event must account for the gap."""
    lab = soak.labs[server]
    async with soak.client(base) as http:
        while True:
            try:
                url = f"/_control/traffic/stream?since={lab.last_seq}"
                timeout = httpx.Timeout(TIMEOUT_S, read=None)
                async with http.stream("GET", url, headers={"accept": "text/event-stream"}, timeout=timeout) as r:
                    if r.status_code != 200:
                        raise Unexpected(f"HTTP {r.status_code}")
                    async for event in sse_events(r):
                        lab_event(lab, event)
                raise Unexpected("the stream ended")
            except (Unexpected, httpx.HTTPError, ValueError) as e:
                soak.fail(f"lab {server}", f"traffic stream: {type(e).__name__}: {e}")
            lab.reconnects += 1
            await asyncio.sleep(1)


RECORD_HEAD = re.compile(rb'\{"v":\d+,"seq":(\d+),')
"""How a record's JSON line begins: its seq is read from there rather than by parsing the
whole line (large frames' records are half a MiB; the one parsed in 64 is checked whole)."""


def lab_event(lab: Lab, event: Event) -> None:
    kind, data, id_ = event
    lab.mib += len(data) / MIB
    seq = int(id_ or "0")
    if kind == "dropped":
        missed = int(json.loads(data)["missed"])
        if seq != lab.last_seq + missed:
            raise Unexpected(f"dropped {missed} through {seq} after {lab.last_seq}")
        lab.dropped += missed
    elif kind == "message":
        head = RECORD_HEAD.match(data)
        if head is None or lab.records % 64 == 0:
            record = json.loads(data)
            if not {"seq", "dir", "transport", "conn"} <= record.keys():
                raise Unexpected(f"not a traffic record: {data[:200]!r}")
            said = int(record["seq"])
        else:
            said = int(head.group(1))
        if seq != lab.last_seq + 1 or said != seq:
            raise Unexpected(f"record {said} (event id {seq}) after {lab.last_seq}")
        lab.records += 1
    else:
        raise Unexpected(f"event {kind!r}")
    lab.last_seq = seq


async def lab_report(soak: Soak, server: str, base: str) -> None:
    """`GET /_control/report` once a second, as the page asks while frames arrive: a report, or
    the native command's `501` (its report is computed by the Python package)."""
    async with soak.client(base) as http:
        while True:
            await asyncio.sleep(1)
            try:
                r = await http.get("/_control/report")
                native = r.status_code == 501 and "no report source" in r.text
                if not native and (r.status_code != 200 or "clients" not in r.json()):
                    raise Unexpected(f"HTTP {r.status_code} {r.text[:200]}")
                soak.labs[server].reports += 1
            except (Unexpected, httpx.HTTPError, ValueError) as e:
                soak.fail(f"lab {server}", f"report: {type(e).__name__}: {e}")


async def newest_seq(http: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    """The seq of the newest record (what memory holds plus what its bound dropped: the
    traffic is never cleared during a soak), and the stats it was read from."""
    stats: dict[str, Any] = (await http.get("/_control/traffic/stats")).json()
    return int(stats["kept"]) + int(stats["dropped_total"]), stats


async def feed_reaches(lab: Lab, http: httpx.AsyncClient, timeout: float = TIMEOUT_S) -> bool:
    """Waits until the lab's feed has read every record recorded so far."""
    newest, _ = await newest_seq(http)
    deadline = time.monotonic() + timeout
    while lab.last_seq < newest and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return lab.last_seq >= newest


async def lab_caught_up(soak: Soak, server: str, base: str) -> None:
    """After the load: the feed reaches the newest record within a few seconds."""
    async with soak.client(base) as http:
        if not await feed_reaches(soak.labs[server], http, timeout=10):
            newest, _ = await newest_seq(http)
            last = soak.labs[server].last_seq
            soak.fail(f"lab {server}", f"the feed stopped at seq {last}; the newest record is {newest}")


SMOKE_BELOW_S = 30.0
"""A run shorter than this is a smoke run (the test's 5 s): it has no steady state to hold to
the growth bounds, so it checks every answer, the lab's feed, the rules' hits, the servers' exit
and the absolute RSS bound only; and `--prefill auto` does not fill the lab's memory for it."""


async def late_feed(soak: Soak, base: str) -> None:
    """A second reader of the feed opened mid-run from seq 0, as the lab page is when a person
    opens it on a server that has been serving a while (`--late-feed`): read up to the newest
    record, then closed. Meanwhile `GET /health` every 0.2 s: how long the server made it wait."""
    lab, late = Lab(), soak.late
    healthy = asyncio.Event()

    async def health() -> None:
        async with soak.client(base) as http:
            while not healthy.is_set():
                t = time.monotonic()
                r = await http.get("/health")
                if r.status_code != 200:
                    raise Unexpected(f"/health: HTTP {r.status_code}")
                late["health_max_ms"] = max(late.get("health_max_ms", 0), round((time.monotonic() - t) * 1000))
                await asyncio.sleep(0.2)

    watch = asyncio.create_task(health())
    try:
        async with soak.client(base) as http:
            newest, _ = await newest_seq(http)
            t = time.monotonic()
            timeout = httpx.Timeout(TIMEOUT_S, read=None)
            async with http.stream("GET", "/_control/traffic/stream?since=0", timeout=timeout) as r:
                async for event in sse_events(r):
                    late.setdefault("first_event_s", round(time.monotonic() - t, 2))
                    lab_event(lab, event)
                    if lab.last_seq >= newest:
                        break
            late |= {"caught_up_s": round(time.monotonic() - t, 2), "records": lab.records, "mib": round(lab.mib, 1)}
            late |= {"announced_dropped": lab.dropped, "through": newest}
    except (Unexpected, httpx.HTTPError, ValueError) as e:
        soak.fail("lab http", f"late feed: {type(e).__name__}: {e}")
    finally:
        healthy.set()
        try:
            await watch
        except (Unexpected, httpx.HTTPError) as e:
            soak.fail("lab http", f"/health during the late feed: {type(e).__name__}: {e}")


PREFILL_BATCH = 8
"""Large echoes sent at once by the prefill before it waits for the lab's feed to read them."""


async def prefill(soak: Soak, server: str, base: str, echo: Callable[[Call], Awaitable[None]]) -> int:
    """Large echoes until the lab's memory holds 90% of its byte bound (or has dropped
    records), sent by `PREFILL_BATCH`, each batch once the lab's feed has read the one before (a
    feed far behind is a different test: see docs/reliability.md); returns how many."""
    sent = 0
    async with soak.client(base) as http:
        while True:
            _, stats = await newest_seq(http)
            bound = stats["keep_traffic_bytes"] or 0
            if stats["kept_bytes"] >= 0.9 * bound or stats["dropped_total"] > 0 or sent > 4 * bound // soak.pad_len:
                return sent
            calls = []
            for _ in range(PREFILL_BATCH):
                message = f"prefill-{server}-{sent}-"
                message += soak.pad[: soak.pad_len - len(message)]
                calls.append(Call("echo", "tools/call", tool("echo", message=message), f"Echo: {message}", large=True))
                sent += 1
            await asyncio.gather(*(echo(call) for call in calls))
            if not await feed_reaches(soak.labs[server], http):
                raise Unexpected(f"the lab's feed did not follow the prefill (at seq {soak.labs[server].last_seq})")


# --------------------------------------------------------------------------------------------------
# Servers


def native_binary() -> str:
    """`$EVERYTHING_MCP_BINARY`, else `everything-mcp` on PATH, else the one beside this Python."""
    given = os.environ.get("EVERYTHING_MCP_BINARY") or shutil.which("everything-mcp")
    beside = Path(sys.executable).parent / "everything-mcp"
    found = given or (str(beside) if beside.exists() else None)
    if found is None:
        raise SystemExit("soak: no everything-mcp: set EVERYTHING_MCP_BINARY or put it on PATH")
    with open(found, "rb") as f:
        if f.read(2) == b"#!":
            raise SystemExit(f"soak: {found} is a script, not the native everything-mcp")
    return found


async def announced(proc: asyncio.subprocess.Process, event: str) -> dict[str, Any]:
    """The JSON line a server prints on stderr when it serves (`listening`, `control`)."""
    assert proc.stderr is not None
    while True:
        line = await asyncio.wait_for(proc.stderr.readline(), TIMEOUT_S)
        if not line:
            raise SystemExit(f"soak: the server exited before announcing {event!r} (status {await proc.wait()})")
        with contextlib.suppress(ValueError):
            said: dict[str, Any] = json.loads(line)
            if said.get("event") == event:
                return said


async def drain(proc: asyncio.subprocess.Process, said: list[str]) -> None:
    """The server's later stderr, kept (its first 50 lines)."""
    assert proc.stderr is not None
    while line := await proc.stderr.readline():
        if len(said) < 50:
            said.append(line.decode(errors="replace").rstrip())


async def install_rules(soak: Soak, control: str, server: str) -> None:
    async with soak.client(control) as http:
        r = await http.post("faults", json={"rules": RULES})
        if r.status_code != 201 or len(r.json().get("ids", [])) != len(RULES):
            raise SystemExit(f"soak: the {server} server refused the fault rules: {r.status_code} {r.text}")


async def rule_hits(soak: Soak, control: str) -> dict[str, int]:
    async with soak.client(control) as http:
        return {rule["id"]: rule["hits"] for rule in (await http.get("faults")).json()["rules"]}


def reconcile(soak: Soak, server: str, hits: dict[str, int]) -> dict[str, dict[str, int]]:
    """Each rule's hits against the answers the load saw of it, and for the every-nth rules
    against the calls it made: any difference is unexpected."""
    seen = soak.observed[server]
    out = {}
    for rule in RULES:
        rid = rule["id"]
        want = seen.get(rid, 0)
        if rid in EVERY:
            counter, every = EVERY[rid]
            want = seen.get(counter, 0) // every
            if rid not in UNSEEN and seen.get(rid, 0) != want:
                soak.fail(server, f"fault rule {rid}: the load saw {seen.get(rid, 0)} answers of it, not {want}")
        out[rid] = {"hits": hits.get(rid, -1), "seen": want}
        if hits.get(rid, -1) != want:
            soak.fail(server, f"fault rule {rid}: {hits.get(rid)} hits, the load saw {want}")
    return out


async def stop_http(proc: asyncio.subprocess.Process) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return await asyncio.wait_for(proc.wait(), 5)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        return -9


async def stop_stdio(proc: asyncio.subprocess.Process) -> int:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        return await asyncio.wait_for(proc.wait(), 5)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        return -9


# --------------------------------------------------------------------------------------------------
# The run


@dataclass
class Figures:
    """One server's samples, summarised."""

    start_mib: float
    warm_mib: float
    max_mib: float
    end_mib: float
    growth_mib: float
    fds: dict[str, int] = field(default_factory=dict)
    threads: dict[str, int] = field(default_factory=dict)


def summarise(samples: list[Sample], warm_end: float, window: float) -> Figures:
    """start: before the load; warm: the highest reading of the warm-up's last `window` seconds;
    max and growth: from the warm-up's end on; end: the last reading under load."""
    start, end = samples[0], samples[-1]
    warm = [s for s in samples if warm_end - window <= s.t <= warm_end] or [s for s in samples if s.t <= warm_end][-1:]
    after = [s for s in samples if s.t > warm_end] or [end]
    warm_rss = max(s.rss_kb for s in warm)
    return Figures(
        start_mib=round(start.rss_kb / KIB, 1),
        warm_mib=round(warm_rss / KIB, 1),
        max_mib=round(max(s.rss_kb for s in samples) / KIB, 1),
        end_mib=round(end.rss_kb / KIB, 1),
        growth_mib=round((max(s.rss_kb for s in after) - warm_rss) / KIB, 1),
        fds={"start": start.fds, "warm": max(s.fds for s in warm), "max": max(s.fds for s in samples), "end": end.fds},
        threads={
            "start": start.threads,
            "warm": max(s.threads for s in warm),
            "max": max(s.threads for s in samples),
            "end": end.threads,
        },
    )


def bounds(ns: argparse.Namespace, name: str, fig: Figures) -> list[str]:
    """What of `fig` breaks the bounds of the options (a smoke run: the absolute one only)."""
    broken = []
    if fig.max_mib > ns.rss_max_mib:
        broken.append(f"{name}: RSS reached {fig.max_mib} MiB (bound {ns.rss_max_mib} MiB)")
    if ns.seconds < SMOKE_BELOW_S:
        return broken
    allowed = max(ns.rss_growth_mib, fig.warm_mib * ns.rss_growth_pct / 100)
    if fig.growth_mib > allowed:
        broken.append(f"{name}: RSS grew {fig.growth_mib} MiB after the warm-up (bound {allowed:.1f} MiB)")
    if fig.fds["end"] > fig.fds["warm"] + ns.fd_slack:
        broken.append(f"{name}: {fig.fds['end']} fds at the end, {fig.fds['warm']} after the warm-up")
    if fig.threads["end"] > fig.threads["warm"] + ns.thread_slack:
        broken.append(f"{name}: {fig.threads['end']} threads at the end, {fig.threads['warm']} after the warm-up")
    return broken


async def sampler(pids: dict[str, int], samples: dict[str, list[Sample]], t0: float) -> None:
    while True:
        now = time.monotonic() - t0
        for name, pid in pids.items():
            samples[name].append(sample(pid, now))
        await asyncio.sleep(1.0)


async def run(ns: argparse.Namespace) -> dict[str, Any]:
    soak = Soak(ns)
    binary = native_binary()
    http_proc = await asyncio.create_subprocess_exec(
        binary, "http", "--port", "0", "--session-timeout", str(ns.session_timeout),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdio_proc = await asyncio.create_subprocess_exec(
        binary, "stdio", "--control-port", "0",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        limit=4 * ns.large_bytes + MIB,
    )  # fmt: skip
    background: list[asyncio.Task[None]] = []

    def spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coro)
        background.append(task)
        return task

    said: dict[str, list[str]] = {"http": [], "stdio": []}
    codes: dict[str, int] = {}
    try:
        base = str((await announced(http_proc, "listening"))["base_url"])
        stdio_control = str((await announced(stdio_proc, "control"))["url"])
        bases = {"http": base, "stdio": stdio_control.removesuffix("/").removesuffix("/_control")}
        spawn(drain(http_proc, said["http"]))
        spawn(drain(stdio_proc, said["stdio"]))
        stdio = StdioServer(stdio_proc, stdio_control, soak)
        await stdio_open(soak, stdio)
        for name, at in bases.items():
            await install_rules(soak, f"{at}/_control/", name)
            async with soak.client(at) as http:
                page = await http.get("/_lab/")
                if page.status_code != 200 or "<html" not in page.text.lower():
                    soak.fail(f"lab {name}", f"GET /_lab/: HTTP {page.status_code}")
        pids = {"http": http_proc.pid, "stdio": stdio_proc.pid}
        samples: dict[str, list[Sample]] = {"http": [], "stdio": []}
        t0 = time.monotonic()
        for name, pid in pids.items():
            samples[name].append(sample(pid, 0.0))
        spawn(sampler(pids, samples, t0))
        for name, at in bases.items():
            spawn(lab_feed(soak, name, at))
            spawn(lab_report(soak, name, at))
        prefilled = {"http": 0, "stdio": 0}

        async def prefill_server(name: str, echo: Callable[[Call], Awaitable[None]]) -> None:
            try:
                prefilled[name] = await prefill(soak, name, bases[name], echo)
            except (Unexpected, httpx.HTTPError, ValueError, OSError, asyncio.TimeoutError) as e:
                soak.fail(name, f"prefill: {type(e).__name__}: {e}")

        if ns.prefill == "on" or (ns.prefill == "auto" and ns.seconds >= SMOKE_BELOW_S):
            async with soak.client(base) as http:
                await asyncio.gather(
                    prefill_server("http", lambda call: stateless_call(soak, http, f"http {STATELESS}", call)),
                    prefill_server("stdio", lambda call: stdio_call(soak, stdio, call)),
                )
        prefill_s = time.monotonic() - t0
        warm_end = prefill_s + ns.warmup * ns.seconds
        per_worker = ns.rate / 5
        workers = [
            asyncio.create_task(handshake_worker(soak, base, "2025-11-25", Pacer(per_worker))),
            asyncio.create_task(handshake_worker(soak, base, "2025-03-26", Pacer(per_worker))),
            asyncio.create_task(stateless_worker(soak, base, Pacer(per_worker))),
            asyncio.create_task(sse_worker(soak, base, Pacer(per_worker))),
            asyncio.create_task(stdio_worker(soak, stdio, Pacer(per_worker))),
        ]
        late: asyncio.Task[None] | None = None
        if ns.late_feed:
            await asyncio.sleep(ns.seconds / 2)
            late = asyncio.create_task(late_feed(soak, base))
            await asyncio.sleep(ns.seconds / 2)
        else:
            await asyncio.sleep(ns.seconds)
        soak.stop.set()
        for name, pid in pids.items():  # the end, under load
            samples[name].append(sample(pid, time.monotonic() - t0))
        load_s = time.monotonic() - t0 - prefill_s
        done, stuck = await asyncio.wait(workers, timeout=TIMEOUT_S + 5)
        for task in stuck:
            soak.fail("load", "a worker did not finish")
            task.cancel()
        for task in done:
            if task.exception() is not None:
                soak.fail("load", f"a worker crashed: {task.exception()!r}")
        if late is not None:
            try:
                await asyncio.wait_for(late, TIMEOUT_S)
            except asyncio.TimeoutError:
                soak.fail("lab http", "the late feed did not catch up")
        faults, stats = {}, {}
        for name, at in bases.items():
            await lab_caught_up(soak, name, at)
            faults[name] = reconcile(soak, name, await rule_hits(soak, f"{at}/_control/"))
            async with soak.client(at) as http:
                stats[name] = (await http.get("/_control/traffic/stats")).json()
        after = {name: asdict(sample(pid, time.monotonic() - t0)) for name, pid in pids.items()}
        window = max(1.0, min(5.0, ns.warmup * ns.seconds / 4))
        figures = {name: summarise(s, warm_end, window) for name, s in samples.items()}
        stdio.pipe.closing = True
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        codes = {"http": await stop_http(http_proc), "stdio": await stop_stdio(stdio_proc)}
        await asyncio.gather(stdio.reader, return_exceptions=True)
    finally:
        for proc in (http_proc, stdio_proc):
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    for name, code in codes.items():
        if code != 0:
            soak.fail(name, f"exit status {code} on stop")
    for name, lines in said.items():
        for line in lines:
            if "panicked" in line:
                soak.fail(name, f"stderr: {line}")
    broken = [b for name, fig in figures.items() for b in bounds(ns, name, fig)]
    if ns.samples:
        with open(ns.samples, "w", encoding="utf-8") as out:
            for name, readings in samples.items():
                for reading in readings:
                    out.write(json.dumps({"server": name, **asdict(reading)}) + "\n")
    return {
        "seconds": round(load_s, 1),
        "warmup_s": round(warm_end - prefill_s, 1),
        "prefill": {"calls": prefilled, "seconds": round(prefill_s, 1)},
        "rate": ns.rate,
        "requests": sum(t.requests for t in soak.tallies.values()),
        "expected_errors": sum(t.expected for t in soak.tallies.values()),
        "unexpected_errors": soak.unexpected,
        "transports": {k: asdict(v) for k, v in sorted(soak.tallies.items())},
        "lab": {
            name: asdict(lab)
            | {
                "mib": round(lab.mib, 1),
                "kept": stats[name]["kept"],
                "kept_mib": round(stats[name]["kept_bytes"] / MIB, 1),
            }
            for name, lab in soak.labs.items()
        },
        "late_feed": soak.late or None,
        "faults": faults,
        "servers": {name: asdict(fig) | {"after_load": after[name]} for name, fig in figures.items()},
        "samples": {name: len(s) for name, s in samples.items()},
        "server_stderr": {name: lines[:5] for name, lines in said.items() if lines},
        "bounds": {
            "rss_growth_mib": ns.rss_growth_mib,
            "rss_growth_pct": ns.rss_growth_pct,
            "rss_max_mib": ns.rss_max_mib,
            "fd_slack": ns.fd_slack,
            "thread_slack": ns.thread_slack,
        },
        "smoke": ns.seconds < SMOKE_BELOW_S,
        "broken": broken,
        "failures": soak.failures,
        "ok": soak.unexpected == 0 and not broken,
    }


def columns(cells: tuple[object, ...], first: int = 18, width: int = 10) -> str:
    """A row of the table: the first cell left-aligned, the others right-aligned."""
    return f"{cells[0]!s:<{first}}" + "".join(f" {c!s:>{width}}" for c in cells[1:])


def table(result: dict[str, Any]) -> str:
    """The figures for a person: per transport, the lab feed, per server, the rules' hits."""
    prefill = result["prefill"]
    rows = [
        f"soak: {result['seconds']} s of load after a prefill of {sum(prefill['calls'].values())} large echoes "
        f"({prefill['seconds']} s); warm-up: the prefill and {result['warmup_s']} s; {result['requests']:,} requests"
    ]
    rows.append(
        columns(("transport", "sessions", "closed", "abandoned", "requests", "large", "expected", "unexpected"))
    )
    for key, t in result["transports"].items():
        cells = ("sessions", "closed", "abandoned", "requests", "large", "expected", "unexpected")
        rows.append(columns((key, *(t[c] for c in cells))))
    for name, lab in result["lab"].items():
        rows.append(
            f"lab feed ({name}): {lab['records']:,} records ({lab['mib']} MiB) read, {lab['dropped']:,} announced "
            f"dropped, {lab['reconnects']} reconnects, {lab['reports']} report polls; "
            f"memory holds {lab['kept']:,} records ({lab['kept_mib']} MiB)"
        )
    head = ("server", "RSS start", "warm", "max", "end", "growth", "fds s/w/e", "threads s/w/e")
    rows.append(columns(head, first=8, width=13))
    for name, fig in result["servers"].items():
        fds, threads = fig["fds"], fig["threads"]
        mib = tuple(f"{fig[k]} MiB" for k in ("start_mib", "warm_mib", "max_mib", "end_mib", "growth_mib"))
        counts = tuple("/".join(str(c[k]) for k in ("start", "warm", "end")) for c in (fds, threads))
        rows.append(columns((name, *mib, *counts), first=8, width=13))
    if result["late_feed"]:
        rows.append("late feed (http): " + ", ".join(f"{k} {v}" for k, v in result["late_feed"].items()))
    for server, rules in result["faults"].items():
        rows.append(f"fault hits ({server}): " + ", ".join(f"{r} {v['hits']}" for r, v in rules.items()))
    rows.extend(f"BOUND {b}" for b in result["broken"])
    rows.extend(f"FAILED {f}" for f in result["failures"])
    smoke = " (a smoke run: the growth bounds were not checked)" if result["smoke"] else ""
    rows.append(("soak: ok" if result["ok"] else "soak: FAILED") + smoke)
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load runs (default 60)")
    parser.add_argument("--rate", type=float, default=150.0, help="requests/s of the load in all (default 150)")
    parser.add_argument("--warmup", type=float, default=0.2, help="the warm-up's share of the run (default 0.2)")
    parser.add_argument("--large-every", type=int, default=50, help="every Nth call is a large echo (default 50)")
    parser.add_argument("--large-bytes", type=int, default=256 * KIB, help="its message's size (default 256 KiB)")
    parser.add_argument("--session-timeout", type=float, default=10.0, help="the HTTP server's idle timeout (s)")
    parser.add_argument("--rss-growth-mib", type=float, default=24.0, help="RSS growth allowed after the warm-up")
    parser.add_argument("--rss-growth-pct", type=float, default=25.0, help="... or this % of the warm-up RSS")
    parser.add_argument("--rss-max-mib", type=float, default=256.0, help="RSS never above this (MiB)")
    parser.add_argument("--fd-slack", type=int, default=16, help="fds allowed at the end above the warm-up's")
    parser.add_argument("--thread-slack", type=int, default=4, help="threads allowed above the warm-up's")
    parser.add_argument(
        "--prefill",
        choices=("auto", "on", "off"),
        default="auto",
        help=f"fill the lab's memory before the load (auto: for runs of {SMOKE_BELOW_S:g} s or more)",
    )
    parser.add_argument(
        "--late-feed",
        action="store_true",
        help="halfway through, open a second lab feed from seq 0, as a lab page opened late (docs/reliability.md)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", metavar="FILE", help="write every reading of the servers to FILE (JSON lines)")
    ns = parser.parse_args(argv)
    result = asyncio.run(run(ns))
    print(table(result), flush=True)
    print(json.dumps(result, separators=(",", ":")), flush=True)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
