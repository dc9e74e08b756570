"""The auth lab (issue 22, docs/auth.md): `start_http(auth="oauth")` puts the MCP endpoint behind
OAuth with a built-in authorization server on the same listener, `auth="bearer"` behind static
tokens. The official `mcp` client's OAuth providers run the flows against it headlessly
(discovery, dynamic registration, authorization code + PKCE, token, MCP calls, in both eras; a
token expired on the server's clock; refresh; pre-registration; client credentials; legacy SSE;
static bearer tokens). The wire itself, with raw httpx, is in test_auth_wire.py."""

from __future__ import annotations

import json
import sys
import time

import anyio
import httpx
import pytest
from mcp import Client, MCPError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.sse import sse_client
from mcp.shared.auth import OAuthClientInformationFull

from everything_mcp import Server

from conftest import MODES, WAIT, texts
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    REDIRECT_URI,
    SCOPE,
    TTL,
    UNTIL_AUTHORIZED,
    HeadlessBrowser,
    MemoryStorage,
    RequestLog,
    audience,
    base_of,
    basic,
    challenge_params,
    client_metadata,
    http_flow,
    invalid_token,
    leaves,
    mcp_client,
    oauth_provider,
    oauth_server,
    query_of,
    recorded_grants,
    register,
    register_code_client,
    token,
    until_served,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


# --- 1. the official client, authorization code + PKCE, both eras ------------------------------


@MODES
async def test_the_official_client_discovers_registers_authorizes_and_calls(mode: str) -> None:
    """`OAuthClientProvider` against `auth="oauth"`: the first MCP request (`initialize`, or
    `server/discover` in the default mode) is answered 401; the SDK reads the protected resource
    metadata the challenge names, then the authorization server's metadata, registers, sends the
    user to `/authorize` (our headless browser reads the code from the redirect), redeems the
    code, and sends the request again with the token; every MCP request after it is served."""
    storage, browser, log = MemoryStorage(), HeadlessBrowser(), RequestLog()
    with oauth_server() as srv:
        base, url = base_of(srv), srv.http_url or ""
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
                assert "echo" in [t.name for t in (await client.list_tools()).tools]
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]

        flow = http_flow(srv)
        assert until_served(flow) == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 200)]
        after = flow[len(UNTIL_AUTHORIZED) + 2 :]
        assert after and all(path == "/mcp" and status in (200, 202) for _, path, status in after), after
        to_mcp = [r for r in srv.traffic if r.dir == "in" and r.http and r.http["path"] == "/mcp"]
        served = next(r for r in to_mcp if r.http and r.http["status"] == 200)
        assert served.method == ("initialize" if mode == "legacy" else "server/discover")
        (call,) = srv.traffic.requests("tools/call")
        assert call.http is not None and call.http["status"] == 200

    # What the SDK sent: the challenge's scope, PKCE S256, `resource` exactly as the PRM has it.
    (authorize_url,) = browser.authorize_urls
    assert authorize_url.startswith(f"{base}/authorize?")
    sent = query_of(authorize_url)
    assert storage.client_info is not None
    assert (sent["response_type"], sent["client_id"]) == ("code", storage.client_info.client_id)
    # The challenge's scope, and offline_access, which the authorization server offers (SEP-2207).
    assert (sent["code_challenge_method"], sent["resource"]) == ("S256", f"{base}/mcp")
    assert sent["scope"] == f"{SCOPE} offline_access"
    (result,) = browser.results
    assert (result.state, result.iss) == (sent["state"], base)
    (exchange,) = log.to("/token")
    assert exchange.form["grant_type"] == "authorization_code"
    assert (exchange.form["redirect_uri"], exchange.form["resource"]) == (REDIRECT_URI, f"{base}/mcp")
    assert all(s.request.headers["authorization"].startswith("Bearer ") for s in log.to("/mcp")[1:])

    # What it was given: a public client bound to this issuer, a JWT for this resource.
    info = storage.client_info
    assert (info.token_endpoint_auth_method, info.client_secret, info.issuer) == ("none", None, base)
    tokens = storage.tokens
    assert tokens is not None and tokens.refresh_token
    assert (tokens.token_type, tokens.expires_in, tokens.scope) == ("Bearer", TTL, f"{SCOPE} offline_access")
    assert audience(tokens.access_token) == [f"{base}/mcp"]


