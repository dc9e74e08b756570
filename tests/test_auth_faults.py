"""Auth faults (docs/auth-faults.md): the token's life scripted by fault rules, on the wire (raw
httpx) and through the official `mcp` client's OAuth provider in both of its modes. A token
refused in the middle of a session (`challenge` on an MCP frame, with `end`), expired on the
server's clock, dead on arrival (`expired_token`), its refresh refused (always, or once), every
token refused, revoked; a scope step-up on the nth call; the rules' validation. The discovery,
registration, token-endpoint and consent faults are in test_auth_faults2.py, the challenge's
edits and the records in test_auth_faults3.py; their helpers in auth_faults_support.py."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx
import pytest
from auth_faults_support import (
    REAUTHORIZED,
    SCRIPTED_REFUSAL,
    SECOND_CALL,
    call_echo,
    faithful_browser,
    marked,
    refusal,
    refused_at_open,
    without_stream,
)
from mcp import MCPError

from everything_mcp import ConfigError

from conftest import MODES, WAIT, texts
from oauth_client import (
    PRM_PATH,
    SCOPE,
    TTL,
    UNTIL_AUTHORIZED,
    MemoryStorage,
    RequestLog,
    base_of,
    code_grant,
    expected_challenge,
    http_flow,
    jwt_claims,
    mcp_client,
    mcp_post,
    oauth_provider,
    oauth_server,
    query_of,
    recorded_grants,
    token,
    until_served,
)

if sys.version_info < (3, 11):
    pass

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


def test_a_challenge_on_the_second_call_ends_every_token_on_the_wire() -> None:
    """`{"challenge": {"error": "invalid_token", "end": "expired"}}` on the second `tools/call`:
    it is answered 401 with the lab's challenge (`error`, the scopes, the metadata URL, a
    description saying a rule did it) instead of being served, and every token issued so far is
    expired, so the same token is refused again by the lab itself. The marked record is the
    refused request."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        rule = srv.faults.add(match=SECOND_CALL, action={"challenge": {"error": "invalid_token", "end": "expired"}})
        access_token = code_grant(http)["access_token"]
        assert call_echo(http, access_token, 1).status_code == 200
        refused = call_echo(http, access_token, 2)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == (
            f'Bearer error="invalid_token", scope="{SCOPE}", resource_metadata="{base}{PRM_PATH}", '
            'error_description="the access token has expired"'
        )
        assert [t["status"] for t in srv.auth.tokens] == ["expired"]
        again = call_echo(http, access_token, 3)
        assert (again.status_code, again.json()["error"]["message"]) == (401, "the access token has expired")
        assert again.headers["www-authenticate"] == refusal(base, "the access token has expired")
        assert rule.hits == 1
        assert marked(srv) == [("in", "/mcp", 401, {"rule": rule.id, "action": "challenge"})]
        assert [r.method for r in srv.traffic if r.fault] == ["tools/call"]


@MODES
async def test_the_official_client_authorizes_again_when_its_token_is_expired_mid_session(mode: str) -> None:
    """The same rule against the official client: its second call meets the 401; its token is
    still good on its own clock, so it does not refresh: it discovers again and runs a new
    authorization (reusing its registration), then sends the call again, which is served."""
    storage, browser, log = MemoryStorage(), faithful_browser(), RequestLog()
    with oauth_server() as srv:
        base, url = base_of(srv), srv.http_url or ""
        rule = srv.faults.add(match=SECOND_CALL, action={"challenge": {"error": "invalid_token", "end": "expired"}})
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                mark, sent_mark = len(http_flow(srv)), len(log.sent)
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
                statuses = [t["status"] for t in srv.auth.tokens]
        after = without_stream(http_flow(srv)[mark:])
        assert until_served(after) == [("POST", "/mcp", 401), *REAUTHORIZED, ("POST", "/mcp", 200)]
        assert recorded_grants(srv) == ["authorization_code", "authorization_code"]
        assert marked(srv) == [("in", "/mcp", 401, {"rule": rule.id, "action": "challenge"})]
        assert [r.msg["params"]["arguments"] for r in srv.traffic if r.fault] == [{"message": "two"}]
        assert srv.report().client("mcp").check("auth.faults").detail == f"{rule.id} challenge at /mcp → {PRM_PATH}"
    # The first token ended with the rule; the new one is good.
    assert statuses == ["expired", "active"]
    (challenge,) = [s for s in log.sent[sent_mark:] if s.status == 401]
    assert challenge.response_headers is not None
    assert 'error_description="the access token has expired"' in challenge.response_headers["www-authenticate"]
    assert [s.path for s in log.sent[sent_mark:] if s.path in ("/register", "/token")] == ["/token"]
    assert len(browser.locations) == 2 and storage.issued[0].access_token != storage.issued[1].access_token
    assert query_of(browser.authorize_urls[1])["resource"] == f"{base}/mcp"


