"""The conformance suite's `auth/authorization-server-migration` here (docs/auth.md, "Migration"):
`srv.auth.migrate()` (or `POST /_control/auth/migrate`) moves the resource to the lab's second
authorization server, `{issuer}/as2`. Its metadata names that one from then on, the first one's
tokens are refused, and credentials of one authorization server are not good at the other: a
correct client discovers the new one, registers there anew and authorizes (SEP-2352). The
official client does, in both of its modes; a client that carries its first client id over is
refused, and the report says so."""

from __future__ import annotations

import anyio
import httpx
import pytest

from conftest import WAIT, texts
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    HeadlessBrowser,
    MemoryStorage,
    RequestLog,
    authorize,
    base_of,
    http_flow,
    jwt_claims,
    mcp_client,
    oauth_provider,
    oauth_server,
    query_of,
    register_code_client,
    until_served,
)

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

AS2 = "/as2"
"""The second authorization server's path, after the first one's issuer."""


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_client_registers_anew_at_the_authorization_server_migrated_to(mode: str) -> None:
    """A session authorized at the first authorization server; then the resource migrates. The
    next call is refused (its token is the first server's), and the client reads the resource's
    metadata again, finds the second server, registers there, authorizes there, and the call is
    served. Its new token is the second server's; the report's `auth.migration` passes."""
    storage, browser, log = MemoryStorage(), HeadlessBrowser(), RequestLog()
    with oauth_server() as srv:
        base, url = base_of(srv), srv.http_url or ""
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                assert srv.auth.migrate() == f"{base}{AS2}"
                mark = len(http_flow(srv))
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
        after = http_flow(srv)[mark:]
        assert until_served(after) == [
            ("POST", "/mcp", 401),
            ("GET", PRM_PATH, 200),
            ("GET", f"{ASM_PATH}{AS2}", 200),
            ("POST", f"{AS2}/register", 201),
            ("GET", f"{AS2}/authorize", 302),
            ("POST", f"{AS2}/token", 200),
            ("POST", "/mcp", 200),
        ]
        (refused,) = [r for r in srv.traffic if r.dir == "in" and r.error and "no longer" in r.error]
        assert refused.error == "the access token was issued by an authorization server this resource no longer uses"
        check = srv.report().client("mcp").check("auth.migration")
        assert (check.status, check.detail) == ("pass", "")
    assert storage.tokens is not None and jwt_claims(storage.tokens.access_token)["iss"] == f"{base}{AS2}"
    assert [s.path for s in log.sent if s.path.endswith("/register")] == ["/register", f"{AS2}/register"]
    first, second = [query_of(url)["client_id"] for url in browser.authorize_urls]
    assert first != second and storage.client_info is not None and storage.client_info.client_id == second


def test_a_client_that_carries_its_credentials_over_is_refused() -> None:
    """The broken client: registered at the first authorization server, it sends the same client
    id to the second one after the migration. `400 invalid_client` (the second server never heard
    of it), and the report's `auth.migration` fails naming the id. The first server's token is
    refused by the resource; the first server itself still answers its own clients."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        first = register_code_client(http)["client_id"]
        assert http.get(PRM_PATH).json()["authorization_servers"] == [base]
        r = http.post("/_control/auth/migrate")
        assert (r.status_code, r.json()) == (200, {"issuer": f"{base}{AS2}"})
        assert http.get(PRM_PATH).json()["authorization_servers"] == [f"{base}{AS2}"]
        metadata = http.get(f"{ASM_PATH}{AS2}").json()
        assert (metadata["issuer"], metadata["authorization_endpoint"]) == (f"{base}{AS2}", f"{base}{AS2}/authorize")
        query = authorize(http, first).request.url.query.decode()
        refused = http.get(f"{AS2}/authorize?{query}", follow_redirects=False)
        assert refused.status_code == 400
        assert refused.json()["error"] == "invalid_client"
        assert authorize(http, first).status_code == 302  # at the first server, still its client
    check = srv.report().client("?").check("auth.migration")
    assert (check.status, check.detail) == ("fail", f"reused {first} at {AS2}/authorize")