async def test_the_sdks_default_registration_is_a_confidential_client() -> None:
    """The SDK's default client metadata leaves `token_endpoint_auth_method` out of the
    registration request; RFC 7591 §2 makes that `client_secret_basic`. The SDK takes the method
    only from the registration response (absent: it sends no client authentication at all), so
    the lab answers with the method and a secret, and the code exchange authenticates with Basic."""
    storage, browser, log = MemoryStorage(), HeadlessBrowser(), RequestLog()
    with oauth_server() as srv:
        url = srv.http_url or ""
        provider = oauth_provider(url, storage, browser, client_metadata(None))
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, auth=provider, log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
        assert until_served(http_flow(srv)) == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 200)]
    (registration,) = log.to("/register")
    assert "token_endpoint_auth_method" not in json.loads(registration.request.content)
    info = storage.client_info
    assert info is not None and info.token_endpoint_auth_method == "client_secret_basic" and info.client_secret
    (exchange,) = log.to("/token")
    assert exchange.request.headers["authorization"] == basic(info.client_id, info.client_secret)
    assert "client_secret" not in exchange.form


async def test_the_official_client_over_legacy_sse() -> None:
    """The legacy HTTP+SSE transport is protected too: `GET /sse` is answered 401 and the same
    flow follows. The provider's `server_url` is the MCP endpoint (`/mcp`), the resource the
    protected resource metadata names: the SDK refuses metadata whose `resource` is not its
    server URL or a parent of it, so a provider given the `/sse` URL would stop there."""
    storage, browser = MemoryStorage(), HeadlessBrowser()
    with oauth_server() as srv:
        provider = oauth_provider(srv.http_url or "", storage, browser)
        with anyio.fail_after(WAIT * 2):
            transport = sse_client(srv.sse_url or "", auth=provider, timeout=WAIT)
            async with Client(transport, mode="legacy", read_timeout_seconds=WAIT) as client:
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
        flow = http_flow(srv)
    assert until_served(flow, "/sse") == [("GET", "/sse", 401), *UNTIL_AUTHORIZED, ("GET", "/sse", 200)]
    posts = [e for e in flow if e[1] == "/message"]
    assert posts and all(e == ("POST", "/message", 202) for e in posts), posts


# --- 2. expiry and refresh -----------------------------------------------------------------------


@MODES
async def test_a_token_expired_on_the_servers_clock_is_replaced_by_a_new_authorization(mode: str) -> None:
    """`token_ttl=60` on the manual clock, moved 61 s after the first calls: the server now
    refuses the token (401, `error="invalid_token"`). The SDK decides whether to refresh from
    `expires_in` on its own clock (`time.time()` in `OAuthContext.is_token_valid`,
    mcp/client/auth/oauth2.py), which has not moved, so it sends the expired token; on the 401 it
    does what it does on every 401: discovery again and a new authorization, reusing its
    registration, without trying its refresh token. The call then succeeds."""
    storage, browser, log = MemoryStorage(), HeadlessBrowser(), RequestLog()
    with oauth_server(token_ttl=60, clock="manual") as srv:
        base, url = base_of(srv), srv.http_url or ""
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                mark, sent_mark = len(http_flow(srv)), len(log.sent)
                await srv.clock.aadvance(61)
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
        # The handshake era's standalone GET stream may be the request that meets the 401 first
        # (the SDK sends one request at a time through its provider): either way one 401 on /mcp.
        after = [e for e in http_flow(srv)[mark:] if e != ("GET", "/mcp", 200)]
        refused, *rest = until_served(after)
        assert refused[1:] == ("/mcp", 401)
        assert rest == [e for e in UNTIL_AUTHORIZED if e[1] != "/register"] + [("POST", "/mcp", 200)]
        assert recorded_grants(srv) == ["authorization_code", "authorization_code"]
    (expired,) = [s for s in log.sent[sent_mark:] if s.status == 401]
    assert expired.response_headers is not None
    assert challenge_params(expired.response_headers["www-authenticate"]) == invalid_token(base)
    assert log.grant_types() == ["authorization_code", "authorization_code"]
    assert len(browser.results) == 2 and len(log.to("/register")) == 1
    first, second = storage.issued
    assert first.access_token != second.access_token


@MODES
async def test_the_official_client_refreshes_once_expires_in_has_passed(mode: str) -> None:
    """The SDK's own refresh: `token_ttl=1` while the manual clock stands still (the server never
    expires the token), and the SDK's record of when its token expires moved into the past (no
    real time waited: the SDK reads that field before each request). Before its next request the
    SDK redeems its refresh token (no 401 first), gets a new pair, and the old refresh token is
    spent (rotation)."""
    storage, browser, log = MemoryStorage(), HeadlessBrowser(), RequestLog()
    with oauth_server(token_ttl=1, clock="manual") as srv:
        base, url = base_of(srv), srv.http_url or ""
        provider = oauth_provider(url, storage, browser)
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=provider, log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                before = storage.tokens
                mark, sent_mark = len(http_flow(srv)), len(log.sent)
                provider.context.token_expiry_time = time.time() - 1  # past `expires_in`
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
        assert until_served(http_flow(srv)[mark:]) == [("POST", "/token", 200), ("POST", "/mcp", 200)]
        assert recorded_grants(srv)[-1] == "refresh_token"
        assert before is not None and storage.tokens is not None and storage.client_info is not None
        (refresh,) = [s for s in log.sent[sent_mark:] if s.path == "/token"]
        assert refresh.form == {
            "grant_type": "refresh_token",
            "refresh_token": before.refresh_token,
            "client_id": storage.client_info.client_id,
            "resource": f"{base}/mcp",
        }
        assert storage.tokens.access_token != before.access_token
        assert storage.tokens.refresh_token not in (None, before.refresh_token)
        with httpx.Client(base_url=base, timeout=WAIT) as http:
            spent = token(http, **refresh.form)
        assert (spent.status_code, spent.json()["error"]) == (400, "invalid_grant")


