"""The conformance suite's `auth/*` client scenarios against the auth lab (docs/auth.md): for each,
the lab set up as the suite's mock is (options and fault rules), the official `mcp` client's flow
through it, and the broken client the scenario is there to catch, with what the server recorded
and what the report says. This file: where the metadata is (`metadata-default`, `-var1`, `-var2`,
`-var3`, the 2025-03-26 fallbacks) and step-up on cue (`scope-step-up`, `scope-retry-limit`);
Client ID Metadata Documents (`basic-cimd`) are in test_auth_cimd.py. Which scopes a client asks, client authentication,
metadata a client must refuse, `offline_access`, `iss` and JWT client assertions are in
test_auth_scenarios2.py.

`authorization-server-migration` is in test_auth_migration.py. Not built in the lab, so not
here: `enterprise-managed-authorization` (token exchange with an IdP), `dpop`/`dpop-nonce` and
`wif-jwt-bearer` (the jwt-bearer grant)."""

from __future__ import annotations

import anyio
import httpx
import pytest
from auth_scenarios_support import (
    OIDC_PATH,
    ROOT_PRM_PATH,
    OfficialFlow,
    Rule,
    after_challenge,
    auth_checks,
    scenario_server,
)
from mcp import MCPError
from mcp.client.auth import OAuthFlowError

from conftest import MODES, WAIT, texts
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    SCOPE,
    UNTIL_AUTHORIZED,
    base_of,
    challenge_params,
    expected_challenge,
    http_flow,
    jwt_claims,
    mcp_client,
    mcp_post,
    recorded_grants,
    until_served,
)

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


NO_METADATA_URL: Rule = ({"auth": "challenge"}, {"remove": ["/resource_metadata"]})
"""The challenge without `resource_metadata`: the client finds the metadata on its own."""

NO_PRM: Rule = ({"auth": "protected_resource"}, {"http_status": 404})
TENANT = "/tenant1"
TENANT_ASM = f"{ASM_PATH}{TENANT}"


def code_steps(prefix: str = "") -> list[tuple[str, str, int]]:
    """Registration, the authorization redirect and the code exchange, at `prefix` (an issuer's
    path)."""
    return [("POST", f"{prefix}/register", 201), ("GET", f"{prefix}/authorize", 302), ("POST", f"{prefix}/token", 200)]


# --- metadata-default ---------------------------------------------------------------------------


@MODES
async def test_metadata_default_the_official_client_reads_the_metadata_the_challenge_names(mode: str) -> None:
    """auth/metadata-default: the challenge names the path-aware protected resource metadata; the
    official client reads that one, then RFC 8414 metadata at the root, and never the root
    protected resource metadata (the suite's `prm-priority-order` trap)."""
    with scenario_server() as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        flow = http_flow(srv)
        checks = auth_checks(srv, "mcp", "auth.discovery")
    assert me.challenge() == expected_challenge(me.base)
    assert until_served(flow) == after_challenge(*UNTIL_AUTHORIZED)
    assert ROOT_PRM_PATH not in [path for _, path, _ in flow]
    fetched = [str(s.request.url) for s in me.log.sent if s.path.startswith("/.well-known/")]
    assert fetched == [f"{me.base}{PRM_PATH}", f"{me.base}{ASM_PATH}"]
    assert checks == {"auth.discovery": ("pass", f"{PRM_PATH} → {ASM_PATH}")}


def test_metadata_default_a_client_that_reads_rfc8414_first_then_the_root_metadata_fails() -> None:
    """The broken client: told the path-aware metadata URL, it reads the authorization server's
    metadata first, then the root protected resource metadata. Both are served; the report fails
    its discovery and shows the order."""
    with scenario_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        assert challenge_params(mcp_post(http).headers["www-authenticate"])["resource_metadata"] == base + PRM_PATH
        assert http.get(ASM_PATH).status_code == 200
        assert http.get(ROOT_PRM_PATH).json()["resource"] == f"{base}/mcp"
        assert http_flow(srv) == [("POST", "/mcp", 401), ("GET", ASM_PATH, 200), ("GET", ROOT_PRM_PATH, 200)]
        assert auth_checks(srv, "?", "auth.discovery") == {"auth.discovery": ("fail", f"{ASM_PATH} → {ROOT_PRM_PATH}")}


