"""What the report's check tests share: a raw JSON-RPC client on an in-process connection,
and how a check's status, detail and records are read."""

from __future__ import annotations

import json
from typing import Any

from everything_mcp import Server
from everything_mcp.report import ClientReport

from conftest import WAIT

SSE = {"Accept": "text/event-stream"}
POST = {"Accept": "application/json, text/event-stream"}


def status(client: ClientReport, id: str) -> tuple[str, str]:
    """A check's status and detail."""
    c = client.check(id)
    return c.status, c.detail


def seqs_of(srv: Server, **where: Any) -> list[int]:
    """The `seq` of the records whose attributes are all `where`'s."""
    return [r.seq for r in srv.traffic if all(getattr(r, k) == v for k, v in where.items())]


class Raw:
    """A raw JSON-RPC client on an in-process connection: sends frames, reads the server's."""

    def __init__(self, srv: Server, name: str = "raw", capabilities: dict[str, Any] | None = None) -> None:
        self.conn = srv.connect()
        self.name = name
        self.capabilities = capabilities or {}

    def send(self, message: dict[str, Any]) -> None:
        self.conn.send(json.dumps(message))

    def recv(self) -> Any:
        frame = self.conn.recv(timeout=WAIT)
        assert frame is not None, "nothing from the server"
        return json.loads(frame)

    def request(self, id: int, method: str, params: dict[str, Any] | None = None) -> Any:
        self.send({"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params else {})})
        return self.recv()

    def handshake(self) -> None:
        info = {"name": self.name, "version": "1"}
        init = {"protocolVersion": "2025-11-25", "capabilities": self.capabilities, "clientInfo": info}
        assert "result" in self.request(0, "initialize", init)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
