#!/usr/bin/env python3
"""Side-by-side check: the reference `@modelcontextprotocol/server-everything` and our server, same script.

Both servers run over stdio and are driven by the same minimal raw JSON-RPC driver (newline-delimited
JSON, a timeout on every read). Every response is normalised (timestamps, UUIDs, session ids and image
base64 masked), then compared structurally. Each difference is either covered by an entry of
``ALLOWED`` -- the documented, deliberate differences (see docs/side-by-side.md) -- or it is reported
as a real difference.

    python -m bench.side_by_side [--install] [--json]

Exit status: 0 when every difference is an allowed one, 1 when a real difference was found, 2 when the
reference is not installed (run with --install) or a server could not be driven.
"""

from __future__ import annotations

import argparse
import base64
import difflib
import fnmatch
import gzip
import json
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REF_PACKAGE = "@modelcontextprotocol/server-everything"
REF_VERSION = "2026.8.31"
ROOT = Path(__file__).resolve().parent.parent
REF_PREFIX = ROOT / ".cache" / "reference"
REF_ENTRY = REF_PREFIX / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
INSTALL_CMD = ["npm", "install", "--prefix", str(REF_PREFIX), "--no-audit", "--no-fund", f"{REF_PACKAGE}@{REF_VERSION}"]

PROTOCOL_VERSION = "2025-11-25"
READ_TIMEOUT = 15.0
"""Upper bound of every single read (the slowest item, the long-running operation, takes 0.1 s)."""

FULL_CAPS = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}},
}
"""Every client capability the reference reacts to: the capability-gated tools, and the client-hosted
task demos (`trigger-*-async`), which need the task-augmented requests declared."""

LAST_TASK = "<the last task created>"
"""A `taskId` parameter to replace with the id of the last task a `CreateTaskResult` returned."""


def reference_cmd() -> list[str]:
    return ["node", str(REF_ENTRY), "stdio"]


def our_cmd() -> list[str]:
    return [sys.executable, "-m", "everything_mcp", "stdio", "--tick-ms", "50"]


def reference_installed() -> bool:
    return REF_ENTRY.is_file() and shutil.which("node") is not None


def install_reference() -> None:
    if shutil.which("npm") is None:
        raise SystemExit("npm not found: install Node.js 20+ (with npm) first")
    REF_PREFIX.mkdir(parents=True, exist_ok=True)
    subprocess.run(INSTALL_CMD, check=True, timeout=600)


# --------------------------------------------------------------------------------------------------
# The driver


class DriverError(RuntimeError):
    pass


class StdioPeer:
    """One server subprocess, spoken to in raw newline-delimited JSON-RPC."""

    def __init__(self, cmd: list[str]) -> None:
        self.cmd = cmd
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: list[bytes] = []
        self._next_id = 0
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def _recv(self, deadline: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise DriverError(f"{self.cmd[0]}: no message within {READ_TIMEOUT} s") from None
        if line is None:
            tail = b"".join(self.stderr[-20:]).decode(errors="replace")
            raise DriverError(f"{self.cmd[0]}: the server closed stdout; stderr tail:\n{tail}")
        message: dict[str, Any] = json.loads(line)
        return message

    def _answer(self, request: dict[str, Any]) -> None:
        """Answer a server->client request trivially."""
        self.server_requests.append(request)
        method = request.get("method")
        result: dict[str, Any]
        if method == "roots/list":
            result = {"roots": [{"uri": "file:///tmp/side-by-side", "name": "side-by-side"}]}
        elif method == "sampling/createMessage":
            result = {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "side-by-side"}
        elif method == "elicitation/create":
            result = {"action": "decline"}
        elif method == "ping":
            result = {}
        else:
            self.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}})
            return
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; wait (skipping notifications, answering server requests) for its response."""
        self._next_id += 1
        rid = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + READ_TIMEOUT
        while True:
            msg = self._recv(deadline)
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif "method" in msg:
                self.notifications.append(msg)
            elif msg.get("id") == rid:
                return msg
            else:
                raise DriverError(f"{self.cmd[0]}: unexpected message while waiting for id {rid}: {msg}")

    def drain(self, seconds: float) -> None:
        """Read for a while, keeping notifications and answering server requests."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            if line is None:
                raise DriverError(f"{self.cmd[0]}: the server closed stdout")
            msg = json.loads(line)
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif "method" in msg:
                self.notifications.append(msg)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)


