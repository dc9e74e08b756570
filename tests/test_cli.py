"""The command line of both launchers, `python -m everything_mcp` and the native `everything-mcp`
(`cli_cmd`: one definition of the flags, `src/cli/`): help, version, usage errors, the default
command, the terminal hint, signals; and what only one of them has (`report` and `config` are the
Python package's)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import everything_mcp

from conftest import SERVER_CMD, WAIT, native_cmd


def run(cmd: list[str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*cmd, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={**os.environ, "COLUMNS": "400"},
    )


def test_version(cli_cmd: list[str]) -> None:
    r = run(cli_cmd, "--version")
    assert r.returncode == 0
    assert r.stdout == f"everything-mcp {everything_mcp.__version__}\n"


def test_help_lists_commands(cli_cmd: list[str]) -> None:
    r = run(cli_cmd, "--help")
    assert r.returncode == 0
    for command in ["stdio", "http", "sse", "report", "config", "streamableHttp"]:
        assert command in r.stdout
    r = run(cli_cmd, "stdio", "--help")
    assert "--record <FILE>" in r.stdout and "--log-level <LEVEL>" in r.stdout


def test_the_launchers_print_the_same_help() -> None:
    for args in [["--help"], ["stdio", "--help"], ["http", "--help"], ["sse", "--help"]]:
        assert run(SERVER_CMD, *args).stdout == run(native_cmd(), *args).stdout, args


def test_unknown_command_prints_usage_and_exits_2(cli_cmd: list[str]) -> None:
    r = run(cli_cmd, "bogus")
    assert r.returncode == 2
    assert r.stderr.startswith("error: unrecognized subcommand 'bogus'")
    assert "Usage: everything-mcp <COMMAND>" in r.stderr
    assert r.stdout == ""


def test_no_command_serves_stdio(cli_cmd: list[str]) -> None:
    r = run(cli_cmd, stdin='{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    r = run(cli_cmd, "--record", os.devnull, stdin='{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert json.loads(r.stdout)["id"] == 1


def test_bad_values_are_usage_errors(cli_cmd: list[str]) -> None:
    for args, said in [
        (["stdio", "--catalog", "nope"], "invalid value 'nope' for '--catalog <NAMES>'"),
        (["http", "--port", "70000"], "expected a port 0-65535, got 70000"),
        (["stdio", "--log-level", "loud"], 'invalid level "loud"'),
        (["stdio", "--tool-scope", "x"], "unexpected argument '--tool-scope'"),
    ]:
        r = run(cli_cmd, *args)
        assert r.returncode == 2, args
        assert said in r.stderr, (args, r.stderr)


def test_a_wrong_setting_is_named_before_serving(cli_cmd: list[str], tmp_path: object) -> None:
    r = run(cli_cmd, "stdio", "--task-ttl", "-1")
    assert (r.returncode, r.stderr) == (
        2,
        "everything-mcp: invalid configuration: task_ttl must be a non-negative number of seconds\n",
    )
    r = run(cli_cmd, "stdio", "--faults", "/nonexistent/faults.json")
    assert r.returncode == 2 and r.stderr.startswith("everything-mcp: invalid configuration: --faults /nonexistent")


def test_terminal_stdin_gets_a_hint(cli_cmd: list[str]) -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([*cli_cmd], stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(follower)
        assert proc.stderr is not None
        hint = proc.stderr.readline().decode()
        assert hint.startswith("everything-mcp: serving MCP on stdio")
        os.write(leader, b"\x04")  # Ctrl-D: end of input
        assert proc.wait(timeout=WAIT) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""
    finally:
        os.close(leader)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signals_exit_cleanly_and_promptly(signum: int, cli_cmd: list[str]) -> None:
    proc = subprocess.Popen([*cli_cmd, "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    t0 = time.monotonic()
    proc.send_signal(signum)
    assert proc.wait(timeout=WAIT) == 0
    # stdin is still open: the pending read must not hold the exit up (typically ~60 ms).
    assert time.monotonic() - t0 < 1.0
    assert proc.stderr.read() == b""
    proc.stdin.close()
    proc.stdout.close()
    proc.stderr.close()


def test_closed_stdin_is_not_a_crash(cli_cmd: list[str]) -> None:
    r = subprocess.run([*cli_cmd, "stdio"], stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT)
    assert r.returncode == 0 and r.stdout == b""


def test_cli_help_prints_the_core_defaults(cli_cmd: list[str]) -> None:
    """The command line restates no default: its help shows what the Rust core would use."""
    from everything_mcp import DEFAULTS

    out = run(cli_cmd, "http", "--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    for expected in [
        f"address to bind (default: {DEFAULTS['host']})",
        f"most concurrent sessions (default: {DEFAULTS['max_sessions']})",
        f"0 never (default: {DEFAULTS['session_idle_timeout']:g})",
        f"Last-Event-ID resumption (default: {DEFAULTS['event_store_capacity']})",
        f"(default: {DEFAULTS['max_message_bytes']:,})",
        f"(default: {DEFAULTS['update_delay']:g})",
        f"(default: {','.join(DEFAULTS['catalogs'])})",
    ]:
        assert expected in text
    assert DEFAULTS["session_idle_timeout"] == 1800.0 and DEFAULTS["max_sessions"] == 1000


def test_every_option_has_a_flag_in_the_help() -> None:
    """Every option of the Rust options types (`_core.SERVER_OPTIONS`, `_core.HTTP_OPTIONS`) has
    its flag (checked in Rust: `cli::tests::every_option_has_its_flag`), and `http --help`
    describes each in words of its own: here, that the help names as many flags as there are
    options and CLI settings."""
    from everything_mcp import _core

    out = run(SERVER_CMD, "http", "--help").stdout
    flags = {line.split()[0].rstrip(",") for line in out.splitlines() if line.strip().startswith("--")}
    cli_only = {"--host", "--port", "--log-level", "--faults", "--faults-preset", "--faults-seed", "--help"}
    negations = {"--no-send-list-changed", "--no-lab"}
    # `replay` is the `replay` command (its members are that command's flags).
    assert len(flags - cli_only - negations) == len(_core.SERVER_OPTIONS) - 1 + len(_core.HTTP_OPTIONS)


def test_report_and_config_from_the_native_command() -> None:
    """The native command has no `report` or `config`: next to the Python the wheel installed it
    beside, it hands them over; alone, it says where they are."""
    binary = native_cmd()[0]
    r = subprocess.run([binary, "config", "json", "--port", "4000"], capture_output=True, text=True, timeout=WAIT)
    beside = os.path.join(os.path.dirname(binary), "python3")
    if os.path.isfile(beside):
        assert r.returncode == 0 and "http://127.0.0.1:4000/mcp" in r.stdout, r.stderr
    else:
        assert r.returncode == 2
        assert r.stderr == (
            "everything-mcp: `config` is in the Python package: pip install everything-mcp, then"
            " python -m everything_mcp config ...\n"
        )


def test_the_native_command_needs_no_python(tmp_path: object) -> None:
    """`everything-mcp stdio` answers with no Python to be found and none linked."""
    binary = native_cmd()[0]
    if sys.platform.startswith("linux"):
        linked = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=WAIT).stdout
        assert "libpython" not in linked
    r = subprocess.run(
        [binary, "stdio"],
        input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={"PATH": "/nonexistent"},
    )
    assert json.loads(r.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