def test_a_token_expires_on_the_manual_clock_at_its_ttl() -> None:
    """`token_ttl=60` on the manual clock: the token opens the endpoint until the clock reaches
    its `exp` (whole seconds, as JWTs count: good at 59 s, refused at 60), then 401 with the
    lab's own refusal, and `srv.auth.tokens` says `expired`."""
    with oauth_server(token_ttl=60, clock="manual") as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        access_token = code_grant(http)["access_token"]
        claims = jwt_claims(access_token)
        assert claims["exp"] - claims["iat"] == 60
        srv.clock.advance(59)
        assert mcp_post(http, access_token).status_code == 200
        assert [t["status"] for t in srv.auth.tokens] == ["active"]
        srv.clock.advance(1)
        refused = mcp_post(http, access_token)
        assert (refused.status_code, refused.json()["id"]) == (401, None)
        assert refused.json()["error"] == {"code": -32000, "message": "the access token has expired"}
        assert refused.headers["www-authenticate"] == refusal(base, "the access token has expired")
        assert [t["status"] for t in srv.auth.tokens] == ["expired"]


# --- 2. the first token dead on arrival ------------------------------------------------------------


def test_an_expired_token_on_the_wire() -> None:
    """`{"match": {"auth": "token", "nth": 1}, "action": {"expired_token": true}}`: the token
    response looks normal (`expires_in` still the TTL) but the JWT's `exp` has passed; the
    resource refuses it as expired. Only the first token: the refresh gives a good one."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        rule = srv.faults.add(match={"auth": "token", "nth": 1}, action={"expired_token": True})
        body = code_grant(http)
        assert (body["expires_in"], body["token_type"], body["scope"]) == (TTL, "Bearer", SCOPE)
        claims = jwt_claims(body["access_token"])
        assert claims["exp"] <= claims["iat"]
        assert [t["status"] for t in srv.auth.tokens] == ["expired"]
        refused = mcp_post(http, body["access_token"])
        assert (refused.status_code, refused.json()["error"]["message"]) == (401, "the access token has expired")
        client_id = claims["client_id"]
        fresh = token(http, grant_type="refresh_token", refresh_token=body["refresh_token"], client_id=client_id)
        assert fresh.status_code == 200 and fresh.json()["expires_in"] == TTL
        assert mcp_post(http, fresh.json()["access_token"]).status_code == 200
        assert rule.hits == 1
        assert [(d, p, s, f["action"]) for d, p, s, f in marked(srv)] == [
            ("in", "/token", 200, "expired_token"),
            ("out", "", 200, "expired_token"),
        ]


@MODES
async def test_the_official_client_with_a_token_dead_on_arrival(mode: str) -> None:
    """The SDK handles one 401 per request: it authorizes and sends the request again, and that
    retry's 401 is the request's answer. In the handshake era that request is `initialize`:
    the client fails to open (`MCPError` "the access token has expired", one authorization, and
    the report's `auth.recovers` fails). The default mode sends `server/discover` first, which
    fails the same way, then falls back to `initialize`: that request's 401 starts a second
    authorization, whose token is good, and the client opens in the handshake era."""
    with oauth_server() as srv:
        rule = srv.faults.add(match={"auth": "token", "nth": 1}, action={"expired_token": True})
        first = [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 401)]
        if mode == "legacy":
            raised, browser, log = await refused_at_open(srv, mode)
            assert [(type(e), str(e)) for e in raised] == [(MCPError, "the access token has expired")]
            assert http_flow(srv) == first
            recovers = ("fail", "the access token has expired")
        else:
            browser, log, url = faithful_browser(), RequestLog(), srv.http_url or ""
            with anyio.fail_after(WAIT * 2):
                async with mcp_client(url, auth=oauth_provider(url, MemoryStorage(), browser), log=log) as client:
                    assert client.protocol_version == "2025-11-25"
                    assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
            again = [("POST", "/mcp", 401), *REAUTHORIZED, ("POST", "/mcp", 200)]
            assert until_served(http_flow(srv)) == first + again
            recovers = ("pass", "the access token has expired")
        check = srv.report().clients[0].check("auth.recovers")
        assert (check.status, check.detail) == recovers
    assert rule.hits == 1 and log.grant_types() == ["authorization_code"] * len(browser.locations)
    assert len(browser.locations) == (1 if mode == "legacy" else 2)


# --- 3. a refresh refused ---------------------------------------------------------------------------

LOCALLY_EXPIRED = {"set": {"/expires_in": -1}}
"""A token response whose `expires_in` has passed on arrival, on the client's clock only (the
token itself is good): the SDK refreshes before its next request, without a 401 first and
without a test that waits for the time to pass."""

REFUSED_REFRESH = {"oauth_error": {"error": "invalid_grant"}}


def test_a_refused_refresh_on_the_wire() -> None:
    """`{"match": {"auth": "token", "grant": "refresh_token"}, "action": {"oauth_error": ...}}`:
    the code exchange is served, the refresh answered 400 with the scripted error instead, its
    description naming the rule. The refresh token was not spent: without the rule it works."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        rule = srv.faults.add(match={"auth": "token", "grant": "refresh_token"}, action=REFUSED_REFRESH)
        body = code_grant(http)
        form = {"grant_type": "refresh_token", "refresh_token": body["refresh_token"]}
        form["client_id"] = jwt_claims(body["access_token"])["client_id"]
        refused = token(http, **form)
        assert refused.status_code == 400
        assert (refused.headers["content-type"], refused.headers["cache-control"]) == ("application/json", "no-store")
        assert refused.json() == {
            "error": "invalid_grant",
            "error_description": f"invalid_grant (scripted by fault rule {rule.id})",
        }
        assert rule.hits == 1 and rule.remove()
        assert token(http, **form).status_code == 200
        assert [status for _, path, status in http_flow(srv) if path == "/token"] == [200, 400, 200]


