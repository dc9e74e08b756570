"""The auth lab (issue 22, docs/auth.md): `start_http(auth="oauth")` puts the MCP endpoint behind
OAuth with a built-in authorization server on the same listener, `auth="bearer"` behind static
tokens. The official `mcp` client's OAuth providers run the flows against it headlessly
(discovery, dynamic registration, authorization code + PKCE, token, MCP calls, in both eras; a
token expired on the server's clock; refresh; pre-registration; client credentials; legacy SSE),
and raw httpx checks the wire: the challenge, the metadata documents, registration, the
authorization redirect and its refusals, the token endpoint and its errors, rotation, expiry,
audience, and that no secret reaches the traffic records."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import anyio
import httpx
import pytest
from mcp import Client, MCPError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.sse import sse_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, ProtectedResourceMetadata
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    REDIRECT_URI,
    SCOPE,
    SCOPES,
    HeadlessBrowser,
    MemoryStorage,
    RequestLog,
    authorization_code,
    authorize,
    client_metadata,
    code_grant,
    http_flow,
    jwt_claims,
    mcp_client,
    mcp_post,
    oauth_provider,
    pkce,
    recorded_grants,
    redacted,
    redirect_params,
    register,
    register_code_client,
    token,
    until_served,
)

from everything_mcp import Server

from conftest import WAIT, texts

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
"""The official client's two eras: "legacy" opens with `initialize`, "auto" (its default) with
`server/discover` (2026-07-28)."""

TTL = 3600
"""`token_ttl` unless a test says otherwise."""

UNTIL_AUTHORIZED = [
    ("GET", PRM_PATH, 200),
    ("GET", ASM_PATH, 200),
    ("POST", "/register", 201),
    ("GET", "/authorize", 302),
    ("POST", "/token", 200),
]
"""What follows the first 401 in a first authorization-code flow, before the MCP request is sent
again with the token: the protected resource metadata (the URL of the challenge), the
authorization server's RFC 8414 metadata, dynamic registration, the authorization redirect (the
headless browser's GET), the code exchange."""

BEARER_ONLY_CHALLENGE = 'Bearer realm="everything-mcp"'
"""`auth="bearer"`'s challenge without a token (docs/auth.md). That mode has no authorization
server, hence no protected resource metadata to point at."""


@contextlib.contextmanager
def oauth_server(token_ttl: int = TTL, **options: Any) -> Iterator[Server]:
    """A server of the `everything` catalog with the auth lab on, scopes `SCOPES`."""
    with Server(catalogs=["everything"], **options) as srv:
        srv.start_http(auth="oauth", scopes=SCOPES, token_ttl=token_ttl)
        yield srv


def base_of(srv: Server) -> str:
    assert srv.base_url is not None
    return srv.base_url


def expected_challenge(base: str) -> str:
    """The exact `WWW-Authenticate` of a request to the MCP endpoint without a token."""
    return f'Bearer resource_metadata="{base}{PRM_PATH}", scope="{SCOPE}"'


def challenge_params(header: str) -> dict[str, str]:
    """The parameters of a `Bearer` challenge (an `error_description`, free text, left out)."""
    scheme, _, rest = header.partition(" ")
    assert scheme == "Bearer", header
    params = dict(re.findall(r'([a-z_]+)="([^"]*)"', rest))
    params.pop("error_description", None)
    return params


def invalid_token(base: str) -> dict[str, str]:
    """The challenge's parameters for a token that was presented but is not good here."""
    return {"resource_metadata": f"{base}{PRM_PATH}", "scope": SCOPE, "error": "invalid_token"}


def leaves(group: BaseException) -> list[BaseException]:
    """The exceptions at the leaves of an exception group."""
    if isinstance(group, BaseExceptionGroup):
        return [leaf for e in group.exceptions for leaf in leaves(e)]
    return [group]


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def basic(client_id: str, secret: str) -> str:
    """HTTP Basic client credentials as RFC 6749 §2.3.1 (and the SDK) spell them: each part
    form-urlencoded first."""
    return "Basic " + base64.b64encode(f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()).decode()


def audience(access_token: str) -> list[str]:
    aud = jwt_claims(access_token)["aud"]
    return aud if isinstance(aud, list) else [aud]


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
    assert (sent["code_challenge_method"], sent["resource"], sent["scope"]) == ("S256", f"{base}/mcp", SCOPE)
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
    assert (tokens.token_type, tokens.expires_in, tokens.scope) == ("Bearer", TTL, SCOPE)
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


