"""Auth faults (docs/auth-faults.md), continued: the challenge's parameters edited by a rule,
and the records of faulted exchanges (marked in and out, their secrets redacted). The token's
life is in test_auth_faults.py, discovery, registration, the token endpoint and consent in
test_auth_faults2.py."""

from __future__ import annotations

import json
import sys

import httpx
import pytest
from auth_faults_support import (
    refused_at_open,
    served,
)
from mcp.client.auth import OAuthFlowError

from conftest import MODES, WAIT
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    SCOPE,
    UNTIL_AUTHORIZED,
    base_of,
    code_grant,
    http_flow,
    mcp_post,
    oauth_server,
    query_of,
    redacted,
    until_served,
)

if sys.version_info < (3, 11):
    pass

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


# --- 12. the challenge's parameters edited ------------------------------------------------------

EVIL = {"set": {"/error_description": 'x scope="evil"'}}
"""An odd but legal challenge: `scope=` inside the description's text."""


def test_the_challenges_parameters_edited_on_the_wire() -> None:
    """`match.auth: "challenge"` edits the parameters of the lab's own 401 (a request without a
    good token) as a JSON object: `remove` takes one out, `set` adds or replaces one."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        with srv.faults.add(match={"auth": "challenge"}, action={"remove": ["/scope"]}) as rule:
            assert mcp_post(http).headers["www-authenticate"] == f'Bearer resource_metadata="{base}{PRM_PATH}"'
            params = mcp_post(http, "not-a-token").headers["www-authenticate"].removeprefix("Bearer ").split(", ")
            assert sorted(params) == [
                'error="invalid_token"',
                'error_description="the access token is not one this server issued"',
                f'resource_metadata="{base}{PRM_PATH}"',
            ]
        assert rule.hits == 2
        with srv.faults.add(match={"auth": "challenge"}, action={"set": {"/scope": "mcp:basic", "/realm": "lab"}}):
            assert mcp_post(http).headers["www-authenticate"] == (
                f'Bearer resource_metadata="{base}{PRM_PATH}", scope="mcp:basic", realm="lab"'
            )


def test_a_quote_in_an_edited_challenge_parameter_is_escaped() -> None:
    """A value with `"` in it is sent as a quoted-string with the quote escaped (RFC 9110
    §5.6.4): the header stays a well-formed challenge."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        srv.faults.add(match={"auth": "challenge"}, action=EVIL)
        assert mcp_post(http).headers["www-authenticate"] == (
            f'Bearer resource_metadata="{base_of(srv)}{PRM_PATH}", scope="{SCOPE}", '
            'error_description="x scope=\\"evil\\""'
        )


@pytest.mark.parametrize("remove", ["/scope", "/resource_metadata"])
async def test_the_official_client_and_a_challenge_without_a_parameter(remove: str) -> None:
    """Without `scope`, the SDK asks for the resource metadata's `scopes_supported` (the same
    scopes); without `resource_metadata`, it finds the metadata at the path-aware well-known URL.
    Either way the flow is the usual one, and served."""
    with oauth_server() as srv:
        rule = srv.faults.add(match={"auth": "challenge"}, action={"remove": [remove]})
        browser, _ = await served(srv)
        assert until_served(http_flow(srv)) == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 200)]
        assert rule.hits == 1
    assert query_of(browser.authorize_urls[0])["scope"] == f"{SCOPE} offline_access"