# --- 3. pre-registration ------------------------------------------------------------------------


@MODES
@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_a_pre_registered_client_is_used_without_registering(method: str, mode: str) -> None:
    """The test registers a confidential client itself and gives the SDK its record: the flow
    runs without a `/register` of its own, and the code exchange authenticates as registered."""
    browser, log = HeadlessBrowser(), RequestLog()
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        url = srv.http_url or ""
        registered = register_code_client(http, method)
        assert registered["token_endpoint_auth_method"] == method and registered["client_secret"]
        storage = MemoryStorage(OAuthClientInformationFull.model_validate(registered))
        mark = len(http_flow(srv))
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
        flow = http_flow(srv)
        assert until_served(flow[mark:]) == [("POST", "/mcp", 401)] + [
            e for e in UNTIL_AUTHORIZED if e[1] != "/register"
        ] + [("POST", "/mcp", 200)]
        assert [e for e in flow if e[1] == "/register"] == [("POST", "/register", 201)]
    client_id, secret = registered["client_id"], registered["client_secret"]
    assert query_of(browser.authorize_urls[0])["client_id"] == client_id
    (exchange,) = log.to("/token")
    if method == "client_secret_basic":
        assert exchange.request.headers["authorization"] == basic(client_id, secret)
        assert "client_secret" not in exchange.form
    else:
        assert (exchange.form["client_id"], exchange.form["client_secret"]) == (client_id, secret)
        assert "authorization" not in exchange.request.headers


# --- 4. client credentials ----------------------------------------------------------------------


@MODES
@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_client_credentials_with_the_official_provider(method: str, mode: str) -> None:
    """`ClientCredentialsOAuthProvider` with a client registered for `client_credentials` only:
    discovery, then straight to `/token` (no registration, no redirect), then the call."""
    storage, log = MemoryStorage(), RequestLog()
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base, url = base_of(srv), srv.http_url or ""
        m2m = register(http, grant_types=["client_credentials"], token_endpoint_auth_method=method, client_name="m2m")
        provider = ClientCredentialsOAuthProvider(
            server_url=url,
            storage=storage,
            client_id=m2m["client_id"],
            client_secret=m2m["client_secret"],
            token_endpoint_auth_method=method,
            scope=SCOPE,
            issuer=base,
        )
        mark = len(http_flow(srv))
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=provider, log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
        flow = http_flow(srv)
        assert until_served(flow[mark:]) == [
            ("POST", "/mcp", 401),
            ("GET", PRM_PATH, 200),
            ("GET", ASM_PATH, 200),
            ("POST", "/token", 200),
            ("POST", "/mcp", 200),
        ]
        assert [e for e in flow if e[1] in ("/register", "/authorize")] == [("POST", "/register", 201)]
    (exchange,) = log.to("/token")
    assert exchange.form["grant_type"] == "client_credentials"
    assert (exchange.form["resource"], exchange.form["scope"]) == (f"{base}/mcp", SCOPE)
    assert storage.tokens is not None and storage.tokens.refresh_token is None
    assert audience(storage.tokens.access_token) == [f"{base}/mcp"]


# --- 5. static bearer tokens --------------------------------------------------------------------


@MODES
async def test_static_bearer_tokens_with_the_official_client(mode: str) -> None:
    """`auth="bearer", tokens=["alpha"]`: the official client whose HTTP client sends
    `Authorization: Bearer alpha` is served; without it, its first request is answered 401 and
    the SDK (no auth provider) raises `MCPError` out of `Client.__aenter__` (in an exception
    group; the default mode tries `server/discover`, then `initialize`, both refused)."""
    with Server(catalogs=["everything"]) as srv:
        url = srv.start_http(auth="bearer", tokens=["alpha"])
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, headers={"Authorization": "Bearer alpha"}) as client:
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
            served = http_flow(srv)
            with pytest.raises((MCPError, BaseExceptionGroup)) as raised:
                async with Client(url, mode=mode, read_timeout_seconds=WAIT):
                    pass
        assert [type(e) for e in leaves(raised.value)] == [MCPError]
        assert served and all(path == "/mcp" and status in (200, 202) for _, path, status in served), served
        assert http_flow(srv)[len(served) :] == [("POST", "/mcp", 401)] * (1 if mode == "legacy" else 2)
