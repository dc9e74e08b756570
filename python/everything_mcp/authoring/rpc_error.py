"""The error a handler raises to answer with a JSON-RPC error object of its own choosing."""

from __future__ import annotations

from typing import Any


class RpcError(Exception):
    """Raise it from a handler (tool, resource, template, prompt, method or completion) to answer
    the request with exactly this JSON-RPC error object: ``{"code", "message", "data"}``, without
    ``data`` when it is None. Any other exception is an ``isError`` result from a tool and a
    ``-32603`` error elsewhere."""

    code: int
    """The error's ``code``: ``-32602`` (invalid params), or an application code."""
    message: str
    """The error's ``message``."""
    data: Any
    """The error's ``data`` (any JSON value), or None for none."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        if isinstance(code, bool) or not isinstance(code, int) or not -(2**63) <= code < 2**63:
            raise TypeError(f"a JSON-RPC error code is a 64-bit integer, not {code!r}")
        if not isinstance(message, str):
            raise TypeError(f"a JSON-RPC error message is a str, not {message!r}")
        super().__init__(code, message, data)
        self.code, self.message, self.data = code, message, data

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
