"""Helpers of the conformance suite's client scenarios (test_auth_scenarios.py,
test_auth_scenarios2.py, test_auth_cimd.py): servers with the scenario's fault rules in force, the
official client's flow, and what a broken client does."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull
from mcp.types import TextContent

from everything_mcp import Server

from conftest import WAIT
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    REDIRECT_URI,
    SCOPES,
    HeadlessBrowser,
    MemoryStorage,
    RequestLog,
    authorize,
    base_of,
    client_metadata,
    leaves,
    mcp_client,
    pkce,
    query_of,
    redirect_params,
    token,
)

if sys.version_info < (3, 11):
    pass

ROOT_PRM_PATH = "/.well-known/oauth-protected-resource"
OIDC_PATH = "/.well-known/openid-configuration"

Rule = tuple[dict[str, Any], dict[str, Any]]
"""A fault rule as `(match, action)`, for `srv.faults.add`."""


@contextlib.contextmanager
def scenario_server(*rules: Rule, **http_options: Any) -> Iterator[Server]:
    """A server of the `everything` catalog with the auth lab on (scopes `SCOPES` unless
    `http_options` say otherwise), and these fault rules in force before the first request."""
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(**{"auth": "oauth", "scopes": SCOPES, **http_options})
        for match, action in rules:
            srv.faults.add(match, action)
        yield srv


def auth_checks(srv: Server, client: str, *ids: str) -> dict[str, tuple[str, str]]:
    """What the report says of `client` (`"mcp"`: the official client's session; `"?"`: a flow
    that opened none) for these checks, as `{id: (status, detail)}`."""
    report = srv.report().client(client)
    return {id: (report.check(id).status, report.check(id).detail) for id in ids}


async def echo_through(url: str, auth: httpx2.Auth, *, mode: str = "legacy", log: RequestLog | None = None) -> str:
    """The official client with this auth provider calls `echo` once; the text it got."""
    with anyio.fail_after(WAIT * 2):
        async with mcp_client(url, mode=mode, auth=auth, log=log) as client:
            result = await client.call_tool("echo", {"message": "hi"})
    (text,) = [c.text for c in result.content if isinstance(c, TextContent)]
    return text


async def refused_by_client(
    url: str, auth: httpx2.Auth, *, mode: str = "legacy", log: RequestLog | None = None
) -> list[BaseException]:
    """The official client with this auth provider tries to call `echo` and fails: what it raised
    (the leaves of the exception group its task group raises)."""
    with anyio.fail_after(WAIT * 2):
        try:
            async with mcp_client(url, mode=mode, auth=auth, log=log) as client:
                await client.call_tool("echo", {"message": "hi"})
        except Exception as e:
            return leaves(e)
    raise AssertionError("the official client went on")


def code_for(http: httpx.Client, client_id: str, **params: str | None) -> tuple[dict[str, str], str]:
    """A raw authorization request for `client_id` with a fresh PKCE pair (changed by `params`,
    as `authorize` takes them): the redirect's parameters, and the verifier to redeem its code."""
    verifier, challenge = pkce()
    return redirect_params(authorize(http, client_id, code_challenge=challenge, **params)), verifier


def redeem(http: httpx.Client, client_id: str, code: str, verifier: str, **form: str) -> httpx.Response:
    """`POST /token` for a public client's code (the resource the MCP endpoint, unless `form`
    says otherwise)."""
    resource = str(http.base_url).rstrip("/") + "/mcp"
    base = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, "client_id": client_id}
    return token(http, None, **{**base, "code_verifier": verifier, "resource": resource, **form})


class OfficialFlow:
    """The official client's authorization-code flow against one lab server: its storage (with a
    pre-registered client's record, if given), headless browser and request log."""

    def __init__(self, srv: Server, client_info: OAuthClientInformationFull | None = None) -> None:
        self.srv, self.base, self.url = srv, base_of(srv), srv.http_url or ""
        self.storage, self.browser, self.log = MemoryStorage(client_info), HeadlessBrowser(), RequestLog()

    def provider(self, method: str | None = "none", **options: Any) -> OAuthClientProvider:
        """An `OAuthClientProvider` registering with this `token_endpoint_auth_method` (and these
        other options, e.g. `client_metadata_url`)."""
        return OAuthClientProvider(
            server_url=self.url,
            client_metadata=client_metadata(method),
            storage=self.storage,
            redirect_handler=self.browser.redirect,
            callback_handler=self.browser.callback,
            **options,
        )

    async def echo(self, mode: str = "legacy", method: str | None = "none", **options: Any) -> str:
        return await echo_through(self.url, self.provider(method, **options), mode=mode, log=self.log)

    async def refused(self, mode: str = "legacy") -> BaseException:
        """What the client raised when it gave up (one exception)."""
        (error,) = await refused_by_client(self.url, self.provider(), mode=mode, log=self.log)
        return error

    @property
    def asked(self) -> list[dict[str, str]]:
        """The query of every authorization request, in order."""
        return [query_of(u) for u in self.browser.authorize_urls]

    def challenge(self) -> str:
        """The `WWW-Authenticate` of the first 401."""
        first = next(s for s in self.log.sent if s.status == 401)
        assert first.response_headers is not None
        return str(first.response_headers["www-authenticate"])


def after_challenge(*steps: tuple[str, str, int]) -> list[tuple[str, str, int]]:
    """A first flow: the refused MCP request, these steps, the MCP request served."""
    return [("POST", "/mcp", 401), *steps, ("POST", "/mcp", 200)]


def discovered() -> list[tuple[str, str, int]]:
    """The flow up to the authorization server's metadata."""
    return [("POST", "/mcp", 401), ("GET", PRM_PATH, 200), ("GET", ASM_PATH, 200)]


def client_credentials(http: httpx.Client, authorization: str | None = None, **form: str) -> httpx.Response:
    headers = {"authorization": authorization} if authorization else {}
    resource = str(http.base_url).rstrip("/") + "/mcp"
    return http.post("/token", data={"grant_type": "client_credentials", "resource": resource, **form}, headers=headers)
