"""Costs of the in-process server (issue targets: start+stop under 5 ms; relay under 60 ms to the
first relayed byte). Run: python bench/in_process.py"""

from __future__ import annotations

import statistics
import subprocess
import time

from everything_mcp import Server


def main() -> None:
    runs = 200
    t = time.perf_counter()
    for _ in range(runs):
        srv = Server(catalogs=["none"])
        srv.start_http()
        srv.stop()
    per = (time.perf_counter() - t) * 1000 / runs
    print(f"Server() + start_http() + stop(): {per:.2f} ms each ({runs} runs)")

    srv = Server(catalogs=["none"])
    command = srv.stdio_command
    times = []
    for _ in range(20):
        t = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        proc.stdin.flush()
        proc.stdout.readline()
        times.append((time.perf_counter() - t) * 1000)
        proc.stdin.close()
        proc.wait()
        proc.stdout.close()
    print(f"relay spawn -> first relayed answer: median {statistics.median(times):.1f} ms, min {min(times):.1f} ms")
    srv.stop()


if __name__ == "__main__":
    main()
