"""Helpers for the auth lab's tests (docs/auth.md): the official `mcp` OAuth client providers
driven headlessly (reference: auth-testing.md §3.1), and the raw wire pieces of the flow (PKCE,
registration, the authorization redirect, token requests) for tests that check what the server
answers to exactly what was sent."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import secrets
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import httpx
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from everything_mcp import Server

from conftest import WAIT

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

SCOPES = ["mcp:basic", "mcp:write"]
"""The scopes the tests' servers are started with (`start_http(auth="oauth", scopes=SCOPES)`)."""
SCOPE = " ".join(SCOPES)

REDIRECT_URI = "http://127.0.0.1:8976/callback"
"""The loopback redirect URI every test client registers. Nothing listens there: the headless
browser reads the code from the `Location` of `/authorize`'s 302 and never follows it."""

PRM_PATH = "/.well-known/oauth-protected-resource/mcp"
ASM_PATH = "/.well-known/oauth-authorization-server"

Flow = list[tuple[str, str, int]]
"""HTTP exchanges as `(method, path without query, status)`."""


# --- what the server recorded ------------------------------------------------------------------


def http_flow(srv: Any) -> Flow:
    """Every HTTP request the server recorded (`srv.traffic`, incoming records that carry an HTTP
    method and path: the auth endpoints' `kind == "http"` records and the MCP frames alike), in
    order, as `(method, path, status)`; the query string is left out of the path."""
    return [
        (r.http["method"], r.http["path"].split("?", 1)[0], r.http["status"])
        for r in srv.traffic
        if r.dir == "in" and r.http is not None and "path" in r.http
    ]


def recorded_grants(srv: Any) -> list[str]:
    """The `grant_type` of every `/token` request, read from the form the server recorded (its
    secrets redacted, docs/auth.md)."""
    return [
        dict(parse_qsl(r.raw)).get("grant_type", "")
        for r in srv.traffic
        if r.dir == "in" and r.http is not None and r.http.get("path") == "/token"
    ]


def redacted(secret: str) -> str:
    """How the records spell a secret: `redacted-` and the first 8 hex digits of its SHA-256."""
    return "redacted-" + hashlib.sha256(secret.encode()).hexdigest()[:8]


def until_served(flow: Flow, path: str = "/mcp") -> Flow:
    """`flow` up to and including the first request to `path` answered 200."""
    for i, (_, p, status) in enumerate(flow):
        if p == path and status == 200:
            return flow[: i + 1]
    raise AssertionError(f"no request to {path} was answered 200: {flow}")


# --- the official client, headless ------------------------------------------------------------


