"""The official Python SDK's server with the reference's `echo` tool: a benchmark peer.

Run with the pinned `mcp` in its own environment (bench/run.py makes it):
    python bench/peers/python_sdk_echo.py stdio
    python bench/peers/python_sdk_echo.py http PORT
The HTTP form prints `{"event": "listening", "url": ...}` on stderr once the port accepts connections.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

from mcp.server import MCPServer

server = MCPServer("python-sdk-echo")


@server.tool()
def echo(message: str) -> str:
    """Echoes back the input string."""
    return f"Echo: {message}"


def announce_when_listening(port: int) -> None:
    """uvicorn logs its own banner; the benchmark waits for one machine-readable line instead."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            time.sleep(0.02)
            continue
        print(json.dumps({"event": "listening", "url": f"http://127.0.0.1:{port}/mcp"}), file=sys.stderr, flush=True)
        return


def main() -> None:
    if sys.argv[1:2] == ["http"]:
        port = int(sys.argv[2])
        threading.Thread(target=announce_when_listening, args=(port,), daemon=True).start()
        server.run("streamable-http", host="127.0.0.1", port=port, max_sessions=None)
    else:
        server.run()


if __name__ == "__main__":
    main()
