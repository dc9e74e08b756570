"""Instructions per request under callgrind: `python -m bench.callgrind [--scenario NAME] [--repeat N]`
(from the repository root, with the package installed in release form and valgrind on the PATH).

The figure the acceptance of a request-path change is judged by (a refactor must stay within +3%
of the same commit's baseline): wall-clock throughput on a shared two-core machine moves by more
than that from run to run, the instruction count of the same work does not.

Each scenario runs the installed package's in-process server with the traffic tape on
(`bench/peers/ours_in_process.py`, as `ours-tape` and `ours-py` in `bench.run`) under
`valgrind --tool=callgrind`, drives it with `bench/rust`'s `loadgen` (unique ids; a run with any
error answer fails), and counts only the measured phase: after a warm-up of
`WARMUP` requests the counters are zeroed (`callgrind_control -z`), `REQUESTS` `tools/call echo`
requests are sent over `CONNECTIONS` keep-alive connections, and the counters are dumped
(`callgrind_control -d`). The figure is the dump's total instructions divided by `REQUESTS`; it
also carries what the server does while those requests are in flight besides answering them (a
stateful loadgen's own `initialize` and `notifications/initialized`, two POSTs per run, the
Python main thread's half-second wake-ups), which is the same on every commit.

Scenarios:

- `stateful`: the handshake era over HTTP (`initialize`, then `Mcp-Session-Id` on every POST),
  the built-in catalog's `echo`;
- `stateless`: the 2026-07-28 era (`loadgen --stateless`: no handshake, the 2026 headers and the
  `_meta` envelope on every POST);
- `python`: `echo` registered from Python (`@srv.tool()`, `--python-echo`), stateful HTTP.

Baseline (commit 6d73070, release install with the real release profile, valgrind 3.19,
CPython 3.11; two runs each): stateful 52,609 / 52,533, stateless 54,691 / 54,796, python
135,104 / 135,286 instructions per request. Runs of one build agree within about 0.2%.

The load generator is built on first use (`bench.run.build_rust_tools`, into `target/bench`).
A whole run of the three scenarios takes about two minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import run

WARMUP = 1_000
"""Requests sent before the counters are zeroed (caches, allocator, lazily built state)."""
REQUESTS = 3_000
"""Requests of the measured phase."""
CONNECTIONS = 4
"""Keep-alive connections the measured requests are spread over."""
LISTEN_TIMEOUT = 300.0
"""Seconds the server may take to start listening under callgrind (it runs about 50x slower)."""


@dataclass(frozen=True)
class Scenario:
    """One measured configuration: how the server is started and how loadgen talks to it."""

    name: str
    server_args: tuple[str, ...]
    loadgen_args: tuple[str, ...]


SCENARIOS = (
    Scenario("stateful", (), ()),
    Scenario("stateless", (), ("--stateless",)),
    Scenario("python", ("--python-echo",), ()),
)


@contextmanager
def under_callgrind(server_args: tuple[str, ...], out_dir: Path) -> Iterator[tuple[str, int, Path]]:
    """Starts the in-process server under callgrind on a free port; yields (URL, pid, the output
    file's stem) once it accepts connections, and stops it (SIGTERM, a clean stop) afterwards."""
    port = run.free_port()
    out_file = out_dir / "callgrind.out"
    cmd = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out_file}",
        "--dump-line=no",
        sys.executable,
        str(run.BENCH / "peers" / "ours_in_process.py"),
        "--port",
        str(port),
        *server_args,
    ]
    log = (out_dir / "valgrind.log").open("wb")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        if not run.listening(proc, port, timeout=LISTEN_TIMEOUT):
            raise RuntimeError(f"the server did not listen under callgrind (see {out_dir / 'valgrind.log'})")
        yield f"http://127.0.0.1:{port}/mcp", proc.pid, out_file
    finally:
        run.stop(proc)
        log.close()


def control(pid: int, option: str) -> None:
    """`callgrind_control <option> <pid>` (`-z`: zero the counters, `-d`: dump them)."""
    done = subprocess.run(
        ["callgrind_control", option, str(pid)], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"callgrind_control {option} failed: {done.stdout}{done.stderr}")


TOTALS = re.compile(rb"^(?:totals|summary): (\d+)", re.MULTILINE)


def dumped_instructions(stem: Path) -> int:
    """Total instructions of the one dump `callgrind_control -d` wrote (`<stem>.1`)."""
    dumps = sorted(stem.parent.glob(stem.name + ".*"))
    if len(dumps) != 1:
        raise RuntimeError(f"expected one dump beside {stem}, found {[d.name for d in dumps]}")
    found = TOTALS.search(dumps[0].read_bytes())
    if found is None:
        raise RuntimeError(f"no totals in {dumps[0]}")
    return int(found.group(1))


def measure(scenario: Scenario, sizes: run.Sizes) -> float:
    """Instructions per request of `scenario`'s measured phase."""
    with (
        tempfile.TemporaryDirectory(prefix="callgrind-") as tmp,
        under_callgrind(scenario.server_args, Path(tmp)) as (url, pid, stem),
    ):
        common: tuple[str | int, ...] = ("http", "--url", url, "--connections", CONNECTIONS, *scenario.loadgen_args)
        run.loadgen(sizes, *common, "--count", WARMUP)
        control(pid, "-z")
        got = run.loadgen(sizes, *common, "--count", REQUESTS)
        control(pid, "-d")
        if got["requests"] != REQUESTS:
            raise RuntimeError(f"{scenario.name}: {got['requests']} of {REQUESTS} requests succeeded")
        return dumped_instructions(stem) / REQUESTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--scenario", choices=[s.name for s in SCENARIOS], action="append")
    parser.add_argument("--repeat", type=int, default=1, help="runs per scenario (each figure is printed)")
    ns = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind (with callgrind_control) is not installed")
    if not run.rust_tool("loadgen").is_file():
        run.build_rust_tools()
    chosen = [s for s in SCENARIOS if ns.scenario is None or s.name in ns.scenario]
    sizes = run.Sizes()
    figures: dict[str, list[float]] = {}
    for round_no in range(ns.repeat):
        for scenario in chosen:
            per_request = measure(scenario, sizes)
            figures.setdefault(scenario.name, []).append(per_request)
            print(f"{scenario.name:>9}: {per_request:,.0f} instructions/request (run {round_no + 1})", flush=True)
    print(json.dumps({name: [round(v) for v in values] for name, values in figures.items()}))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