@MODES
async def test_the_official_client_authorizes_again_when_its_refresh_is_refused(mode: str) -> None:
    """Its first token expired on its own clock, the SDK refreshes before its next request;
    refused, it drops its tokens, sends that request without a token (401, the bare challenge)
    and runs a new authorization, reusing its registration. Every call is served."""
    storage, browser, log = MemoryStorage(), faithful_browser(), RequestLog()
    with oauth_server() as srv:
        base, url = base_of(srv), srv.http_url or ""
        early = srv.faults.add(match={"auth": "token", "nth": 1}, action=LOCALLY_EXPIRED)
        rule = srv.faults.add(match={"auth": "token", "grant": "refresh_token"}, action=REFUSED_REFRESH)
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
        flow = without_stream(http_flow(srv))
        first = [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 200)]
        assert flow[: len(first) + 6] == [*first, ("POST", "/token", 400), ("POST", "/mcp", 401), *REAUTHORIZED]
        assert (early.hits, rule.hits) == (1, 1)
        check = srv.report().client("mcp").check("auth.refresh")
        assert (check.status, check.detail) == ("pass", "refresh 1")
        # Both 401s are the lab's answer to a request without a token.
        refusals = [r.error for r in srv.traffic if r.dir == "in" and (r.http or {}).get("status") == 401]
        assert refusals == ["authorization required: send Authorization: Bearer <token>"] * 2
    assert log.grant_types() == ["authorization_code", "refresh_token", "authorization_code"]
    _, bare = [s for s in log.sent if s.status == 401]
    assert bare.response_headers is not None
    assert bare.response_headers["www-authenticate"] == expected_challenge(base)
    assert len(browser.locations) == 2 and len(storage.issued) == 2


@MODES
async def test_a_refresh_refused_once_then_the_next_one_succeeds(mode: str) -> None:
    """`"first": 1`: the first refresh is refused (a new authorization follows); every code
    exchange's token expires at once on the client's clock, so the SDK refreshes again, and that
    refresh is served."""
    storage, browser, log = MemoryStorage(), faithful_browser(), RequestLog()
    with oauth_server() as srv:
        url = srv.http_url or ""
        srv.faults.add(match={"auth": "token", "grant": "authorization_code"}, action=LOCALLY_EXPIRED)
        rule = srv.faults.add(match={"auth": "token", "grant": "refresh_token", "first": 1}, action=REFUSED_REFRESH)
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
        assert [status for _, path, status in http_flow(srv) if path == "/token"] == [200, 400, 200, 200]
        assert rule.hits == 1
        check = srv.report().client("mcp").check("auth.refresh")
        assert (check.status, check.detail) == ("pass", "refresh 2")
    assert log.grant_types() == ["authorization_code", "refresh_token", "authorization_code", "refresh_token"]
    assert storage.tokens is not None and storage.tokens.expires_in == TTL


