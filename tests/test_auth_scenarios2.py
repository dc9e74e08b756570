"""The conformance suite's `auth/*` client scenarios against the auth lab, continued (the
metadata, CIMD and step-up scenarios, and the list of those not built, are in
test_auth_scenarios.py): which scopes a client asks (`scope-from-*`, `scope-omitted-*`), how it
authenticates at the token endpoint (`token-endpoint-auth-*`, `pre-registration`; with a
signed assertion, `client-credentials-jwt`, in test_auth_assertions.py), metadata it must refuse (`resource-mismatch`,
`metadata-issuer-mismatch`), `offline-access-*`, and the authorization response's `iss`
(`iss-*`). Each: the official `mcp` client through the lab set up as the suite's mock, then the
broken client the scenario catches, raw, with what the report says of it."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import httpx
import pytest
from auth_scenarios_support import (
    OfficialFlow,
    Rule,
    auth_checks,
    client_credentials,
    code_for,
    discovered,
    redeem,
    scenario_server,
)
from mcp.client.auth import OAuthFlowError
from mcp.shared.auth import OAuthClientInformationFull

from conftest import MODES, WAIT
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    REDIRECT_URI,
    SCOPE,
    UNTIL_AUTHORIZED,
    base_of,
    basic,
    challenge_params,
    http_flow,
    mcp_post,
    register,
    register_code_client,
    until_served,
)

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


WITHOUT_REGISTRATION = [e for e in UNTIL_AUTHORIZED if e[1] != "/register"]


# --- which scopes ---------------------------------------------------------------------------------


@MODES
async def test_scope_from_www_authenticate(mode: str) -> None:
    """auth/scope-from-www-authenticate: the challenge names `mcp:basic` (a rule) while the
    protected resource publishes `mcp:basic mcp:write`: the official client asks the challenge's
    scope (and `offline_access`, which the authorization server lists)."""
    with scenario_server(({"auth": "challenge"}, {"set": {"/scope": "mcp:basic"}})) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        assert srv.auth.tokens[0]["scope"] == "mcp:basic offline_access"
    assert challenge_params(me.challenge())["scope"] == "mcp:basic"
    assert [q["scope"] for q in me.asked] == ["mcp:basic offline_access"]


async def test_scope_from_www_authenticate_the_report_passes_the_challenges_scope() -> None:
    """MCP's scope selection: the challenge's `scope` first, the metadata's `scopes_supported`
    only without one. A client that asked what the challenge named passes auth.scope."""
    with scenario_server(({"auth": "challenge"}, {"set": {"/scope": "mcp:basic"}})) as srv:
        assert await OfficialFlow(srv).echo() == "Echo: hi"
        assert auth_checks(srv, "mcp", "auth.scope") == {"auth.scope": ("pass", "")}


@MODES
async def test_scope_from_scopes_supported(mode: str) -> None:
    """auth/scope-from-scopes-supported: no `scope` in the challenge: the official client asks
    the protected resource's `scopes_supported`, not the authorization server's (which a rule
    widens with `mcp:admin`)."""
    wider = ({"auth": "authorization_server"}, {"set": {"/scopes_supported": ["mcp:basic", "mcp:write", "mcp:admin"]}})
    with scenario_server(({"auth": "challenge"}, {"remove": ["/scope"]}), wider) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        checks = auth_checks(srv, "mcp", "auth.scope")
    assert challenge_params(me.challenge()) == {"resource_metadata": me.base + PRM_PATH}
    # No offline_access: the widened list does not offer it.
    assert [q["scope"] for q in me.asked] == [SCOPE]
    assert checks == {"auth.scope": ("pass", "")}


@MODES
async def test_scope_omitted_when_undefined(mode: str) -> None:
    """auth/scope-omitted-when-undefined: `scopes=[]`, the server knows no scope: the challenge
    carries none (an empty `scope=""` would be read as the scope `""`). The official client then
    falls back past the protected resource's metadata to the authorization server's
    `scopes_supported` (an SDK extra), which holds only `offline_access`: it asks for that alone,
    where the suite wants no `scope` at all."""
    with scenario_server(scopes=[]) as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        assert "scope" not in challenge_params(mcp_post(http).headers["www-authenticate"])
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
    assert [q["scope"].split() for q in me.asked] == [["offline_access"]]


# --- token-endpoint-auth-{basic,post,none} and pre-registration ----------------------------------


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
async def test_token_endpoint_auth(method: str) -> None:
    """auth/token-endpoint-auth-{basic,post,none}: the official client registers asking for the
    method, the lab assigns it (with a secret unless `none`), and the code exchange authenticates
    exactly so: Basic credentials only, the secret in the form only, or the client_id alone."""
    with scenario_server() as srv:
        me = OfficialFlow(srv)
        assert await me.echo(method=method) == "Echo: hi"
        flow = http_flow(srv)
    assert until_served(flow) == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 200)]
    (registration,) = me.log.to("/register")
    assert json.loads(registration.request.content)["token_endpoint_auth_method"] == method
    info = me.storage.client_info
    assert info is not None and info.token_endpoint_auth_method == method
    assert (info.client_secret is None) == (method == "none")
    (exchange,) = me.log.to("/token")
    header = exchange.request.headers.get("authorization")
    assert exchange.form["client_id"] == info.client_id
    if method == "client_secret_basic":
        assert info.client_secret and header == basic(info.client_id, info.client_secret)
        assert "client_secret" not in exchange.form
    elif method == "client_secret_post":
        assert (header, exchange.form["client_secret"]) == (None, info.client_secret)
    else:
        assert (header, "client_secret" in exchange.form) == (None, False)


APP = {
    "client_id": "app",
    "client_secret": "app-secret",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "client_secret_basic",
}
NO_REGISTRATION: Rule = ({"auth": "authorization_server"}, {"remove": ["/registration_endpoint"]})


@MODES
async def test_pre_registration_from_the_options(mode: str) -> None:
    """auth/pre-registration: a confidential client given in the options (`clients=[...]`), and an
    authorization server without a registration endpoint (a rule): the official client, handed
    that client's record, authorizes as `app` and authenticates the code exchange with exactly its
    Basic credentials; the lab lists the client without its secret."""
    with scenario_server(NO_REGISTRATION, clients=[APP]) as srv:
        me = OfficialFlow(srv, OAuthClientInformationFull.model_validate(APP))
        assert await me.echo(mode) == "Echo: hi"
        flow = http_flow(srv)
        (listed,) = srv.auth.clients
    assert until_served(flow) == [("POST", "/mcp", 401), *WITHOUT_REGISTRATION, ("POST", "/mcp", 200)]
    assert "/register" not in [path for _, path, _ in flow]
    assert me.asked[0]["client_id"] == "app"
    (exchange,) = me.log.to("/token")
    assert exchange.request.headers["authorization"] == basic("app", "app-secret")
    assert "client_secret" not in exchange.form
    assert {k: listed.get(k) for k in APP} == {**APP, "client_secret": None}


PRE = {"client_id": "pre", "client_secret": "s3", "grant_types": ["client_credentials"]}


def test_pre_registration_refuses_bad_credentials() -> None:
    """The broken clients of a confidential client from the options (as `--client pre:s3` gives
    it): a wrong
    secret, Basic credentials without the `:` between id and secret (the suite's "Basic without
    `:`"), credentials that are not base64, no client authentication at all: 401
    `invalid_client`, each saying why; the right ones get a token."""
    with scenario_server(clients=[PRE]) as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        refusals = [
            (basic("pre", "wrong"), "wrong client secret"),
            ("Basic " + base64.b64encode(b"pre").decode(), "the Basic credentials are not id:secret"),
            ("Basic !!!", "the Basic credentials are not base64 of id:secret"),
            (None, "this client must authenticate (client_secret_basic or client_secret_post)"),
        ]
        for authorization, description in refusals:
            r = client_credentials(http, authorization, **({} if authorization else {"client_id": "pre"}))
            assert (r.status_code, r.json()) == (401, {"error": "invalid_client", "error_description": description})
        assert client_credentials(http, basic("pre", "s3")).status_code == 200
        assert [e[2] for e in http_flow(srv)] == [401] * 4 + [200]


def test_a_refused_basic_client_is_told_the_scheme() -> None:
    """RFC 6749 §5.2: when the client authenticated with the `Authorization` header, the 401
    `invalid_client` MUST carry a `WWW-Authenticate` naming that scheme."""
    with scenario_server(clients=[PRE]) as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        r = client_credentials(http, basic("pre", "wrong"))
        assert r.status_code == 401
        assert r.headers.get("www-authenticate", "").startswith("Basic")


# --- resource-mismatch and metadata-issuer-mismatch ------------------------------------------------

EVIL_RESOURCE: Rule = ({"auth": "protected_resource"}, {"set": {"/resource": "https://evil.example.com/mcp"}})
EVIL_ISSUER: Rule = ({"auth": "authorization_server"}, {"set": {"/issuer": "https://attacker.example.com"}})


@MODES
async def test_resource_mismatch_the_official_client_stops(mode: str) -> None:
    """auth/resource-mismatch: the protected resource metadata names another resource: the
    official client raises before reading any more, never reaching `/authorize`; the report
    passes auth.mismatch."""
    with scenario_server(EVIL_RESOURCE) as srv:
        me = OfficialFlow(srv)
        error = await me.refused(mode)
        flow = http_flow(srv)
        checks = auth_checks(srv, "?", "auth.mismatch")
    assert isinstance(error, OAuthFlowError)
    assert str(error) == f"Protected resource https://evil.example.com/mcp does not match expected {me.base}/mcp"
    assert flow == discovered()[:2] and me.browser.authorize_urls == []
    assert checks == {"auth.mismatch": ("pass", "")}


@MODES
async def test_metadata_issuer_mismatch_the_official_client_stops(mode: str) -> None:
    """auth/metadata-issuer-mismatch: the authorization server's metadata names another issuer
    than the one the resource named: the official client uses none of its endpoints."""
    with scenario_server(EVIL_ISSUER) as srv:
        me = OfficialFlow(srv)
        error = await me.refused(mode)
        flow = http_flow(srv)
        checks = auth_checks(srv, "?", "auth.mismatch")
    assert isinstance(error, OAuthFlowError)
    assert str(error) == f"Authorization server metadata issuer mismatch: https://attacker.example.com != {me.base}"
    assert flow == discovered() and me.browser.authorize_urls == []
    assert checks == {"auth.mismatch": ("pass", "")}


@pytest.mark.parametrize("rule", [EVIL_RESOURCE, EVIL_ISSUER], ids=["resource", "issuer"])
def test_a_client_that_goes_on_after_mismatched_metadata_fails(rule: Rule) -> None:
    """The broken client reads the mismatched document and goes on to register and authorize:
    the lab serves it, the report fails auth.mismatch naming what it did next."""
    with scenario_server(rule) as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        prm, asm = http.get(PRM_PATH).json(), http.get(ASM_PATH).json()
        assert (prm["resource"], asm["issuer"]) == (
            ("https://evil.example.com/mcp", base_of(srv))
            if rule is EVIL_RESOURCE
            else (f"{base_of(srv)}/mcp", "https://attacker.example.com")
        )
        code_for(http, register_code_client(http)["client_id"])
        assert http_flow(srv) == [*discovered()[1:], ("POST", "/register", 201), ("GET", "/authorize", 302)]
        assert auth_checks(srv, "?", "auth.mismatch") == {"auth.mismatch": ("fail", "then /authorize")}


# --- offline-access ------------------------------------------------------------------------------


@MODES
async def test_offline_access_scope(mode: str) -> None:
    """auth/offline-access-scope: the authorization server lists `offline_access` (the resource
    does not): the official client registers for `refresh_token`, asks `offline_access` (with
    `prompt=consent`, as OpenID wants) and gets a refresh token; the report passes
    auth.offline_access."""
    with scenario_server() as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        checks = auth_checks(srv, "mcp", "auth.offline_access")
    (registration,) = me.log.to("/register")
    assert json.loads(registration.request.content)["grant_types"] == ["authorization_code", "refresh_token"]
    (asked,) = me.asked
    assert (asked["scope"], asked["prompt"]) == (f"{SCOPE} offline_access", "consent")
    assert me.storage.tokens is not None and me.storage.tokens.refresh_token
    assert checks == {"auth.offline_access": ("pass", "asked offline_access")}


def test_offline_access_a_client_that_cannot_refresh_fails() -> None:
    """The broken client registers for the code grant alone where `offline_access` is offered:
    its token comes without a refresh token, and the report fails auth.offline_access."""
    with scenario_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        assert "offline_access" in http.get(ASM_PATH).json()["scopes_supported"]
        client_id = register(
            http, redirect_uris=[REDIRECT_URI], grant_types=["authorization_code"], token_endpoint_auth_method="none"
        )["client_id"]
        params, verifier = code_for(http, client_id)
        answer = redeem(http, client_id, params["code"], verifier).json()
        assert set(answer) == {"access_token", "token_type", "expires_in", "scope"}
        assert auth_checks(srv, "?", "auth.offline_access") == {
            "auth.offline_access": ("fail", "did not ask offline_access")
        }


@MODES
async def test_offline_access_not_supported(mode: str) -> None:
    """auth/offline-access-not-supported: a rule takes `offline_access` out of the authorization
    server's `scopes_supported`: the official client does not ask it (nor `prompt=consent`), and
    auth.offline_access is not exercised."""
    narrow = ({"auth": "authorization_server"}, {"set": {"/scopes_supported": ["mcp:basic", "mcp:write"]}})
    with scenario_server(narrow) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        checks = auth_checks(srv, "mcp", "auth.offline_access")
    (asked,) = me.asked
    assert (asked["scope"], "prompt" in asked) == (SCOPE, False)
    assert checks == {"auth.offline_access": ("not exercised", "")}


# --- iss (RFC 9207) ------------------------------------------------------------------------------

NOT_ADVERTISED: Rule = (
    {"auth": "authorization_server"},
    {"remove": ["/authorization_response_iss_parameter_supported"]},
)
NO_ISS: Rule = ({"auth": "authorize"}, {"remove": ["/iss"]})


@pytest.mark.parametrize(
    ("rules", "with_iss"), [([], True), ([NOT_ADVERTISED, NO_ISS], False)], ids=["supported", "not-advertised"]
)
@MODES
async def test_iss_the_official_client_redeems(rules: list[Rule], with_iss: bool, mode: str) -> None:
    """auth/iss-supported (advertised and the issuer's `iss`) and auth/iss-not-advertised (neither):
    the official client redeems the code."""
    with scenario_server(*rules) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(mode) == "Echo: hi"
        flow = http_flow(srv)
        checks = auth_checks(srv, "mcp", "auth.callback")
    assert until_served(flow) == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 200)]
    assert me.browser.results[0].iss == (me.base if with_iss else None)
    assert checks == {"auth.callback": ("not exercised", "")}


EVIL = "https://evil.example.com"
EVIL_ISS: Rule = ({"auth": "authorize"}, {"set": {"/iss": EVIL}})
ISS_REFUSED: dict[str, Callable[[str], tuple[list[Rule], str | None]]] = {
    "supported-missing": lambda base: ([NO_ISS], None),
    "wrong-issuer": lambda base: ([EVIL_ISS], EVIL),
    "unexpected": lambda base: ([NOT_ADVERTISED, EVIL_ISS], EVIL),
    "normalized": lambda base: ([({"auth": "authorize"}, {"set": {"/iss": f"{base}/"}})], f"{base}/"),
}
"""What each `iss-*` scenario scripts, given the issuer, and the `iss` the redirect then has."""


@MODES
@pytest.mark.parametrize("case", list(ISS_REFUSED))
async def test_iss_the_official_client_refuses(case: str, mode: str) -> None:
    """auth/iss-supported-missing, -wrong-issuer, -unexpected (not advertised, yet wrong) and
    -normalized (the issuer with a trailing `/`: compared as strings): the official client reaches
    `/authorize`, refuses the response and never redeems its code; the report passes
    auth.callback saying what was wrong."""
    with scenario_server() as srv:
        base = base_of(srv)
        rules, given = ISS_REFUSED[case](base)
        for match, action in rules:
            srv.faults.add(match, action)
        me = OfficialFlow(srv)
        error = await me.refused(mode)
        flow = http_flow(srv)
        checks = auth_checks(srv, "?", "auth.callback")
    assert isinstance(error, OAuthFlowError)
    assert str(error) == (
        "Authorization response missing iss parameter advertised by the authorization server"
        if given is None
        else f"Authorization response iss mismatch: {given} != {base}"
    )
    assert flow == [*discovered(), ("POST", "/register", 201), ("GET", "/authorize", 302)]
    assert me.browser.results[0].iss == given
    assert checks == {"auth.callback": ("pass", "missing iss" if given is None else "wrong iss")}


@pytest.mark.parametrize(("rule", "why"), [(EVIL_ISS, "wrong iss"), (NO_ISS, "missing iss")])
def test_iss_a_client_that_redeems_anyway_fails(rule: Rule, why: str) -> None:
    """The broken client redeems the code of a response with a wrong or missing `iss`: the lab
    answers the token, and the report fails auth.callback saying why."""
    with scenario_server(rule) as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        http.get(PRM_PATH)
        http.get(ASM_PATH)
        client_id = register_code_client(http)["client_id"]
        params, verifier = code_for(http, client_id)
        assert params.get("iss") == (EVIL if rule is EVIL_ISS else None)
        assert redeem(http, client_id, params["code"], verifier).status_code == 200
        assert auth_checks(srv, "?", "auth.callback") == {"auth.callback": ("fail", why)}