# --- metadata-var1: no URL in the challenge, OpenID discovery only ---------------------------------

VAR1 = [NO_METADATA_URL, ({"auth": "authorization_server", "path": f"{ASM_PATH}*"}, {"http_status": 404})]


@MODES
async def test_metadata_var1_well_known_fallback_then_openid_discovery(mode: str) -> None:
    """auth/metadata-var1: the challenge names no metadata URL and RFC 8414 metadata is 404: the
    official client finds the path-aware protected resource metadata at its well-known URL, then
    the authorization server's at `/.well-known/openid-configuration`."""
    with scenario_server(*VAR1) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        flow = http_flow(srv)
        checks = auth_checks(srv, "mcp", "auth.discovery")
        refused = [r for r in srv.traffic if r.dir == "in" and r.http and r.http["status"] == 404]
    assert me.challenge() == f'Bearer scope="{SCOPE}"'
    discovery = [("GET", PRM_PATH, 200), ("GET", ASM_PATH, 404), ("GET", OIDC_PATH, 200)]
    assert until_served(flow) == after_challenge(*discovery, *code_steps())
    assert [(r.http and r.http["path"], r.fault) for r in refused] == [
        (ASM_PATH, {"rule": "r2", "action": "http_status"})
    ]
    assert checks == {"auth.discovery": ("pass", f"{PRM_PATH} → {ASM_PATH} → {OIDC_PATH}")}


def test_metadata_var1_a_client_that_only_tries_rfc8414_gets_404() -> None:
    """The broken client looks for the authorization server's metadata at the RFC 8414 URL only:
    an empty 404, and it has nothing more to go on."""
    with scenario_server(*VAR1) as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        assert mcp_post(http).headers["www-authenticate"] == f'Bearer scope="{SCOPE}"'
        assert http.get(PRM_PATH).status_code == 200
        missing = http.get(ASM_PATH)
        assert (missing.status_code, missing.text) == (404, "")
        assert http_flow(srv) == [("POST", "/mcp", 401), ("GET", PRM_PATH, 200), ("GET", ASM_PATH, 404)]
        # Both rules are listed: the challenge's (its 401 is marked) and the metadata's 404.
        assert auth_checks(srv, "?", "auth.faults") == {
            "auth.faults": (
                "pass",
                f"r1 remove at /mcp → {PRM_PATH}; r2 http_status at {ASM_PATH} → nothing more",
            )
        }


# --- metadata-var2: root protected resource metadata, an issuer with a path ------------------------

VAR2 = [NO_METADATA_URL, ({"auth": "protected_resource", "path": PRM_PATH}, {"http_status": 404})]


@MODES
async def test_metadata_var2_root_metadata_and_path_insertion(mode: str) -> None:
    """auth/metadata-var2: `issuer_path="/tenant1"`, the path-aware protected resource metadata
    404 and no URL in the challenge: the official client falls back to the root document, finds
    the issuer `…/tenant1` there, reads its metadata with the path inserted
    (`/.well-known/oauth-authorization-server/tenant1`) and uses the endpoints under `/tenant1`."""
    with scenario_server(*VAR2, issuer_path=TENANT) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        flow = http_flow(srv)
    issuer = me.base + TENANT
    discovery = [("GET", PRM_PATH, 404), ("GET", ROOT_PRM_PATH, 200), ("GET", TENANT_ASM, 200)]
    assert until_served(flow) == after_challenge(*discovery, *code_steps(TENANT))
    assert ASM_PATH not in [path for _, path, _ in flow]
    (asked,) = me.asked
    assert me.browser.authorize_urls[0].startswith(f"{issuer}/authorize?") and asked["resource"] == f"{me.base}/mcp"
    assert me.browser.results[0].iss == issuer
    assert me.storage.client_info is not None and me.storage.client_info.issuer == issuer
    assert me.storage.tokens is not None and jwt_claims(me.storage.tokens.access_token)["iss"] == issuer


