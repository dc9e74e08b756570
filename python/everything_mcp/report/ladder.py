"""The subscription ladder (levels 1-7): connected, discovered the resource, read it,
subscribed (or ``listen``ed, in 2026-07-28), notified, re-read after the notification, saw the
new version; and whether it closed cleanly."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..traffic import TrafficRecord
from .model import EVERY, Check, Family, earlier, first, hashable, params, verdict

if TYPE_CHECKING:
    from .client import ClientFold

PENDING = b"pending"
"""The contents of a read not answered yet."""


def _contents(answer: TrafficRecord | None) -> bytes | None:
    """A read's contents as a digest (None for none: no answer, an error, no `contents`): the
    first read's answer is kept until the re-reads are compared with it, and a resource may be
    large."""
    value = answer.result if answer is not None else None
    if not isinstance(value, dict):
        return None
    text = repr(value.get("contents"))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest() if text else None


def _uri(r: TrafficRecord) -> Any:
    return hashable(params(r).get("uri"))


class Subscription(Family):
    """The subscription ladder, levels 1-7 (0 is a client that never connected)."""

    routes = frozenset(EVERY)

    def __init__(self) -> None:
        self.connected: int | None = None
        self.discovered: int | None = None
        """The first resources/list answered."""
        self.read: int | None = None
        self.subscribed: int | None = None
        self.listened: int | None = None
        """The first listen stream naming resources (a resources/subscribe comes first)."""
        self.update: tuple[int, Any] | None = None
        """The first notifications/resources/updated: (seq, its uri)."""
        self.first_reads: dict[Any, list[Any]] = {}
        """Before the update, the first read of each URI: [seq, the digest of its answer's
        contents (PENDING until answered)]; after it, only the updated URI's."""
        self.reread: int | None = None
        self.changed: int | None = None
        """The first re-read whose contents differ from the first read's."""
        self.compared: list[tuple[int, bytes | None]] = []
        """Re-reads answered while the first read was not: compared once it is."""
        self.unsubscribed: int | None = None
        self.deleted: int | None = None

    def add(self, r: TrafficRecord) -> None:
        if r.dir == "out":
            if r.method == "notifications/resources/updated" and self.update is None:
                uri = _uri(r)
                self.update = (r.seq, uri)
                self.first_reads = {k: v for k, v in self.first_reads.items() if k == uri}
            return
        # A GET without a session may be given to its client after later records: the first by
        # seq, not the first seen.
        self.connected = earlier(self.connected, r.seq)
        if r.kind == "http":
            if (r.http or {}).get("method") == "DELETE" and self.deleted is None:
                self.deleted = r.seq
            return
        if r.kind != "request":
            return
        method = r.method
        if method == "resources/read":
            if self.read is None:
                self.read = r.seq
            if self.update is None:
                self.first_reads.setdefault(_uri(r), [r.seq, PENDING])
            elif self.reread is None and _uri(r) == self.update[1]:
                self.reread = r.seq
        elif method == "resources/subscribe":
            if self.subscribed is None:
                self.subscribed = r.seq
        elif method == "subscriptions/listen":
            notifications = params(r).get("notifications")
            if self.listened is None and isinstance(notifications, dict) and notifications.get("resourceSubscriptions"):
                self.listened = r.seq
        elif method == "resources/unsubscribe" and self.unsubscribed is None:
            self.unsubscribed = r.seq

    def answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        if request.method == "resources/list":
            self.discovered = earlier(self.discovered, request.seq)
        if request.method != "resources/read":
            return
        uri = _uri(request)
        first = self.first_reads.get(uri)
        if first is not None and first[0] == request.seq:
            first[1] = _contents(answer)
            if self.compared:
                for seq, contents in self.compared:
                    self._compare(seq, contents, first[1])
                self.compared = []
        elif self.update is not None and request.seq > self.update[0] and uri == self.update[1] and first:
            contents = _contents(answer)
            if first[1] is PENDING:
                self.compared.append((request.seq, contents))
            else:
                self._compare(request.seq, contents, first[1])

    def _compare(self, seq: int, contents: bytes | None, before: bytes | None) -> None:
        if contents is not None and contents != before:
            self.changed = earlier(self.changed, seq)

    def _changed(self) -> int | None:
        """The first re-read that saw new contents (a first read never answered had none)."""
        changed = self.changed
        first = self.first_reads.get(self.update[1]) if self.update is not None else None
        if first is not None and first[1] is PENDING:
            for seq, contents in self.compared:
                if contents is not None:
                    changed = earlier(changed, seq)
        return changed

    def finish(self, client: ClientFold) -> list[Check]:
        return [
            verdict("subscription.connected", "level 1: connected (sent a frame)", first(self.connected)),
            verdict("subscription.discovered", "level 2: listed the resources", first(self.discovered)),
            verdict("subscription.read", "level 3: read a resource", first(self.read)),
            verdict(
                "subscription.subscribed",
                "level 4: subscribed (resources/subscribe, or a listen stream naming it)",
                first(self.subscribed, self.listened),
            ),
            verdict(
                "subscription.notified",
                "level 5: received notifications/resources/updated",
                first(self.update[0] if self.update else None),
            ),
            verdict("subscription.reread", "level 6: read the resource again after the update", first(self.reread)),
            verdict(
                "subscription.changed",
                "level 7: saw the new version (the re-read differs from the first read)",
                first(self._changed()),
            ),
            verdict(
                "subscription.closed",
                "unsubscribed or closed its session cleanly",
                first(self.unsubscribed, self.deleted),
            ),
        ]


def level(checks: Sequence[Check], ladder: str = "subscription") -> int:
    """How far up `ladder` the client went: its first checks that pass, in order (levels 1-7)."""
    n = 0
    for c in checks:
        if c.id.startswith(f"{ladder}.") and c.id != f"{ladder}.closed":
            if c.status != "pass":
                break
            n += 1
    return n
