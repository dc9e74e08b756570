"""Tools, resources and prompts written as plain Python functions.

The server calls a function through an *invoker*: arguments arrive as JSON text and are decoded
here, the function runs (sync functions on a thread of the server's blocking pool, ``async def``
functions as tasks on the package's event-loop thread), and its return value, converted to the MCP
result here, goes back as JSON text through a ``_core.Reply``, or the :class:`RpcError` it raised
as a JSON-RPC error. Each decorated function becomes a :class:`Handle` that records its calls.

One module per concept: :mod:`.context` (what a handler may use), :mod:`.schema` (the input
schema from type hints), :mod:`.results` (content blocks, return values as results),
:mod:`.handle` (the registered function and its calls), :mod:`.running` (a call run and
answered), :mod:`.rpc_error` (answering with a JSON-RPC error). The decorators are
``Server``'s (:mod:`everything_mcp.server_authoring`).
"""

from __future__ import annotations

from .context import Context
from .handle import Call, Handle
from .results import content
from .rpc_error import RpcError

__all__ = ["Call", "Context", "Handle", "RpcError", "content"]