async def test_the_official_client_refreshes_once_expires_in_has_passed() -> None:
    """The SDK's own refresh: `token_ttl=1` while the manual clock stands still (the server never
    expires the token), and 1.2 s of real time, past `expires_in` on the SDK's clock. Before its
    next request the SDK redeems its refresh token (no 401 first), gets a new pair, and the old
    refresh token is spent (rotation)."""
    storage, browser, log = MemoryStorage(), HeadlessBrowser(), RequestLog()
    with oauth_server(token_ttl=1, clock="manual") as srv:
        base, url = base_of(srv), srv.http_url or ""
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                before = storage.tokens
                mark, sent_mark = len(http_flow(srv)), len(log.sent)
                await anyio.sleep(1.2)
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


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_a_pre_registered_client_is_used_without_registering(method: str) -> None:
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
            async with mcp_client(url, auth=oauth_provider(url, storage, browser), log=log) as client:
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


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_client_credentials_with_the_official_provider(method: str) -> None:
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
            async with mcp_client(url, auth=provider, log=log) as client:
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


def test_static_bearer_tokens_on_the_wire() -> None:
    """Without a token: 401 and the bare challenge; another token: `error="invalid_token"`; the
    configured one is served."""
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(auth="bearer", tokens=["alpha"])
        with httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
            missing = mcp_post(http)
            assert (missing.status_code, missing.headers["www-authenticate"]) == (401, BEARER_ONLY_CHALLENGE)
            wrong = mcp_post(http, "beta")
            assert wrong.status_code == 401
            assert challenge_params(wrong.headers["www-authenticate"]) == {
                "realm": "everything-mcp",
                "error": "invalid_token",
            }
            assert mcp_post(http, "alpha").status_code == 200
            assert http.get("/health").status_code == 200
        assert [e for e in http_flow(srv) if e[1] == "/mcp"] == [
            ("POST", "/mcp", 401),
            ("POST", "/mcp", 401),
            ("POST", "/mcp", 200),
        ]


# --- 6. the wire, raw ---------------------------------------------------------------------------


def test_every_protected_endpoint_answers_401_with_the_challenge() -> None:
    """`/mcp` (POST, GET, DELETE), `/sse` and `/message` without a token: 401 and the challenge
    (the metadata URL and the scopes); a token that is not one of ours adds
    `error="invalid_token"`. `/health` stays public."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        sse = {"accept": "text/event-stream"}
        refused = [
            mcp_post(http),
            http.get("/mcp", headers=sse),
            http.delete("/mcp", headers={"mcp-session-id": "0123"}),
            http.get("/sse", headers=sse),
            http.post("/message", params={"sessionId": "0123"}, json={"jsonrpc": "2.0", "method": "ping", "id": 1}),
        ]
        for r in refused:
            assert (r.status_code, r.headers.get("www-authenticate")) == (401, expected_challenge(base)), r.request
        bad = mcp_post(http, "not-a-token")
        assert bad.status_code == 401
        assert challenge_params(bad.headers["www-authenticate"]) == invalid_token(base)
        assert http.get("/health").status_code == 200
        assert [e for e in http_flow(srv) if e[2] == 401] == [
            ("POST", "/mcp", 401),
            ("GET", "/mcp", 401),
            ("DELETE", "/mcp", 401),
            ("GET", "/sse", 401),
            ("POST", "/message", 401),
            ("POST", "/mcp", 401),
        ]


def test_protected_resource_metadata() -> None:
    """RFC 9728 metadata at the path-aware location (the challenge's) and at the root one, named
    after the server."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        expected = {
            "resource": f"{base}/mcp",
            "authorization_servers": [base],
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
            "resource_name": "everything-mcp",
        }
        for path in (PRM_PATH, "/.well-known/oauth-protected-resource"):
            r = http.get(path)
            assert r.status_code == 200, path
            assert r.headers["content-type"].startswith("application/json")
            assert r.json() == expected, path
        # As the SDK reads it: the issuer and the resource keep their exact spelling.
        prm = ProtectedResourceMetadata.model_validate(expected)
        assert (str(prm.resource), [str(s) for s in prm.authorization_servers]) == (f"{base}/mcp", [base])
        assert ("GET", PRM_PATH, 200) in http_flow(srv)


