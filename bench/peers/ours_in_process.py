"""Our server the way a test suite holds it: an in-process `Server` with the traffic tape on.

    python bench/peers/ours_in_process.py [--python-echo | --python-tools] [--keep-traffic N]
        [--max-sessions N] [--fault-rules N] [--clock real|manual] [--worker-threads N] [--port P]

`--python-echo` serves `echo` from a plain Python function (`@srv.tool()`) instead of the
built-in catalog's. `--python-tools` keeps the catalog's `echo` and adds the same tool written
in Python twice, `py_echo` (a plain function) and `py_async_echo` (an `async def`), so the three
are measured on one server (`bench.run`'s HTTP figures). `--worker-threads N` sets the runtime's
threads (the free-threaded benchmark's 1 and 2). `--fault-rules N` puts N fault rules in force
that match no request of the load (a `tools/call` of a tool that does not exist), so every frame is checked against them
all. `--clock manual` runs it on the manual clock a test advances (nothing advances it here:
the figure shows what the clock costs a request). Prints `{"event": "listening", "url": ...}` on stderr, serves until
SIGTERM/SIGINT, then stops cleanly.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from everything_mcp import Server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python-echo", action="store_true")
    parser.add_argument("--python-tools", action="store_true")
    parser.add_argument("--worker-threads", type=int, default=None, help="runtime threads (default: the Server's)")
    parser.add_argument("--keep-traffic", type=int, default=None, help="records kept in memory (default: the Server's)")
    parser.add_argument("--max-sessions", type=int, default=1000)
    parser.add_argument("--fault-rules", type=int, default=0)
    parser.add_argument("--clock", choices=["real", "manual"], default="real")
    parser.add_argument("--port", type=int, default=0)
    ns = parser.parse_args()

    srv = Server(
        catalogs=["none"] if ns.python_echo else ["everything"],
        clock=ns.clock,
        keep_traffic=ns.keep_traffic,  # None: the Server's default
        worker_threads=ns.worker_threads,
    )
    if ns.python_echo:

        @srv.tool()
        def echo(message: str) -> str:
            """Echoes back the input string."""
            return f"Echo: {message}"

    if ns.python_tools:

        @srv.tool()
        def py_echo(message: str) -> str:
            """Echoes back the input string."""
            return f"Echo: {message}"

        @srv.tool()
        async def py_async_echo(message: str) -> str:
            """Echoes back the input string."""
            return f"Echo: {message}"

    for i in range(ns.fault_rules):
        srv.faults.add(match={"method": "tools/call", "name": f"never-{i}"}, action={"drop": True})
    url = srv.start_http(port=ns.port, strict_port=ns.port != 0, max_sessions=ns.max_sessions)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(json.dumps({"event": "listening", "url": url}), file=sys.stderr, flush=True)
    while not stop.wait(0.5):
        pass
    srv.stop()


if __name__ == "__main__":
    main()
