"""The auth lab as a test scripts it (docs/auth.md): `srv.auth` in Python and `/_control/auth/…`
for other languages — the clients registered, the tokens issued, a pre-registered client, tokens
revoked or expired on cue, and what a client then sees on the wire."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from everything_mcp import ConfigError, Server

from conftest import WAIT

REDIRECT = "http://127.0.0.1:9/callback"
POST = {"accept": "application/json, text/event-stream"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


@pytest.fixture
def lab() -> Any:
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(auth="oauth", scopes=["mcp:basic", "mcp:write"])
        yield srv


def code_flow(http: httpx.Client, srv: Server, client_id: str, secret: str | None = None) -> dict[str, Any]:
    """The authorization code grant with PKCE, headless: the token endpoint's answer."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "s1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": srv.http_url,
    }
    back = http.get(f"/authorize?{urlencode(query)}")
    assert back.status_code == 302, back.text
    code = parse_qs(urlsplit(back.headers["location"]).query)["code"][0]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        "resource": srv.http_url,
    }
    auth = (client_id, secret) if secret else None
    answer = http.post("/token", data=form if auth else {**form, "client_id": client_id}, auth=auth)
    assert answer.status_code == 200, answer.text
    tokens: dict[str, Any] = answer.json()
    return tokens


def initialize(http: httpx.Client, token: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    return http.post("/mcp", json=body, headers={**POST, "authorization": f"Bearer {token}"})


def test_a_pre_registered_client_its_tokens_and_their_end(lab: Server) -> None:
    client = lab.auth.register(redirect_uris=[REDIRECT], grant_types=["authorization_code", "refresh_token"])
    assert client["token_endpoint_auth_method"] == "client_secret_basic"  # RFC 7591's default
    assert client["client_secret"]
    assert lab.auth.clients == [{k: v for k, v in client.items() if k != "client_secret"}]
    with httpx.Client(base_url=lab.base_url or "", timeout=WAIT) as http:
        first = code_flow(http, lab, client["client_id"], client["client_secret"])
        second = code_flow(http, lab, client["client_id"], client["client_secret"])
        assert initialize(http, first["access_token"]).status_code == 200
        tokens = lab.auth.tokens
        assert [(t["client_id"], t["scope"], t["status"]) for t in tokens] == [
            (client["client_id"], "mcp:basic mcp:write", "active")
        ] * 2
        assert first["access_token"] not in str(tokens)
        # Revoked: refused, saying so; the other token still opens the endpoint.
        assert lab.auth.revoke(tokens[0]["jti"]) == 1
        refused = initialize(http, first["access_token"])
        assert refused.status_code == 401
        assert (
            'error="invalid_token", error_description="the access token was revoked"'
            in (refused.headers["www-authenticate"])
        )
        assert initialize(http, second["access_token"]).status_code == 200
        # Expired on cue, whatever its exp says.
        assert lab.auth.expire() == 2
        refused = initialize(http, second["access_token"])
        assert 'error_description="the access token has expired"' in refused.headers["www-authenticate"]
        assert [t["status"] for t in lab.auth.tokens] == ["expired", "expired"]
        # A refresh gives a fresh token.
        form = {"grant_type": "refresh_token", "refresh_token": second["refresh_token"]}
        fresh = http.post("/token", data=form, auth=(client["client_id"], client["client_secret"])).json()
        assert initialize(http, fresh["access_token"]).status_code == 200


def test_the_control_api_is_the_twin_of_srv_auth(lab: Server) -> None:
    with httpx.Client(base_url=lab.base_url or "", timeout=WAIT) as http:
        created = http.post(
            "/_control/auth/clients", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
        )
        assert created.status_code == 201
        client = created.json()
        assert "client_secret" not in client  # a public client
        assert http.get("/_control/auth/clients").json() == {"clients": lab.auth.clients}
        tokens = code_flow(http, lab, client["client_id"])
        listed = http.get("/_control/auth/tokens").json()["tokens"]
        assert listed == lab.auth.tokens and len(listed) == 1
        assert http.post("/_control/auth/tokens/revoke", json={"jti": listed[0]["jti"]}).json() == {"ended": 1}
        assert http.post("/_control/auth/tokens/revoke", json={"jti": "nope"}).json() == {"ended": 0}
        assert initialize(http, tokens["access_token"]).status_code == 401
        assert http.post("/_control/auth/tokens/expire").json() == {"ended": 1}
        refused = http.post("/_control/auth/clients", json={"redirect_uris": ["http://evil.example/cb"]})
        assert refused.status_code == 400
        assert "invalid_redirect_uri" in refused.json()["error"]["message"]


def test_without_the_lab_srv_auth_and_the_control_api_say_it_is_off() -> None:
    with Server(catalogs=["none"]) as srv:
        with pytest.raises(ConfigError, match="the auth lab is off"):
            assert srv.auth.tokens is None  # never reached: it raises
        srv.start_http()
        with pytest.raises(ConfigError, match="the auth lab is off"):
            srv.auth.register(redirect_uris=[REDIRECT])
        off = httpx.get(f"{srv.base_url}/_control/auth/tokens", timeout=WAIT)
        assert off.status_code == 404
        assert "the auth lab is off" in off.json()["error"]["message"]
        # And the MCP endpoint is open.
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
            assert http.post("/mcp", json=body, headers=POST).status_code == 200


@pytest.mark.parametrize("how", ["srv.reset()", "POST /_control/reset"])
def test_reset_takes_the_lab_back_to_the_start(how: str) -> None:
    """After a reset (from Python or the control API) the lab has only the clients its settings
    name, the first authorization server again, no tokens listed, and the tokens it had issued
    are refused (`revoked`), as a fresh lab's would be."""
    pre = {"client_id": "pre", "client_secret": "s3", "grant_types": ["client_credentials"]}
    with Server(catalogs=["none"]) as srv:
        srv.start_http(auth="oauth", clients=[pre])
        with httpx.Client(base_url=srv.base_url or "", timeout=WAIT) as http:
            old = http.post("/token", data={"grant_type": "client_credentials"}, auth=("pre", "s3")).json()
            extra = srv.auth.register(redirect_uris=[REDIRECT])
            srv.auth.migrate()
            if how == "srv.reset()":
                srv.reset()
            else:
                assert http.post("/_control/reset").status_code == 204
            assert [c["client_id"] for c in srv.auth.clients] == ["pre"]
            assert extra["client_id"] not in [c["client_id"] for c in srv.auth.clients]
            assert srv.auth.tokens == []
            prm = http.get("/.well-known/oauth-protected-resource/mcp").json()
            assert prm["authorization_servers"] == [srv.base_url]
            refused = initialize(http, old["access_token"])
            assert refused.status_code == 401
            assert 'error_description="the access token was revoked"' in refused.headers["www-authenticate"]
            new = http.post("/token", data={"grant_type": "client_credentials"}, auth=("pre", "s3")).json()
            assert initialize(http, new["access_token"]).status_code == 200


def test_a_pre_registered_client_registration_would_refuse_stops_the_listener() -> None:
    """`clients=[...]` are checked when the listener starts, as `/register` checks: a client of
    the code grant without `redirect_uris` is a `ConfigError` naming it."""
    with Server(catalogs=["none"]) as srv:
        with pytest.raises(ConfigError, match=r"clients\[0\]: invalid_redirect_uri: the authorization code grant"):
            srv.start_http(auth="oauth", clients=[{"client_id": "app"}])