def test_authorization_server_metadata() -> None:
    """RFC 8414 metadata, and the same members in the OpenID configuration; the issuer is the
    listener's base URL without a trailing slash (metadata issuer, `iss` and PRM compare as
    strings)."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        expected = {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "scopes_supported": SCOPES,
            "authorization_response_iss_parameter_supported": True,
        }
        r = http.get(ASM_PATH)
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        assert r.json() == expected
        assert str(OAuthMetadata.model_validate(r.json()).issuer) == base
        oidc = http.get("/.well-known/openid-configuration")
        assert oidc.status_code == 200
        assert {k: oidc.json().get(k) for k in expected} == expected
        assert [e for e in http_flow(srv) if e[1].startswith("/.well-known/")] == [
            ("GET", ASM_PATH, 200),
            ("GET", "/.well-known/openid-configuration", 200),
        ]


def test_dynamic_client_registration() -> None:
    """RFC 7591: 201 with a `client_id`, a `client_secret` unless the client authenticates with
    `none`, the metadata echoed (the default method included); bad redirect URIs (none for the code
    grant, plain http off loopback, a fragment) and bad metadata (a method or grant the server does
    not offer, a body that is not a JSON object) are refused with 400."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        public = register_code_client(http, "none")
        assert public["client_id"] and public.get("client_secret") is None
        assert public["redirect_uris"] == [REDIRECT_URI] and public["token_endpoint_auth_method"] == "none"
        assert public["grant_types"] == ["authorization_code", "refresh_token"]
        confidential = register_code_client(http, "client_secret_post")
        assert confidential["client_secret"] and confidential["client_id"] != public["client_id"]
        assert confidential["token_endpoint_auth_method"] == "client_secret_post"
        default = register(http, redirect_uris=[REDIRECT_URI])
        assert default["token_endpoint_auth_method"] == "client_secret_basic" and default["client_secret"]
        refusals: list[tuple[Any, str]] = [
            ({"grant_types": ["authorization_code"], "response_types": ["code"]}, "invalid_redirect_uri"),
            ({"redirect_uris": ["http://example.com/callback"]}, "invalid_redirect_uri"),
            ({"redirect_uris": [f"{REDIRECT_URI}#fragment"]}, "invalid_redirect_uri"),
            (
                {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "private_key_jwt"},
                "invalid_client_metadata",
            ),
            ({"redirect_uris": [REDIRECT_URI], "grant_types": ["password"]}, "invalid_client_metadata"),
            ([REDIRECT_URI], "invalid_client_metadata"),
        ]
        for metadata, error in refusals:
            r = http.post("/register", json=metadata)
            assert r.status_code == 400, (metadata, r.text)
            assert r.json()["error"] == error and isinstance(r.json()["error_description"], str), r.json()
        registrations = [e for e in http_flow(srv) if e[1] == "/register"]
        assert [status for *_, status in registrations] == [201] * 3 + [400] * len(refusals)


def test_the_authorization_code_grant_on_the_wire() -> None:
    """A public client: `/authorize` redirects at once with `code`, `state` and `iss`; `/token`
    answers a signed JWT for the resource, not to be cached; the token opens the MCP endpoint; the
    code cannot be redeemed twice; each refresh rotates the refresh token."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        client_id = register_code_client(http)["client_id"]
        verifier, challenge = pkce()
        params = redirect_params(authorize(http, client_id, code_challenge=challenge, state="s-42"))
        assert set(params) == {"code", "state", "iss"} and (params["state"], params["iss"]) == ("s-42", base)
        form = {
            "grant_type": "authorization_code",
            "code": params["code"],
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": f"{base}/mcp",
        }
        r = token(http, **form)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/json") and r.headers["cache-control"] == "no-store"
        body = r.json()
        assert set(body) == {"access_token", "token_type", "expires_in", "refresh_token", "scope"}
        assert (body["token_type"], body["expires_in"], body["scope"]) == ("Bearer", TTL, SCOPE)
        assert audience(body["access_token"]) == [f"{base}/mcp"]
        assert mcp_post(http, body["access_token"]).status_code == 200

        replay = token(http, **form)
        assert (replay.status_code, replay.json()["error"]) == (400, "invalid_grant")

        def refresh(refresh_token: str) -> httpx.Response:
            return token(http, grant_type="refresh_token", refresh_token=refresh_token, client_id=client_id)

        second = refresh(body["refresh_token"])
        assert second.status_code == 200 and second.headers["cache-control"] == "no-store"
        second_body = second.json()
        assert second_body["refresh_token"] != body["refresh_token"]
        assert second_body["access_token"] != body["access_token"]
        assert mcp_post(http, second_body["access_token"]).status_code == 200
        assert refresh(second_body["refresh_token"]).status_code == 200
        spent = refresh(body["refresh_token"])
        assert (spent.status_code, spent.json()["error"]) == (400, "invalid_grant")

        tokens = [e for e in http_flow(srv) if e[1] == "/token"]
        assert [status for *_, status in tokens] == [200, 400, 200, 200, 400]


def test_the_authorization_endpoint_refuses() -> None:
    """The user is sent back with an error (and `state`, `iss`, no code): `invalid_request` without
    PKCE or with `plain` (named, or by default: OAuth 2.1 §4.1.1), `unsupported_response_type`
    for another `response_type`, `invalid_target` for another `resource` (RFC 8707),
    `invalid_scope` for a scope the server does not know. An unknown client or an unregistered
    redirect URI is answered 400 in place, never redirected."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        client_id = register_code_client(http)["client_id"]
        refusals: list[tuple[dict[str, str | None], str]] = [
            ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
            ({"code_challenge_method": "plain"}, "invalid_request"),
            ({"code_challenge_method": None}, "invalid_request"),
            ({"response_type": "token"}, "unsupported_response_type"),
            ({"resource": "http://127.0.0.1:1/mcp"}, "invalid_target"),
            ({"scope": "mcp:basic mcp:admin"}, "invalid_scope"),
        ]
        for change, error in refusals:
            params = redirect_params(authorize(http, client_id, state="s-7", **change))
            assert (params.get("error"), params.get("state"), params.get("iss")) == (error, "s-7", base), change
            assert "code" not in params, change
        for r in [
            authorize(http, "no-such-client"),
            authorize(http, client_id, redirect_uri="http://127.0.0.1:8976/elsewhere"),
        ]:
            assert r.status_code == 400 and "location" not in r.headers, r.headers
            assert r.headers["content-type"].startswith("application/json") and r.json()["error"]
        assert [e for e in http_flow(srv) if e[1] == "/authorize"] == [("GET", "/authorize", 302)] * 6 + [
            ("GET", "/authorize", 400)
        ] * 2


