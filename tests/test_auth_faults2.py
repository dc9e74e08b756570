"""Auth faults (docs/auth-faults.md), continued from test_auth_faults.py: the metadata documents
unreachable or malformed, registration refused, PKCE not advertised, a token endpoint that
answers 429 or 500 or answers late, the consent step scripted (`srv.auth.consent` and its control
API twin). On the wire (raw httpx), and what the official `mcp` client's OAuth provider does.
The challenge's parameters edited and the records of faulted exchanges are in
test_auth_faults3.py."""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio
import httpx
import pytest
from auth_faults_support import (
    REAUTHORIZED,
    faithful_browser,
    marked,
    refused_at_open,
    served,
)
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

from everything_mcp import Server

from conftest import MODES, WAIT, texts
from oauth_client import (
    ASM_PATH,
    PRM_PATH,
    REDIRECT_URI,
    SCOPE,
    UNTIL_AUTHORIZED,
    MemoryStorage,
    RequestLog,
    authorize,
    base_of,
    code_grant,
    http_flow,
    jwt_claims,
    leaves,
    mcp_client,
    oauth_provider,
    oauth_server,
    pkce,
    query_of,
    redirect_params,
    register_code_client,
    token,
    until_served,
)

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

PRM_ROOT, OIDC = "/.well-known/oauth-protected-resource", "/.well-known/openid-configuration"
DEAD_DOCUMENTS = [{"http_status": 404}, {"http_status": 500}, {"not_json": "<html>oops</html>"}, {"truncate": 10}]
IDS = ["404", "500", "not_json", "truncate"]


# --- 6. the metadata documents unreachable or malformed -----------------------------------------


@pytest.mark.parametrize("action", DEAD_DOCUMENTS, ids=IDS)
def test_dead_metadata_documents_on_the_wire(action: dict[str, Any]) -> None:
    """At every URL of both documents: the scripted status with an empty body, or `200` with
    the text instead of the document (still labelled JSON), or the document's first 10 bytes."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        resource = srv.faults.add(match={"auth": "protected_resource"}, action=action)
        server = srv.faults.add(match={"auth": "authorization_server"}, action=action)
        for path, start in {
            PRM_PATH: '{"resource',
            PRM_ROOT: '{"resource',
            ASM_PATH: '{"issuer":',
            OIDC: '{"issuer":',
        }.items():
            r = http.get(path)
            body = {"not_json": "<html>oops</html>", "truncate": start}.get(next(iter(action)), "")
            assert (r.status_code, r.text) == (action.get("http_status", 200), body), path
            if "http_status" not in action:
                assert r.headers["content-type"] == "application/json"
        assert (resource.hits, server.hits) == (2, 2)


@pytest.mark.parametrize(
    "action", [a for a in DEAD_DOCUMENTS if a != {"http_status": 500}], ids=["404", "not_json", "truncate"]
)
@MODES
async def test_without_usable_resource_metadata_the_official_client_takes_the_2025_03_26_path(
    mode: str, action: dict[str, Any]
) -> None:
    """The SDK tries the challenge's URL, the path-aware one (the same URL again) and the root
    one; none usable, it takes the 2025-03-26 path: the authorization server's metadata at the
    origin (served), registration, authorization, and it is served. `resource` is sent only
    when the request carried a protocol version of 2025-06-18 or later: the default mode's
    `server/discover` does, the handshake era's `initialize` does not."""
    with oauth_server() as srv:
        base = base_of(srv)
        rule = srv.faults.add(match={"auth": "protected_resource"}, action=action)
        browser, _ = await served(srv, mode)
        status = action.get("http_status", 200)
        tried = [("GET", PRM_PATH, status), ("GET", PRM_PATH, status), ("GET", PRM_ROOT, status)]
        assert until_served(http_flow(srv)) == [
            ("POST", "/mcp", 401),
            *tried,
            *UNTIL_AUTHORIZED[1:],
            ("POST", "/mcp", 200),
        ]
        assert rule.hits == 3
    (asked,) = [query_of(url) for url in browser.authorize_urls]
    assert asked.get("resource") == (f"{base}/mcp" if mode == "auto" else None)