def test_metadata_var2_the_root_authorization_server_metadata_is_404() -> None:
    """The broken client reads the issuer `…/tenant1` from the metadata but looks for its
    metadata at the root: both root names answer 404 (the tenant's are served)."""
    with scenario_server(*VAR2, issuer_path=TENANT) as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        assert http.get(ROOT_PRM_PATH).json()["authorization_servers"] == [base_of(srv) + TENANT]
        assert [http.get(p).status_code for p in (ASM_PATH, OIDC_PATH, TENANT_ASM)] == [404, 404, 200]


async def test_metadata_var2_the_report_grades_the_metadata_that_was_served() -> None:
    """The report reads the scopes and resource the protected resource published from the document
    the client got, the root one here (the path-aware URL answered 404 first): the official
    client asked all of them, so auth.scope passes."""
    with scenario_server(*VAR2, issuer_path=TENANT) as srv:
        assert await OfficialFlow(srv).echo() == "Echo: hi"
        assert auth_checks(srv, "mcp", "auth.scope", "auth.resource") == {
            "auth.scope": ("pass", ""),
            "auth.resource": ("pass", ""),
        }


# --- metadata-var3: a custom metadata URL, OpenID discovery with the path appended -----------------

CUSTOM = "/custom/metadata/location.json"
VAR3 = [
    ({"auth": "protected_resource", "path": "/.well-known/*"}, {"http_status": 404}),
    ({"auth": "authorization_server", "path": TENANT_ASM}, {"http_status": 404}),
    ({"auth": "authorization_server", "path": f"{OIDC_PATH}{TENANT}"}, {"http_status": 404}),
]


@MODES
async def test_metadata_var3_the_header_url_and_openid_path_append(mode: str) -> None:
    """auth/metadata-var3: the metadata only at `resource_metadata_path` (the well-known ones 404)
    and the issuer `…/tenant1` with both path-inserted metadata URLs 404: the official client
    uses the challenge's URL, then tries RFC 8414 and OpenID insertion and finds
    `/tenant1/.well-known/openid-configuration`."""
    with scenario_server(*VAR3, issuer_path=TENANT, resource_metadata_path=CUSTOM) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        flow = http_flow(srv)
        checks = auth_checks(srv, "mcp", "auth.discovery")
    assert challenge_params(me.challenge()) == {"resource_metadata": me.base + CUSTOM, "scope": SCOPE}
    paths = [CUSTOM, TENANT_ASM, f"{OIDC_PATH}{TENANT}", f"{TENANT}{OIDC_PATH}"]
    discovery = [("GET", paths[0], 200), ("GET", paths[1], 404), ("GET", paths[2], 404), ("GET", paths[3], 200)]
    assert until_served(flow) == after_challenge(*discovery, *code_steps(TENANT))
    assert checks == {"auth.discovery": ("pass", " → ".join(paths))}


def test_metadata_var3_the_well_known_metadata_urls_are_404() -> None:
    """The broken client ignores the challenge's URL and tries the well-known ones: 404."""
    with (
        scenario_server(*VAR3, issuer_path=TENANT, resource_metadata_path=CUSTOM) as srv,
        httpx.Client(base_url=base_of(srv), timeout=WAIT) as http,
    ):
        assert [http.get(p).status_code for p in (PRM_PATH, ROOT_PRM_PATH, CUSTOM)] == [404, 404, 200]


# --- 2025-03-26 backward compatibility ------------------------------------------------------------


