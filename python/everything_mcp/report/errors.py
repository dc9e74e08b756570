"""Errors the client caused: frames that are not valid JSON-RPC, methods the server does not
have, arguments a tool or prompt refused."""

from __future__ import annotations

from array import array
from bisect import insort
from typing import TYPE_CHECKING

from ..traffic import TrafficRecord
from .model import EVERY, Check, Family, earlier, params, verdict

if TYPE_CHECKING:
    from .client import ClientFold

DISCOVER = "server/discover"
"""A 2.x client's probe for the stateless era: a handshake-only server refuses it with
`-32601`, and the client falls back to `initialize`. Not a mistake."""


def _error(r: TrafficRecord) -> dict[str, object]:
    """The `error` member of an error answer (empty for anything else)."""
    error = r.msg.get("error") if r.kind == "error" and isinstance(r.msg, dict) else None
    return error if isinstance(error, dict) else {}


def _scripted(request: TrafficRecord, answer: TrafficRecord) -> bool:
    """Whether a fault rule hit `request` or made `answer`: then the answer is not the client's
    doing (a rule's `error` or `result` answers instead of the server)."""
    return bool(request.fault or answer.fault)


def _refused_arguments(answer: TrafficRecord) -> bool:
    """Whether `answer` refuses its request's arguments: `-32602` saying "Invalid arguments"
    (a prompt's), or an `isError` tool result saying it (the server checks a tool's arguments
    against its `inputSchema` and answers `MCP error -32602: Input validation error: Invalid
    arguments for tool …`, as the reference server does)."""
    error = _error(answer)
    if error:
        return error.get("code") == -32602 and "Invalid arguments" in str(error.get("message", ""))
    result = answer.result if isinstance(answer.result, dict) else {}
    texts = [str(c.get("text", "")) for c in result.get("content") or [] if isinstance(c, dict)]
    return result.get("isError") is True and any("Invalid arguments" in text for text in texts)


class Errors(Family):
    """`errors.*`: the proof of a failure is every frame that shows it."""

    routes = frozenset(r for r in EVERY if r[0] == "in")

    def __init__(self) -> None:
        self.invalid = array("q")
        self.sent: int | None = None
        """The first frame from the client."""
        self.request: int | None = None
        """Its first request."""
        self.unknown: list[tuple[int, int, str]] = []
        """The requests answered -32601: (request seq, answer seq, method), by request."""
        self.call: tuple[int, int] | None = None
        """The first tool call or prompt answered: (request seq, answer seq)."""
        self.refused: list[tuple[int, int, str]] = []
        """The calls refused for their arguments: (request seq, answer seq, "method name")."""

    def add(self, r: TrafficRecord) -> None:
        # A GET without a session may be given to its client after later records: the first by
        # seq, not the first seen.
        self.sent = earlier(self.sent, r.seq)
        if r.kind == "invalid":
            self.invalid.append(r.seq)
        elif r.kind == "request" and self.request is None:
            self.request = r.seq

    def answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        if (
            request.method != DISCOVER
            and answer.kind == "error"
            and not _scripted(request, answer)
            and _error(answer).get("code") == -32601
        ):
            insort(self.unknown, (request.seq, answer.seq, f"-32601 for {request.method}"))
        if request.method not in ("tools/call", "prompts/get"):
            return
        if self.call is None or request.seq < self.call[0]:
            self.call = (request.seq, answer.seq)
        # A look at the text first: most answers do not say it.
        if "Invalid arguments" in answer.raw and not _scripted(request, answer) and _refused_arguments(answer):
            name = f"{request.method} {params(request).get('name')}"
            insort(self.refused, (request.seq, answer.seq, name))

    def finish(self, client: ClientFold) -> list[Check]:
        first_request = [] if self.request is None else [self.request]
        return [
            verdict(
                "errors.malformed",
                "sends only valid JSON-RPC frames",
                self.invalid or ([self.sent] if self.sent is not None else []),
                failed=bool(self.invalid),
            ),
            verdict(
                "errors.unknown_method",
                "sends only methods the server has (no -32601; a server/discover probe aside)",
                [answer for _, answer, _ in self.unknown] or first_request,
                failed=bool(self.unknown),
                detail=", ".join(dict.fromkeys(why for _, _, why in self.unknown)),
            ),
            verdict(
                "errors.invalid_arguments",
                "calls tools and prompts with valid arguments (none refused: -32602 or an isError result)",
                [answer for _, answer, _ in self.refused] or ([self.call[1]] if self.call else []),
                failed=bool(self.refused),
                detail=", ".join(dict.fromkeys(name for _, _, name in self.refused)),
            ),
        ]