@MODES
async def test_resource_metadata_answering_500_stops_the_official_client(mode: str) -> None:
    """A `500` is no sign that the resource has no metadata: the SDK stops with `OAuthFlowError`
    after the three URLs, before the authorization server's metadata."""
    with oauth_server() as srv:
        srv.faults.add(match={"auth": "protected_resource"}, action={"http_status": 500})
        raised, browser, _ = await refused_at_open(srv, mode)
        assert [(type(e), str(e)) for e in raised] == [
            (OAuthFlowError, "Protected resource metadata request failed: HTTP 500")
        ]
        assert http_flow(srv) == [("POST", "/mcp", 401)] + [("GET", p, 500) for p in (PRM_PATH, PRM_PATH, PRM_ROOT)]
    assert browser.authorize_urls == []


@MODES
@pytest.mark.parametrize("action", DEAD_DOCUMENTS, ids=IDS)
async def test_without_authorization_server_metadata_the_official_client_fails_on_the_iss(
    action: dict[str, Any], mode: str
) -> None:
    """No usable document (a `500` ends the search at once; a `404` or a malformed document
    sends it to the OpenID URL): the SDK goes on without metadata, registers at the origin's
    `/register`, sends the user to the origin's `/authorize`, then refuses the redirect: it
    carries `iss`, and with no metadata the SDK expects none ("iss mismatch: … != None"). No
    code is redeemed."""
    with oauth_server() as srv:
        base = base_of(srv)
        rule = srv.faults.add(match={"auth": "authorization_server"}, action=action)
        raised, browser, log = await refused_at_open(srv, mode)
        assert [(type(e), str(e)) for e in raised] == [
            (OAuthFlowError, f"Authorization response iss mismatch: {base} != None")
        ]
        status = action.get("http_status", 200)
        documents = [("GET", ASM_PATH, status)] + ([("GET", OIDC, status)] if status != 500 else [])
        then = [("POST", "/register", 201), ("GET", "/authorize", 302)]
        assert http_flow(srv) == [("POST", "/mcp", 401), ("GET", PRM_PATH, 200), *documents, *then]
        assert rule.hits == len(documents)
    assert browser.authorize_urls[0].startswith(f"{base}/authorize?") and log.to("/token") == []


# --- 7. registration refused, 8. PKCE not advertised --------------------------------------------

REFUSED_REGISTRATION = {
    "oauth_error": {"error": "invalid_client_metadata", "error_description": "redirect_uris refused"}
}


@MODES
async def test_a_refused_registration_on_the_wire_and_with_the_official_client(mode: str) -> None:
    """400 with the scripted OAuth error; nothing is registered. The SDK raises
    `OAuthRegistrationError` with the status and the body, and sends the user nowhere."""
    with oauth_server() as srv:
        rule = srv.faults.add(match={"auth": "register"}, action=REFUSED_REGISTRATION)
        with httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
            r = http.post("/register", json={"redirect_uris": [REDIRECT_URI]})
        assert (r.status_code, r.headers["content-type"]) == (400, "application/json")
        assert r.json() == {"error": "invalid_client_metadata", "error_description": "redirect_uris refused"}
        raised, browser, _ = await refused_at_open(srv, mode)
        assert [(type(e), str(e)) for e in raised] == [(OAuthRegistrationError, f"Registration failed: 400 {r.text}")]
        assert http_flow(srv)[1:] == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED[:2], ("POST", "/register", 400)]
        assert rule.hits == 2 and srv.auth.clients == [] and browser.authorize_urls == []
        check = srv.report().clients[0].check("auth.faults")
        assert check.detail.endswith(f"{rule.id} oauth_error at /register → nothing more"), check.detail