@MODES
async def test_2025_03_26_oauth_metadata_backcompat(mode: str) -> None:
    """auth/2025-03-26-oauth-metadata-backcompat: no protected resource metadata anywhere (404)
    and none named: the official client takes the 2025-03-26 path, the authorization server's
    metadata at the origin's root, and completes. It sends `resource` only when the request that
    was refused carried `MCP-Protocol-Version` 2025-06-18 or later: not in the handshake era
    (`initialize` carries none), in the default mode (`server/discover`, 2026-07-28) it does."""
    with scenario_server() as srv:
        srv.faults.preset("auth-2025-03-26")
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        flow = http_flow(srv)
        checks = auth_checks(srv, "mcp", "auth.discovery")
    assert me.challenge() == f'Bearer scope="{SCOPE}"'
    discovery = [("GET", PRM_PATH, 404), ("GET", ROOT_PRM_PATH, 404), ("GET", ASM_PATH, 200)]
    assert until_served(flow) == after_challenge(*discovery, *code_steps())
    (asked,) = me.asked
    (exchange,) = me.log.to("/token")
    sent = [asked.get("resource"), exchange.form.get("resource")]
    assert sent == ([None, None] if mode == "legacy" else [f"{me.base}/mcp"] * 2)
    assert checks == {"auth.discovery": ("pass", f"{PRM_PATH} → {ROOT_PRM_PATH} → {ASM_PATH}")}


NO_ASM: Rule = ({"auth": "authorization_server"}, {"http_status": 404})


async def test_2025_03_26_oauth_endpoint_fallback() -> None:
    """auth/2025-03-26-oauth-endpoint-fallback: no metadata at all (both documents 404): the
    official client registers, authorizes and redeems at `/register`, `/authorize`, `/token` of
    the MCP server's origin. The redirect carries no `iss` (the preset `auth-2025-03-26-no-metadata`
    takes it out), as the suite's mock's: without metadata the client has no issuer to compare one
    with. In the handshake era, where it sends no `resource` (the default mode, which sends it, is
    in test_2025_03_26_oauth_metadata_backcompat)."""
    with scenario_server() as srv:
        srv.faults.preset("auth-2025-03-26-no-metadata")
        me = OfficialFlow(srv)
        assert await me.echo() == "Echo: hi"
        flow = http_flow(srv)
    discovery = [("GET", PRM_PATH, 404), ("GET", ROOT_PRM_PATH, 404), ("GET", ASM_PATH, 404)]
    assert until_served(flow) == after_challenge(*discovery, *code_steps())
    assert [str(s.request.url) for s in me.log.sent if s.method == "POST" and s.path != "/mcp"] == [
        f"{me.base}/register",
        f"{me.base}/token",
    ]
    assert me.browser.authorize_urls[0].startswith(f"{me.base}/authorize?")
    assert me.browser.results[0].iss is None and "resource" not in me.asked[0]


@MODES
async def test_2025_03_26_endpoint_fallback_refuses_an_iss_it_cannot_check(mode: str) -> None:
    """Without the rule the lab's redirect carries `iss` as always; the official client, holding
    no metadata, has no issuer to compare it with (RFC 9207 §2.4), refuses it and never redeems
    the code."""
    with scenario_server(NO_METADATA_URL, NO_PRM, NO_ASM) as srv:
        me = OfficialFlow(srv)
        error = await me.refused(mode)
        flow = http_flow(srv)
    assert isinstance(error, OAuthFlowError)
    assert str(error) == f"Authorization response iss mismatch: {me.base} != None"
    assert flow[-2:] == [("POST", "/register", 201), ("GET", "/authorize", 302)]


# --- step-up on cue -------------------------------------------------------------------------------

STEP_UP_ON_2ND_CALL: Rule = (
    {"method": "tools/call", "nth": 2},
    {"challenge": {"error": "insufficient_scope", "scope": "mcp:write"}},
)
SCRIPTED = "insufficient_scope: the request needs mcp:write"


