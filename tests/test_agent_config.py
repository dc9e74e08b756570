"""`python -m everything_mcp config AGENT` for the agents people test by hand: each output names
where the configuration goes and holds a stdio and an HTTP variant in the agent's own format
(parsed here as the agent parses it), and says how to check the server without a model where
the agent can."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from conftest import SERVER_CMD, WAIT

URL = "http://127.0.0.1:4100/mcp"
ARGS = ["-m", "everything_mcp", "stdio"]


def config(agent: str) -> list[str]:
    """The output of `config AGENT --port 4100`, in its blank-line-separated parts."""
    out = subprocess.run(
        [*SERVER_CMD, "config", agent, "--port", "4100"], capture_output=True, text=True, timeout=WAIT, check=True
    )
    return out.stdout.rstrip("\n").split("\n\n")


@pytest.mark.parametrize(
    ("agent", "stdio_path", "http_path"),
    [
        ("gemini", ["mcpServers", "everything"], ["mcpServers", "everything-http"]),
        ("opencode", ["mcp", "everything"], ["mcp", "everything-http"]),
        ("copilot", ["mcpServers", "everything"], ["mcpServers", "everything-http"]),
        ("crush", ["mcp", "everything"], ["mcp", "everything-http"]),
    ],
)
def test_json_files_of_agents(agent: str, stdio_path: list[str], http_path: list[str]) -> None:
    where, stdio, _, http, *check = config(agent)
    assert where.startswith("# ") and ("json" in where)
    local, remote = json.loads(stdio), json.loads(http)
    for key in stdio_path:
        local = local[key]
    for key in http_path:
        remote = remote[key]
    text = json.dumps(local)
    assert json.dumps(sys.executable) in text and json.dumps(ARGS)[1:-1] in text
    assert URL in json.dumps(remote)
    if agent in ("gemini", "opencode"):
        assert check == [f"# check it without a model: {agent} mcp list"]


def test_codex_toml() -> None:
    tomllib = pytest.importorskip("tomllib")
    where, stdio, _, http, check = config("codex")
    assert "~/.codex/config.toml" in where
    assert tomllib.loads(stdio) == {"mcp_servers": {"everything": {"command": sys.executable, "args": ARGS}}}
    assert tomllib.loads(http) == {"mcp_servers": {"everything-http": {"url": URL}}}
    assert "mcpServerStatus/list" in check


def test_claude_code_commands() -> None:
    _, stdio, _, http, check = config("claude-code")
    add = shlex.split(stdio)
    assert add[:6] == ["claude", "mcp", "add-json", "-s", "user", "everything"]
    assert json.loads(add[6]) == {"type": "stdio", "command": sys.executable, "args": ARGS}
    assert json.loads(shlex.split(http)[6]) == {"type": "http", "url": URL}
    assert check == "# check it without a model: claude mcp get everything"


def test_goose_and_claude_desktop() -> None:
    where, stdio, _, http = config("goose")
    assert "~/.config/goose/config.yaml" in where
    assert "    type: stdio" in stdio and f"    cmd: {json.dumps(sys.executable)}" in stdio
    assert f"    uri: {json.dumps(URL)}" in http and "type: streamable_http" in http
    where, stdio, _, http = config("claude-desktop")
    assert "claude_desktop_config.json" in where
    assert json.loads(stdio) == {"mcpServers": {"everything": {"command": sys.executable, "args": ARGS}}}
    assert URL in http
