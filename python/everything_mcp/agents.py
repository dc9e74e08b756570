"""How to add this server to the agents people test by hand (``python -m everything_mcp config
AGENT``): the file to edit and the snippet (a stdio and an HTTP variant), or the command that
adds it, and where the agent can check a server without a model, how. The formats are the
agents' own, as seen working against this server (docs/report.md, "Testing an agent by hand")."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["AGENTS", "JSON_FILES", "AgentConfig", "agent_config", "json_config"]


@dataclass(frozen=True)
class AgentConfig:
    """What to do to add the server to one agent."""

    title: str
    """The agent's name."""
    where: str
    """The file to edit, or the command to run (``commands`` then holds them)."""
    stdio: str
    """The stdio variant: a snippet of the file, or the command."""
    http: str
    """The HTTP variant (the server started first with ``python -m everything_mcp http``)."""
    check: str | None
    """How to check the server without a model, where the agent can."""

    def text(self, port: int) -> str:
        """The whole advice, as ``config AGENT`` prints it."""
        parts = [
            f"# {self.title}: {self.where}",
            self.stdio,
            f"# over HTTP (start `python -m everything_mcp http --port {port}` first):",
            self.http,
        ]
        if self.check:
            parts.append(f"# check it without a model: {self.check}")
        return "\n\n".join(parts) + "\n"


def _argv() -> list[str]:
    return [sys.executable, "-m", "everything_mcp", "stdio"]


def _json(value: object) -> str:
    return json.dumps(value, indent=2)


def _claude_code(name: str, url: str) -> AgentConfig:
    stdio = {"type": "stdio", "command": sys.executable, "args": _argv()[1:]}
    http = {"type": "http", "url": url}
    add = "claude mcp add-json -s user"
    return AgentConfig(
        "Claude Code",
        "run (it writes ~/.claude.json; a project's .mcp.json takes the same mcpServers)",
        f"{add} {shlex.quote(name)} {shlex.quote(json.dumps(stdio))}",
        f"{add} {shlex.quote(name + '-http')} {shlex.quote(json.dumps(http))}",
        f"claude mcp get {shlex.quote(name)}",
    )


def _claude_desktop(name: str, url: str) -> AgentConfig:
    stdio = {"command": sys.executable, "args": _argv()[1:]}
    return AgentConfig(
        "Claude Desktop",
        "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\)",
        _json({"mcpServers": {name: stdio}}),
        f"(Claude Desktop starts stdio servers; for HTTP add {url} as a custom connector in its settings)",
        None,
    )


def _codex(name: str, url: str) -> AgentConfig:
    argv = _argv()
    return AgentConfig(
        "Codex CLI",
        "~/.codex/config.toml ($CODEX_HOME/config.toml)",
        f"[mcp_servers.{name}]\ncommand = {json.dumps(argv[0])}\nargs = {json.dumps(argv[1:])}",
        f"[mcp_servers.{name}-http]\nurl = {json.dumps(url)}",
        "`codex app-server` (JSON-RPC on stdio): send initialize, then mcpServerStatus/list",
    )


def _gemini(name: str, url: str) -> AgentConfig:
    return AgentConfig(
        "Gemini CLI",
        '~/.gemini/settings.json (trust the folder first: ~/.gemini/trustedFolders.json {PATH: "TRUST_FOLDER"})',
        _json({"mcpServers": {name: {"command": sys.executable, "args": _argv()[1:]}}}),
        _json({"mcpServers": {f"{name}-http": {"httpUrl": url}}}),
        "gemini mcp list",
    )


def _opencode(name: str, url: str) -> AgentConfig:
    return AgentConfig(
        "OpenCode",
        "~/.config/opencode/opencode.json ($XDG_CONFIG_HOME/opencode/opencode.json)",
        _json({"mcp": {name: {"type": "local", "command": _argv(), "enabled": True}}}),
        _json({"mcp": {f"{name}-http": {"type": "remote", "url": url, "enabled": True}}}),
        "opencode mcp list",
    )