@MODES
async def test_scope_step_up_on_the_second_call(mode: str) -> None:
    """auth/scope-step-up: a rule answers the second `tools/call` 403 `insufficient_scope` naming
    `mcp:write` (which the authorization server knows: a tool's scope). The official client
    authorizes again inline for the union of what it asked and `mcp:write`, without discovering
    again, and the call is sent again and served; the third call needs nothing more."""
    start = {"scopes": ["mcp:basic"], "tool_scopes": {"get-sum": "mcp:write"}}
    with scenario_server(STEP_UP_ON_2ND_CALL, **start) as srv:
        me = OfficialFlow(srv)
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(me.url, mode=mode, auth=me.provider(), log=me.log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                mark = len(http_flow(srv))
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
                assert texts(await client.call_tool("echo", {"message": "three"})) == ["Echo: three"]
        after = [e for e in http_flow(srv)[mark:] if e != ("GET", "/mcp", 200)]
        tokens = srv.auth.tokens
    assert [e for e in after if e[0] != "DELETE"] == [
        ("POST", "/mcp", 403),
        ("GET", "/authorize", 302),
        ("POST", "/token", 200),
        ("POST", "/mcp", 200),
        ("POST", "/mcp", 200),
    ]
    (refused,) = [s for s in me.log.sent if s.status == 403]
    assert refused.response_headers is not None
    assert refused.response_headers["www-authenticate"] == (
        f'Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="{me.base}{PRM_PATH}",'
        f' error_description="{SCRIPTED}"'
    )
    scopes = ["mcp:basic offline_access", "mcp:basic offline_access mcp:write"]
    assert [q["scope"] for q in me.asked] == scopes
    assert [t["scope"] for t in tokens] == scopes
    assert len(me.log.to("/register")) == 1 and me.log.grant_types() == ["authorization_code"] * 2


async def test_scope_step_up_the_report_grades_a_scripted_step_up() -> None:
    """The report's auth.step_up sees the scripted 403 as it sees a tool's: the client authorized
    again for `mcp:write`, so it passes, naming the scope."""
    start = {"scopes": ["mcp:basic"], "tool_scopes": {"get-sum": "mcp:write"}}
    with scenario_server(STEP_UP_ON_2ND_CALL, **start) as srv:
        me = OfficialFlow(srv)
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(me.url, auth=me.provider()) as client:
                for message in ("one", "two"):
                    assert texts(await client.call_tool("echo", {"message": message})) == [f"Echo: {message}"]
        assert auth_checks(srv, "mcp", "auth.step_up") == {"auth.step_up": ("pass", "mcp:write")}


@MODES
async def test_scope_retry_limit(mode: str) -> None:
    """auth/scope-retry-limit: every `tools/call` is answered 403 naming `mcp:admin`, never
    satisfiable. The official client authorizes again once for the union (2 authorizations in
    all: the suite allows 1 to 3), sends the call again, is refused again and gives up: the call
    raises and nothing more is sent to the authorization server."""
    always = ({"method": "tools/call"}, {"challenge": {"error": "insufficient_scope", "scope": "mcp:admin"}})
    with scenario_server(always, scopes=["mcp:basic"], tool_scopes={"get-sum": "mcp:admin"}) as srv:
        me = OfficialFlow(srv)
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(me.url, mode=mode, auth=me.provider(), log=me.log) as client:
                mark = len(http_flow(srv))
                with pytest.raises(MCPError):
                    await client.call_tool("echo", {"message": "hi"})
        after = [e for e in http_flow(srv)[mark:] if e[1] != "/mcp" or e[2] == 403]
        checks = auth_checks(srv, "mcp", "auth.faults")
    assert after == [("POST", "/mcp", 403), ("GET", "/authorize", 302), ("POST", "/token", 200), ("POST", "/mcp", 403)]
    # Two authorizations: within the suite's 1 to 3.
    assert [q["scope"] for q in me.asked] == ["mcp:basic offline_access", "mcp:basic offline_access mcp:admin"]
    assert recorded_grants(srv) == ["authorization_code"] * 2
    assert checks == {"auth.faults": ("pass", "r1 challenge at /mcp → /authorize; r1 challenge at /mcp → nothing more")}