class MemoryStorage:
    """The SDK's `TokenStorage` protocol, in memory; `issued` keeps every token set it was given."""

    def __init__(self, client_info: OAuthClientInformationFull | None = None) -> None:
        self.client_info = client_info
        self.tokens: OAuthToken | None = None
        self.issued: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.issued.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class HeadlessBrowser:
    """The user agent of the authorization-code flow: `redirect` GETs the authorization URL with
    redirects off (the lab approves at once) and keeps `code`, `state` and `iss` from the
    `Location`; `callback` hands them to the SDK untouched (it checks `state` and `iss` itself).
    `approvals_only` (the default) asserts the redirect carries a code; without it, whatever the
    redirect says is handed on (an empty `code` when it has none: `AuthorizationCodeResult` needs
    one), so the SDK's own checks decide: what the tests of faults want."""

    def __init__(self, approvals_only: bool = True) -> None:
        self.approvals_only = approvals_only
        self.authorize_urls: list[str] = []
        self.locations: list[str] = []
        self.results: list[AuthorizationCodeResult] = []
        self._pending: AuthorizationCodeResult | None = None

    async def redirect(self, url: str) -> None:
        self.authorize_urls.append(url)
        async with httpx.AsyncClient(timeout=WAIT, follow_redirects=False) as http:
            r = await http.get(url)
        assert r.status_code == 302, (r.status_code, r.text)
        location = r.headers["location"]
        self.locations.append(location)
        assert location.split("?", 1)[0] == REDIRECT_URI, location
        params = dict(parse_qsl(urlsplit(location).query))
        if self.approvals_only:
            assert "error" not in params, location
        self._pending = AuthorizationCodeResult(
            code=params.get("code", ""), state=params.get("state"), iss=params.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        assert self._pending is not None, "the SDK asked for the callback before redirecting"
        result, self._pending = self._pending, None
        self.results.append(result)
        return result

    def answers(self) -> list[dict[str, str]]:
        """The query of every redirect back, in order."""
        return [dict(parse_qsl(urlsplit(location).query)) for location in self.locations]


def leaves(group: BaseException) -> list[BaseException]:
    """The exceptions at the leaves of an exception group."""
    if isinstance(group, BaseExceptionGroup):
        return [leaf for e in group.exceptions for leaf in leaves(e)]
    return [group]


@dataclass
class Sent:
    """One request the SDK's HTTP client sent, and the status it got."""

    request: httpx2.Request
    status: int | None = None
    response_headers: httpx2.Headers | None = None

    @property
    def method(self) -> str:
        return self.request.method

    @property
    def path(self) -> str:
        return self.request.url.path

    @property
    def form(self) -> dict[str, str]:
        """The body as a form (token requests), else empty."""
        if self.request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            return dict(parse_qsl(self.request.content.decode()))
        return {}


@dataclass
class RequestLog:
    """Every request the SDK's `httpx2.AsyncClient` sent, its auth provider's own requests
    (metadata, registration, token) included, through the client's event hooks."""

    sent: list[Sent] = field(default_factory=list)

    async def on_request(self, request: httpx2.Request) -> None:
        self.sent.append(Sent(request))

    async def on_response(self, response: httpx2.Response) -> None:
        for s in reversed(self.sent):
            if s.request is response.request:
                s.status, s.response_headers = response.status_code, response.headers
                return

    def hooks(self) -> dict[str, list[Any]]:
        return {"request": [self.on_request], "response": [self.on_response]}

    def to(self, path: str) -> list[Sent]:
        return [s for s in self.sent if s.path == path]

    def grant_types(self) -> list[str]:
        """The `grant_type` of every token request, in order."""
        return [s.form.get("grant_type", "") for s in self.to("/token")]


def client_metadata(token_endpoint_auth_method: Any = "none") -> OAuthClientMetadata:
    """What the test client registers: a native app on a loopback redirect. `None` leaves
    `token_endpoint_auth_method` out, as the SDK does by default (RFC 7591: client_secret_basic)."""
    return OAuthClientMetadata(
        redirect_uris=[AnyUrl(REDIRECT_URI)],
        client_name="everything-mcp tests",
        token_endpoint_auth_method=token_endpoint_auth_method,
    )


def oauth_provider(
    url: str, storage: MemoryStorage, browser: HeadlessBrowser, metadata: OAuthClientMetadata | None = None
) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata or client_metadata(),
        storage=storage,
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )


@asynccontextmanager
async def mcp_client(
    url: str,
    *,
    mode: str = "auto",
    auth: httpx2.Auth | None = None,
    headers: dict[str, str] | None = None,
    log: RequestLog | None = None,
) -> AsyncIterator[Client]:
    """The official client over Streamable HTTP with this `httpx2.Auth` (`streamable_http_client`
    takes no `auth=`: it goes on the `httpx2.AsyncClient`), in `mode` ("auto": `server/discover`
    first, the 2026-07-28 way; "legacy": the `initialize` handshake)."""
    async with httpx2.AsyncClient(
        auth=auth,
        headers=headers,
        timeout=httpx2.Timeout(WAIT, read=60.0),
        event_hooks=(log or RequestLog()).hooks(),
    ) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=WAIT) as c:
            yield c


