"""The report grades a client's authorization flow against the auth lab (docs/report.md,
docs/auth.md): the official client's flow in both eras, its recovery from a token expired on
cue, and raw clients that skip PKCE, send another resource or discover out of order."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import anyio
import httpx
import pytest

from everything_mcp import Server
from everything_mcp.report import ClientReport, of_files

from conftest import WAIT
from oauth_client import (
    SCOPES,
    HeadlessBrowser,
    MemoryStorage,
    mcp_client,
    oauth_provider,
    pkce,
    query_of,
    register_code_client,
)

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

PRM, ASM = "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"
AUTH_CHECKS = ("auth.discovery", "auth.pkce_s256", "auth.resource", "auth.scope", "auth.refresh", "auth.recovers")


def statuses(client: ClientReport) -> dict[str, tuple[str, str]]:
    return {id: (client.check(id).status, client.check(id).detail) for id in AUTH_CHECKS}


def status(client: ClientReport, id: str) -> tuple[str, str]:
    return client.check(id).status, client.check(id).detail


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_clients_flow_passes(mode: str) -> None:
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http(auth="oauth", scopes=SCOPES)
        storage, browser = MemoryStorage(), HeadlessBrowser()
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser)) as client:
                await client.list_tools()
                # The server ends its token early: the client learns of it from a 401.
                assert srv.auth.expire() == 1
                await client.list_tools()
        mine = srv.report().client("mcp")
        discovery = f"{PRM} → {ASM}"
        assert statuses(mine) == {
            "auth.discovery": ("pass", discovery),
            "auth.pkce_s256": ("pass", ""),
            "auth.resource": ("pass", ""),
            "auth.scope": ("pass", ""),
            # It authorizes again rather than refreshing (docs/auth.md).
            "auth.refresh": ("not exercised", ""),
            "auth.recovers": ("pass", "the access token has expired"),
        }
        # The flow is not a client of its own.
        assert [c.name for c in srv.report().clients] == ["mcp"]


def test_a_raw_client_that_skips_pkce_and_sends_another_resource_fails() -> None:
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(auth="oauth", scopes=SCOPES)
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            # Straight to the authorization server's metadata: the resource's is never read.
            http.get("/.well-known/oauth-authorization-server")
            client = register_code_client(http)
            _, challenge = pkce()
            query = {
                "response_type": "code",
                "client_id": client["client_id"],
                "redirect_uri": client["redirect_uris"][0],
            }
            assert http.get(f"/authorize?{urlencode(query)}").status_code == 302  # refused: no PKCE
            query |= {
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": "http://127.0.0.1:1/mcp",
                "scope": "mcp:basic",
            }
            assert http.get(f"/authorize?{urlencode(query)}").status_code == 302  # refused: invalid_target
            http.get("/.well-known/oauth-protected-resource/mcp")
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
            assert http.post("/mcp", json=body, headers={"authorization": "Bearer forged"}).status_code == 401
        # It never opened an MCP session: it is graded on its flow alone.
        (mine,) = srv.report().clients
        assert (mine.name, mine.transport) == ("?", "http")
        assert statuses(mine) == {
            "auth.discovery": (
                "fail",
                "/.well-known/oauth-authorization-server → /.well-known/oauth-protected-resource/mcp",
            ),
            "auth.pkce_s256": ("fail", "code_challenge_method=missing"),
            "auth.resource": ("fail", "/authorize: resource=missing"),
            "auth.scope": ("fail", "asked none"),
            "auth.refresh": ("not exercised", ""),
            "auth.recovers": ("fail", "the access token is not one this server issued"),
        }


async def test_a_raw_client_graded_with_its_session() -> None:
    """A raw client that reads the metadata in order and authorizes with PKCE but leaves out the
    scopes and never recovers from a refused token."""
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(auth="oauth", scopes=SCOPES)
        token = srv.auth.register(grant_types=["client_credentials"])
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            http.get("/.well-known/oauth-protected-resource/mcp")
            http.get("/.well-known/oauth-authorization-server")
            client = register_code_client(http)
            _, challenge = pkce()
            query = {
                "response_type": "code",
                "client_id": client["client_id"],
                "redirect_uri": client["redirect_uris"][0],
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": f"{srv.base_url}/mcp",
                "scope": "mcp:basic",
            }
            assert http.get(f"/authorize?{urlencode(query)}").status_code == 302
            form = {"grant_type": "client_credentials", "resource": f"{srv.base_url}/mcp"}
            access = http.post("/token", data=form, auth=(token["client_id"], token["client_secret"])).json()
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
            headers = {
                "accept": "application/json, text/event-stream",
                "authorization": f"Bearer {access['access_token']}",
            }
            assert http.post("/mcp", json=body, headers=headers).status_code == 200
            srv.auth.revoke()
            assert http.post("/mcp", json=body, headers=headers).status_code == 401
        mine = srv.report().client("raw")
        assert statuses(mine) == {
            "auth.discovery": ("pass", f"{PRM} → {ASM}"),
            "auth.pkce_s256": ("pass", ""),
            "auth.resource": ("pass", ""),
            "auth.scope": ("fail", "asked mcp:basic"),
            "auth.refresh": ("not exercised", ""),
            "auth.recovers": ("fail", "the access token was revoked"),
        }


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_scope_step_up_with_the_official_client(mode: str) -> None:
    """`echo` needs `mcp:write` beyond the challenge's `mcp:basic`: the first call is answered
    403 insufficient_scope naming it, the client authorizes again for both and the call goes
    through."""
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http(auth="oauth", scopes=["mcp:basic"], tool_scopes={"echo": "mcp:write"})
        storage, browser = MemoryStorage(), HeadlessBrowser()
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser)) as client:
                await client.list_tools()
                result = await client.call_tool("echo", {"message": "hi"})
                assert result.content[0].text == "Echo: hi"  # type: ignore[union-attr]
        # The SDK adds offline_access, which the authorization server lists (SEP-2207), and asks
        # for the union of what it had and what the 403 named.
        scopes = [query_of(url)["scope"] for url in browser.authorize_urls]
        assert scopes == ["mcp:basic offline_access", "mcp:basic offline_access mcp:write"]
        refused = [r for r in srv.traffic if r.http and r.http.get("status") == 403 and r.dir == "in"]
        assert [r.error for r in refused] == ["insufficient_scope: tool echo needs mcp:write"]
        assert [t["scope"] for t in srv.auth.tokens] == scopes
        mine = srv.report().client("mcp")
        assert (mine.check("auth.step_up").status, mine.check("auth.step_up").detail) == ("pass", "mcp:write")
        assert mine.check("auth.scope").status == "pass"


def test_the_step_up_challenge_on_the_wire_and_a_client_that_ignores_it() -> None:
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(auth="oauth", scopes=["mcp:basic"], tool_scopes={"echo": "mcp:write"})
        client = srv.auth.register(grant_types=["client_credentials"])
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            form = {"grant_type": "client_credentials", "resource": f"{srv.base_url}/mcp"}
            access = http.post("/token", data=form, auth=(client["client_id"], client["client_secret"])).json()
            assert access["scope"] == "mcp:basic"
            headers = {"accept": "application/json, text/event-stream"}
            headers["authorization"] = f"Bearer {access['access_token']}"
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
            opened = http.post("/mcp", json=body, headers=headers)
            headers |= {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
            other = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "get-sum", "arguments": {"a": 1, "b": 2}},
            }
            assert http.post("/mcp", json=other, headers=headers).status_code == 200  # needs no more
            call = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "x"}},
            }
            refused = http.post("/mcp", json=call, headers=headers)
            assert refused.status_code == 403
            assert refused.headers["www-authenticate"] == (
                f'Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="{srv.base_url}'
                '/.well-known/oauth-protected-resource/mcp", error_description="insufficient_scope: tool echo'
                ' needs mcp:write"'
            )
            assert refused.json()["error"]["message"] == "insufficient_scope: tool echo needs mcp:write"
            # With the scope, the call goes through.
            form["scope"] = "mcp:basic mcp:write"
            wider = http.post("/token", data=form, auth=(client["client_id"], client["client_secret"])).json()
            headers["authorization"] = f"Bearer {wider['access_token']}"
            assert http.post("/mcp", json=call, headers=headers).status_code == 200
        mine = srv.report().client("raw")
        # It got the scope without a new authorization request (client credentials): not a step-up.
        assert (mine.check("auth.step_up").status, mine.check("auth.step_up").detail) == ("fail", "mcp:write")


async def _oauth_run(path: Path, mode: str) -> None:
    """The official client in `mode` through the auth lab, recorded to `path`: it authorizes,
    lists the tools and calls one."""
    with Server(catalogs=["everything"], record=str(path)) as srv:
        url = srv.start_http(auth="oauth", scopes=SCOPES)
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, MemoryStorage(), HeadlessBrowser())) as c:
                await c.list_tools()
                await c.call_tool("echo", {"message": "hi"})


@pytest.fixture
async def oauth_runs(tmp_path: Path) -> list[str]:
    """A recorded OAuth run of the official client in each era: the handshake's, then
    2026-07-28's."""
    paths = [tmp_path / "legacy.jsonl", tmp_path / "auto.jsonl"]
    for path, mode in zip(paths, ["legacy", "auto"], strict=True):
        await _oauth_run(path, mode)
    return [str(path) for path in paths]


async def test_the_authorization_servers_gets_are_not_gets_without_a_session(oauth_runs: list[str]) -> None:
    """The metadata and /authorize are GETs of the auth lab, not GET /mcp: a client that
    authorizes does not send GET /mcp without its session for them."""
    legacy, auto = (of_files([path]).client("mcp") for path in oauth_runs)
    assert status(legacy, "http.get_before_initialize") == ("pass", "GET with its session \N{MULTIPLICATION SIGN}1")
    assert status(auto, "http.get_before_initialize") == ("not exercised", "")


async def test_record_files_read_together_keep_their_auth_flows(oauth_runs: list[str]) -> None:
    """Read together, each file's connections are `FILE:conn`: its auth lab's exchanges
    (`FILE:auth`) are still its flow, graded for its client, not a client of their own."""
    both = of_files(oauth_runs)
    assert [c.label for c in both.clients] == ["mcp 0.1.0 (handshake, http)", "mcp 0.1.0 (stateless, http)"]
    for mine in both.clients:
        assert status(mine, "auth.discovery") == ("pass", f"{PRM} \N{RIGHTWARDS ARROW} {ASM}")
        assert status(mine, "auth.pkce_s256") == ("pass", "")
        assert mine.check("http.get_before_initialize").status != "fail"
