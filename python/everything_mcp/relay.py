"""``python -m everything_mcp.relay SOCKET``: the stdio process of an in-process server.

An MCP client spawns this (``Server.stdio_command``); it copies its stdin to the server's relay
socket and the socket to its stdout, and exits as soon as stdin closes (the server sees the
connection end). It imports nothing heavy, so it starts fast.
"""

from __future__ import annotations

import os
import socket
import sys
import threading


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m everything_mcp.relay SOCKET", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(argv[0])
    except OSError as e:
        print(f"everything-mcp relay: cannot reach the server at {argv[0]}: {e}", file=sys.stderr)
        return 1

    def to_stdout() -> None:
        try:
            while data := sock.recv(65536):
                os.write(1, data)
        except OSError:
            pass
        # The server ended the connection (it stopped): end this process, so the client sees EOF.
        os._exit(0)

    out = threading.Thread(target=to_stdout, daemon=True)
    out.start()
    try:
        while data := os.read(0, 65536):
            sock.sendall(data)
    except OSError:
        pass
    # stdin closed: tell the server, let it flush what it already answered, then leave.
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    out.join(timeout=1.0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