# --- the raw wire -------------------------------------------------------------------------------


def pkce() -> tuple[str, str]:
    """A fresh `(code_verifier, S256 code_challenge)`."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(http: httpx.Client, **metadata: Any) -> dict[str, Any]:
    """`POST /register` with this RFC 7591 metadata; the 201's body."""
    r = http.post("/register", json=metadata)
    assert r.status_code == 201, (r.status_code, r.text)
    body: dict[str, Any] = r.json()
    return body


def register_code_client(http: httpx.Client, token_endpoint_auth_method: str = "none") -> dict[str, Any]:
    return register(
        http,
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=token_endpoint_auth_method,
        client_name="raw",
    )


def authorize(http: httpx.Client, client_id: str, **params: str | None) -> httpx.Response:
    """`GET /authorize` (redirects not followed) with a well-formed request for `client_id`,
    changed by `params` (a value of None leaves that parameter out)."""
    query: dict[str, str | None] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": SCOPE,
        "state": "state-1",
        "code_challenge": pkce()[1],
        "code_challenge_method": "S256",
        "resource": f"{http.base_url}".rstrip("/") + "/mcp",
    }
    query.update(params)
    return http.get("/authorize", params={k: v for k, v in query.items() if v is not None}, follow_redirects=False)


def redirect_params(r: httpx.Response) -> dict[str, str]:
    """The query of a 302 to the registered redirect URI."""
    assert r.status_code == 302, (r.status_code, r.text)
    location = r.headers["location"]
    assert location.split("?", 1)[0] == REDIRECT_URI, location
    return dict(parse_qsl(urlsplit(location).query))


def authorization_code(http: httpx.Client, client_id: str, challenge: str) -> str:
    """A code for `client_id`, bound to `challenge` (S256)."""
    params = redirect_params(authorize(http, client_id, code_challenge=challenge))
    assert params["state"] == "state-1" and params["iss"] == str(http.base_url).rstrip("/"), params
    return params["code"]


def code_grant(http: httpx.Client) -> dict[str, Any]:
    """The whole authorization-code grant for a new public client: the token response's body."""
    client_id = register_code_client(http)["client_id"]
    verifier, challenge = pkce()
    code = authorization_code(http, client_id, challenge)
    resource = str(http.base_url).rstrip("/") + "/mcp"
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, "client_id": client_id}
    r = token(http, **form, code_verifier=verifier, resource=resource)
    assert r.status_code == 200, (r.status_code, r.text)
    body: dict[str, Any] = r.json()
    return body


def token(http: httpx.Client, auth: tuple[str, str] | None = None, **form: str) -> httpx.Response:
    """`POST /token` with this form (and HTTP Basic client authentication if `auth`)."""
    return http.post("/token", data=form, auth=auth)


def mcp_post(http: httpx.Client, access_token: str | None = None) -> httpx.Response:
    """An `initialize` POSTed to `/mcp`, with `Authorization: Bearer access_token` if given."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if access_token is not None:
        headers["authorization"] = f"Bearer {access_token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    return http.post("/mcp", content=json.dumps(body).encode(), headers=headers)


def jwt_claims(access_token: str) -> dict[str, Any]:
    """The claims of a JWT, read without checking its signature."""
    parts = access_token.split(".")
    assert len(parts) == 3, f"not a JWS compact serialization: {len(parts)} parts"
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload))
    return claims


# --- servers and what they answer ---------------------------------------------------------------

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


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def basic(client_id: str, secret: str) -> str:
    """HTTP Basic client credentials as RFC 6749 §2.3.1 (and the SDK) spell them: each part
    form-urlencoded first."""
    return "Basic " + base64.b64encode(f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()).decode()


def audience(access_token: str) -> list[str]:
    aud = jwt_claims(access_token)["aud"]
    return aud if isinstance(aud, list) else [aud]