def test_the_token_endpoint_refuses() -> None:
    """A wrong `code_verifier` or `redirect_uri` → `invalid_grant`; a `resource` other than the MCP
    endpoint → `invalid_target` (RFC 8707); an unknown grant → `unsupported_grant_type`; a
    confidential client without its secret, or with a wrong one → 401 `invalid_client`."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        client_id = register_code_client(http)["client_id"]
        verifier, challenge = pkce()

        def exchange(auth: tuple[str, str] | None = None, **changes: str) -> httpx.Response:
            form = {
                "grant_type": "authorization_code",
                "code": authorization_code(http, changes.get("client_id", client_id), challenge),
                "redirect_uri": REDIRECT_URI,
                "client_id": client_id,
                "code_verifier": verifier,
                "resource": f"{base}/mcp",
            }
            return token(http, auth, **{**form, **changes})

        for changes, status, error in [
            ({"code_verifier": pkce()[0]}, 400, "invalid_grant"),
            ({"redirect_uri": "http://127.0.0.1:8976/elsewhere"}, 400, "invalid_grant"),
            ({"resource": "http://127.0.0.1:1/mcp"}, 400, "invalid_target"),
        ]:
            r = exchange(**changes)
            assert (r.status_code, r.json().get("error")) == (status, error), (changes, r.text)
        assert exchange().status_code == 200

        r = token(http, grant_type="password", username="u", password="p", client_id=client_id)
        assert (r.status_code, r.json()["error"]) == (400, "unsupported_grant_type")

        confidential = register_code_client(http, "client_secret_basic")
        for auth in [None, (confidential["client_id"], "wrong-secret")]:
            r = exchange(auth, client_id=confidential["client_id"])
            assert (r.status_code, r.json()["error"]) == (401, "invalid_client"), auth
        good = exchange((confidential["client_id"], confidential["client_secret"]), client_id=confidential["client_id"])
        assert good.status_code == 200, good.text


def test_client_credentials_on_the_wire() -> None:
    """A confidential client registered for `client_credentials`, its secret by Basic or in the
    form: a token without a refresh token; a wrong secret → 401 `invalid_client`; a scope not
    offered → `invalid_scope`."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        resource = f"{base_of(srv)}/mcp"

        def grant(method: str, client_id: str, secret: str, scope: str = "mcp:basic") -> httpx.Response:
            form = {"grant_type": "client_credentials", "scope": scope, "resource": resource}
            if method == "client_secret_basic":
                return token(http, (client_id, secret), **form)
            return token(http, **form, client_id=client_id, client_secret=secret)

        for method in ("client_secret_basic", "client_secret_post"):
            m2m = register(http, grant_types=["client_credentials"], token_endpoint_auth_method=method)
            r = grant(method, m2m["client_id"], m2m["client_secret"])
            assert r.status_code == 200 and r.headers["cache-control"] == "no-store", (method, r.text)
            body = r.json()
            assert set(body) == {"access_token", "token_type", "expires_in", "scope"}
            assert (body["token_type"], body["expires_in"], body["scope"]) == ("Bearer", TTL, "mcp:basic")
            assert audience(body["access_token"]) == [resource]
            assert mcp_post(http, body["access_token"]).status_code == 200
            wrong = grant(method, m2m["client_id"], "wrong-secret")
            assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_client"), method
            admin = grant(method, m2m["client_id"], m2m["client_secret"], "mcp:admin")
            assert (admin.status_code, admin.json().get("error")) == (400, "invalid_scope"), (method, admin.text)


