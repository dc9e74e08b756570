"""Benchmarks side by side with the peers, in one run: `python -m bench.run [--write-docs]`
(from the repository root).

Contenders (each figure is measured for those it applies to):

- `ours`: `python -m everything_mcp` (the CLI: stdio, or HTTP with the in-memory tape off);
- `ours-native`: the native `everything-mcp` (`src/main.rs`, the same command line without a
  Python interpreter), built with the benchmarks' profile, run as `ours` is;
- `ours-tape`: an in-process `Server` with the traffic tape on, as a test suite holds it;
- `ours-py`: the same with `echo` registered as a plain Python function;
- `ours-faults`: `ours-tape` with 100 fault rules in force that match none of the load's frames;
- `ours-clock`: `ours-tape` on the manual clock (`clock="manual"`, never advanced);
- `ours-lab`: the CLI's `http` as it starts by default, with the lab page on (`/_lab/`), so the
  newest 100,000 records kept in memory (`ours` runs with `--no-lab`);
- `ours-apps`: `ours`'s `http` serving `--catalog everything,apps` (the MCP Apps host lab's 50
  tools and views beside the reference's surface; its definition views shape every list);
- `ours-bearer`: `ours`'s `http` behind the auth lab's bearer mode (`--auth bearer --token T`),
  every request sent with `Authorization: Bearer T` (`loadgen --bearer T`);
- `reference`: `@modelcontextprotocol/server-everything` (Node), pinned like `bench.side_by_side`;
- `python-sdk`: the official `mcp` SDK's `MCPServer` with the same `echo`, pinned, own venv;
- `bare-axum`: the machine's ceiling: an axum endpoint that parses the JSON-RPC body and answers
  the same SSE frames with no MCP logic (`bench/rust`).

`ours-stateless` is not a server of its own: it is `ours-tape` driven as a 2026-07-28 client
(`loadgen --stateless`: no handshake, the 2026 headers and the `_meta` envelope on every POST).

The load comes from `bench/rust`'s `loadgen` (one keep-alive connection per worker). Contenders
are interleaved run by run (the order rotates each round) so machine drift hits all alike; every
figure is reported as the median and the min-max of its rounds. Peers are installed into
`.cache/` (ignored by git). `--smoke` runs every benchmark once with tiny sizes (the test
command does this so the benchmarks cannot rot); `--write-docs` rewrites docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import venv
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import lab as lab_bench
from . import listen, side_by_side, tasks  # the reference's pinned install is shared with side_by_side
from . import report as report_bench

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

CACHE = ROOT / ".cache" / "bench"
SDK_PIN = "mcp==2.3.0"
SDK_VENV = CACHE / "python-sdk"
RUST_TARGET = ROOT / "target" / "bench"
DOCS = ROOT / "docs" / "benchmarks.md"
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n'
)


@dataclass(frozen=True)
class Sizes:
    """How much of everything one run does (`--smoke` shrinks it all)."""

    rounds: int = 3
    http_rounds: int = 5
    """HTTP throughput gets more rounds: its 16-connection figure carries most targets."""
    cold_starts: int = 15
    stdio_requests: int = 20_000
    http_seconds: float = 4.0
    http_warmup: float = 1.0
    connections: tuple[int, ...] = (1, 16, 64)
    init_sessions: int = 2_000
    memory_sessions: tuple[int, int] = (1_000, 10_000)
    load_requests: tuple[int, int] = (10_000, 200_000)
    fixture_runs: int = 200
    relay_runs: int = 20
    listen_streams: int = 10_000
    """`subscriptions/listen` streams open at once on one server (the listen figures)."""
    tasks: int = 10_000
    """Tasks created per round (the task memory figures, `bench.tasks`)."""
    report_records: int = 100_000
    """Records in the file the report figures read (`bench.report`)."""
    lab_records: int = 100_000
    """Records the lab page holds, live and in the HTML report (`bench.lab`)."""
    loadgen_timeout: float = 1200.0
    """Seconds one loadgen run may take (`--smoke` lowers it: CI must never hang on a stuck server)."""
    rust_profile: str = "release"
    """The cargo profile loadgen and bare-axum are built with: `--smoke` takes `dev`, which builds
    in a fifth of the time (65 s) of the optimised one a timing needs."""


SMOKE = Sizes(
    rounds=1,
    http_rounds=1,
    cold_starts=1,
    stdio_requests=200,
    http_seconds=0.3,
    http_warmup=0.1,
    connections=(1, 4),
    init_sessions=20,
    memory_sessions=(10, 20),
    load_requests=(200, 400),
    fixture_runs=5,
    relay_runs=2,
    listen_streams=50,
    tasks=100,
    report_records=1_000,
    lab_records=1_000,
    loadgen_timeout=120.0,
    rust_profile="dev",
)


# --------------------------------------------------------------------------------------------------
# Peers and tools


def ensure_reference() -> bool:
    if not side_by_side.reference_installed():
        with contextlib.suppress(Exception, SystemExit):  # SystemExit: npm is missing
            side_by_side.install_reference()
    return side_by_side.reference_installed()


def sdk_python() -> Path:
    return SDK_VENV / "bin" / "python"


def ensure_python_sdk() -> bool:
    marker = SDK_VENV / ".installed"
    if marker.is_file() and marker.read_text() == SDK_PIN:
        return True
    shutil.rmtree(SDK_VENV, ignore_errors=True)
    venv.create(SDK_VENV, with_pip=True)
    try:
        done = subprocess.run([str(sdk_python()), "-m", "pip", "install", "-q", SDK_PIN], check=False, timeout=600)
    except subprocess.TimeoutExpired:
        return False
    if done.returncode != 0:
        return False
    marker.write_text(SDK_PIN)
    return True


def build_rust_tools(profile: str = "release") -> None:
    subprocess.run(
        ["cargo", "build", "--profile", profile, "-q", "--manifest-path", str(BENCH / "rust" / "Cargo.toml")],
        check=True,
        env={**os.environ, "CARGO_TARGET_DIR": str(RUST_TARGET)},
    )


def build_native(profile: str = "release") -> None:
    """Builds the native `everything-mcp` (the package's crate) with `profile`, unless
    `$EVERYTHING_MCP_BINARY` names one already built (the test command's, from its wheel: building
    it again cost the smoke run 16 s, `cargo test --features python` having rebuilt it with the
    binding's feature in between)."""
    if os.environ.get("EVERYTHING_MCP_BINARY"):
        return
    subprocess.run(["cargo", "build", "--profile", profile, "-q", "--bin", "everything-mcp"], check=True, cwd=ROOT)


def native_binary(profile: str = "release") -> Path:
    """The native `everything-mcp` built by `build_native(profile)` (or `$EVERYTHING_MCP_BINARY`)."""
    given = os.environ.get("EVERYTHING_MCP_BINARY")
    if given:
        return Path(given)
    return ROOT / "target" / ("debug" if profile == "dev" else profile) / "everything-mcp"


def rust_tool(name: str, profile: str = "release") -> Path:
    """The path of bench/rust's binary `name` built with `profile`."""
    return RUST_TARGET / ("debug" if profile == "dev" else profile) / name


def loadgen(sizes: Sizes, *args: str | int | float) -> dict[str, Any]:
    """Runs the load generator (for at most `sizes.loadgen_timeout`); raises if it fails or any
    request failed."""
    command = " ".join(map(str, args))
    done = subprocess.run(
        [str(rust_tool("loadgen", sizes.rust_profile)), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=sizes.loadgen_timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"loadgen {command} failed: {done.stderr.strip()}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if result.get("errors"):
        raise RuntimeError(f"loadgen {command}: {result['errors']} failed requests: {done.stderr.strip()}")
    return result


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


# --------------------------------------------------------------------------------------------------
# Contenders


@dataclass(frozen=True)
class Contender:
    """One server under test: how to run it over stdio and over HTTP on a given port."""

    name: str
    stdio: list[str] | None
    http: Callable[[int], tuple[list[str], dict[str, str]]] | None
    loadgen_args: tuple[str, ...] = ()
    """What loadgen needs besides the URL for this server to answer it at all (`--bearer T` for
    a server that checks tokens, `--no-handshake` for one without sessions); `target` adds them
    to every run of loadgen against it."""

    def target(self, url: str) -> tuple[str, ...]:
        """loadgen's arguments pointing it at this contender served on `url` (from `serving`)."""
        return ("--url", url, *self.loadgen_args)


BEARER_TOKEN = "bench-token"
"""The one token `ours-bearer` accepts, and the one loadgen sends it."""


def cli_http(port: int, *extra: str, command: tuple[str, ...] = (sys.executable, "-m", "everything_mcp")) -> list[str]:
    """The CLI's `http` (or `command`'s) on `port`, quiet, with room for the session benchmarks."""
    flags = ["--port", str(port), "--strict-port", "--max-sessions", "20000", "--log-level", "off"]
    return [*command, "http", *flags, *extra]


def contenders(available: set[str], rust_profile: str = "release") -> list[Contender]:
    py = sys.executable
    node_entry = str(side_by_side.REF_ENTRY)
    in_process = str(BENCH / "peers" / "ours_in_process.py")
    sdk_script = str(BENCH / "peers" / "python_sdk_echo.py")
    native = str(native_binary(rust_profile))
    every = [
        # The lab page keeps records in memory: `ours` turns it off, `ours-lab` measures its cost.
        Contender("ours", [py, "-m", "everything_mcp", "stdio"], lambda p: (cli_http(p, "--no-lab"), {})),
        Contender("ours-native", [native, "stdio"], lambda p: (cli_http(p, "--no-lab", command=(native,)), {})),
        Contender("ours-lab", None, lambda p: (cli_http(p), {})),
        Contender("ours-apps", None, lambda p: (cli_http(p, "--no-lab", "--catalog", "everything,apps"), {})),
        Contender(
            "ours-bearer",
            None,
            lambda p: (cli_http(p, "--no-lab", "--auth", "bearer", "--token", BEARER_TOKEN), {}),
            loadgen_args=("--bearer", BEARER_TOKEN),
        ),
        Contender(
            "ours-tape",
            None,
            lambda p: ([py, in_process, "--python-tools", "--port", str(p), "--max-sessions", "20000"], {}),
        ),
        Contender("ours-py", None, lambda p: ([py, in_process, "--python-echo", "--port", str(p)], {})),
        Contender(
            "ours-faults",
            None,
            lambda p: ([py, in_process, "--fault-rules", "100", "--port", str(p), "--max-sessions", "20000"], {}),
        ),
        Contender(
            "ours-clock",
            None,
            lambda p: ([py, in_process, "--clock", "manual", "--port", str(p), "--max-sessions", "20000"], {}),
        ),
        Contender(
            "reference",
            ["node", node_entry, "stdio"],
            lambda p: (["node", node_entry, "streamableHttp"], {"PORT": str(p)}),
        ),
        Contender(
            "python-sdk",
            [str(sdk_python()), sdk_script, "stdio"],
            lambda p: ([str(sdk_python()), sdk_script, "http", str(p)], {}),
        ),
        # It answers calls only: there is no handshake to do.
        Contender(
            "bare-axum",
            None,
            lambda p: ([str(rust_tool("bare-axum", rust_profile)), "--port", str(p)], {}),
            loadgen_args=("--no-handshake",),
        ),
    ]
    return [c for c in every if c.name in available]


@contextlib.contextmanager
def serving(c: Contender) -> Iterator[tuple[str, int]]:
    """Starts `c` over HTTP on a free port; yields (URL, pid) once the port accepts connections.
    A contender that exits before listening (its port was taken meanwhile) gets two more tries."""
    assert c.http is not None
    for attempt in range(3):
        port = free_port()
        cmd, env = c.http(port)
        proc = subprocess.Popen(
            cmd,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if listening(proc, port):
            break
        stop(proc)
        if attempt == 2:
            raise RuntimeError(f"{c.name} did not listen (exit status {proc.returncode})")
    try:
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        stop(proc)


def listening(proc: subprocess.Popen[bytes], port: int, timeout: float = 60) -> bool:
    """Whether `proc` accepts connections on `port` within `timeout` (False once it exits)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc.poll() is None
        except OSError:
            time.sleep(0.01)
    return False


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:  # the reference ignores SIGTERM while connections linger
        proc.kill()
        proc.wait(10)


# --------------------------------------------------------------------------------------------------
# The figures


@dataclass
class Results:
    """Every sample, keyed by (figure, contender); plus single readings under `notes`."""

    samples: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    """Why a benchmark's figures were not measured, by benchmark (`lab`: no Chromium)."""

    def add(self, figure: str, contender: str, value: float) -> None:
        self.samples.setdefault(figure, {}).setdefault(contender, []).append(value)

    def median(self, figure: str, contender: str) -> float | None:
        values = self.samples.get(figure, {}).get(contender)
        return statistics.median(values) if values else None


def rotated(items: list[Contender], round_no: int) -> list[Contender]:
    k = round_no % len(items) if items else 0
    return items[k:] + items[:k]


def first_answer_ms(cmd: list[str], request: bytes, timeout: float = 60) -> float:
    """Milliseconds from spawning `cmd` to reading its answer to `request` (one JSON-RPC line)
    on stdout; raises unless the answer is a result. The process is killed afterwards."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    line = b""
    try:
        proc.stdin.write(request)
        proc.stdin.flush()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while not line.endswith(b"\n") and sel.select(max(0.0, deadline - time.monotonic())):
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                line += chunk
        elapsed = (time.perf_counter() - t0) * 1000
    finally:
        proc.kill()
        proc.wait(10)
        proc.stdin.close()
        proc.stdout.close()
    if b'"result"' not in line:
        raise RuntimeError(f"{cmd}: no result within {timeout} s: {line[:200]!r}")
    return elapsed


def bench_cold_start(cs: list[Contender], sizes: Sizes, out: Results) -> None:
    runnable = [c for c in cs if c.stdio]
    for r in range(sizes.cold_starts):
        for c in rotated(runnable, r):
            assert c.stdio is not None
            out.add("cold_start_ms", c.name, first_answer_ms(c.stdio, INITIALIZE))


def bench_stdio(cs: list[Contender], sizes: Sizes, out: Results) -> None:
    runnable = [c for c in cs if c.stdio]
    for r in range(sizes.rounds):
        for c in rotated(runnable, r):
            assert c.stdio is not None
            n = sizes.stdio_requests
            got = loadgen(sizes, "stdio", "--count", n, "--warmup", min(1000, n), "--", *c.stdio)
            out.add("stdio_rps", c.name, got["rps"])


STATELESS = "ours-stateless"
"""The figures of `ours-tape` served to a stateless (2026-07-28) client."""
SAME_SERVER_PY = {"ours-tape-py": "py_echo", "ours-tape-async": "py_async_echo"}
"""The figures of `ours-tape`'s Python tools, by pseudo-contender: the same echo written as a
plain function and as an `async def`, called on the same server right after its Rust `echo`."""


def stateless_connections(sizes: Sizes) -> int:
    """The connection count of the stateless throughput figure: 16, the targets' (the largest
    measured in a smoke run)."""
    return 16 if 16 in sizes.connections else max(sizes.connections)


def bench_http(cs: list[Contender], sizes: Sizes, out: Results) -> None:
    runnable = [c for c in cs if c.http]
    for r in range(sizes.http_rounds):
        for c in rotated(runnable, r):
            with serving(c) as (url, _pid):
                for conns in sizes.connections:
                    got = loadgen(
                        sizes, "http", *c.target(url), "--connections", conns, "--duration", sizes.http_seconds,
                        "--warmup", sizes.http_warmup,
                    )  # fmt: skip
                    out.add(f"http_rps_c{conns}", c.name, got["rps"])
                    out.add(f"http_p50_ms_c{conns}", c.name, got["p50_ms"])
                    out.add(f"http_p99_ms_c{conns}", c.name, got["p99_ms"])
                if c.name == "ours-tape":
                    # The same server, right after, as a stateless client sees it: one round's
                    # pair ran on the same machine state, so their ratio is fair.
                    conns = stateless_connections(sizes)
                    got = loadgen(
                        sizes, "http", *c.target(url), "--connections", conns, "--duration", sizes.http_seconds,
                        "--warmup", sizes.http_warmup, "--stateless",
                    )  # fmt: skip
                    out.add(f"http_rps_c{conns}", STATELESS, got["rps"])
                    out.add(f"http_p50_ms_c{conns}", STATELESS, got["p50_ms"])
                    out.add(f"http_p99_ms_c{conns}", STATELESS, got["p99_ms"])
                    # Its Python tools, on the same server: the Rust `echo` against the same
                    # tool as a Python function, so the ratio is the Python handler path alone.
                    for who, tool in SAME_SERVER_PY.items():
                        got = loadgen(
                            sizes, "http", *c.target(url), "--connections", conns, "--duration", sizes.http_seconds,
                            "--warmup", sizes.http_warmup, "--tool", tool,
                        )  # fmt: skip
                        out.add(f"http_rps_c{conns}", who, got["rps"])
                        out.add(f"http_p50_ms_c{conns}", who, got["p50_ms"])
                        out.add(f"http_p99_ms_c{conns}", who, got["p99_ms"])


def bench_sessions(cs: list[Contender], sizes: Sizes, out: Results) -> None:
    runnable = [c for c in cs if c.http and c.name in ("ours", "reference", "python-sdk")]
    for r in range(sizes.rounds):
        for c in rotated(runnable, r):
            with serving(c) as (url, _pid):
                got = loadgen(sizes, "initialize", *c.target(url), "--connections", 16, "--count", sizes.init_sessions)
                out.add("initialize_per_s", c.name, got["per_second"])
    # Memory per idle session: once per contender (each 10k-session run takes a while).
    small, large = sizes.memory_sessions
    for c in runnable:
        if c.name == "python-sdk":
            continue  # not a target; its sessions cost as much as the reference's to create
        with serving(c) as (url, pid):
            loadgen(sizes, "initialize", *c.target(url), "--connections", 4, "--count", 10)  # warm the code paths
            base = rss_mb(pid)
            loadgen(sizes, "initialize", *c.target(url), "--connections", 16, "--count", small)
            at_small = rss_mb(pid)
            loadgen(sizes, "initialize", *c.target(url), "--connections", 16, "--count", large - small)
            at_large = rss_mb(pid)
            out.add("session_kb_small", c.name, (at_small - base) * 1024 / small)
            out.add("session_kb_large", c.name, (at_large - base) * 1024 / large)


def bench_memory(cs: list[Contender], sizes: Sizes, out: Results) -> None:
    small, large = sizes.load_requests
    for c in cs:
        if not c.http or c.name not in ("ours", "ours-tape", "reference"):
            continue
        with serving(c) as (url, pid):
            out.add("rss_idle_mb", c.name, rss_mb(pid))
            loadgen(sizes, "http", *c.target(url), "--connections", 16, "--count", small)
            out.add("rss_small_mb", c.name, rss_mb(pid))
            loadgen(sizes, "http", *c.target(url), "--connections", 16, "--count", large - small)
            out.add("rss_large_mb", c.name, rss_mb(pid))
        if c.name != "ours-tape":
            continue
        # Stateless requests on a fresh server: each gets a session of its own that must be
        # freed with its answer, and the tape must stay bounded.
        with serving(c) as (url, pid):
            out.add("rss_idle_mb", STATELESS, rss_mb(pid))
            loadgen(sizes, "http", *c.target(url), "--connections", 16, "--count", small, "--stateless")
            out.add("rss_small_mb", STATELESS, rss_mb(pid))
            loadgen(sizes, "http", *c.target(url), "--connections", 16, "--count", large - small, "--stateless")
            out.add("rss_large_mb", STATELESS, rss_mb(pid))


def bench_fixture(sizes: Sizes, out: Results) -> None:
    from everything_mcp import Server

    for _ in range(sizes.rounds):
        t = time.perf_counter()
        for _ in range(sizes.fixture_runs):
            srv = Server(catalogs=["none"])
            srv.start_http()
            srv.stop()
        out.add("fixture_ms", "ours", (time.perf_counter() - t) * 1000 / sizes.fixture_runs)
    srv = Server(catalogs=["none"])
    try:
        for _ in range(sizes.relay_runs):
            ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
            out.add("relay_ms", "ours", first_answer_ms(srv.stdio_command, ping))
    finally:
        srv.stop()


# --------------------------------------------------------------------------------------------------
# The report


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def cell(res: Results, figure: str, who: str) -> str:
    values = res.samples.get(figure, {}).get(who)
    if not values:
        return "-"
    med = fmt(statistics.median(values))
    return med if len(values) == 1 else f"{med} ({fmt(min(values))}-{fmt(max(values))})"


def table(res: Results, title: str, columns: list[tuple[str, str]], who: list[str]) -> list[str]:
    rows = [w for w in who if any(res.samples.get(f, {}).get(w) for f, _ in columns)]
    if not rows:
        return []
    lines = [f"### {title}", "", "| | " + " | ".join(label for _, label in columns) + " |"]
    lines.append("|---|" + "---|" * len(columns))
    lines += [f"| {w} | " + " | ".join(cell(res, f, w) for f, _ in columns) + " |" for w in rows]
    return [*lines, ""]


@dataclass(frozen=True)
class Target:
    """One target of the benchmarks issue: a median, or a ratio of two, and the bound it must meet."""

    text: str
    measured: tuple[str, str]
    """(figure, contender) whose median is measured."""
    against: tuple[str, str] | None
    """(figure, contender) it is divided by; None for an absolute figure."""
    op: str
    """How the value compares with `bound`: ">=", "<=" or "<"."""
    bound: float
    unit: str

    def measure(self, res: Results) -> float | None:
        if self.against is None:
            return res.median(*self.measured)
        return ratio(res, self.measured, self.against)

    def spread(self, res: Results) -> str:
        """The min-max of the per-round values, for the report."""
        if self.against is None:
            got = res.samples.get(self.measured[0], {}).get(self.measured[1]) or []
        else:
            got = round_ratios(res, self.measured, self.against)
        return f" ({fmt(min(got))}-{fmt(max(got))})" if len(got) > 1 else ""

    def holds(self, value: float) -> bool:
        return {">=": value >= self.bound, "<=": value <= self.bound, "<": value < self.bound}[self.op]


def ratio(res: Results, a: tuple[str, str], b: tuple[str, str]) -> float | None:
    """`a` / `b`: the median of the per-round ratios when both have one sample per round (each
    round runs the contenders back to back, so a round's pair saw the same machine and drift
    between rounds cancels); otherwise the ratio of the medians."""
    got = round_ratios(res, a, b)
    if got:
        return statistics.median(got)
    x, y = res.median(*a), res.median(*b)
    return None if x is None or y is None or y == 0 else x / y


def round_ratios(res: Results, a: tuple[str, str], b: tuple[str, str]) -> list[float]:
    """`a` / `b` round by round, when both figures have the same number of samples (else [])."""
    xs = res.samples.get(a[0], {}).get(a[1]) or []
    ys = res.samples.get(b[0], {}).get(b[1]) or []
    if len(xs) != len(ys) or not xs or any(y == 0 for y in ys):
        return []
    return [x / y for x, y in zip(xs, ys, strict=True)]


TARGETS = (
    Target(
        "stdio cold start >= 8x faster than the reference",
        ("cold_start_ms", "reference"),
        ("cold_start_ms", "ours"),
        ">=",
        8,
        "x",
    ),
    Target(
        "native stdio cold start >= 50x faster than the reference",
        ("cold_start_ms", "reference"),
        ("cold_start_ms", "ours-native"),
        ">=",
        50,
        "x",
    ),
    Target(
        "native stdio cold start >= 5x faster than `python -m everything_mcp stdio`",
        ("cold_start_ms", "ours"),
        ("cold_start_ms", "ours-native"),
        ">=",
        5,
        "x",
    ),
    Target(
        "HTTP echo through the native command within 5% of the Python-launched CLI (16 connections)",
        ("http_rps_c16", "ours-native"),
        ("http_rps_c16", "ours"),
        ">=",
        0.95,
        "x",
    ),
    Target(
        "HTTP echo, 16 connections, tape on >= 60% of bare axum",
        ("http_rps_c16", "ours-tape"),
        ("http_rps_c16", "bare-axum"),
        ">=",
        0.6,
        "of ceiling",
    ),
    Target(
        "stateless HTTP echo, 16 connections, tape on >= the stateful figure",
        ("http_rps_c16", STATELESS),
        ("http_rps_c16", "ours-tape"),
        ">=",
        1.0,
        "x",
    ),
    Target(
        "... and >= 60% of bare axum",
        ("http_rps_c16", STATELESS),
        ("http_rps_c16", "bare-axum"),
        ">=",
        0.6,
        "of ceiling",
    ),
    Target(
        "... that is >= 20x the reference's requests/s",
        ("http_rps_c16", "ours-tape"),
        ("http_rps_c16", "reference"),
        ">=",
        20,
        "x",
    ),
    Target(
        "... and >= 60x the Python SDK's", ("http_rps_c16", "ours-tape"), ("http_rps_c16", "python-sdk"), ">=", 60, "x"
    ),
    Target(
        "p99 latency, 16 connections, below the reference's (ours / theirs < 1)",
        ("http_p99_ms_c16", "ours-tape"),
        ("http_p99_ms_c16", "reference"),
        "<",
        1,
        "",
    ),
    Target(
        "p99 latency, 16 connections, below the Python SDK's (ours / theirs < 1)",
        ("http_p99_ms_c16", "ours-tape"),
        ("http_p99_ms_c16", "python-sdk"),
        "<",
        1,
        "",
    ),
    Target(
        "HTTP echo with 100 non-matching fault rules within 5% of none (16 connections, tape on)",
        ("http_rps_c16", "ours-faults"),
        ("http_rps_c16", "ours-tape"),
        ">=",
        0.95,
        "x",
    ),
    Target(
        "HTTP echo on the manual clock within 5% of the real clock (16 connections, tape on)",
        ("http_rps_c16", "ours-clock"),
        ("http_rps_c16", "ours-tape"),
        ">=",
        0.95,
        "x",
    ),
    Target(
        "HTTP echo with the lab page on (records kept) within 10% of the CLI without it (16 connections)",
        ("http_rps_c16", "ours-lab"),
        ("http_rps_c16", "ours"),
        ">=",
        0.9,
        "x",
    ),
    Target(
        "HTTP echo with the apps catalog loaded within 10% of the CLI without it (16 connections)",
        ("http_rps_c16", "ours-apps"),
        ("http_rps_c16", "ours"),
        ">=",
        0.9,
        "x",
    ),
    Target(
        "HTTP echo with bearer tokens checked within 10% of none (16 connections)",
        ("http_rps_c16", "ours-bearer"),
        ("http_rps_c16", "ours"),
        ">=",
        0.9,
        "x",
    ),
    Target(
        "Python-registered echo >= 10x the Python SDK's requests/s (16 connections)",
        ("http_rps_c16", "ours-py"),
        ("http_rps_c16", "python-sdk"),
        ">=",
        10,
        "x",
    ),
    Target(
        "Python sync echo >= 0.5 of the Rust echo's requests/s (same server, tape on, 16 connections)",
        ("http_rps_c16", "ours-tape-py"),
        ("http_rps_c16", "ours-tape"),
        ">=",
        0.5,
        "x",
    ),
    Target(
        "Python `async def` echo >= 0.4 of the Rust echo's requests/s (same server, tape on, 16 connections)",
        ("http_rps_c16", "ours-tape-async"),
        ("http_rps_c16", "ours-tape"),
        ">=",
        0.4,
        "x",
    ),
    Target(
        "free-threaded Python: sync echo with 2 worker threads >= 1.6x with 1 (16 connections)",
        ("ft_rps_c16", "ours-ft-2"),
        ("ft_rps_c16", "ours-ft-1"),
        ">=",
        1.6,
        "x",
    ),
    Target(
        "`initialize` rate >= 20x the reference's",
        ("initialize_per_s", "ours"),
        ("initialize_per_s", "reference"),
        ">=",
        20,
        "x",
    ),
    Target(
        "memory per idle session (10k sessions) <= 1/10 of the reference's",
        ("session_kb_large", "ours"),
        ("session_kb_large", "reference"),
        "<=",
        0.1,
        "",
    ),
    Target(
        "RSS after 200k requests within 10% of after 10k (CLI)",
        ("rss_large_mb", "ours"),
        ("rss_small_mb", "ours"),
        "<=",
        1.1,
        "",
    ),
    Target(
        "RSS after 200k requests within 10% of after 10k (in-process, tape on)",
        ("rss_large_mb", "ours-tape"),
        ("rss_small_mb", "ours-tape"),
        "<=",
        1.1,
        "",
    ),
    Target(
        "RSS after 200k stateless requests within 10% of after 10k (in-process, tape on)",
        ("rss_large_mb", STATELESS),
        ("rss_small_mb", STATELESS),
        "<=",
        1.1,
        "",
    ),
    Target(
        "traffic capture costs <= 10% throughput (tape on / CLI, 16 connections)",
        ("http_rps_c16", "ours-tape"),
        ("http_rps_c16", "ours"),
        ">=",
        0.9,
        "",
    ),
    Target(
        "RSS after a second 10,000 tasks (the first expired) within 10% of after the first",
        ("tasks_rss_second_mb", "ours"),
        ("tasks_rss_first_mb", "ours"),
        "<=",
        1.1,
        "",
    ),
    Target("in-process create + start + stop < 5 ms", ("fixture_ms", "ours"), None, "<", 5, "ms"),
    Target("relay start → first answer < 60 ms", ("relay_ms", "ours"), None, "<", 60, "ms"),
)


def ratios(res: Results, sizes: Sizes) -> list[str]:
    """Each figure as ours / peer (see `ratio`). Above 1 is better for rates, below 1 for times and
    memory; the `better` column says which way each row reads."""
    rows: list[tuple[str, str, str, str]] = [
        ("stdio cold start", "cold_start_ms", "ours", "lower"),
        ("stdio cold start, native command", "cold_start_ms", "ours-native", "lower"),
        ("stdio pipelined req/s", "stdio_rps", "ours", "higher"),
    ]
    for c in sizes.connections:
        for who, label in (("ours", "tape off"), ("ours-tape", "tape on"), ("ours-py", "Python echo")):
            rows.append((f"HTTP req/s, {c} conn., {label}", f"http_rps_c{c}", who, "higher"))
        rows.append((f"HTTP p99, {c} conn., tape on", f"http_p99_ms_c{c}", "ours-tape", "lower"))
        rows.append((f"HTTP req/s, {c} conn., stateless, tape on", f"http_rps_c{c}", STATELESS, "higher"))
    rows += [
        ("`initialize`/s", "initialize_per_s", "ours", "higher"),
        (f"KB per idle session at {sizes.memory_sessions[1]:,}", "session_kb_large", "ours", "lower"),
        (f"RSS after {sizes.load_requests[1]:,} requests", "rss_large_mb", "ours", "lower"),
    ]
    peers = ["reference", "python-sdk", "bare-axum"]
    lines = ["## Ratios, ours / peer", "", "| figure | better | " + " | ".join(peers) + " |", "|---|---|---|---|---|"]
    for label, figure, who, better in rows:
        cells = [ratio(res, (figure, who), (figure, peer)) for peer in peers]
        if all(v is None for v in cells):
            continue
        shown = " | ".join("-" if v is None else f"{fmt(v)}" for v in cells)
        lines.append(f"| {label} | {better} | {shown} |")
    return [*lines, ""]


def report(res: Results, sizes: Sizes, who: list[str], command: str) -> str:
    who = [row for w in who for row in ((w, STATELESS, *SAME_SERVER_PY) if w == "ours-tape" else (w,))]
    http_cols: list[tuple[str, str]] = []
    for c in sizes.connections:
        http_cols += [(f"http_rps_c{c}", f"req/s, {c} conn."), (f"http_p50_ms_c{c}", "p50 ms")]
        http_cols += [(f"http_p99_ms_c{c}", "p99 ms")]
    small_s, large_s = sizes.memory_sessions
    small_r, large_r = sizes.load_requests
    lines = [
        "# Benchmarks",
        "",
        "<!-- Written by `python -m bench.run --write-docs`; do not edit by hand. -->",
        "",
        f"- **Date:** {datetime.date.today().isoformat()}",
        f"- **Machine:** {machine()}",
        f"- **Command:** `{command}`",
        f"- **Peers:** `{side_by_side.REF_PACKAGE}@{side_by_side.REF_VERSION}` (Node {node_version()}), "
        f"`{SDK_PIN}` (`MCPServer`, Python {platform.python_version()})",
        f"- **Rounds:** {sizes.rounds} (HTTP throughput: {sizes.http_rounds}; cold start: "
        f"{sizes.cold_starts} per round), contenders interleaved; cells are `median (min-max)`; "
        "ratios are the median (min-max) of the per-round ratios.",
        "",
        "## Targets",
        "",
        "| Target | Measured | Holds |",
        "|---|---|---|",
    ]
    for t in TARGETS:
        v = t.measure(res)
        shown = "not measured" if v is None else f"{fmt(v)} {t.unit}".strip() + t.spread(res)
        lines.append(f"| {t.text} | {shown} | {'-' if v is None else ('yes' if t.holds(v) else '**no**')} |")
    lines += ["", *ratios(res, sizes), "## Figures", ""]
    lines += table(res, "stdio", [("cold_start_ms", "cold start ms"), ("stdio_rps", "pipelined echo req/s")], who)
    lines += table(res, "Streamable HTTP, `tools/call echo` on one session", http_cols, who)
    lines += table(
        res,
        "Sessions",
        [
            ("initialize_per_s", "`initialize`/s"),
            ("session_kb_small", f"KB per idle session at {small_s:,}"),
            ("session_kb_large", f"at {large_s:,}"),
        ],
        who,
    )
    lines += table(
        res,
        "Resident memory under sustained load (16 connections)",
        [("rss_idle_mb", "idle MB"), ("rss_small_mb", f"after {small_r:,} MB"), ("rss_large_mb", f"after {large_r:,}")],
        who,
    )
    lines += table(
        res,
        f"`subscriptions/listen`: {sizes.listen_streams:,} streams on one stdio connection",
        [
            ("listen_kb_per_stream", "KB of resident memory per stream"),
            ("listen_fanout_ms", "one `tools/list_changed` to every stream, ms"),
        ],
        who,
    )
    lines += table(
        res,
        f"Tasks: {sizes.tasks:,} created, expired, {sizes.tasks:,} more (one stdio connection)",
        [
            ("tasks_kb_per_task", "KB of resident memory per live task"),
            ("tasks_rss_first_mb", "MB after the first round"),
            ("tasks_rss_second_mb", "MB after the second"),
        ],
        who,
    )
    lines += table(
        res,
        f"The report over {sizes.report_records:,} records (`everything_mcp.report`; a fresh process each)",
        [
            ("report_records", "records"),
            ("report_file_mb", "file MB"),
            ("report_api_s", "`of_files` s"),
            ("report_api_cpu_s", "CPU s"),
            ("report_api_records_per_s", "records/s"),
            ("report_api_rss_mb", "peak RSS MB"),
            ("report_api_import_rss_mb", "after the imports MB"),
            ("report_cli_s", "`report --json` CLI s"),
            ("report_cli_cpu_s", "CPU s"),
            ("report_cli_records_per_s", "records/s"),
            ("report_cli_rss_mb", "peak RSS MB"),
        ],
        who,
    )
    lines += table(
        res,
        f"`GET /_control/report` at {sizes.lab_records:,} records kept (`bench.lab`; an in-process server)",
        [
            ("lab_records", "records"),
            ("lab_report_first_ms", "first call ms"),
            ("lab_report_extra", "records added"),
            ("lab_report_second_ms", "second call ms"),
        ],
        who,
    )
    lines += table(
        res,
        f"The live lab page at {sizes.lab_records:,} records kept (`/_lab/` in headless Chromium)",
        [
            ("lab_live_records", "records"),
            ("lab_live_catchup_s", "all shown s"),
            ("lab_live_ping_ms", "a `ping` to the screen ms"),
            ("lab_live_ping_max_ms", "max"),
            ("lab_live_flush_ms", "one frame's flush ms"),
            ("lab_live_flush_max_ms", "max"),
            ("lab_live_render_ms", "its render ms"),
            ("lab_live_render_max_ms", "max"),
            ("lab_live_heap_mb", "JS heap MB"),
            ("lab_live_dom_elements", "DOM elements"),
            ("lab_live_rows", "rows in the DOM"),
        ],
        who,
    )
    lines += table(
        res,
        f"The HTML report of {sizes.lab_records:,} records (`report FILE --html`)",
        [
            ("lab_html_records", "records"),
            ("lab_html_mb", "file MB"),
            ("lab_html_s", "`--html` s"),
            ("lab_html_cpu_s", "CPU s"),
            ("lab_html_rss_mb", "peak RSS MB"),
            ("lab_html_load_ms", "in Chromium: `loadMs`"),
            ("lab_html_shown_ms", "`goto` to all shown ms"),
        ],
        who,
    )
    if why := res.skipped.get("lab"):
        lines += [f"The lab page in headless Chromium: skipped: {why}.", ""]
    lines += table(
        res,
        "Fixture cost",
        [("fixture_ms", "`Server()` + `start_http()` + `stop()` ms"), ("relay_ms", "relay start → first answer ms")],
        who,
    )
    lines += table(
        res,
        "Python handlers on free-threaded Python (`py_echo`, 16 connections)",
        [("ft_rps_c16", "req/s")],
        ["ours-ft-1", "ours-ft-2"],
    )
    if why := res.skipped.get("free-threaded"):
        lines += [f"Free-threaded Python: skipped: {why}.", ""]
    return "\n".join([*lines, NOTES])


NOTES = """\
## How it is measured

- **Contenders.** `ours` is the CLI (`python -m everything_mcp stdio|http`), which keeps no
  traffic in memory; its stdio figures include the Python interpreter's start. `ours-native` is
  the same command line as a native binary (`everything-mcp`, `src/main.rs`: no interpreter),
  built with the benchmarks' profile and run with the flags `ours` gets. `ours-tape` is an
  in-process `Server` as a test suite holds it, with the
  traffic tape on (the default `keep_traffic=10_000`). `ours-py` is the same with `echo`
  registered as a plain Python function. `reference` and `python-sdk` are the peers; `bare-axum`
  (`bench/rust/src/bin/bare_axum.rs`) parses the same JSON-RPC body and answers the same two SSE
  events with no MCP logic: the most an axum server can do on this machine. `ours-stateless` is
  `ours-tape` driven by a 2026-07-28 client (`loadgen --stateless`): no handshake, every POST
  carries `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method`, `Mcp-Name` and the `_meta` envelope,
  each is served on a session of its own (answered as `application/json`), and only an answer
  with `"resultType":"complete"` counts; its figures are measured right after `ours-tape`'s on
  the same server (throughput at 16 connections) and on a fresh one (memory).
- **Load.** `bench/rust/src/bin/loadgen.rs` does the MCP handshake, then runs one keep-alive
  HTTP/1.1 connection per worker, each looping `tools/call echo` on the one session and
  reading the whole SSE answer. Only requests that end inside the measured window count (1 s
  warm-up first). It runs on the same two cores as the server, as any client in a test suite
  would; the ceiling is measured the same way.
- **Cold start** is process start to the `initialize` response read on stdout. **stdio
  throughput** pipelines the calls on one pipe after 1,000 warm-up calls. **Sessions**: 16
  connections run `initialize` + `notifications/initialized` as fast as they can; memory per
  session is the growth of resident memory over 1k and 10k idle sessions. **Memory under load**
  reads resident memory after 10k and after 200k calls. **Tasks** (`bench/tasks.py`): a
  2026-07-28 client that declares the tasks extension creates 10,000 tasks (`slow_compute`,
  settling at once) on one stdio pipe of a server started with `--task-ttl 1`, waits out the
  TTL, and creates 10,000 more; resident memory after each round, and per live task. **Fixture cost** is
  `Server()` + `start_http()` + `stop()` in this process, and the relay's spawn to its first
  answer.
- Rounds are interleaved (the contender order rotates each round), so machine drift hits all
  alike. Cells show the median and the min-max of the rounds. A ratio (ours / peer, and every
  target that compares two figures) is the median of the per-round ratios: a round runs the
  contenders back to back, so each pair saw the same machine, and drift between rounds (this
  machine's speed moves by 10-20% over minutes) cancels instead of landing on one side.

## The report over 100k records

`python -m bench.run --only report` (`--smoke`: 1,000 records; `python -m bench.report [N]`
prints one round as JSON) times the client report ([report.md](report.md)) on a record file of
100,000 records of real traffic, written by an in-process `Server(record=FILE)` driven by raw
clients in waves of 50 sessions (`bench/report.py`): handshake-era in-process sessions that
`initialize`, re-list the tools after `tools/list_changed`, list and read the resources,
subscribe, ping, call `echo` 5-40 times and `get-sum`, cancel, receive
`notifications/resources/updated`, read again and unsubscribe; one in five a 2026-07-28 client
with a listen stream; one in ten a Streamable HTTP session (httpx) that ends with `DELETE`. Six
client names over about 1,500 connections: 100,059 records, 89 MB. Each round reads the file in
two fresh processes: `everything_mcp.report.of_files([FILE])`, timed after its imports, and
`python -m everything_mcp report FILE --json`, timed from spawn to exit; peak RSS is each
process's own `ru_maxrss` (`os.wait4` in a bare launcher: a child's figure includes the
process it was forked from), and CPU time is shown beside wall time, steadier on a shared
machine. The CLI's JSON is checked against the clients generated and the subscription level
each one's traffic reaches. There is no peer (no other MCP server reports on its clients from
recorded traffic), so the figures are absolute.

Measured 2026-12-02 on a 2-core machine (AMD EPYC) while other jobs shared it (load about 2.5),
3 rounds, `median (min-max)`:

| | wall s | CPU s | records/s (wall) | peak RSS MB |
|---|---|---|---|---|
| `of_files` (after imports; 22 MB after them) | 11.5 (7.26-11.7) | 8.62 (7.22-9.35) | 8,719 (8,521-13,791) | 348 |
| `python -m everything_mcp report FILE --json` | 9.07 (8.92-13.0) | 8.93 (8.42-9.38) | 11,035 (7,706-11,214) | 350 |

In one process, reading the file (`load_records`: a JSON parse and a `TrafficRecord` per line)
took 4.3 s and the checks 4.4 s; the checks' largest costs were `ClientTraffic.frames`, which
scans all of a client's records on each call (about 30 calls per client), and the forward scan
for each request's answer. Memory is about 3.3 KB per record, 3.7 times the file: every record
is kept whole, its raw text and its parsed message.

## The lab page over 100k records

`python -m bench.run --only lab` (`--smoke`: 1,000 records; `python -m bench.lab [N]` prints
one round as JSON) measures the lab page ([report.md](report.md#the-live-lab-page)) holding
100,000 records, live and as the HTML report (`bench/lab.py`). Each round drives a fresh
in-process `Server(keep_traffic=N + 1000, record=FILE)` with the report benchmark's traffic (its
sessions and six clients, `bench/report.py`) until its memory holds N records, then measures:

- `GET /_control/report`: the first call, whose `LiveReport` parses every record, and a second
  one 100 records later (a new session's handshake and pings), which parses only those but runs
  the checks over all of them again. Both answers must name every generated client.
- The live page, `/_lab/` of that server in headless Chromium (Debian's, driven by Playwright
  with `tests/browser.py`'s flags): from `page.goto` until `#count` shows every record (the
  traffic stream's catch-up); 20 real `ping`s, one at a time, each from just before it is sent
  to `#count` showing its request and answer (a `MutationObserver` stamps the wall clock); then
  `window.lab.ingest` of one record 200 times, one per animation frame as live records are
  batched, read from the page's own `stats.lastFlushMs` and `lastRenderMs`; last, after a
  garbage collection, its JS heap (CDP `Performance.getMetrics`) and its DOM elements. In live
  mode the page asks for the report at most once a second while frames arrive, so the server
  computes it meanwhile, as it would for a person watching.
- The HTML report, once the server has stopped: `python -m everything_mcp report FILE --html
  OUT` on the file as it was at N records (wall, CPU and peak RSS taken as in the report
  benchmark), the size of OUT, and OUT opened as a `file://` URL: the page's `stats.loadMs` and
  the wall time from `page.goto` until `#count` shows N.

Without Chromium or Playwright the browser figures read `skipped: <why>` and the others are
still measured. There is no peer (no other MCP server has a live page of its traffic), so the
figures are absolute.

Measured 2026-12-02 on a 2-core machine (AMD EPYC), otherwise quiet (load about 1), 3 rounds,
`median (min-max)`:

| `GET /_control/report`, 100,059 records kept | ms |
|---|---|
| first call (parses every record) | 6,761 (5,632-8,815) |
| second call, 100 records later | 1,174 (1,072-1,656) |

| The live page, 100,159 records kept | |
|---|---|
| `page.goto` until every record is shown | 4.72 s (3.72-5.60) |
| a `ping` sent until on screen | 8.84 ms (8.78-10.5); the slowest of 20: 18.3 ms (16.8-18.7) |
| one frame's flush (`lastFlushMs`) | 1.40 ms (1.20-1.65); the slowest of 200: 7.70 ms (6.50-11.6) |
| its render (`lastRenderMs`) | 0.20 ms (0.20-0.20); the slowest: 2.10 ms (0.60-4.80) |
| JS heap after a garbage collection | 99.9 MB |
| DOM elements; rows of the diagram among them | 2,062; 31 |

| The HTML report, 100,059 records | |
|---|---|
| file | 89.1 MB |
| `report FILE --html OUT` | 12.4 s (10.6-13.6) wall, 12.4 s CPU, peak RSS 1,458 MB (now 362 MB, below) |
| the page's `stats.loadMs` in Chromium | 1,044 ms (1,027-1,164) |
| `page.goto` until `#count` shows them all | 4,210 ms (4,136-4,623) |

A new frame costs the page the same at 100,000 records as at 1,000 (the smoke run: flush
1.2-1.5 ms, render 0.2 ms, the same 2,062 elements and 31 rows): the list is virtualised, so a
frame sets the count, the spacer's height and the scroll position and puts one row in the DOM;
most of the elements are the checklist's. A real request is on screen about half a frame after
it is sent: the stream delivers it at once and the page shows it at its next animation frame.
What grows with the records is the page's memory, about 1 KB of JS heap per record, and what
costs is the report: 5.6-8.8 s for the first `GET /_control/report`, and 1.1-1.7 s for each
later one however few records are new, as every check runs over every record again. With the
page open and frames arriving, that is the server's Python busy about half the time at 100,000
records. The HTML report's file is read and parsed by Chromium for about 3 s before its script
starts; the script's own work (the embedded data's `JSON.parse`, the first render, the
checklist) is the 1 s of `loadMs`. Its command peaked at 1.46 GB in this run, four times
`report --json`'s 350 MB, because it built the page's data as one JSON string
(`ensure_ascii=False`, 2-4 bytes a character for traffic with non-ASCII text) and copied it
twice; it now writes the page a record at a time (`report/webpage.py`), and the same file peaks
at 362 MB in 8.6 s, what the records themselves take.

## Memory under large traffic

`python -m bench.memory_bound` (one run, printed as JSON; `docs/traffic-format.md` for the
bound) feeds a server 2,000 `echo` calls of 1 MiB each on one handshake-era session, each call
a new id and its answer checked, and samples the server's resident memory after every call.
The CLI's `http` runs as it starts by default: the lab page on, so the newest 100,000 records
kept, within `--keep-traffic-bytes` (64 MiB). The peak must stay under the start, the ring's
64 MiB, one session's replay store (16 MiB) and 96 MB for the allocator and the frames in
flight. One run each, release build, this machine:

| server | start | peak | after the last call | kept / dropped records |
| --- | --- | --- | --- | --- |
| `http` (CLI defaults) | 33 MB | 175 MB | 164 MB | 63 / 3,940 |
| in-process `Server()` (10,000 records, 64 MiB; `--in-process`) | 33 MB | 187 MB | 165 MB | 63 / 3,940 |
| `http` bounded by count only, as before (`--before`) | 33 MB | 4,657 MB | 4,657 MB | 4,003 / 0 |
| the reference server, which keeps no traffic (`--reference`) | 78 MB | 2,593 MB | 2,402 MB | - |

Ours / reference, peak: 0.07. Before the byte bound, 1,000 such calls took the CLI from 33 MB
to 2,377 MB; `--no-lab`, 101 MB.

## What made the HTTP path fast

Profiling the server under load (`perf record --call-graph dwarf`) found, in order of weight:
Nagle's algorithm holding the second write of every SSE answer for the client's delayed ACK
(~44 ms per request; fixed with `TCP_NODELAY`); the answer leaving in two or three writes
(the handler is now polled once before the response starts; an answer complete by then goes
out as one body with a `Content-Length`, so headers, priming event and response leave in one
`writev` and the client parses no chunked framing); glibc's allocator contending between the
two worker threads (mimalloc); and, with the tape on, a copy of every parsed message and a
JSON map of HTTP metadata per request (a record now keeps the frame text only and parses `msg`
when read; the metadata is a plain struct in two allocations, and records are built outside
the recorder's lock). Smaller items: the session state copied per `tools/call` (the client's
capabilities are now shared), the arguments copied out of the request, outgoing messages
built as a JSON value before being written, every request's headers copied by the handler's
extractor, and the CORS layer's work (and its `Vary` headers) on requests without an `Origin`,
which are not from browsers (it now runs only for those that have one). The CLI builds no
records at all when nothing keeps them. For stdio cold start, the CLI serves a bare `stdio`
without importing `argparse` or the authoring machinery (45 ms to 20 ms).

A second pass, measured by the server's CPU per request and a differential profile (tape on
against the same server with `keep_traffic=0`), found: every `tools/call` copying the tool's
whole definition (a JSON object) out of the registry, about 1 us (now borrowed); axum's state
extractor cloning the CORS layer, with its method and header lists, on every request (now
shared); SipHash in the per-request maps (foldhash now); header lookups by name string, which
parse the name each time (the MCP header names are parsed once, and `Accept` is read in one
pass); the request body checked as UTF-8 twice and copied twice (once each now). Whole-program
optimisation (fat LTO, one codegen unit) gave about 9% more requests/s; `bench/rust` is built
the same way, so the ceiling is measured alike. In the tape: one clock read per frame (`ts` is
the wall clock at the recorder's start plus `t_ns`), the record allocated before the lock is
taken and freed after it is released, a `watch` send per frame that locked and notified nobody
(waiters are now told only while some wait), method names shared, and a session's POST
metadata reused while its headers repeat.

The remaining gap to the ceiling is the MCP work itself, spread thin over the profile: parsing
the body into a JSON-RPC message, the session and protocol-version checks, the Host/Origin
guard, the tool call and its result value, serialising it, the SSE framing and the
stream bookkeeping that makes the answer resumable, each a few percent. The load generator
takes its share of the same two cores, the larger for the faster server.

## Python handlers: what stood between the user's function and the wire

`ours-tape-py` and `ours-tape-async` are `ours-tape`'s own `py_echo` and `py_async_echo`
(`bench/peers/ours_in_process.py --python-tools`): the built-in `echo` written as a plain Python
function and as an `async def`, registered beside it and called right after it on the same server
(`loadgen --tool`), so their ratio to `ours-tape` is the Python handler path alone. Before this
work they served 0.26 and 0.18 of the Rust `echo`'s requests/s (16 connections, non-LTO release
build). A `perf` profile of the server under the Python echo put 62% of its time in the kernel
switching threads (`finish_task_switch`, futex waits) and 3.5% in the Python interpreter: each
call hopped to a thread of tokio's blocking pool, and the 16 threads of 16 concurrent calls
handed the GIL to each other call by call. What changed, each measured same-run A/B (separate
servers, alternated, 16 connections, 2-3 s rounds, medians of 6 rounds; this machine's rounds
vary by ±10%, so only the large steps are sure):

The targets, measured with the release build (fat LTO) on 2026-12-03 by `python -m bench.run
--only http,free-threaded --contenders ours-tape,ours-py` (5 rounds, 16 connections, tape on;
median and min-max of the per-round values):

| on `ours-tape`'s server | req/s | p99 ms | / Rust `echo` (per round) | target |
|---|---|---|---|---|
| `echo` (Rust, built in) | 67,576 (60,229-72,670) | 0.47 | 1 | |
| `py_echo` (plain function) | 38,825 (36,058-40,192) | 0.86 | 0.55 (0.54-0.64) | >= 0.5: holds |
| `py_async_echo` (`async def`) | 32,219 (30,972-33,359) | 1.04 | 0.46 (0.45-0.52) | >= 0.4: holds |

`ours-py` (a server whose only tool is the Python `echo`) went from 11,459 to 37,580 req/s at 16
connections (3.3x), and from 3,902 to 6,597 on one connection.

| step | Python echo req/s, median | ratio |
|---|---|---|
| one runner drains the sync calls; async calls start in batches (1) | 0.26 → 0.44-0.47 of Rust's | ~1.7x |
| a tool's `str` answered without JSON text (`Reply.tool_text`) | 17,265 → 18,517 | 1.06x |
| runner threads of our own, attached for life (2) | 17,191 → 21,744 | 1.24x |
| async: the loop woken by a socket it watches (3) | 21,608 → 23,354 | 1.09x |

(1) No per-call hop to tokio's blocking pool and no GIL handoff: the runner takes the next call
while it holds the GIL; `async def` calls queue for the loop thread. (2) A thread that attaches to
Python without a thread state gets one and loses it on leaving, which tokio's pool threads did
every time the queue ran dry. (3) A byte written by the tokio worker, instead of a runner calling
`call_soon_threadsafe` (the `async def` echo's figures).

Tried and dropped: running the sync function on the tokio worker that holds the request, inside
`block_in_place` (safe for a handler that blocks: the worker's other tasks move to a new thread):
0.49x the runner's requests/s, since every call still hands the worker's core to another thread;
a runner lingering 50 µs for the next call before parking: 0.96x (no gain, CPU taken from the
workers); an on-loop `create_task` without the wrapper coroutine and closures: 0.94x. Two bugs
the benchmark found on the way: a call still queued after 2 ms added a runner even when the queue
was moving, so the first seconds of a run grew runners that then fought over the GIL (a third of
the requests/s, 23 ms p99), and a `Handle` kept every call it ever served (100,000 records after
five seconds of load, and the garbage collector walking them: the `async` figure measured after
the sync one fell to 6,101 req/s with a 14 ms p99); a handle now keeps its newest 10,000.

Free-threaded CPython: the module is declared GIL-free (`#[pymodule(gil_used = false)]`) and, on
an interpreter without the GIL, as many runners as worker threads drain the queue side by side;
`free-threaded` measures `py_echo` with 1 and with 2 worker threads. PyO3 0.30 supports 3.14t and
newer only (it dropped 3.13t in 0.29). What was tried on this machine: Debian trixie's `python3.13`
source package built a working 3.13t (`--disable-gil`, 250 s), which PyO3 refuses; `python3.14`
is listed in sid's and forky's Sources indexes, but the mirror reachable here answers 404 for its
source files, every version; Debian builds no free-threaded 3.14 binary; nothing on the Python or
npm registries carries CPython's source or a 3.14t build, and python.org and GitHub are not
reachable. `scripts/free_threaded_python.sh` does the whole route (sid's source, `--disable-gil`,
a venv, this package installed into it) where the mirror serves the source; until then the
benchmark is skipped, with the reason in the report.

## Run-to-run variance, and where the tape's cost is

This is a shared 2-core machine whose speed drifts by 10-20% over minutes, so single rounds
land on both sides of a bound (the per-round ranges in the Targets table) and a figure near a
bound can move across it between runs of the same build; the medians of paired rounds are
steadier than any single round. The thinnest margins are the tape's: tape on / tape off and
tape on / ceiling. The server's own CPU per request (from `/proc/<pid>/stat`, 16 connections)
is steadier than its requests/s: 22-25 us with the tape off, 24-29 us with it on, against
14-17 us for bare axum.

The tape's cost is mostly memory, not work. Recording the two frames of a request takes about
0.4 us (measured alone, one thread); an in-process server with `keep_traffic=100` costs no more
CPU per request than one with the tape off. At the default 10,000 each new record evicts one
about 10,000 frames old, whose memory (the record, its frame text, its SSE ids) has left the
caches, so freeing it and reusing its space misses the cache on every request: that is the
5-10% the tape costs. A smaller `keep_traffic` makes the tape nearly free; the default keeps
10,000 frames so that a test sees all of its traffic.

The stateless era (the first full run with it, 2026-11-30) does not meet its two throughput
targets yet: stateless / stateful 0.88, and 0.49 of the ceiling. A stateless POST does more than
a stateful one on this path: it builds a connection `Session` and a request `Session` of its own
(the handshake era reuses its session), about five cancellation tokens and a channel, and it
parses and answers larger frames (the envelope in every request; `resultType` and `serverInfo`
in every result). Computing the MRTR binding (a SHA-256 of the arguments) only when a
`requestState` is opened or sealed took the ratio from 0.74 to 0.86 in an A/B; `serverInfo` is
built once per server. The stateful figure read 0.57 of the ceiling in this run against 0.62 in
the run at the end of the previous issue; against the reference it is unchanged (25.8x against
26.1x), an A/B of the recorder's new era tagging showed no difference, and callgrind counts the
same instructions per stdio request as before that issue (27.6k), so the ceiling's share moved
with the run. Listen streams cost about 7 KB each, and one change reaches 10,000 of them in about
40 ms.

Cutting per-request work for those targets (issue 13) took the in-process server's instructions
per request (callgrind, tape on, 4 connections) from 87.3k to 73.8k for a stateless `tools/call
echo` and from 61.4k to 55.4k for a stateful one; its CPU per request (16 connections, 80,000
requests, median of eight interleaved runs on a busy machine) went from 20.8 to 17.1 us
stateless and from 18.4 to 15.8 us stateful. Requests/s moved less (paired medians: 1.09x
stateless, 1.01x stateful; stateless / stateful 0.88 to 0.90), as the load generator shares
the two cores with the server. Most of it was SipHash: with `preserve_order`
every object key is hashed, so the request path now reads small objects by comparing keys
(`src/field.rs`), parses a frame's message object straight into its members, and keys the
registry with foldhash; the rest was copies (the envelope's `clientInfo`, the result's
`serverInfo` `_meta`, now built once) and `format!` in SSE event ids. `preserve_order` stays:
it is the order of every object on the wire.

A second round took the same counts to 71.5k stateless and 55.2k stateful (from 75.0k and
56.5k once the tasks work had landed): a stateless request's rounds read the arguments their
binding needs from the request's text, and only when they seal or open a state, instead of
copying them for every request; a round ends with a flag and a `Notify` instead of a
cancellation token; a JSON answer's body shares the recorded frame text; the `x-mcp-header`
walk borrows the schema's property names; and the exact `Accept` value the official SDKs send
is admitted whole (about 1,000 instructions a POST in both eras). Paired medians of seven
interleaved rounds (16 connections, 80,000 requests, busy machine): stateless / stateful 0.90
to 0.93, CPU per request 24.1 to 23.6 us stateless. What still separates the eras (about 16k
instructions) is mostly the envelope: parsing it into `preserve_order` maps (about 6k, its
long keys allocated and hashed with SipHash), the connection and request sessions and their
tokens (about 3k), the `serverInfo` `_meta` copied into and written out of every result
(about 3k), and the header checks. The load generator is left as it is: it costs about 22k
instructions a request in either mode (callgrind; slightly more for the stateful SSE
answers), and a cheaper one would lower the stateless / stateful and ceiling ratios rather
than raise them, since the server's larger share would then weigh more.

A third round (2026-12-01) took the counts to 54.4k stateless and 52.3k stateful; bare axum,
measured the same way, is 39.7k. Both eras: the DNS-rebinding guard and CORS are one plain
service in front of the router instead of two `from_fn` middlewares, which cloned the boxed
inner service, boxed a `Next` and a future per layer per request (17 of a request's 88
allocations, about 2.5k instructions), and a request's recorded headers are found in one pass
over its headers instead of six hashed lookups. The stateless era: a request's `_meta` is kept
as its text and read member by member (`src/protocol/meta.rs`: no `preserve_order` maps for the
envelope, `clientInfo` parsed only when a handler reads it; about 4k); a result's
`resultType`, cache hints and `serverInfo` `_meta` are written as prepared text around the
handler's members when the answer is encoded, not merged into its value (about 5k); and an HTTP
POST's connection serves its one request itself, neither a second session nor an in-flight
registration (about 2.4k); its early frames wait in one small outlet instead of an unbounded
channel, its three routing headers are found in one pass, a tool's schema is walked for
`x-mcp-header` once instead of on every call, and a client declaring no capabilities shares
one `{}` (about 2k together). strace counts the same two system calls per request in both eras
and for bare axum (one `recvfrom`, one `writev`), so what remains between them is user-space
work: reading the envelope's members out of the text (about 3k, most of it the parser
walking the ~200 extra bytes), the header checks (about 1k), the connection's session (about
1k), against the stateful answer's SSE framing and event ids. Interleaved A/B rounds on a quiet
machine at 56.5k (16 connections, 4 s each): stateless / stateful 0.97-1.06, stateful
0.58-0.68 and stateless 0.61-0.69 of bare axum.

The structure issue (2026-12-02: one exchange decision, a request's `Scope` apart from its
connection, layers, one JSON parse path, the seams) was a refactor held to +3% of its base
commit's instructions (`python -m bench.callgrind`): stateful 52.7k (+0.3%), stateless 55.5k
(+1.3%), the Python-registered echo 136.2k (+0.8%). The machine of this run is not the one of
the runs above: side by side on it, the base commit (6d73070) and the refactor measure alike,
run for run interleaved (16 connections, tape on): 0.76 / 0.72 and 0.73 / 0.71 of the ceiling
stateful, 0.72 / 0.69 and 0.75 / 0.69 stateless, stateless / stateful 1.00 / 1.00 / 1.04 and
1.01 / 0.95 / 0.96; against the reference the base reads 18.4x and the refactor 19.0x. On this
machine the reference answers relatively faster than on the earlier one (28.5x there), so the
20x bound and the stateless / stateful >= 1 bound (a ratio of two figures within a few percent of
each other) miss in this run for both commits alike. The tasks memory figure is as noisy:
1.09 and 1.15 for the base commit, 1.04 for the refactor, in consecutive runs.

Fault rules (2026-12-02) came after this run, so its table has no `ours-faults` figure: in
runs of `--only http --contenders ours-tape,ours-faults` on the same machine, 100 rules that
match none of the load read 0.91 and 0.93 of the figure without rules while each rule was
checked against each frame (a name lookup and two compares per rule), and 0.96-1.01 once the
rules naming a tool were indexed by that name (`src/faults/mod.rs`, `RuleSet`) and the rule set
became the seams' hooks itself (one shared pointer read per frame, as with no rules).

The manual clock (2026-12-02, `ours-clock`: `ours-tape` on `clock="manual"`, never advanced)
came after this run too: in a run of `--only http --contenders ours-tape,ours-clock` on the same
machine it read 0.985 of the real clock at 16 connections (70.3k / 71.4k requests/s, medians of
5) and 0.995 at 64. Nothing on a request's path reads the clock; an SSE stream that waits sets
its keep-alive sleep on it (a lock and a map insert instead of a tokio timer).

Token validation (2026-12-02, `ours-bearer`: `ours` behind the auth lab's `--auth bearer --token
T`, every request sent with `Authorization: Bearer T` by `loadgen --bearer T`) came after this
run as well: in a run of `--only http --contenders ours,ours-bearer` on a machine of the same
kind, busy with other jobs from its second round on (about half its quiet speed), it read 0.98
of the CLI without auth at 16 connections (24.6k / 24.9k requests/s, medians of 5; 0.88-0.99
round by round) and 0.97 at 64. Four more runs read 0.98, 1.05, 1.04 and 0.97 at 16
connections; their rounds on a quiet machine (40-45k requests/s) 0.88-1.06. The server's
CPU per request (16 connections, 80,000 requests, six interleaved rounds) was the same with and
without tokens: 26.1 and 26.3 us. A bearer check is a header lookup, a prefix strip and a
string compare per `--token`; OAuth mode's (an HS256 signature and the claims checked against
the server's clock) is not measured here.

The lab page's memory (2026-12-02, `ours-lab`: the CLI's `http` as it starts by default, the
lab page on and the newest 100,000 records kept, against `ours` with `--no-lab`) came after
this run too: in a run of `--only http --contenders ours,ours-lab` on the same kind of machine it
read 0.92 of the CLI without the lab at 16 connections (39.1k / 43.1k requests/s, medians of 5;
0.85-1.13 round by round), 0.94 at one connection and 1.12 at 64 (noise). What it costs is the
record of every frame: the CLI without the lab builds none.

The apps catalog (2026-12-03, `ours-apps`: the CLI's `http` serving `--catalog everything,apps`,
the MCP Apps host lab's 50 tools and 27 views beside the reference's surface) came after this
run: in a run of `--only http --contenders ours,ours-apps` (five rounds, on a machine busy with
a browser test beside it) the medians read 43.6k / 43.7k requests/s at 16 connections (1.00;
0.50-2.04 round by round, the machine's noise), 46.2k / 53.3k at 64 and 8.1k / 8.7k at one.
The server's CPU per `echo` (16 connections, 40,000 requests, eight interleaved rounds): 23.2
and 20.8 us, medians, with ranges that overlap (19.0-29.0 and 19.2-23.3). Nothing of the lab is
on a call's path: its definition views run on `tools/list` and `resources/list` only. A second
run of five rounds, browser tests beside it, read 0.95 of the CLI without the apps catalog at
16 connections (0.71-1.44 round by round).

## Installs and source builds

Most users install a wheel: the extension and the native `everything-mcp` in one abi3 file per
platform (scripts/wheel.sh, `.github/workflows/release.yml`), which pip installs into a fresh
virtual environment in about 2 s (the test command prints the figure for its dev-profile wheel,
113 MB unpacked; a release wheel is a quarter of that). Before the wheels, every install was a
source build: `pip install .` took 150-320 s and a Rust toolchain.

What a source build (`pip install .`, the release profile) costs, and what the profile's choices
buy, measured from scratch on this 2-core machine (`maturin build --profile P --features python`,
the library only, as pip builds it; then `python -m bench.run --only http,stdio --contenders
ours,ours-tape --rounds 3` on each candidate's wheel, candidates run one after another and the
release profile once more at the end; one build each but the release profile's):

| profile | settings | build s | `ours` HTTP req/s, 16 conn. | 64 conn. | tape on, 16 conn. | stdio req/s |
|---|---|---|---|---|---|---|
| release (kept) | fat LTO, 1 codegen unit | 266 (423: `--timings`, busy) | 42,464 | 50,621 | 34,014 | 243,493 |
| thin | thin LTO, 16 units | 209 | 38,471 (0.91) | 44,054 (0.87) | 35,365 (1.04) | 227,002 (0.93) |
| no LTO | 16 units | 231 | 34,924 (0.82) | 35,346 (0.70) | 29,630 (0.87) | 185,314 (0.76) |
| no LTO, dependencies at `opt-level` 2 | | 285 | 35,265 (0.83) | 40,913 (0.81) | 36,881 (1.08) | 267,622 (1.10) |
| no LTO, dependencies at `opt-level` 1 | | 257 | 36,728 (0.86) | 36,072 (0.71) | 30,205 (0.89) | 208,800 (0.86) |

The one figure steady enough to compare across builds here, `ours` at 16 and 64 connections,
reads 9-30% lower for every cheaper profile (each one's best round below the release profile's
worst), while their build times (209-285 s) are within this machine's run-to-run spread (the
release profile itself took 266 s and 423 s). Whole-program optimisation still pays, and several
targets sit within 10% of their bound (stateless echo at 0.62 of bare axum against 0.6), so no
cheaper profile holds every target: `pip install .` keeps the release profile, as the wheels and
these benchmarks do. Where a build's time goes: the dependencies finish after 150-230 s (the
slowest: jsonschema 25 s, tokio 22 s, regex-automata 21 s, clap 17 s, jsonwebtoken 14 s; whole
subtrees: jsonschema's 54 crates 94 s, jsonwebtoken's 33 crates 65 s of crate time), then our
crate's fat-LTO code generation runs on one core for 110-190 s. The native binary alone
(`cargo build --release --bin everything-mcp`) took 284 s from scratch, 12.2 MB; since the library
no longer declares a `cdylib` crate type (maturin asks cargo for one), building the binary or the
tests links no shared library they do not use.
"""
"""How the figures are taken and what the profile showed; appended to the report."""


def machine() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB"
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu}){mem}"


def node_version() -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return "?"


# --------------------------------------------------------------------------------------------------
# Main


def bench_listen(sizes: Sizes, out: Results) -> None:
    """Many listen streams on one server: KB each, and one list_changed's fan-out (`bench.listen`)."""
    for _ in range(sizes.rounds):
        figures = listen.measure(sizes.listen_streams)
        out.add("listen_kb_per_stream", "ours", figures["kb_per_stream"])
        out.add("listen_fanout_ms", "ours", figures["fanout_ms"])


def bench_tasks(sizes: Sizes, out: Results) -> None:
    """Many tasks created and expired on one server: KB per live task, and whether memory stays
    bounded once they expire (`bench.tasks`)."""
    for _ in range(sizes.rounds):
        figures = tasks.measure(sizes.tasks)
        out.add("tasks_kb_per_task", "ours", figures["kb_per_task"])
        out.add("tasks_rss_first_mb", "ours", figures["rss_first_mb"])
        out.add("tasks_rss_second_mb", "ours", figures["rss_second_mb"])


def bench_report(sizes: Sizes, out: Results) -> None:
    """`everything_mcp.report` over one generated record file, in a fresh process per reading:
    `of_files` and `python -m everything_mcp report FILE --json` (`bench.report`; no peer)."""

    def log(line: str) -> None:
        print(f"bench: report: {line}", file=sys.stderr, flush=True)

    for round_no, figures in enumerate(report_bench.measure(sizes.report_records, sizes.rounds, log)):
        for name, value in figures.items():
            if round_no == 0 or name not in ("records", "file_mb"):  # one file for every round
                out.add(f"report_{name}", "ours", value)


def bench_lab(sizes: Sizes, out: Results) -> None:
    """The lab page holding many records (`bench.lab`; no peer): `GET /_control/report`, the live
    page in headless Chromium, the HTML report. Without Chromium its browser figures are skipped,
    with the reason in the report."""

    def log(line: str) -> None:
        print(f"bench: lab: {line}", file=sys.stderr, flush=True)

    rounds, skipped = lab_bench.measure(sizes.lab_records, sizes.rounds, log)
    for round_no, figures in enumerate(rounds):
        for name, value in figures.items():
            # The counts come from one seed: the same every round.
            if round_no == 0 or name not in ("records", "report_extra", "live_records", "html_records"):
                out.add(f"lab_{name}", "ours", value)
    if skipped:
        out.skipped["lab"] = skipped


FREE_THREADED_PYTHON = ROOT / ".cache" / "venv-ft" / "bin" / "python"
"""The free-threaded interpreter's environment (`scripts/free_threaded_python.sh` makes it and
installs the package into it)."""


def free_threaded_python() -> tuple[Path | None, str]:
    """The free-threaded interpreter with the package installed, or None and why not."""
    if not FREE_THREADED_PYTHON.exists():
        return None, f"no free-threaded interpreter at {FREE_THREADED_PYTHON.relative_to(ROOT)}"
    probe = "import sys, everything_mcp; print(int(sys._is_gil_enabled()))"
    done = subprocess.run([str(FREE_THREADED_PYTHON), "-c", probe], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None, f"the free-threaded interpreter cannot import everything_mcp: {done.stderr.strip()[-200:]}"
    if done.stdout.strip() != "0":
        return None, "the interpreter at .cache/venv-ft runs with the GIL enabled"
    return FREE_THREADED_PYTHON, ""


def bench_free_threaded(sizes: Sizes, out: Results) -> None:
    """The sync Python echo (`py_echo`) of an in-process server on the free-threaded interpreter,
    16 connections, with 1 and with 2 runtime worker threads: whether Python handlers run in
    parallel. Skipped, with the reason in the report, when no such interpreter is installed."""
    py, why = free_threaded_python()
    if py is None:
        out.skipped["free-threaded"] = why
        return
    in_process = str(BENCH / "peers" / "ours_in_process.py")
    conns = stateless_connections(sizes)

    def server(threads: int) -> Callable[[int], tuple[list[str], dict[str, str]]]:
        return lambda p: (
            [str(py), in_process, "--python-tools", "--worker-threads", str(threads), "--port", str(p)],
            {},
        )

    threads = [Contender(f"ours-ft-{n}", None, server(n)) for n in (1, 2)]
    for r in range(sizes.http_rounds):
        for c in rotated(threads, r):
            with serving(c) as (url, _pid):
                got = loadgen(
                    sizes, "http", *c.target(url), "--connections", conns, "--duration", sizes.http_seconds,
                    "--warmup", sizes.http_warmup, "--tool", "py_echo",
                )  # fmt: skip
                out.add(f"ft_rps_c{conns}", c.name, got["rps"])


BENCHMARKS: dict[str, Callable[[list[Contender], Sizes, Results], None]] = {
    "cold-start": bench_cold_start,
    "stdio": bench_stdio,
    "http": bench_http,
    "sessions": bench_sessions,
    "memory": bench_memory,
    "fixture": lambda _cs, sizes, out: bench_fixture(sizes, out),
    "listen": lambda _cs, sizes, out: bench_listen(sizes, out),
    "tasks": lambda _cs, sizes, out: bench_tasks(sizes, out),
    "report": lambda _cs, sizes, out: bench_report(sizes, out),
    "lab": lambda _cs, sizes, out: bench_lab(sizes, out),
    "free-threaded": lambda _cs, sizes, out: bench_free_threaded(sizes, out),
}
PEER_BENCHMARKS = frozenset(("cold-start", "stdio", "http", "sessions", "memory", "free-threaded"))
"""The benchmarks that run the contenders (and loadgen): the others measure our server alone, so
a run of only those neither builds bench/rust nor installs the peers."""
NAMES = (
    "ours",
    "ours-native",
    "ours-lab",
    "ours-apps",
    "ours-bearer",
    "ours-tape",
    "ours-py",
    "ours-faults",
    "ours-clock",
    "reference",
    "python-sdk",
    "bare-axum",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="every benchmark once, tiny sizes (for the test command)")
    parser.add_argument("--write-docs", action="store_true", help=f"rewrite {DOCS.relative_to(ROOT)}")
    parser.add_argument("--only", help=f"comma-separated benchmarks: {', '.join(BENCHMARKS)}")
    parser.add_argument("--contenders", help=f"comma-separated: {', '.join(NAMES)} (default: all available)")
    parser.add_argument("--rounds", type=int, help="rounds per figure (default 3; HTTP throughput 5)")
    parser.add_argument("--json", metavar="FILE", help="also write every sample as JSON")
    parser.add_argument("--from-json", metavar="FILE", help="measure nothing: report the samples a --json run wrote")
    ns = parser.parse_args(argv)
    sizes = SMOKE if ns.smoke else Sizes()
    if ns.rounds:
        sizes = replace(sizes, rounds=ns.rounds, http_rounds=ns.rounds)
    wanted = set(ns.contenders.split(",")) if ns.contenders else set(NAMES)
    if unknown := wanted - set(NAMES):
        parser.error(f"unknown contenders: {', '.join(sorted(unknown))}")
    benches = ns.only.split(",") if ns.only else list(BENCHMARKS)
    if unknown := set(benches) - set(BENCHMARKS):
        parser.error(f"unknown benchmarks: {', '.join(sorted(unknown))}")

    if ns.from_json:
        res = Results(samples=json.loads(Path(ns.from_json).read_text()))
        text = report(res, sizes, [n for n in NAMES if n in wanted], "python -m bench.run --write-docs")
        print(text)
        if ns.write_docs:
            DOCS.write_text(text + "\n")
        return 0

    if PEER_BENCHMARKS & set(benches):
        print("bench: building bench/rust (loadgen, bare-axum)", file=sys.stderr)
        build_rust_tools(sizes.rust_profile)
        if "ours-native" in wanted:
            if os.environ.get("EVERYTHING_MCP_BINARY"):
                print(f"bench: the native everything-mcp at {native_binary()}", file=sys.stderr)
            else:
                print(f"bench: building the native everything-mcp ({sizes.rust_profile} profile)", file=sys.stderr)
            build_native(sizes.rust_profile)
        if "reference" in wanted and not ensure_reference():
            print("bench: the reference server could not be installed; skipping it", file=sys.stderr)
            wanted.discard("reference")
        if "python-sdk" in wanted and not ensure_python_sdk():
            print(f"bench: {SDK_PIN} could not be installed; skipping the Python SDK", file=sys.stderr)
            wanted.discard("python-sdk")
    cs = contenders(wanted, sizes.rust_profile)
    res = Results()
    for name in benches:
        t = time.perf_counter()
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        BENCHMARKS[name](cs, sizes, res)
        print(f"bench: {name} done in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
        if ns.json:  # after each benchmark: a later one that fails loses nothing measured
            Path(ns.json).write_text(json.dumps(res.samples, indent=1))
    command = "python -m bench.run" + (" --smoke" if ns.smoke else "") + (f" --only {ns.only}" if ns.only else "")
    command += " --write-docs" if ns.write_docs else ""
    text = report(res, sizes, [c.name for c in cs], command)
    print(text)
    if ns.json:
        Path(ns.json).write_text(json.dumps(res.samples, indent=1))
    if ns.write_docs:
        DOCS.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
