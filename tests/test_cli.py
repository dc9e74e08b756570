"""The command line: help, version, usage errors, the default command, the terminal hint."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

import everything_mcp

from conftest import SERVER_CMD, WAIT


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SERVER_CMD, *args], input=stdin, capture_output=True, text=True, timeout=WAIT)


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout == f"everything-mcp {everything_mcp.__version__}\n"


def test_help_lists_commands() -> None:
    r = run("--help")
    assert r.returncode == 0
    assert "stdio" in r.stdout
    r = run("stdio", "--help")
    assert "--record FILE" in r.stdout and "--log-level LEVEL" in r.stdout


def test_unknown_command_prints_usage_and_exits_2() -> None:
    r = run("bogus")
    assert r.returncode == 2
    assert r.stderr.startswith("usage: everything-mcp")
    assert "invalid choice: 'bogus'" in r.stderr
    assert r.stdout == ""


def test_no_command_serves_stdio() -> None:
    r = run(stdin='{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    r = run("--record", os.devnull, stdin='{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert json.loads(r.stdout)["id"] == 1


def test_bad_catalog_is_a_usage_error() -> None:
    r = run("stdio", "--catalog", "nope")
    assert r.returncode == 2


def test_terminal_stdin_gets_a_hint() -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([*SERVER_CMD], stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(follower)
        assert proc.stderr is not None
        hint = proc.stderr.readline().decode()
        assert hint.startswith("everything-mcp: serving MCP on stdio")
        os.write(leader, b"\x04")  # Ctrl-D: end of input
        assert proc.wait(timeout=WAIT) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""
    finally:
        os.close(leader)


@pytest.mark.skipif(shutil.which("everything-mcp") is None, reason="console script not on PATH")
def test_console_script() -> None:
    r = subprocess.run(["everything-mcp", "--version"], capture_output=True, text=True, timeout=WAIT)
    assert r.stdout.startswith("everything-mcp ")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signals_exit_cleanly_and_promptly(signum: int) -> None:
    proc = subprocess.Popen(
        [*SERVER_CMD, "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
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


def test_closed_stdin_is_not_a_crash() -> None:
    r = subprocess.run([*SERVER_CMD, "stdio"], stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT)
    assert r.returncode == 0 and r.stdout == b""


def test_bare_stdio_without_a_parser_has_every_option_the_parser_gives() -> None:
    # `python -m everything_mcp stdio` (what clients spawn) is served without building argparse;
    # it must mean exactly what the parser would make of it.
    from everything_mcp import cli

    parsed = vars(cli._parser("stdio").parse_args(["stdio"]))
    assert parsed == {"command": "stdio", **cli._server_defaults(), **cli._STDIO_ONLY}


def test_cli_help_prints_the_core_defaults() -> None:
    """The CLI restates no default: its help shows what the Rust core would use."""
    from everything_mcp import DEFAULTS

    out = subprocess.run(
        [*SERVER_CMD, "http", "--help"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    for expected in [
        f"address to bind (default: {DEFAULTS['host']})",
        f"most concurrent sessions (default {DEFAULTS['max_sessions']})",
        f"0 never (default {DEFAULTS['session_idle_timeout']:g})",
        f"Last-Event-ID resumption (default {DEFAULTS['event_store_capacity']})",
        f"(default: {DEFAULTS['max_message_bytes'] // 2**20} MiB)",
        f"default {DEFAULTS['update_delay']:g})",
        f"(default: {','.join(DEFAULTS['catalogs'])})",
    ]:
        assert expected in text
    assert DEFAULTS["session_idle_timeout"] == 1800.0 and DEFAULTS["max_sessions"] == 1000


def test_cli_help_lists_every_option() -> None:
    """Every option of the Rust options types (`_core.SERVER_OPTIONS`, `_core.HTTP_OPTIONS`) has
    a flag storing it under its own name, but those the CLI fixes itself, and `http --help`
    lists each: adding an option without its flag fails here."""
    import argparse

    from everything_mcp import _core, cli, flags

    parser = argparse.ArgumentParser()
    flags._add_server_options(parser)
    flags._add_http_options(parser)
    flags = {action.dest: action.option_strings for action in parser._actions if action.option_strings}
    out = subprocess.run(
        [*SERVER_CMD, "http", "--help"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert out.returncode == 0, out.stderr
    for option in [*_core.SERVER_OPTIONS, *_core.HTTP_OPTIONS, "host"]:
        if option in cli._FIXED:
            assert option not in flags
            continue
        assert option in flags, f"option {option!r} has no CLI flag (add one whose dest is {option!r})"
        assert any(flag in out.stdout for flag in flags[option]), option
    # No flag stores anything but an option or a setting of the CLI itself.
    assert set(flags) - {*_core.SERVER_OPTIONS, *_core.HTTP_OPTIONS} == {
        "host",
        "port",
        "log_level",
        "faults",
        "faults_preset",
        "faults_seed",
        "help",
    }


def test_flags_become_options() -> None:
    from everything_mcp import cli

    ns = cli._parser("http").parse_args(
        ["http", "--catalog", "none,conformance", "--catalog", "skills", "--tick-ms", "50", "--no-standalone-stream"]
    )
    given = cli._given(ns, [*cli._core.SERVER_OPTIONS, *cli._core.HTTP_OPTIONS])
    # `keep_traffic` is left to `main`, which keeps records only for the lab page.
    assert given == {
        "catalogs": ["none", "conformance", "skills"],
        "tick": 0.05,
        "standalone_stream": False,
    }
    # `--tick-ms 0` is the reference's timers, as before.
    assert cli._given(cli._parser("stdio").parse_args(["stdio", "--tick-ms", "0"]), ["tick"]) == {}