# --- 4. every token refused ------------------------------------------------------------------------


@pytest.mark.parametrize("match", [{}, {"transport": "http"}], ids=["every frame", "every HTTP frame"])
@MODES
async def test_every_token_refused_ends_the_official_client_after_a_bounded_number_of_authorizations(
    mode: str, match: dict[str, Any]
) -> None:
    """A rule that refuses every frame with a token: the SDK authorizes once per request that
    meets a 401 and gives up on the retry's 401, so it never loops. The handshake era fails to
    open after one authorization; the default mode after two (`server/discover`, then the
    `initialize` fallback). The client raises `MCPError` with the refusal's JSON-RPC error (the
    scripted 401 has the body the lab's own refusals have)."""
    with oauth_server() as srv:
        rule = srv.faults.add(match=match, action={"challenge": {"error": "invalid_token"}})
        raised, browser, log = await refused_at_open(srv, mode)
        assert [(type(e), str(e)) for e in raised] == [(MCPError, SCRIPTED_REFUSAL)]
        once = [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 401)]
        twice = [*once, ("POST", "/mcp", 401), *REAUTHORIZED, ("POST", "/mcp", 401)]
        assert http_flow(srv) == (once if mode == "legacy" else twice)
        assert rule.hits == (1 if mode == "legacy" else 3)
        assert [t["status"] for t in srv.auth.tokens] == ["active"] * len(browser.locations)
        report = srv.report()
        if mode == "legacy":
            check = report.client("mcp").check("auth.faults")
            assert (check.status, check.detail) == ("pass", f"{rule.id} challenge at /mcp → nothing more")
        else:
            assert all(c.check("auth.faults").status == "pass" for c in report.clients)
    assert len(browser.locations) == (1 if mode == "legacy" else 2)
    assert log.grant_types() == ["authorization_code"] * len(browser.locations)


# --- 5. revoked in the middle of a session ---------------------------------------------------------


@pytest.mark.parametrize("how", ["srv.auth.revoke()", "challenge"])
@MODES
async def test_a_token_revoked_mid_session_and_the_official_client_authorizes_again(mode: str, how: str) -> None:
    """`srv.auth.revoke()` between two calls (the lab's own refusal: "the access token was
    revoked"), or `{"challenge": {"error": "invalid_token", "end": "revoked"}}` on the second
    call: the call meets a 401, the SDK authorizes again and the call is served."""
    storage, browser, log = MemoryStorage(), faithful_browser(), RequestLog()
    with oauth_server() as srv:
        url = srv.http_url or ""
        if how == "challenge":
            srv.faults.add(match=SECOND_CALL, action={"challenge": {"error": "invalid_token", "end": "revoked"}})
        with anyio.fail_after(WAIT * 2):
            async with mcp_client(url, mode=mode, auth=oauth_provider(url, storage, browser), log=log) as client:
                assert texts(await client.call_tool("echo", {"message": "one"})) == ["Echo: one"]
                mark, sent_mark = len(http_flow(srv)), len(log.sent)
                if how == "srv.auth.revoke()":
                    assert srv.auth.revoke() == 1
                assert texts(await client.call_tool("echo", {"message": "two"})) == ["Echo: two"]
        after = without_stream(http_flow(srv)[mark:])
        assert until_served(after) == [("POST", "/mcp", 401), *REAUTHORIZED, ("POST", "/mcp", 200)]
        assert [t["status"] for t in srv.auth.tokens] == ["revoked", "active"]
        mine = srv.report().client("mcp")
        if how == "srv.auth.revoke()":
            assert mine.check("auth.recovers").detail == "the access token was revoked"
        assert mine.check("auth.recovers" if how == "srv.auth.revoke()" else "auth.faults").status == "pass"
    (refused,) = [s for s in log.sent[sent_mark:] if s.status == 401]
    assert refused.response_headers is not None
    description = "the access token was revoked"
    assert f'error_description="{description}"' in refused.response_headers["www-authenticate"]
    assert len(browser.locations) == 2 and log.grant_types() == ["authorization_code"] * 2


# --- 10. a scope step-up on the nth call -----------------------------------------------------------