# --------------------------------------------------------------------------------------------------
# The script both servers get


def call(name: str, arguments: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return "tools/call", params


def complete(ref: dict[str, Any], name: str, value: str, context: dict[str, str] | None = None) -> tuple[str, Any]:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = {"arguments": context}
    return "completion/complete", params


PROMPT = {"type": "ref/prompt", "name": "completable-prompt"}
RESOURCE_PROMPT = {"type": "ref/prompt", "name": "resource-prompt"}
TEXT_TEMPLATE = {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}
BLOB_TEMPLATE = {"type": "ref/resource", "uri": "demo://resource/dynamic/blob/{resourceId}"}
DATA_URL = "data:text/plain;base64,SGVsbG8gd29ybGQ="

PROMPT_ARGS: dict[str, dict[str, str]] = {
    "simple-prompt": {},
    "args-prompt": {"city": "Paris", "state": "TX"},
    "completable-prompt": {"department": "Engineering", "name": "Alice"},
    "resource-prompt": {"resourceType": "Text", "resourceId": "2"},
}
"""Arguments for prompts/get of every listed prompt (a prompt not named here is got without arguments)."""

BASIC_ITEMS: list[tuple[str, str, Any]] = [
    ("tools/list", "tools/list", {}),
    ("simulate-research-query without a task", *call("simulate-research-query", {"topic": "rust"})),
    (
        "simulate-research-query (task)",
        "tools/call",
        {"name": "simulate-research-query", "arguments": {"topic": "rust"}, "task": {"ttl": 60000}},
    ),
    ("tasks/result of the research", "tasks/result", {"taskId": LAST_TASK}),
    ("prompts/list", "prompts/list", {}),
    ("resources/templates/list", "resources/templates/list", {}),
    ("resources/list", "resources/list", {}),
    ("complete completable-prompt department ''", *complete(PROMPT, "department", "")),
    ("complete completable-prompt department 'E'", *complete(PROMPT, "department", "E")),
    (
        "complete completable-prompt name 'A' (Engineering)",
        *complete(PROMPT, "name", "A", {"department": "Engineering"}),
    ),
    ("complete completable-prompt name '' (Sales)", *complete(PROMPT, "name", "", {"department": "Sales"})),
    ("complete completable-prompt name '' (no context)", *complete(PROMPT, "name", "")),
    ("complete resource-prompt resourceType ''", *complete(RESOURCE_PROMPT, "resourceType", "")),
    ("complete resource-prompt resourceType 'T'", *complete(RESOURCE_PROMPT, "resourceType", "T")),
    ("complete resource-prompt resourceId '1'", *complete(RESOURCE_PROMPT, "resourceId", "1")),
    ("complete resource-prompt resourceId 'x'", *complete(RESOURCE_PROMPT, "resourceId", "x")),
    ("complete text template resourceId '1'", *complete(TEXT_TEMPLATE, "resourceId", "1")),
    ("complete text template resourceId '0'", *complete(TEXT_TEMPLATE, "resourceId", "0")),
    ("complete blob template resourceId '7'", *complete(BLOB_TEMPLATE, "resourceId", "7")),
    ("echo", *call("echo", {"message": "hello, side by side"})),
    ("get-sum 2+3", *call("get-sum", {"a": 2, "b": 3})),
    ("get-sum 2+3.5", *call("get-sum", {"a": 2, "b": 3.5})),
    ("get-sum 0.1+0.2", *call("get-sum", {"a": 0.1, "b": 0.2})),
    ("get-sum -1+1e21", *call("get-sum", {"a": -1, "b": 1e21})),
    ("get-sum 1e-7+0", *call("get-sum", {"a": 1e-7, "b": 0})),
    ("get-annotated-message error", *call("get-annotated-message", {"messageType": "error"})),
    ("get-annotated-message success", *call("get-annotated-message", {"messageType": "success"})),
    ("get-annotated-message debug", *call("get-annotated-message", {"messageType": "debug"})),
    (
        "get-annotated-message error+image",
        *call("get-annotated-message", {"messageType": "error", "includeImage": True}),
    ),
    (
        "get-annotated-message success+image",
        *call("get-annotated-message", {"messageType": "success", "includeImage": True}),
    ),
    (
        "get-annotated-message debug+image",
        *call("get-annotated-message", {"messageType": "debug", "includeImage": True}),
    ),
    ("get-resource-links (default)", *call("get-resource-links", {})),
    ("get-resource-links 3", *call("get-resource-links", {"count": 3})),
    ("get-resource-links 2.5", *call("get-resource-links", {"count": 2.5})),
    ("get-resource-reference Text 1", *call("get-resource-reference", {"resourceType": "Text", "resourceId": 1})),
    ("get-resource-reference Blob 2", *call("get-resource-reference", {"resourceType": "Blob", "resourceId": 2})),
    ("get-resource-reference Text 0", *call("get-resource-reference", {"resourceType": "Text", "resourceId": 0})),
    ("get-resource-reference Text 1.5", *call("get-resource-reference", {"resourceType": "Text", "resourceId": 1.5})),
    ("get-structured-content New York", *call("get-structured-content", {"location": "New York"})),
    ("get-structured-content Chicago", *call("get-structured-content", {"location": "Chicago"})),
    ("get-structured-content Los Angeles", *call("get-structured-content", {"location": "Los Angeles"})),
    ("get-tiny-image", *call("get-tiny-image", {})),
    ("trigger-long-running-operation 0.1/2", *call("trigger-long-running-operation", {"duration": 0.1, "steps": 2})),
    ("toggle-simulated-logging on", *call("toggle-simulated-logging", {})),
    ("toggle-simulated-logging off", *call("toggle-simulated-logging", {})),
    ("toggle-subscriber-updates on", *call("toggle-subscriber-updates", {})),
    ("toggle-subscriber-updates off", *call("toggle-subscriber-updates", {})),
    ("gzip-file-as-resource data: (link)", *call("gzip-file-as-resource", {"name": "hello.txt.gz", "data": DATA_URL})),
    (
        "gzip-file-as-resource data: (resource)",
        *call("gzip-file-as-resource", {"name": "hello2.txt.gz", "data": DATA_URL, "outputType": "resource"}),
    ),
    ("resources/list after gzip", "resources/list", {}),
    ("resources/read session resource", "resources/read", {"uri": "demo://resource/session/hello.txt.gz"}),
    ("resources/read dynamic text 1", "resources/read", {"uri": "demo://resource/dynamic/text/1"}),
    ("resources/read dynamic blob 2", "resources/read", {"uri": "demo://resource/dynamic/blob/2"}),
    ("error: unknown tool", *call("no-such-tool", {})),
    ("error: prompts/get unknown prompt", "prompts/get", {"name": "no-such-prompt", "arguments": {}}),
    (
        "error: prompts/get resource-prompt bad type",
        "prompts/get",
        {"name": "resource-prompt", "arguments": {"resourceType": "Nope", "resourceId": "1"}},
    ),
    ("error: prompts/get args-prompt without city", "prompts/get", {"name": "args-prompt", "arguments": {}}),
    ("error: resources/read unknown uri", "resources/read", {"uri": "demo://resource/nope"}),
    ("error: resources/read dynamic text 0", "resources/read", {"uri": "demo://resource/dynamic/text/0"}),
    ("error: get-sum a='x'", *call("get-sum", {"a": "x", "b": 1})),
    ("error: echo without message", *call("echo", {})),
    ("error: get-annotated-message bad type", *call("get-annotated-message", {"messageType": "nope"})),
    ("error: get-structured-content unknown city", *call("get-structured-content", {"location": "Paris"})),
]
"""(item, method, params): the first run, a client that declared no capabilities."""

CAPS_ITEMS: list[tuple[str, str, Any]] = [
    ("tools/list", "tools/list", {}),
    ("get-roots-list", *call("get-roots-list", {})),
    ("trigger-sampling-request", *call("trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})),
    ("trigger-elicitation-request (declined)", *call("trigger-elicitation-request", {})),
    (
        "simulate-research-query ambiguous (task)",
        "tools/call",
        {"name": "simulate-research-query", "arguments": {"topic": "python", "ambiguous": True}, "task": {}},
    ),
    ("tasks/result of the ambiguous research (clarification declined)", "tasks/result", {"taskId": LAST_TASK}),
    (
        "trigger-sampling-request-async (answered at once)",
        *call("trigger-sampling-request-async", {"prompt": "hi", "maxTokens": 5}),
    ),
    ("trigger-elicitation-request-async (declined at once)", *call("trigger-elicitation-request-async", {})),
]
"""The second run: a client that declared sampling, elicitation and roots (requests answered trivially)."""


def run_session(cmd: list[str], capabilities: dict[str, Any], items: list[tuple[str, str, Any]]) -> dict[str, Any]:
    """Run one session of the script against one server; return item -> raw response (result or error)."""
    peer = StdioPeer(cmd)
    out: dict[str, Any] = {}
    last_task = None
    try:
        init = peer.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": capabilities,
                "clientInfo": {"name": "side-by-side", "version": "1"},
            },
        )
        out["initialize"] = strip(init)
        peer.notify("notifications/initialized")
        # The reference registers capability-gated tools after `initialized` and asks for roots 350 ms later.
        peer.drain(0.6)
        out["after initialized"] = {
            "notifications": dict(sorted(Counter(n["method"] for n in peer.notifications).items())),
            "server requests": dict(sorted(Counter(r["method"] for r in peer.server_requests).items())),
        }
        for name, method, params in items:
            before = len(peer.notifications)
            if method == "tools/call" and params["name"] == "trigger-long-running-operation":
                params = {**params, "_meta": {"progressToken": "sbs"}}
            if params.get("taskId") == LAST_TASK:
                params = {**params, "taskId": last_task}
            out[name] = strip(peer.request(method, params))
            task = out[name].get("result", {}).get("task")
            if isinstance(task, dict):
                last_task = task.get("taskId")
            if name.startswith("gzip-file-as-resource"):
                out[name]["notifications"] = [
                    n["method"] for n in peer.notifications[before:] if n["method"] != "notifications/message"
                ]
            if name.startswith("trigger-long-running-operation"):
                out[name]["progress"] = [
                    n["params"] for n in peer.notifications[before:] if n["method"] == "notifications/progress"
                ]
            if name == "prompts/list" and "result" in out[name]:
                for prompt in out[name]["result"].get("prompts", []):
                    pname = prompt["name"]
                    args = PROMPT_ARGS.get(pname, {})
                    out[f"prompts/get {pname}"] = strip(peer.request("prompts/get", {"name": pname, "arguments": args}))
    finally:
        peer.close()
    return out


def strip(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k in ("result", "error")}


# --------------------------------------------------------------------------------------------------
# Normalisation

TIME_RE = re.compile(r"\b\d{1,2}:\d{2}:\d{2}\s?[AP]M\b")
UUID_RE = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
ISO_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")
TASK_ID_RE = re.compile(r"\b[0-9a-f]{32}\b")
"""A task id (32 lowercase hex digits, on both sides)."""
SESSION_RE = re.compile(r"\b(session(?:Id)?[\"']?[:= ]+[\"']?)[A-Za-z0-9_-]{16,}")
"""A session id after `session `, `sessionId: ` and the like (ids are long; plain words are not masked)."""


def mask_text(text: str) -> str:
    text = TIME_RE.sub("<h:mm:ss AM>", text)
    text = UUID_RE.sub("<uuid>", text)
    text = ISO_RE.sub("<iso-time>", text)
    text = TASK_ID_RE.sub("<task-id>", text)
    return SESSION_RE.sub(r"\1<session>", text)


def normalise(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: normalise(v) for k, v in value.items()}
        if value.get("type") == "image" and isinstance(value.get("data"), str):
            out["data"] = "<image base64>"
        if isinstance(value.get("blob"), str):
            out["blob"] = decode_blob(value["blob"])
        return out
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, str):
        return mask_text(value)
    return value