@MODES
async def test_scope_inside_the_error_description_misleads_the_official_client(mode: str) -> None:
    """The SDK finds a challenge's `scope` with a regular expression (the first `scope=` in the
    header) rather than by parsing the parameters. After the real `scope` the description does
    no harm; without the real one, the SDK takes what follows `scope=` in the description for
    the scope and asks for it: the lab redirects with `invalid_scope`, and the SDK, given no
    code, raises."""
    with oauth_server() as srv:
        srv.faults.add(match={"auth": "challenge"}, action=EVIL)
        browser, _ = await served(srv)
        assert query_of(browser.authorize_urls[0])["scope"] == f"{SCOPE} offline_access"
    with oauth_server() as srv:
        srv.faults.add(match={"auth": "challenge"}, action={**EVIL, "remove": ["/scope"]})
        raised, browser, log = await refused_at_open(srv, mode)
        assert [(type(e), str(e)) for e in raised] == [(OAuthFlowError, "No authorization code received")]
        asked = query_of(browser.authorize_urls[0])["scope"]
        assert "evil" in asked and SCOPE not in asked, asked
        assert browser.answers()[0]["error"] == "invalid_scope" and log.to("/token") == []


# --- 14. the records of faulted exchanges -------------------------------------------------------


def test_every_faulted_auth_exchange_is_marked_in_and_out_with_its_secrets_redacted() -> None:
    """A rule at each step; each exchange it acted on is two records on the connection `auth`,
    the request and the answer, both marked with the rule and its action. The token answer a
    `set` changed still shows its tokens redacted."""
    steps = {
        "protected_resource": {"set": {"/resource_name": "faulted"}},
        "authorization_server": {"remove": ["/scopes_supported"]},
        "register": {"delay_ms": 1},
        "authorize": {"consent": {"scope": "mcp:basic"}},
        "token": {"set": {"/note": "x"}},
    }
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        ids = {step: srv.faults.add(match={"auth": step}, action=action).id for step, action in steps.items()}
        assert http.get(PRM_PATH).json()["resource_name"] == "faulted"
        assert "scopes_supported" not in http.get(ASM_PATH).json()
        body = code_grant(http)
        assert body["note"] == "x"
        records = [r for r in srv.traffic if r.conn == "auth"]
        assert all(r.fault for r in records)
        pairs = [(records[i], records[i + 1]) for i in range(0, len(records), 2)]
        assert [(q.dir, a.dir, q.fault == a.fault) for q, a in pairs] == [("in", "out", True)] * 5
        assert [(q.http["path"], q.fault) for q, _ in pairs] == [
            (PRM_PATH, {"rule": ids["protected_resource"], "action": "set"}),
            (ASM_PATH, {"rule": ids["authorization_server"], "action": "remove"}),
            ("/register", {"rule": ids["register"], "action": "delay"}),
            ("/authorize", {"rule": ids["authorize"], "action": "consent"}),
            ("/token", {"rule": ids["token"], "action": "set"}),
        ]
        answer = json.loads(pairs[-1][1].raw)
        assert (answer["access_token"], answer["refresh_token"], answer["note"]) == (
            redacted(body["access_token"]),
            redacted(body["refresh_token"]),
            "x",
        )


def test_a_secret_a_rule_sets_is_redacted_in_the_record() -> None:
    """`set` on a secret member: the client gets the value, the record shows it redacted, as
    every token is (docs/auth-faults.md: "its secrets still redacted")."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        srv.faults.add(match={"auth": "token"}, action={"set": {"/refresh_token": "refresh-secret"}})
        assert code_grant(http)["refresh_token"] == "refresh-secret"
        (answer,) = [r for r in srv.traffic if r.fault and r.dir == "out"]
        assert "refresh-secret" not in answer.raw
        assert json.loads(answer.raw)["refresh_token"] == redacted("refresh-secret")


def test_a_challenge_edit_marks_the_refusal_it_changed() -> None:
    """The 401 a `match.auth: "challenge"` rule changed is marked like any faulted exchange: the
    request and the answer carry the rule and its action (the report's `auth.faults` lists it)."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        rule = srv.faults.add(match={"auth": "challenge"}, action={"remove": ["/scope"]})
        assert mcp_post(http).status_code == 401 and rule.hits == 1
        mark = {"rule": rule.id, "action": "remove"}
        assert [(r.dir, r.fault) for r in srv.traffic] == [("in", mark), ("out", mark)]
