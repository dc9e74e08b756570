"""The soak (`bench/soak.py`, docs/reliability.md "Soak") as a smoke run: five seconds of its mixed
load against the native command, so the script cannot rot. The long runs (60 s in the test
command, 600 s and more by hand) are called separately."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import native_cmd

ROOT = Path(__file__).resolve().parent.parent
TRANSPORTS = {"http 2025-11-25", "http 2025-03-26", "http 2026-07-28", "sse 2024-11-05", "sse 2026-07-28"}


@pytest.mark.timeout(180)
@pytest.mark.skipif(
    os.environ.get("EVERYTHING_MCP_SOAK_RAN") == "1",
    reason="scripts/test ran the 60 s soak, which checks everything this does",
)
def test_soak_smoke_run_exits_0_with_its_figures() -> None:
    env = {**os.environ, "EVERYTHING_MCP_BINARY": native_cmd()[0]}
    done = subprocess.run(
        [sys.executable, "-m", "bench.soak", "--seconds", "5"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["ok"] is True and figures["smoke"] is True
    assert figures["unexpected_errors"] == 0 and figures["failures"] == []
    assert figures["requests"] > 100
    assert TRANSPORTS | {"stdio 2025-06-18"} <= figures["transports"].keys()
    assert all(t["requests"] > 0 for t in figures["transports"].values())
    assert figures["lab"]["http"]["records"] > 0 and figures["lab"]["stdio"]["records"] > 0
    for server in ("http", "stdio"):
        rules = figures["faults"][server]
        assert all(rule["hits"] == rule["seen"] for rule in rules.values()), rules
        sampled = figures["servers"][server]
        assert sampled["start_mib"] > 0 and sampled["fds"]["end"] > 0 and sampled["threads"]["end"] > 0
    assert "soak: ok" in done.stdout