def test_expired_and_foreign_tokens_are_refused() -> None:
    """The token works until the server's clock passes its lifetime, then 401 with
    `error="invalid_token"`; a token another lab server issued (another issuer, another audience)
    is refused the same way."""
    with (
        oauth_server(clock="manual") as srv,
        oauth_server() as other,
        httpx.Client(base_url=base_of(srv), timeout=WAIT) as http,
        httpx.Client(base_url=base_of(other), timeout=WAIT) as other_http,
    ):
        access_token = code_grant(http)["access_token"]
        assert mcp_post(http, access_token).status_code == 200
        foreign = mcp_post(other_http, access_token)
        assert foreign.status_code == 401
        assert challenge_params(foreign.headers["www-authenticate"]) == invalid_token(base_of(other))

        srv.clock.advance(TTL - 1)
        assert mcp_post(http, access_token).status_code == 200
        srv.clock.advance(2)
        expired = mcp_post(http, access_token)
        assert expired.status_code == 401
        assert challenge_params(expired.headers["www-authenticate"]) == invalid_token(base_of(srv))
        assert [e for e in http_flow(srv) if e[1] == "/mcp"] == [
            ("POST", "/mcp", 200),
            ("POST", "/mcp", 200),
            ("POST", "/mcp", 401),
        ]


# --- 7. redaction -------------------------------------------------------------------------------


async def test_no_token_secret_or_code_reaches_the_traffic(tmp_path: Any) -> None:
    """After a whole flow (a confidential client registered by the SDK, the code exchange, MCP
    calls, then a refresh and a call with the new token), the records hold none of what the
    client received or proved with: access and refresh tokens, the client secret (also as Basic
    credentials), the authorization code, the PKCE verifier; nor their form-urlencoded spelling.
    Each reads `redacted-<8 hex digits of its SHA-256>` where its exchange is recorded."""
    storage, browser, log = MemoryStorage(), HeadlessBrowser(), RequestLog()
    with oauth_server() as srv:
        url = srv.http_url or ""
        provider = oauth_provider(url, storage, browser, client_metadata("client_secret_basic"))
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, auth=provider, log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
        info, tokens = storage.client_info, storage.tokens
        assert info is not None and info.client_secret and tokens is not None and tokens.refresh_token
        with httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
            credentials = (info.client_id, info.client_secret)
            refreshed = token(http, credentials, grant_type="refresh_token", refresh_token=tokens.refresh_token)
            assert refreshed.status_code == 200, refreshed.text
            assert mcp_post(http, refreshed.json()["access_token"]).status_code == 200

        flow = http_flow(srv)
        for step in [("POST", "/register", 201), ("GET", "/authorize", 302), ("POST", "/token", 200)]:
            assert step in flow, flow
        assert flow.count(("POST", "/token", 200)) == 2
        path = tmp_path / "traffic.jsonl"
        srv.traffic.to_jsonl(path)
        recorded = path.read_text(encoding="utf-8")

    secrets = {
        "access token": tokens.access_token,
        "refresh token": tokens.refresh_token,
        "refreshed access token": refreshed.json()["access_token"],
        "refreshed refresh token": refreshed.json()["refresh_token"],
        "client secret": info.client_secret,
        "Basic credentials": basic(info.client_id, info.client_secret).removeprefix("Basic "),
        "authorization code": browser.results[0].code,
        "code verifier": log.to("/token")[0].form["code_verifier"],
    }
    leaked = [name for name, value in secrets.items() if value in recorded or quote(value, safe="") in recorded]
    assert leaked == []
    # Not vacuous: each of them went through a recorded exchange, and reads redacted there.
    missing = [
        name for name, value in secrets.items() if name != "Basic credentials" and redacted(value) not in recorded
    ]
    assert missing == []
