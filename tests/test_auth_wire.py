"""The auth lab on the wire (docs/auth.md), with raw httpx: static bearer tokens, the `401`
challenge of every protected endpoint, the metadata documents, registration, the authorization
redirect and its refusals, the token endpoint and its errors, rotation, expiry on the server's
clock, audience, and that no secret reaches the traffic records. The official clients' flows
are in test_auth.py."""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata

from everything_mcp import Server

from conftest import WAIT, texts
from oauth_client import (
    ASM_PATH,
    BEARER_ONLY_CHALLENGE,
    PRM_PATH,
    REDIRECT_URI,
    SCOPE,
    SCOPES,
    TTL,
    HeadlessBrowser,
    MemoryStorage,
    RequestLog,
    audience,
    authorization_code,
    authorize,
    base_of,
    basic,
    challenge_params,
    client_metadata,
    code_grant,
    expected_challenge,
    http_flow,
    invalid_token,
    mcp_client,
    mcp_post,
    oauth_provider,
    oauth_server,
    pkce,
    redacted,
    redirect_params,
    register,
    register_code_client,
    token,
)

if sys.version_info < (3, 11):
    pass

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


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
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt",
            ],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256", "EdDSA"],
            # offline_access: for a client that wants a refresh token (SEP-2207); the resource's
            # metadata and challenge never name it.
            "scopes_supported": [*SCOPES, "offline_access"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": True,
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
