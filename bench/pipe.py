"""What the one-pipe benchmarks (`bench.listen`, `bench.tasks`) share: the CLI served over a stdio
pipe, its resident memory, and a clean stop."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
