"""What the `apps` catalog's tests share: the UI extension's names and :class:`Conn`, a raw
in-memory connection of a host (or a plain client) in one era."""

from __future__ import annotations

import json
from typing import Any

from everything_mcp import Server

from conftest import WAIT, envelope, init_params

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
HOST_CAPABILITIES = {"extensions": {UI: {"mimeTypes": [MIME]}}}


class Conn:
    """An in-memory connection speaking raw frames, in one era."""

    def __init__(self, srv: Server, era: str, declared: bool, name: str = "pytest") -> None:
        self.conn = srv.connect()
        self.era = era
        self.name = name
        self.capabilities: dict[str, Any] = HOST_CAPABILITIES if declared else {}
        self.next = 1
        if era == "handshake":
            params = {**init_params(), "capabilities": self.capabilities, "clientInfo": {"name": name, "version": "1"}}
            self.initialize = self.request("initialize", params)
            self.conn.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def request(self, method: str, params: dict[str, Any] | None = None, capabilities: Any = None) -> Any:
        params = dict(params or {})
        if self.era == "stateless" and method != "initialize":
            params["_meta"] = envelope(self.capabilities if capabilities is None else capabilities, self.name)
        self.next += 1
        self.conn.send(json.dumps({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}))
        answer = json.loads(self.conn.recv(WAIT) or "")
        assert answer.get("id") == self.next, answer
        return answer

    def tools(self, capabilities: Any = None) -> dict[str, Any]:
        result = self.request("tools/list", capabilities=capabilities)["result"]
        return {t["name"]: t for t in result["tools"]}
