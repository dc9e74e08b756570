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
    SUPPORTED_REVISIONS,
    ClientError,
    ConfigError,
    ConnectionClosedError,
    EverythingMcpError,
    __version__,
)
from .authoring import Call, Context, Handle, content
from .server import Server

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .traffic import TrafficRecord, load_records

__all__ = [
    "CATALOGS",
    "SUPPORTED_REVISIONS",
    "Call",
    "ClientError",
    "ConfigError",
    "ConnectionClosedError",
    "Context",
    "EverythingMcpError",
    "Handle",
    "Server",
    "TrafficRecord",
    "__version__",
    "content",
    "load_records",
]


def __getattr__(name: str) -> object:
    # The traffic helpers pull in dataclasses/inspect (~20 ms); the stdio CLI never needs them,
    # so they load on first use and `python -m everything_mcp` starts faster.
    if name in ("TrafficRecord", "load_records"):
        from . import traffic

        return getattr(traffic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