def decode_blob(blob: str) -> str:
    """Show a blob as what it carries: gunzipped or decoded text, masked, so a diff is readable."""
    try:
        raw = base64.b64decode(blob, validate=True)
    except ValueError:
        return f"<invalid base64: {blob[:40]}>"
    label = "base64"
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
        label = "base64 gzip"
    try:
        return f"<{label} of {mask_text(raw.decode())!r}>"
    except UnicodeDecodeError:
        return f"<{label} of {len(raw)} bytes>"


RESOURCE_FIELDS = ("uri", "name", "title", "mimeType", "description")


def shape(item: str, response: dict[str, Any]) -> dict[str, Any]:
    """Item-specific shaping before the comparison."""
    response = normalise(response)
    result = response.get("result")
    if not isinstance(result, dict):
        return response
    if item.startswith("resources/list"):
        # Our static documents are our own texts under the reference's names: compare the listing only.
        result["resources"] = [{k: r[k] for k in RESOURCE_FIELDS if k in r} for r in result.get("resources", [])]
    return response


# --------------------------------------------------------------------------------------------------
# Comparison and the allow-list

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


def differences(ref: Any, ours: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(ref, dict) and isinstance(ours, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in list(ref) + [k for k in ours if k not in ref]:
            out += differences(ref.get(key, MISSING), ours.get(key, MISSING), f"{path}/{key}")
        return out
    if isinstance(ref, list) and isinstance(ours, list):
        out = []
        for i in range(max(len(ref), len(ours))):
            out += differences(
                ref[i] if i < len(ref) else MISSING, ours[i] if i < len(ours) else MISSING, f"{path}/{i}"
            )
        return out
    if ref == ours and type(ref) is type(ours):
        return []
    return [(path or "/", ref, ours)]


def _texts(result: Any) -> str:
    if not isinstance(result, dict):
        return ""
    return " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))


@dataclass(frozen=True)
class Allowed:
    """A deliberate difference: in items matching `item` (fnmatch), at paths matching `path` (a regex)."""

    item: str
    path: str
    reason: str
    check: Callable[[Any, Any], bool] = field(default=lambda ref, ours: True)

    def covers(self, item: str, path: str, ref: Any, ours: Any) -> bool:
        return (
            fnmatch.fnmatchcase(item, self.item) and re.fullmatch(self.path, path) is not None and self.check(ref, ours)
        )


def _ref_is_error_result(ref: Any, ours: Any) -> bool:
    return ours is MISSING and isinstance(ref, dict) and ref.get("isError") is True


def _ours_is_invalid_params(ref: Any, ours: Any) -> bool:
    return ref is MISSING and isinstance(ours, dict) and ours.get("code") == -32602


VALIDATION_PREFIX = re.compile(r"MCP error -32602: Input validation error: Invalid arguments for tool [\w-]+: ")


def _both_validation_errors(ref: Any, ours: Any) -> bool:
    """Both texts are the SDK's validation error for the same tool; only the validator's own words differ."""
    if not (isinstance(ref, str) and isinstance(ours, str)):
        return False
    rm, om = VALIDATION_PREFIX.match(ref), VALIDATION_PREFIX.match(ours)
    return rm is not None and om is not None and rm.group(0) == om.group(0)


ALLOWED: list[Allowed] = [
    # --- identity ---------------------------------------------------------------------------------
    Allowed("initialize", r"/result/serverInfo/(name|title|version)", "our own serverInfo (everything-mcp)"),
    Allowed("initialize", r"/result/instructions", "our own instructions text (same easter-egg sentence at the end)"),
    # --- our own image ----------------------------------------------------------------------------
    # The image data is masked; the mime type is the same (image/png). Nothing else to allow.
    # --- spec over reference: unknown tool --------------------------------------------------------
    # The spec makes an unknown tool a JSON-RPC error (-32602); the reference returns an isError result.
    Allowed(
        "error: unknown tool",
        r"/result",
        "unknown tool: JSON-RPC -32602 error (spec) vs isError result",
        _ref_is_error_result,
    ),
    Allowed(
        "error: unknown tool",
        r"/error",
        "unknown tool: JSON-RPC -32602 error (spec) vs isError result",
        _ours_is_invalid_params,
    ),
    # --- spec over reference: resource not found -------------------------------------------------
    # The spec (server/resources, "Error Handling") makes an unknown resource -32002 with `data.uri`;
    # the reference answers -32602 "MCP error -32602: Resource <uri> not found".
    Allowed(
        "error: resources/read unknown uri",
        r"/error/(code|message|data)",
        "resource not found: -32002 with data.uri (spec) vs the reference's -32602",
        lambda ref, ours: (
            ours == -32002
            or (isinstance(ours, str) and ours.startswith("Resource not found: "))
            or (isinstance(ours, dict) and "uri" in ours)
        ),
    ),
    # --- validation messages: our JSON Schema library vs zod -------------------------------------
    Allowed(
        "error: *",
        r"/result/content/0/text",
        "input-validation message wording: our JSON Schema validator vs zod (both are isError results)",
        _both_validation_errors,
    ),
]
"""The documented, deliberate differences (docs/side-by-side.md has the table and the reasons)."""


@dataclass
class ItemReport:
    item: str
    reference: Any
    ours: Any
    allowed: list[tuple[str, Any, Any, str]]
    unexpected: list[tuple[str, Any, Any]]


def compare(ref_out: dict[str, Any], our_out: dict[str, Any], prefix: str = "") -> list[ItemReport]:
    reports = []
    for item in list(ref_out) + [k for k in our_out if k not in ref_out]:
        ref = shape(item, ref_out.get(item, {"missing": True}))
        ours = shape(item, our_out.get(item, {"missing": True}))
        allowed, unexpected = [], []
        for path, r, o in differences(ref, ours):
            rule = next((a for a in ALLOWED if a.covers(item, path, r, o)), None)
            if rule is None:
                unexpected.append((path, r, o))
            else:
                allowed.append((path, r, o, rule.reason))
        reports.append(ItemReport(prefix + item, ref, ours, allowed, unexpected))
    return reports


def run_all() -> list[ItemReport]:
    """Both servers, both sessions; the comparison of every item."""
    ref_basic = run_session(reference_cmd(), {}, BASIC_ITEMS)
    our_basic = run_session(our_cmd(), {}, BASIC_ITEMS)
    ref_caps = run_session(reference_cmd(), FULL_CAPS, CAPS_ITEMS)
    our_caps = run_session(our_cmd(), FULL_CAPS, CAPS_ITEMS)
    return compare(ref_basic, our_basic) + compare(ref_caps, our_caps, prefix="[caps] ")


# --------------------------------------------------------------------------------------------------
# Output


def pretty(value: Any) -> list[str]:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=repr).splitlines(keepends=True)


def short(value: Any) -> str:
    return "<missing>" if value is MISSING else json.dumps(value, ensure_ascii=False, default=repr)


def print_text(reports: list[ItemReport]) -> None:
    for rep in reports:
        if not rep.allowed and not rep.unexpected:
            print(f"= {rep.item}")
            continue
        mark = "!" if rep.unexpected else "~"
        print(f"{mark} {rep.item}")
        diff = difflib.unified_diff(pretty(rep.reference), pretty(rep.ours), fromfile="reference", tofile="ours", n=2)
        for line in diff:
            print("    " + line, end="" if line.endswith("\n") else "\n")
        for path, _r, _o, reason in rep.allowed:
            print(f"    allowed  {path}: {reason}")
        for path, r, o in rep.unexpected:
            print(f"    REAL     {path}: reference {short(r)} / ours {short(o)}")
    bad = [r for r in reports if r.unexpected]
    print()
    print(
        f"{len(reports)} items: {sum(1 for r in reports if not r.allowed and not r.unexpected)} identical, "
        f"{sum(1 for r in reports if r.allowed and not r.unexpected)} with allowed differences only, "
        f"{len(bad)} with real differences"
    )
    for rep in bad:
        print(f"  REAL: {rep.item}")


def as_json(reports: list[ItemReport]) -> dict[str, Any]:
    def enc(v: Any) -> Any:
        return "<missing>" if v is MISSING else v

    return {
        "ok": not any(r.unexpected for r in reports),
        "reference": f"{REF_PACKAGE}@{REF_VERSION}",
        "items": [
            {
                "item": r.item,
                "status": "real" if r.unexpected else "allowed" if r.allowed else "identical",
                "allowed": [
                    {"path": p, "reference": enc(a), "ours": enc(b), "reason": why} for p, a, b, why in r.allowed
                ],
                "real": [{"path": p, "reference": enc(a), "ours": enc(b)} for p, a, b in r.unexpected],
            }
            for r in reports
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.side_by_side", description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help=f"npm-install {REF_PACKAGE}@{REF_VERSION} if needed")
    parser.add_argument("--json", action="store_true", help="print a JSON report instead of the diffs")
    args = parser.parse_args(argv)
    if not reference_installed():
        if args.install:
            install_reference()
        if not reference_installed():
            print(
                f"the reference is not installed in {REF_PREFIX}: run with --install, or\n  {' '.join(INSTALL_CMD)}\n"
                "(needs Node.js 20+ and npm)",
                file=sys.stderr,
            )
            return 2
    try:
        reports = run_all()
    except DriverError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(as_json(reports), indent=2, ensure_ascii=False))
    else:
        print_text(reports)
    return 1 if any(r.unexpected for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