async def test_pkce_not_advertised_and_the_official_client_proceeds_anyway() -> None:
    """The metadata without `code_challenge_methods_supported` (both flavours), the rest
    unchanged. MCP's authorization spec has a client refuse to proceed when PKCE support is not
    advertised; the SDK does not check it (a known gap): it authorizes with S256 and is served."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        whole = http.get(ASM_PATH).json()
        rule = srv.faults.add(
            match={"auth": "authorization_server"}, action={"remove": ["/code_challenge_methods_supported"]}
        )
        expected = {k: v for k, v in whole.items() if k != "code_challenge_methods_supported"}
        assert http.get(ASM_PATH).json() == expected
        oidc = http.get(OIDC).json()
        assert {k: oidc.get(k) for k in expected} == expected and "code_challenge_methods_supported" not in oidc
        mark = len(http_flow(srv))
        browser, _ = await served(srv)
        assert until_served(http_flow(srv)[mark:]) == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED, ("POST", "/mcp", 200)]
        assert rule.hits == 3
        assert srv.report().clients[0].check("auth.pkce_s256").status == "pass"
    assert query_of(browser.authorize_urls[0])["code_challenge_method"] == "S256"


# --- 9. the token endpoint: 429, 500, late ------------------------------------------------------


@MODES
@pytest.mark.parametrize("status", [429, 500])
async def test_a_failing_token_endpoint_and_the_official_client(status: int, mode: str) -> None:
    """`{"match": {"auth": "token", "first": 1}, "action": {"http_status": ...}}`: the status
    (429 with `Retry-After`), an empty body. The SDK does not retry: it raises `OAuthTokenError`
    with the status. The user's next attempt (the same storage) reuses the registration and its
    code exchange is served."""
    headers = {"Retry-After": "1"} if status == 429 else {}
    storage = MemoryStorage()
    with oauth_server() as srv:
        rule = srv.faults.add(match={"auth": "token", "first": 1}, action={"http_status": status, "headers": headers})
        with httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
            client_id = register_code_client(http)["client_id"]
            r = token(http, grant_type="authorization_code", code="c", redirect_uri=REDIRECT_URI, client_id=client_id)
            assert (r.status_code, r.text, r.headers.get("retry-after")) == (status, "", headers.get("Retry-After"))
            rule.remove()
        rule = srv.faults.add(match={"auth": "token", "first": 1}, action={"http_status": status, "headers": headers})
        mark = len(http_flow(srv))
        raised, _, log = await refused_at_open(srv, mode, storage)
        assert [(type(e), str(e)) for e in raised] == [(OAuthTokenError, f"Token exchange failed ({status}): ")]
        assert http_flow(srv)[mark:] == [("POST", "/mcp", 401), *UNTIL_AUTHORIZED[:-1], ("POST", "/token", status)]
        assert len(log.to("/token")) == 1
        mark = len(http_flow(srv))
        await served(srv, storage=storage)
        assert until_served(http_flow(srv)[mark:]) == [("POST", "/mcp", 401), *REAUTHORIZED, ("POST", "/mcp", 200)]
        assert rule.hits == 1


@MODES
async def test_a_slow_token_endpoint(mode: str) -> None:
    """`{"delay_ms": 300}` on the real clock: the answer comes no sooner than 300 ms later, raw
    and to the official client, which waits and is served."""
    timings: dict[str, float] = {}

    class Timed(RequestLog):
        async def on_request(self, request: Any) -> None:
            timings.setdefault(request.url.path, time.monotonic())
            await super().on_request(request)

        async def on_response(self, response: Any) -> None:
            path = response.request.url.path
            timings[path] = time.monotonic() - timings[path]
            await super().on_response(response)

    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        rule = srv.faults.add(match={"auth": "token"}, action={"delay_ms": 300})
        start = time.monotonic()
        assert code_grant(http)["token_type"] == "Bearer"
        assert time.monotonic() - start >= 0.3
        log = Timed()
        with anyio.fail_after(WAIT * 2):
            url = srv.http_url or ""
            async with mcp_client(
                url, mode=mode, auth=oauth_provider(url, MemoryStorage(), faithful_browser()), log=log
            ) as client:
                assert texts(await client.call_tool("echo", {"message": "late"})) == ["Echo: late"]
        assert timings["/token"] >= 0.3 and rule.hits == 2
        assert [(d, p, f["action"]) for d, p, _, f in marked(srv)] == [
            ("in", "/token", "delay"),
            ("out", "", "delay"),
        ] * 2


# --- 11. the consent step scripted ----------------------------------------------------------------


def test_scripted_consent_answers_on_the_wire() -> None:
    """`srv.auth.consent(...)`: one answer per authorization request from now on ("approve" needs
    no rule). Denied: `error=access_denied` with `state` and `iss`. Scopes picked: a code for
    those. `wrong_code`: a code never issued (`invalid_grant`). `wrong_state`: `tampered-<state>`
    with a good code. `replay`: the previous code-bearing redirect again, its code spent."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        base, resource = base_of(srv), f"{base_of(srv)}/mcp"
        answers = ["deny", {"scope": "mcp:basic"}, "wrong_code", "wrong_state", "replay", "approve", "replay"]
        rules = srv.auth.consent(*answers)
        assert [(r.spec["match"], r.spec["action"]) for r in rules] == [
            ({"auth": "authorize", "nth": n}, {"consent": a}) for n, a in enumerate(answers, 1) if a != "approve"
        ]
        client_id = register_code_client(http)["client_id"]
        given, exchanged = [], []
        for n in range(8):
            verifier, challenge = pkce()
            params = redirect_params(authorize(http, client_id, code_challenge=challenge, state=f"s-{n}"))
            given.append(params)
            if "code" in params:
                form = {"grant_type": "authorization_code", "code": params["code"], "redirect_uri": REDIRECT_URI}
                r = token(http, **form, client_id=client_id, code_verifier=verifier, resource=resource)
                exchanged.append((n, r.status_code, r.json().get("error_description") or r.json()["scope"]))
        assert given[0] == {
            "error": "access_denied",
            "error_description": "the user denied the request",
            "state": "s-0",
            "iss": base,
        }
        assert [set(p) for p in given[1:]] == [{"code", "state", "iss"}] * 7
        assert [p["state"] for p in given[1:]] == ["s-1", "s-2", "tampered-s-3", "tampered-s-3", "s-5", "s-5", "s-7"]
        assert (given[4]["code"], given[6]["code"]) == (given[3]["code"], given[5]["code"])
        spent = "the code is unknown or was already used"
        # From the second on, every other code is one never issued (2) or a replayed one (4, 6).
        tail = [(n, 400, spent) if n % 2 == 0 else (n, 200, SCOPE) for n in range(2, 8)]
        assert exchanged == [(1, 200, "mcp:basic"), *tail]
        assert [r.hits for r in rules] == [1] * 6
        assert [t["scope"] for t in srv.auth.tokens] == ["mcp:basic", SCOPE, SCOPE, SCOPE]