def test_a_step_up_challenge_on_the_second_call_on_the_wire() -> None:
    """`{"challenge": {"error": "insufficient_scope", "scope": "mcp:write"}}` on the second call:
    403 with `error="insufficient_scope"`, the rule's scope and the metadata URL; no token is
    ended, and the third call with the same token is served. (What the official client does on
    a 403 is another test's subject.)"""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base = base_of(srv)
        rule = srv.faults.add(
            match=SECOND_CALL, action={"challenge": {"error": "insufficient_scope", "scope": "mcp:write"}}
        )
        access_token = code_grant(http)["access_token"]
        first, second, third = (call_echo(http, access_token, id) for id in (1, 2, 3))
        assert (first.status_code, second.status_code, third.status_code) == (200, 403, 200)
        assert second.headers["www-authenticate"] == (
            f'Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="{base}{PRM_PATH}", '
            'error_description="insufficient_scope: the request needs mcp:write"'
        )
        assert third.json()["result"]["content"] == [{"type": "text", "text": "Echo: 3"}]
        assert [t["status"] for t in srv.auth.tokens] == ["active"]
        assert rule.hits == 1
        assert marked(srv) == [("in", "/mcp", 403, {"rule": rule.id, "action": "challenge"})]
        assert [status for _, path, status in http_flow(srv) if path == "/mcp"] == [200, 403, 200]


# --- 13. the rules' validation ------------------------------------------------------------------

ONLY_AT_STEPS = (
    "http_status, headers, body, delay_ms, set, remove, not_json, truncate, oauth_error, consent, expired_token"
)
INVALID: list[tuple[dict[str, Any], str]] = [
    (
        {"match": {"auth": "token", "method": "tools/call"}, "action": {"http_status": 500}},
        'match.method: matches MCP frames, not requests to the auth lab ("match.auth")',
    ),
    ({"match": {"auth": "register"}, "action": {"consent": "deny"}}, 'action.consent: acts at "authorize" only'),
    ({"match": {"auth": "authorize"}, "action": {"expired_token": True}}, 'action.expired_token: acts at "token" only'),
    (
        {"match": {"method": "tools/call"}, "action": {"oauth_error": {"error": "invalid_grant"}}},
        'action.oauth_error: acts on a step of the auth lab: give "match.auth"',
    ),
    (
        {"match": {"auth": "authorize", "grant": "refresh_token"}, "action": {"http_status": 500}},
        'match.grant: matches token requests: with "auth": "token"',
    ),
    (
        {"match": {"grant": "refresh_token"}, "action": {"http_status": 500}},
        'match.grant: matches requests to the auth lab: give "match.auth" too',
    ),
    (
        {"match": {"auth": "token"}, "action": {"drop": True}},
        f"action.drop: does not act on a request to the auth lab (those take {ONLY_AT_STEPS})",
    ),
    (
        {"match": {"auth": "token"}, "action": {"challenge": {"error": "invalid_token"}}},
        f"action.challenge: does not act on a request to the auth lab (those take {ONLY_AT_STEPS})",
    ),
    (
        {"action": {"challenge": {"error": "invalid_token"}, "error": {"code": 1, "message": "m"}}},
        'action.challenge: answers the request instead of serving it: not with "error", "result", "drop", '
        '"http_status" or "expire_session"',
    ),
    (
        {"action": {"challenge": {"error": "insufficient_scope", "end": "expired"}}},
        'action.challenge.end: ends the tokens of an "invalid_token" challenge only',
    ),
    (
        {"match": {"auth": "token"}, "action": {"http_status": 500, "oauth_error": {"error": "x"}}},
        'action: "http_status", "oauth_error" and "consent" exclude each other',
    ),
]


def test_auth_rules_are_checked_and_a_fault_file_of_them_loads() -> None:
    with oauth_server() as srv:
        for rule, message in INVALID:
            with pytest.raises(ConfigError) as refused:
                srv.faults.add_rule(rule)
            assert str(refused.value) == f"invalid fault rule: {message}", rule
        assert srv.faults.rules == []
        rules = [
            {"match": {"auth": "token", "grant": "refresh_token"}, "action": REFUSED_REFRESH},
            {"match": SECOND_CALL, "action": {"challenge": {"error": "invalid_token", "end": "expired"}}},
            {"id": "deny-first", "match": {"auth": "authorize", "nth": 1}, "action": {"consent": "deny"}},
        ]
        loaded = srv.faults.load_text(json.dumps(rules, indent=2))
        assert [(r.id, r.spec) for r in loaded] == [
            (id, {**rule, "id": id}) for id, rule in zip(["r1", "r2", "deny-first"], rules, strict=True)
        ]
        with pytest.raises(ConfigError) as refused:
            srv.faults.load_text('[\n  {"match": {"auth": "token", "method": "x"}, "action": {"http_status": 500}}\n]')
        assert str(refused.value) == f"invalid fault rule: line 2, rule 1: {INVALID[0][1]}"
