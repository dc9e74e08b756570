"""What the one-pipe benchmarks (`bench.listen`, `bench.tasks`) share: the CLI served over a stdio
pipe, its resident memory, and a clean stop."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def rss_kb(pid: int) -> int:
    """Resident memory of process `pid`, in KB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


@contextmanager
def serving(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m everything_mcp stdio *args` with pipes for stdin and stdout; closed (stdin
    first, so the server ends on EOF) and reaped on exit."""
    cmd = [sys.executable, "-m", "everything_mcp", "stdio", *args]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def read_until(out: IO[bytes], count: int, counts: Callable[[Any], bool], what: str, deadline: float) -> None:
    """Reads frames from `out` until `count` of them satisfy `counts`; fails past `deadline`, on
    the end of the output, or on any error answer (a fast error is not a fast answer)."""
    seen = 0
    while seen < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"saw {seen} of {count} {what}")
        line = out.readline()
        if not line:
            raise RuntimeError(f"the server closed its output after {seen} of {count} {what}")
        frame = json.loads(line)
        if "error" in frame:
            raise RuntimeError(f"error answer: {frame}")
        if counts(frame):
            seen += 1
