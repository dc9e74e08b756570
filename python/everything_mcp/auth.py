"""``srv.auth``: the HTTP listener's auth lab as a test sees it (docs/auth.md): the clients that
registered, the access tokens issued (never the tokens themselves), a client registered by the
test (pre-registration), and tokens revoked or expired on cue. The control API's
``/_control/auth/…`` is its twin."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from . import _core
from .faults import FaultRule, Faults

__all__ = ["Auth"]


class Auth:
    """The auth lab of a server's HTTP listener (``start_http(auth="oauth")``). Every member
    raises ``ConfigError`` while the lab is off."""

    def __init__(self, core: _core.Server) -> None:
        self._core = core

    @property
    def clients(self) -> list[dict[str, Any]]:
        """Every registered client's metadata, as ``/register`` answered it, without its secret."""
        clients: list[dict[str, Any]] = json.loads(self._core.auth_clients())
        return clients

    @property
    def tokens(self) -> list[dict[str, Any]]:
        """Every access token issued: ``{"jti", "client_id", "scope", "expires_at", "status"}``,
        ``status`` being ``active``, ``expired`` or ``revoked`` now."""
        tokens: list[dict[str, Any]] = json.loads(self._core.auth_tokens())
        return tokens

    def register(self, **metadata: Any) -> dict[str, Any]:
        """Registers a client as ``POST /register`` would (RFC 7591 metadata:
        ``redirect_uris=[...]``, ``grant_types=[...]``, ``token_endpoint_auth_method=...``) and
        returns the answer, with its ``client_id`` and ``client_secret``: a pre-registered client
        for a test to give its client."""
        client: dict[str, Any] = json.loads(self._core.auth_register(json.dumps(metadata)))
        return client

    def add_client_document(self, url: str, document: Mapping[str, Any]) -> None:
        """Seeds the Client ID Metadata Document of ``url``: a client whose ``client_id`` is ``url``
        is checked against ``document`` (its ``client_id`` must be ``url`` exactly, it names its
        ``client_name`` and ``redirect_uris``) instead of the lab fetching it, which it does only for
        loopback URLs."""
        self._core.auth_add_document(url, json.dumps(dict(document)))

    def consent(self, *answers: str | Mapping[str, str]) -> list[FaultRule]:
        """Scripts the consent step's next answers, one per authorization request from now on:
        ``"approve"`` (the default), ``"deny"`` (``error=access_denied``), ``{"scope": "mcp:basic"}``
        (approved with only those scopes), ``"wrong_code"``, ``"wrong_state"``, ``"replay"`` (the
        previous redirect again, its code used) or ``"page"`` (a person answers on the consent
        page). They are fault rules (``match.auth: "authorize"``); their handles."""
        ids = self._core.auth_consent(json.dumps([a if isinstance(a, str) else dict(a) for a in answers]))
        return Faults(self._core)._handles(ids)

    def migrate(self) -> str:
        """Moves the resource to the lab's second authorization server (its issuer is the first's
        and ``/as2``): the resource's metadata names it from now on, and the first one's tokens are
        refused (``401`` ``invalid_token``), so a client must discover it, register there anew
        (credentials of one authorization server are not good at another) and authorize. Returns
        the new issuer. The conformance suite's ``auth/authorization-server-migration``."""
        return self._core.auth_migrate()

    def revoke(self, jti: str | None = None) -> int:
        """Revokes the token ``jti`` (every token issued so far when None): the resource answers it
        ``401`` ``invalid_token`` from now on. How many."""
        return self._core.auth_end(jti, "revoked")

    def expire(self, jti: str | None = None) -> int:
        """Expires the token ``jti`` (every token when None) now, whatever its ``exp`` says: the
        server-side expiry a client learns of only from a ``401``. How many."""
        return self._core.auth_end(jti, "expired")
