"""Helpers of the auth faults' tests (test_auth_faults.py, test_auth_faults2.py,
test_auth_faults3.py): the headless browser that reads the redirect, a client refused at open,
the marked records, a call of `echo` on the wire."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import httpx
import pytest
from mcp import MCPError

from everything_mcp import Server

from conftest import WAIT, envelope, texts
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    SCOPE,
    HeadlessBrowser,
    MemoryStorage,
    RequestLog,
    leaves,
    mcp_client,
    oauth_provider,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup


SECOND_CALL = {"method": "tools/call", "nth": 2}
SCRIPTED_REFUSAL = "the access token was refused (scripted)"
"""How a scripted `invalid_token` challenge without `end` words its refusal (with `end`: as the
lab's own, `the access token has expired` or `was revoked`)."""
REAUTHORIZED = [("GET", PRM_PATH, 200), ("GET", ASM_PATH, 200), ("GET", "/authorize", 302), ("POST", "/token", 200)]
"""A second authorization of a registered client: discovery again, the redirect, the code exchange."""


async def refused_at_open(
    srv: Server, mode: str, storage: MemoryStorage | None = None
) -> tuple[list[BaseException], HeadlessBrowser, RequestLog]:
    """Opens the official client on `srv` (with a browser that hands on any redirect), which must
    fail: the leaves of what it raised, the browser and the SDK's requests."""
    browser, log, url = faithful_browser(), RequestLog(), srv.http_url or ""
    with anyio.fail_after(WAIT * 2), pytest.raises((MCPError, BaseExceptionGroup)) as raised:
        async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage or MemoryStorage(), browser), log=log):
            pass
    return leaves(raised.value), browser, log


def marked(srv: Server) -> list[tuple[str, str, Any, dict[str, str]]]:
    """The records a fault rule marked, as `(dir, path, status, mark)` (an answer has no path)."""
    return [
        (r.dir, (r.http or {}).get("path", ""), (r.http or {}).get("status"), r.fault) for r in srv.traffic if r.fault
    ]


def call_echo(http: httpx.Client, access_token: str, id: int) -> httpx.Response:
    """A 2026-07-28 `tools/call` of echo, POSTed with the token (no session to open first)."""
    params = {"name": "echo", "arguments": {"message": str(id)}, "_meta": envelope()}
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28"}
    headers |= {"mcp-method": "tools/call", "mcp-name": "echo", "authorization": f"Bearer {access_token}"}
    return http.post(
        "/mcp", json={"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}, headers=headers
    )


def refusal(base: str, why: str) -> str:
    """The lab's own challenge to a token it refuses, saying `why`."""
    return (
        f'Bearer resource_metadata="{base}{PRM_PATH}", scope="{SCOPE}", error="invalid_token", '
        f'error_description="{why}"'
    )


def without_stream(flow: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The flow without the handshake era's standalone `GET /mcp` stream (opened, and reopened,
    on its own schedule)."""
    return [e for e in flow if e[:2] != ("GET", "/mcp")]


# --- 1. a token refused in the middle of a session, expired on the server's clock ----------------


async def served(
    srv: Server, mode: str = "legacy", storage: MemoryStorage | None = None
) -> tuple[HeadlessBrowser, RequestLog]:
    """The official client opened on `srv` (with a browser that hands on any redirect), calling
    echo once, served."""
    browser, log, url = faithful_browser(), RequestLog(), srv.http_url or ""
    provider = oauth_provider(url, storage or MemoryStorage(), browser)
    with anyio.fail_after(WAIT * 2):
        async with mcp_client(url, mode=mode, auth=provider, log=log) as client:
            assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
    return browser, log


def faithful_browser() -> HeadlessBrowser:
    """A headless browser that hands the SDK whatever the redirect says (an error, a wrong
    `state`), so the SDK's own checks decide."""
    return HeadlessBrowser(approvals_only=False)
