"""everything-mcp: a Model Context Protocol test server with a Rust core.

>>> from everything_mcp import Server
>>> with Server() as server:
...     conn = server.connect()
...     conn.send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
...     conn.recv(timeout=5)
'{"jsonrpc":"2.0","id":1,"result":{}}'
"""

from ._core import (
    CATALOGS,
    DEFAULTS,
    SUPPORTED_REVISIONS,
    ClientError,
    ConfigError,
    ConnectionClosedError,
    EverythingMcpError,
    InputRequired,
    __version__,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .authoring import Call, Context, Handle, RpcError, content
    from .clock import Clock
    from .faults import FaultRule, Faults
    from .options import HttpOptions, ServerOptions
    from .server import Server
    from .tasks import GatedTask, TaskEnded, TaskGate, TaskInfo
    from .traffic import TrafficRecord, TrafficStats, load_records

_LAZY = {
    "Call": "authoring",
    "Context": "authoring",
    "Handle": "authoring",
    "RpcError": "authoring",
    "content": "authoring",
    "Clock": "clock",
    "HttpOptions": "options",
    "ServerOptions": "options",
    "Server": "server",
    "FaultRule": "faults",
    "Faults": "faults",
    "GatedTask": "tasks",
    "TaskEnded": "tasks",
    "TaskGate": "tasks",
    "TaskInfo": "tasks",
    "TrafficRecord": "traffic",
    "TrafficStats": "traffic",
    "load_records": "traffic",
}

__all__ = [
    "CATALOGS",
    "DEFAULTS",
    "SUPPORTED_REVISIONS",
    "Call",
    "ClientError",
    "Clock",
    "ConfigError",
    "ConnectionClosedError",
    "Context",
    "EverythingMcpError",
    "FaultRule",
    "Faults",
    "GatedTask",
    "Handle",
    "HttpOptions",
    "InputRequired",
    "RpcError",
    "Server",
    "ServerOptions",
    "TaskEnded",
    "TaskGate",
    "TaskInfo",
    "TrafficRecord",
    "TrafficStats",
    "__version__",
    "content",
    "load_records",
]


def __getattr__(name: str) -> object:
    # Loaded on first use, so that `python -m everything_mcp.relay` (spawned by clients) starts
    # without importing the server, authoring and traffic machinery.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)