@pytest.mark.parametrize(
    "answer, error, flow",
    [
        ("deny", (OAuthFlowError, "No authorization code received"), []),
        ("wrong_state", (OAuthFlowError, "State parameter mismatch: tampered-{state} != {state}"), []),
        ("wrong_code", (OAuthTokenError, 'Token exchange failed (400): {"error":"invalid_grant",'), [400]),
    ],
)
@MODES
async def test_the_official_client_and_a_consent_gone_wrong(
    answer: str, error: Any, flow: list[int], mode: str
) -> None:
    """Denied: the SDK's callback result has no room for `error`, so the SDK, given no code,
    raises "No authorization code received". A tampered `state`: it refuses the redirect before
    any token request (the report's `auth.callback` passes, "another state"). A code never
    issued: the code exchange gets `invalid_grant` and the SDK raises `OAuthTokenError`."""
    with oauth_server() as srv:
        (rule,) = srv.auth.consent(answer)
        raised, browser, log = await refused_at_open(srv, mode)
        state = query_of(browser.authorize_urls[0])["state"]
        [(kind, message)] = [(type(e), str(e)) for e in raised]
        expected = error[1].replace("{state}", state)
        assert (kind, message[: len(expected)]) == (error[0], expected)
        assert http_flow(srv)[-1 - len(flow) :] == [("GET", "/authorize", 302)] + [("POST", "/token", s) for s in flow]
        assert rule.hits == 1
        assert browser.answers()[0]["state"] == ("tampered-" if answer == "wrong_state" else "") + state
        if answer == "wrong_state":
            check = srv.report().clients[0].check("auth.callback")
            assert (check.status, check.detail) == ("pass", "another state")
    assert len(log.to("/token")) == len(flow)


