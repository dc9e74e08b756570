"""The conformance suite's `auth/client-credentials-jwt` here (docs/auth.md, "Signed assertions"):
a client of the client credentials grant that authenticates with a JWT signed by its own key
(`private_key_jwt`). The official client's `PrivateKeyJWTOAuthProvider` in both eras, then the
assertions the lab refuses: another key, a replay, another audience or subject, expired."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
import jwt
import pytest
from auth_scenarios_support import (
    client_credentials,
    discovered,
    echo_through,
    scenario_server,
)
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider, SignedJWTParameters

from everything_mcp import Server

from conftest import MODES, WAIT
from oauth_client import (
    SCOPE,
    MemoryStorage,
    RequestLog,
    base_of,
    http_flow,
    until_served,
)

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


# --- client-credentials-jwt ----------------------------------------------------------------------

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class Key:
    """An ES256 key pair: the private key as PEM, the public one as a JWK."""

    def __init__(self) -> None:
        self.private = ec.generate_private_key(ec.SECP256R1())
        self.pem = self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        self.jwk: dict[str, Any] = json.loads(ECAlgorithm.to_jwk(self.private.public_key()))

    def sign(self, **claims: Any) -> str:
        return jwt.encode(claims, self.private, algorithm="ES256")


def m2m(key: Key) -> dict[str, Any]:
    """A pre-registered client for client credentials, authenticating with `private_key_jwt`."""
    return {
        "client_id": "m2m",
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": [key.jwk]},
    }


@MODES
async def test_client_credentials_jwt(mode: str) -> None:
    """auth/client-credentials-jwt: `PrivateKeyJWTOAuthProvider` with the ES256 key whose public
    JWK the client was registered with: discovery, then straight to `/token` with a signed
    assertion (iss = sub = the client, aud = the issuer), then the call, in both eras."""
    key, log = Key(), RequestLog()
    with scenario_server(clients=[m2m(key)]) as srv:
        base, url = base_of(srv), srv.http_url or ""
        signer = SignedJWTParameters(issuer="m2m", subject="m2m", signing_key=key.pem, signing_algorithm="ES256")
        provider = PrivateKeyJWTOAuthProvider(
            url, MemoryStorage(), "m2m", signer.create_assertion_provider(), scope="mcp:basic", issuer=base
        )
        assert await echo_through(url, provider, mode=mode, log=log) == "Echo: hi"
        flow = http_flow(srv)
        (issued,) = srv.auth.tokens
    assert until_served(flow) == [*discovered(), ("POST", "/token", 200), ("POST", "/mcp", 200)]
    (exchange,) = log.to("/token")
    form = exchange.form
    assertion = form.pop("client_assertion")
    # The challenge's scope, not the provider's: a 401 sets the scope to ask.
    assert form == {
        "grant_type": "client_credentials",
        "client_assertion_type": ASSERTION_TYPE,
        "resource": f"{base}/mcp",
        "scope": SCOPE,
    }
    claims = jwt.decode(assertion, key.private.public_key(), algorithms=["ES256"], audience=base)
    assert (claims["iss"], claims["sub"]) == ("m2m", "m2m")
    assert (issued["client_id"], issued["scope"]) == ("m2m", SCOPE)


def test_client_credentials_jwt_bad_assertions() -> None:
    """The broken clients' assertions: signed with another key, sent twice (the same `jti`), for
    another audience, for another client (`sub`), or expired on the server's clock (manual here:
    an assertion good for 5 s is still taken 20 s later, within the 30 s leeway, and refused
    60 s later): 401 `invalid_client`, each saying why."""
    key = Key()
    with Server(catalogs=["everything"], clock="manual") as srv:
        srv.start_http(auth="oauth", scopes=SCOPE.split(), clients=[m2m(key)])
        base = base_of(srv)

        def assertion(signer: Key = key, **claims: Any) -> str:
            now = int(time.time())
            fields = {"iss": "m2m", "sub": "m2m", "aud": base, "iat": now, "exp": now + 300, "jti": str(uuid.uuid4())}
            return signer.sign(**{**fields, **claims})

        with httpx.Client(base_url=base, timeout=WAIT) as http:

            def refusal(signed: str) -> tuple[int, str]:
                r = client_credentials(http, client_assertion_type=ASSERTION_TYPE, client_assertion=signed)
                return r.status_code, r.json().get("error_description", "")

            once, late = assertion(), assertion(exp=int(time.time()) + 5)
            assert refusal(once)[0] == 200
            unchecked = (
                "the assertion's signature or audience does not check with the client's registered keys"
                " (aud is the issuer or the token endpoint)"
            )
            assert [refusal(a) for a in (once, assertion(Key()), assertion(aud="https://evil.example.com"))] == [
                (401, "the assertion was used already (its jti)"),
                (401, unchecked),
                (401, unchecked),
            ]
            assert refusal(assertion(sub="other")) == (
                401,
                "the assertion's iss and sub must both be the client's id \"m2m\"",
            )
            srv.clock.advance(20)
            assert refusal(assertion(exp=int(time.time()) + 5))[0] == 200
            srv.clock.advance(40)
            assert refusal(late) == (401, "the assertion has expired")
        assert [e[2] for e in http_flow(srv)] == [200, 401, 401, 401, 401, 200, 401]
        assert [(t["client_id"], t["status"]) for t in srv.auth.tokens] == [("m2m", "active")] * 2
