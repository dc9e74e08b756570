"""The machinery of the bad-input matrix (`tests/test_bad_input.py`): one driver per transport
that sends a frame's exact bytes over a real pipe or loopback socket and collects what the server
answered, readers of what the server recorded (its `--record` file, or `server.traffic`), raw
HTTP/1.1 over sockets for what `httpx` cannot send (bodies the server cuts short, half-closed and
stalled connections), and the Markdown table of the matrix for docs/reliability.md."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from everything_mcp import Server

LIMIT = 65536
"""`max_message_bytes` of every server of the matrix: small, so the oversized rows stay fast."""

WAIT = 10.0
"""Upper bound of every wait (each normally takes milliseconds)."""

ANSWER_WAIT = 5.0
"""How long a row waits for an answer it expects (a server that never answers fails the row
in this time rather than in `WAIT`)."""

RSS_SLACK_KIB = 32 * 1024
"""How far a CLI server's resident memory may stay above its level before the big inputs."""

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
JSON = "application/json"

ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    # The tasks extension is declared so that the tasks methods reach their parameter checks.
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}
"""The `_meta` envelope every stateless request of the matrix carries."""

TRANSPORTS = ("stdio", "http", "stateless", "sse")
"""The matrix's columns: the CLI's stdio, Streamable HTTP in the handshake era (a session,
2025-11-25), Streamable HTTP in the stateless era (2026-07-28, no session), legacy HTTP+SSE."""