async def test_the_official_client_given_only_the_scopes_picked() -> None:
    """`{"scope": "mcp:basic"}`: the token is granted `mcp:basic` alone (its response says so);
    the SDK keeps it and is served (no tool here needs more)."""
    storage = MemoryStorage()
    with oauth_server() as srv:
        srv.auth.consent({"scope": "mcp:basic"})
        await served(srv, storage=storage)
        assert [t["scope"] for t in srv.auth.tokens] == ["mcp:basic"]
    assert storage.tokens is not None and storage.tokens.scope == "mcp:basic"
    assert jwt_claims(storage.tokens.access_token)["scope"] == "mcp:basic"


@MODES
async def test_denied_then_approved_and_a_replayed_callback(mode: str) -> None:
    """`srv.auth.consent("deny", "approve")`: the first attempt fails, the user's second (the same
    storage: no second registration) is approved and served. Then the token is refused on the
    next call and the second authorization's redirect is a replay of the first: its `state` is
    not this request's, the SDK refuses it and ends, redeeming nothing."""
    storage = MemoryStorage()
    with oauth_server() as srv:
        (deny,) = srv.auth.consent("deny", "approve")
        raised, _, _ = await refused_at_open(srv, mode, storage)
        assert [type(e) for e in raised] == [OAuthFlowError]
        await served(srv, storage=storage)
        assert deny.hits == 1 and [e[1] for e in http_flow(srv)].count("/register") == 1
        srv.faults.add(match={"method": "tools/call", "nth": 1}, action={"challenge": {"error": "invalid_token"}})
        (replay,) = srv.auth.consent("replay")
        browser, url = faithful_browser(), srv.http_url or ""
        with anyio.fail_after(WAIT * 2), pytest.raises(BaseExceptionGroup) as ended:
            async with mcp_client(url, auth=oauth_provider(url, storage, browser)) as client:
                await client.call_tool("echo", {"message": "never answered"})
        (e,) = leaves(ended.value)
        assert isinstance(e, OAuthFlowError) and str(e).startswith("State parameter mismatch: ")
        assert replay.hits == 1 and http_flow(srv)[-1] == ("GET", "/authorize", 302)
        assert [e[2] for e in http_flow(srv) if e[1] == "/token"] == [200]
        # Replayed, the redirect's code was redeemed before it: not by this client after it.
        check = srv.report().clients[0].check("auth.callback")
        assert (check.status, check.detail) == ("pass", "another state")


def test_the_consent_control_api() -> None:
    """`POST /_control/auth/consent {"answers": [...]}`: 201 with the rules' ids; a bad answer is
    400 naming it; without the lab, 404 saying it is off."""
    with oauth_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        r = http.post("/_control/auth/consent", json={"answers": ["deny", "approve", {"scope": "mcp:basic"}]})
        assert (r.status_code, r.json()) == (201, {"ids": ["r1", "r2"]})
        assert [(f.spec["match"], f.spec["action"]) for f in srv.faults.rules] == [
            ({"auth": "authorize", "nth": 1}, {"consent": "deny"}),
            ({"auth": "authorize", "nth": 3}, {"consent": {"scope": "mcp:basic"}}),
        ]
        client_id = register_code_client(http)["client_id"]
        assert redirect_params(authorize(http, client_id))["error"] == "access_denied"
        assert [f.hits for f in srv.faults.rules] == [1, 0]
        bad = http.post("/_control/auth/consent", json={"answers": ["maybe"]})
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "answers[0]"
        assert bad.json()["error"]["message"] == (
            '"maybe" is not a consent answer: "approve", "deny", "wrong_code", "wrong_state", "replay", "page"'
            ' or {"scope": "mcp:basic"}'
        )
        missing = http.post("/_control/auth/consent", json={})
        assert missing.json() == {"error": {"field": "answers", "message": "is required: a list of consent answers"}}
    with Server(catalogs=["none"]) as srv:
        srv.start_http()
        off = httpx.post(f"{srv.base_url}/_control/auth/consent", json={"answers": ["deny"]}, timeout=WAIT)
        assert off.status_code == 404
        assert off.json()["error"]["message"] == "the auth lab is off: start the listener with --auth oauth (or bearer)"