def _copilot(name: str, url: str) -> AgentConfig:
    local = {"type": "local", "command": sys.executable, "args": _argv()[1:], "tools": ["*"]}
    return AgentConfig(
        "GitHub Copilot CLI",
        "~/.copilot/mcp-config.json",
        _json({"mcpServers": {name: local}}),
        _json({"mcpServers": {f"{name}-http": {"type": "http", "url": url, "tools": ["*"]}}}),
        "its interactive TUI connects without a login (`copilot mcp list` only prints the file)",
    )


def _goose(name: str, url: str) -> AgentConfig:
    argv = _argv()
    return AgentConfig(
        "Goose",
        "~/.config/goose/config.yaml (under extensions:)",
        "\n".join(
            [
                "extensions:",
                f"  {name}:",
                "    enabled: true",
                f"    name: {name}",
                "    type: stdio",
                f"    cmd: {json.dumps(argv[0])}",
                f"    args: {json.dumps(argv[1:])}",
                "    timeout: 300",
            ]
        ),
        "\n".join(
            [
                "extensions:",
                f"  {name}-http:",
                "    enabled: true",
                f"    name: {name}-http",
                "    type: streamable_http",
                f"    uri: {json.dumps(url)}",
                "    timeout: 300",
            ]
        ),
        None,
    )


def _crush(name: str, url: str) -> AgentConfig:
    return AgentConfig(
        "Crush",
        "crush.json (the project's, or ~/.config/crush/crush.json)",
        _json({"mcp": {name: {"type": "stdio", "command": sys.executable, "args": _argv()[1:]}}}),
        _json({"mcp": {f"{name}-http": {"type": "http", "url": url}}}),
        None,
    )


AGENTS: dict[str, Callable[[str, str], AgentConfig]] = {
    "claude-code": _claude_code,
    "claude-desktop": _claude_desktop,
    "codex": _codex,
    "gemini": _gemini,
    "opencode": _opencode,
    "copilot": _copilot,
    "goose": _goose,
    "crush": _crush,
}
"""The agents ``config`` knows besides the JSON blocks of ``claude``, ``vscode``, ``cursor``."""


def agent_config(agent: str, name: str, port: int) -> AgentConfig:
    """What to do to add the server (as `name`, its HTTP variant on `port`) to `agent`."""
    return AGENTS[agent](name, f"http://127.0.0.1:{port}/mcp")


JSON_FILES = {
    "vscode": ".vscode/mcp.json in the workspace (or the user's: the command MCP: Open User Configuration)",
    "cursor": "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
    "claude": "the stdio entry: claude_desktop_config.json (Claude Desktop); the HTTP entry: a project's .mcp.json"
    " (Claude Code)",
}
"""Where each JSON block of :func:`json_config` goes (``config`` prints it on stderr, so stdout
stays the JSON alone)."""


def json_config(client: str, name: str, port: int) -> dict[str, Any]:
    """The JSON block of `client` (``claude``, ``vscode``, ``cursor``; ``json``: both variants
    plainly) with a stdio and an HTTP variant, in the client's own format."""
    stdio = {"command": sys.executable, "args": _argv()[1:]}
    url = f"http://127.0.0.1:{port}/mcp"
    if client == "vscode":  # .vscode/mcp.json
        return {"servers": {name: {"type": "stdio", **stdio}, f"{name}-http": {"type": "http", "url": url}}}
    if client == "cursor":  # ~/.cursor/mcp.json
        return {"mcpServers": {name: stdio, f"{name}-http": {"url": url}}}
    if client == "claude":  # claude_desktop_config.json (stdio) / .mcp.json of Claude Code (http)
        return {"mcpServers": {name: stdio, f"{name}-http": {"type": "http", "url": url}}}
    return {"stdio": stdio, "http": {"url": url, "start": [sys.executable, "-m", "everything_mcp", "http"]}}