def encode(message: Any) -> bytes:
    """`message` as compact JSON bytes (non-ASCII kept as UTF-8)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT, what: str = "condition") -> None:
    """Polls `predicate` until it holds; for states that no event announces (a file the server
    appends to, a process's memory)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


# --- frames and what a conformant server answers -------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One frame's bytes, and the routing headers a 2026-07-28 POST of it carries."""

    body: bytes
    method: str | None = None
    name: str | None = None


def frame(message: Any, era: str, envelope: bool = True) -> Frame:
    """`message` (JSON-able, or bytes sent as they are) as a frame of `era`: in the stateless
    era a request with object (or no) params gets the `_meta` envelope (unless `envelope` is
    false), and the POST names its method and `params.name`/`uri`/`taskId` (when a string) in
    headers, as a 2026 client does."""
    if isinstance(message, bytes):
        return Frame(message)
    method = name = None
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        method = message["method"]
        params = message.get("params", {})
        if era == "stateless" and envelope and "id" in message and isinstance(params, dict):
            params = dict(params or {})
            params["_meta"] = {**ENVELOPE, **params.get("_meta", {})}
            message = {**message, "params": params}
        if isinstance(params, dict):
            named = [params.get(k) for k in ("name", "uri", "taskId") if isinstance(params.get(k), str)]
            name = named[0] if named else None
    return Frame(encode(message), method if era == "stateless" else None, name if era == "stateless" else None)


def error(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error answer, without `data` when there is none."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}


@dataclass(frozen=True)
class Expect:
    """What a conformant server answers a frame.

    `layer` says where the answer travels: `parse` (the frame was refused before any method
    ran: over HTTP a 400 whose body is the error), `dispatch` (a method's answer: on the
    request's stream, with the stateless era's status), `none` (a frame nobody answers: 202 over
    HTTP), `oversize` (over `max_message_bytes`: `-32600` on stdio, 413 over HTTP). `answer` is
    the exact JSON-RPC message, or a function of the era (results differ by era)."""

    layer: str
    answer: dict[str, Any] | Callable[[str], dict[str, Any]] | None = None

    def message(self, era: str) -> dict[str, Any] | None:
        return self.answer(era) if callable(self.answer) else self.answer


def parse(answer: dict[str, Any]) -> Expect:
    return Expect("parse", answer)


def dispatch(answer: dict[str, Any] | Callable[[str], dict[str, Any]]) -> Expect:
    return Expect("dispatch", answer)


NOTHING = Expect("none")
OVERSIZE = Expect("oversize")


def result(id: Any, value: dict[str, Any]) -> Callable[[str], dict[str, Any]]:
    """A result answer as each era shapes it (the stateless era adds `resultType` and the server
    in `_meta`)."""

    def shaped(era: str) -> dict[str, Any]:
        if era == "stateless":
            meta = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
            return {"jsonrpc": "2.0", "id": id, "result": {**value, "resultType": "complete", "_meta": meta}}
        return {"jsonrpc": "2.0", "id": id, "result": value}

    return shaped


SERVER_INFO: dict[str, Any] = {}
"""The server's `serverInfo` (filled in by the first driver that starts)."""


def echo(id: Any, text: str) -> dict[str, Any]:
    """A `tools/call` of the catalog's `echo`."""
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": text}},
    }


def echoed(id: Any, text: str) -> Callable[[str], dict[str, Any]]:
    """`echo`'s answer."""
    return result(id, {"content": [{"type": "text", "text": f"Echo: {text}"}]})


def oversize_answer(era: str, size: int) -> dict[str, Any]:
    """The refusal of a frame of `size` bytes over `LIMIT`."""
    if era == "stdio":
        return error(None, -32600, f"Invalid Request: message of {size} bytes exceeds the {LIMIT}-byte limit")
    return error(None, -32000, f"Payload Too Large: request body exceeds the {LIMIT}-byte limit")


def http_status(expect: Expect, era: str, answer: dict[str, Any] | None) -> int:
    """The HTTP status a conformant server answers with, per the README's table (handshake era)
    and docs/eras.md (stateless era); legacy SSE POSTs are 202 once taken as JSON-RPC."""
    if expect.layer == "oversize":
        return 413
    if expect.layer == "parse":
        return 400
    if era == "sse" or expect.layer == "none":
        return 202
    if era == "http":
        return 200
    code = (answer or {}).get("error", {}).get("code")
    return {-32601: 404, -32602: 400, -32600: 400, -32020: 400, -32021: 400, -32022: 400}.get(code, 200)


def recorded_raw(body: bytes) -> str:
    """A frame's `raw` as the traffic format records it: invalid UTF-8 replaced, and over the
    limit only its first 1,024 bytes."""
    return (body[:1024] if len(body) > LIMIT else body).decode("utf-8", "replace")


# --- the servers' records ------------------------------------------------------------------


class FileRecords:
    """A `--record` file, read from a byte offset (a mark)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, mark: int) -> list[dict[str, Any]]:
        with self.path.open("rb") as f:
            f.seek(mark)
            data = f.read()
        # A record is one write of one line: a line without its newline is still being written.
        lines = data.split(b"\n")[:-1]
        return [json.loads(line) for line in lines]


class MemoryRecords:
    """An in-process server's `traffic`, from a sequence number (a mark)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.last = 0

    def mark(self) -> int:
        for r in self.server.traffic_since(self.last):
            self.last = max(self.last, r.seq)
        return self.last

    def since(self, mark: int) -> list[dict[str, Any]]:
        keys = ("seq", "dir", "kind", "raw", "error", "http", "id", "method", "conn")
        return [{k: getattr(r, k) for k in keys} for r in self.server.traffic_since(mark)]


Records = FileRecords | MemoryRecords


def settled(records: Records, mark: int, count: int) -> list[dict[str, Any]]:
    """The records after `mark` once there are `count` of them. A frame can reach the client a
    moment before its record is written (the recorder hands a frame to the transport, then writes
    its record: a few stdio answers in a thousand are read first), so a row waits for the records
    rather than racing them; a record that never comes fails the row."""
    wait_until(lambda: len(records.since(mark)) >= count, what=f"{count} records")
    return records.since(mark)


def assert_recorded(records: list[dict[str, Any]], sent: Sequence[bytes], received: Sequence[str]) -> None:
    """Every frame sent is recorded `in` (its raw text), every frame received `out`, in order,
    and nothing else: no frame lost, none invented."""
    ins = [r["raw"] for r in records if r["dir"] == "in"]
    outs = [r["raw"] for r in records if r["dir"] == "out"]
    assert ins == [recorded_raw(b) for b in sent], "in-records differ from the frames sent"
    assert outs == list(received), "out-records differ from the frames received"


def rss_kib(pid: int) -> int:
    """A process's resident memory, from /proc."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


# --- raw HTTP/1.1 over a socket ------------------------------------------------------------


def request_bytes(method: str, path: str, headers: dict[str, str], body: bytes = b"", port: int = 0) -> bytes:
    """An HTTP/1.1 request with a Content-Length."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@dataclass
class HttpReply:
    """What came back on a socket: the status, headers (lower-case), the body as far as it came
    (de-chunked) and whether the message was complete."""

    status: int
    headers: dict[str, str]
    body: bytes
    complete: bool


def read_endpoint(sock: socket.socket) -> str:
    """Reads a legacy `GET /sse` response up to its `endpoint` event; returns the endpoint."""
    buf = b""
    while b"sessionId=" not in buf or b"\n\n" not in buf.split(b"sessionId=", 1)[1]:
        data = sock.recv(4096)
        assert data, f"the /sse stream ended before its endpoint event: {buf!r}"
        buf += data
    return buf.split(b"data: ", 1)[1].split(b"\n", 1)[0].decode().strip()


def read_reply(sock: socket.socket, timeout: float = WAIT) -> HttpReply:
    """Reads one HTTP/1.1 response: up to its Content-Length, its last chunk, or EOF."""
    sock.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            raise AssertionError(f"the connection closed before a response: {buf!r}")
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    status = int(status_line.split()[1])

    def more() -> bytes:
        try:
            return sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            return b""

    if "content-length" in headers:
        size = int(headers["content-length"])
        while len(rest) < size:
            data = more()
            if not data:
                return HttpReply(status, headers, rest, False)
            rest += data
        return HttpReply(status, headers, rest[:size], True)
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                data = more()
                if not data:
                    return HttpReply(status, headers, body, False)
                rest += data
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                data = more()
                if not data:
                    return HttpReply(status, headers, body + rest[:size], False)
                rest += data
            if size == 0:
                return HttpReply(status, headers, body, True)
            body += rest[:size]
            rest = rest[size + 2 :]
    while data := more():
        rest += data
    return HttpReply(status, headers, rest, True)


def exchange(port: int, request: bytes) -> HttpReply:
    """Sends `request` while reading the answer, as a client that keeps writing a body the server
    has already refused: the writer may meet a closed connection (EPIPE), the answer must still
    arrive."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        failures: list[OSError] = []

        def write() -> None:
            try:
                sock.sendall(request)
            except OSError as e:  # the server refused the rest of the body and closed
                failures.append(e)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            return read_reply(sock)
        finally:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            writer.join(WAIT)


def sse_datas(text: str) -> list[str]:
    """The `data` of every SSE event of `text` that has any (priming events have none)."""
    datas = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[len("data:") :].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")]
        if data and any(data):
            datas.append("\n".join(data))
    return datas


def sse_ids(text: str) -> list[str]:
    """The event ids of `text`, in order."""
    return [line[len("id: ") :] for line in text.replace("\r\n", "\n").split("\n") if line.startswith("id: ")]


# --- drivers: one per transport ------------------------------------------------------------


@dataclass
class Reply:
    """A frame's answer: the HTTP status (None on stdio) and the JSON-RPC frames that came back,
    as their exact text."""

    status: int | None
    frames: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[Any]:
        return [json.loads(f) for f in self.frames]


class Driver:
    """A server on one transport, with one client connection (a session where the era has
    them) that the rows share."""

    name: str
    era: str
    records: Records
    pid: int | None = None
    baseline_kib: int | None = None

    def send(self, frame: Frame, answers: int) -> Reply:
        """Sends `frame`; collects `answers` frames where they come on a stream of their own."""
        raise NotImplementedError

    def echo(self, tag: str) -> tuple[Frame, Reply]:
        """A valid request, `echo`, tagged; its frame and its answer."""
        f = frame(echo(f"echo-{tag}", tag), self.era)
        return f, self.send(f, 1)

    def assert_serves(self, tag: str) -> tuple[Frame, Reply]:
        """The server answers a valid request correctly (and nothing else comes with it)."""
        f, reply = self.echo(tag)
        answer = echoed(f"echo-{tag}", tag)(self.era)
        assert reply.messages == [answer], reply
        return f, reply

    def assert_memory_flat(self) -> None:
        """A CLI server's resident memory is back near its level before the big inputs."""
        if self.pid is None or self.baseline_kib is None:
            return
        rss = rss_kib(self.pid)
        assert rss <= self.baseline_kib + RSS_SLACK_KIB, f"VmRSS {rss} KiB, was {self.baseline_kib} KiB"

    def close(self) -> None:
        raise NotImplementedError


def drain(stream: Any, sink: list[bytes]) -> threading.Thread:
    """Reads `stream` to its end in the background (a full stderr pipe would block the server)."""

    def pump() -> None:
        for line in stream:
            sink.append(line)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


class StdioDriver(Driver):
    """`everything-mcp stdio --record FILE --max-message-bytes LIMIT`, initialized in the handshake
    era, frames written as lines."""

    name = era = "stdio"

    def __init__(self, command: list[str], record: Path, *extra: str, initialize: bool = True) -> None:
        self.proc = subprocess.Popen(
            [*command, "stdio", "--record", str(record), "--max-message-bytes", str(LIMIT), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.pid = self.proc.pid
        self.records = FileRecords(record)
        self.buffer = b""
        self.stderr: list[bytes] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        drain(self.proc.stderr, self.stderr)
        if initialize:
            init = {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "bad-input", "version": "1"},
            }
            self.write(encode({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init}))
            SERVER_INFO.update(json.loads(self.read())["result"]["serverInfo"])
            self.write(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            assert json.loads(self.read()) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

    # stdout is read here, never by a thread: a test closes it (a reader blocked in `read` would
    # keep the pipe open, and hold the file's lock against `close`).

    def _fill(self, timeout: float) -> bool:
        """Reads what stdout has within `timeout`; False when nothing came."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        readable, _, _ = select.select([fd], [], [], timeout)
        if not readable:
            return False
        chunk = os.read(fd, 1 << 20)
        assert chunk, "the server closed stdout"
        self.buffer += chunk
        return True

    def write(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = ANSWER_WAIT) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if not self._fill(max(0.0, deadline - time.monotonic())):
                raise AssertionError(f"no answer within {timeout} s")
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def silent(self, timeout: float) -> bool:
        """Whether nothing arrives on stdout for `timeout` seconds (for a frame still incomplete)."""
        return not self.buffer and not self._fill(timeout)

    def send(self, frame: Frame, answers: int) -> Reply:
        while self._fill(0):
            pass
        assert not self.buffer, f"frames nobody asked for arrived after the previous row: {self.buffer[:300]!r}"
        self.write(frame.body)
        return Reply(None, [self.read() for _ in range(answers)])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                if f is not None:
                    f.close()


def reply_of(status: int, content_type: str, text: str) -> Reply:
    """An HTTP answer's frames: its JSON body, or the data of its SSE events."""
    if content_type.startswith("text/event-stream"):
        return Reply(status, sse_datas(text))
    return Reply(status, [text] if text else [])


class HttpDriver(Driver):
    """An in-process `Server(max_message_bytes=LIMIT)` serving HTTP; `era` "http" posts on a
    2025-11-25 session it initializes (unless told not to), "stateless" posts 2026-07-28 requests
    without one."""

    def __init__(self, era: str, initialize: bool = True) -> None:
        self.name = self.era = era
        self.server = Server(max_message_bytes=LIMIT)
        self.url = self.server.start_http()
        self.base = self.server.base_url or ""
        self.port = int(self.base.rsplit(":", 1)[1])
        self.records = MemoryRecords(self.server)
        self.client = httpx.Client(timeout=WAIT)
        self.session: str | None = None
        if era == "http" and initialize:
            init = {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "bad-input", "version": "1"},
            }
            r = self.client.post(
                self.url,
                content=encode({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init}),
                headers={"accept": ACCEPT, "content-type": JSON},
            )
            assert r.status_code == 200, r.text
            self.session = r.headers["mcp-session-id"]
            SERVER_INFO.update(json.loads(sse_datas(r.text)[0])["result"]["serverInfo"])
            note = encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
            assert self.client.post(self.url, content=note, headers=self.headers(Frame(note))).status_code == 202
        elif era == "stateless":
            discover = frame({"jsonrpc": "2.0", "id": "discover", "method": "server/discover"}, "stateless")
            r = self.client.post(self.url, content=discover.body, headers=self.headers(discover))
            assert r.status_code == 200, r.text
            SERVER_INFO.update(r.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"])

    def headers(self, frame: Frame) -> dict[str, str]:
        h = {"accept": ACCEPT, "content-type": JSON}
        if self.era == "http":
            assert self.session is not None
            h["mcp-session-id"] = self.session
            h["mcp-protocol-version"] = HANDSHAKE
        else:
            h["mcp-protocol-version"] = STATELESS
            if frame.method is not None:
                h["mcp-method"] = frame.method
            if frame.name is not None:
                h["mcp-name"] = frame.name
        return h

    def send(self, frame: Frame, answers: int) -> Reply:
        if len(frame.body) > LIMIT:  # a body the server stops reading: raw, see `exchange`
            reply = exchange(self.port, request_bytes("POST", "/mcp", self.headers(frame), frame.body, self.port))
            return reply_of(reply.status, reply.headers.get("content-type", ""), reply.body.decode())
        r = self.client.post(self.url, content=frame.body, headers=self.headers(frame))
        return reply_of(r.status_code, r.headers.get("content-type", ""), r.text)

    def close(self) -> None:
        self.client.close()
        self.server.stop()


class SseDriver(Driver):
    """`everything-mcp sse --record FILE --max-message-bytes LIMIT`: one `GET /sse` stream read in
    the background, frames POSTed to the endpoint it names, initialized in the handshake era."""

    name = era = "sse"

    def __init__(self, command: list[str], record: Path, initialize: bool = True) -> None:
        self.proc = subprocess.Popen(
            [*command, "sse", "--port", "0", "--record", str(record), "--max-message-bytes", str(LIMIT)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.pid = self.proc.pid
        assert self.proc.stderr is not None
        listening = json.loads(self.proc.stderr.readline())
        self.stderr: list[bytes] = []
        drain(self.proc.stderr, self.stderr)
        self.base = listening["base_url"]
        self.port = int(self.base.rsplit(":", 1)[1])
        self.records = FileRecords(record)
        self.client = httpx.Client(base_url=self.base, timeout=WAIT)
        self.events: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self.stream_client = httpx.Client(base_url=self.base, timeout=httpx.Timeout(WAIT, read=None))
        threading.Thread(target=self._listen, daemon=True).start()
        kind, self.endpoint = self.next_event()
        assert kind == "endpoint" and self.endpoint.startswith("/message?sessionId="), self.endpoint
        if initialize:
            self.initialize()

    def initialize(self) -> None:
        init = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "bad-input", "version": "1"}}
        assert (
            self.post(encode({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init})).status_code
            == 202
        )
        SERVER_INFO.update(json.loads(self.next_event()[1])["result"]["serverInfo"])
        assert self.post(encode({"jsonrpc": "2.0", "method": "notifications/initialized"})).status_code == 202
        assert json.loads(self.next_event()[1])["method"] == "notifications/tools/list_changed"

    def _listen(self) -> None:
        with (
            contextlib.suppress(httpx.HTTPError),
            self.stream_client.stream("GET", "/sse", headers={"accept": "text/event-stream"}) as stream,
        ):
            event: dict[str, str] = {}
            for line in stream.iter_lines():
                if line:
                    key, _, value = line.partition(":")
                    event[key] = value.removeprefix(" ")
                elif "data" in event:
                    self.events.put((event.get("event", "message"), event["data"]))
                    event = {}
        self.events.put(None)

    def next_event(self, timeout: float = ANSWER_WAIT) -> tuple[str, str]:
        try:
            event = self.events.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event on the /sse stream within {timeout} s") from None
        assert event is not None, "the /sse stream ended"
        return event

    def post(self, body: bytes) -> httpx.Response:
        return self.client.post(self.endpoint, content=body, headers={"content-type": JSON})

    def send(self, frame: Frame, answers: int) -> Reply:
        stray = [] if self.events.empty() else [self.events.get_nowait()]
        assert not stray, f"events nobody asked for arrived after the previous row: {stray}"
        if len(frame.body) > LIMIT:
            raw = exchange(
                self.port, request_bytes("POST", self.endpoint, {"content-type": JSON}, frame.body, self.port)
            )
            status, text = raw.status, raw.body.decode()
        else:
            r = self.post(frame.body)
            status, text = r.status_code, r.text
        if status != 202:
            return Reply(status, [text] if text else [])
        assert text == "Accepted", text
        return Reply(status, [self.next_event()[1] for _ in range(answers)])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(WAIT)
        self.client.close()
        self.stream_client.close()
        if self.proc.stderr:
            self.proc.stderr.close()


# --- subprocess helpers for the rows that need a server of their own -----------------------


@contextlib.contextmanager
def cli_http(command: list[str], record: Path, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`everything-mcp http --port 0 --record FILE ARGS`; yields the process and its base URL."""
    proc = subprocess.Popen(
        [*command, "http", "--port", "0", "--record", str(record), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        listening = json.loads(proc.stderr.readline())
        sink: list[bytes] = []
        drain(proc.stderr, sink)
        yield proc, listening["base_url"]
    finally:
        proc.terminate()
        proc.wait(WAIT)
        proc.stderr.close()


# --- the docs table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One row of the matrix as docs/reliability.md shows it: what is sent, what a conformant
    server answers, and per column whether the server does (`ok`), does not (`bug`: the row is
    an xfail), does otherwise on purpose (`differs`: an xfail too, explained under the table),
    or the row does not apply (absent)."""

    group: str
    id: str
    input: str
    expect: str
    cells: dict[str, str]


def markdown(rows: Sequence[Row], columns: Sequence[str]) -> str:
    """The Markdown table of `rows`."""
    out = ["| group | row | input | a conformant server answers | " + " | ".join(columns) + " |"]
    out.append("| --- | --- | --- | --- | " + " | ".join("---" for _ in columns) + " |")
    mark = {"ok": "pass", "bug": "**bug**", "differs": "**differs**"}
    for r in rows:
        cells = [mark.get(r.cells.get(c, ""), "n/a") for c in columns]
        out.append(f"| {r.group} | `{r.id}` | {r.input} | {r.expect} | " + " | ".join(cells) + " |")
    return "\n".join(out)
