"""The client's authorization flow against the auth lab (docs/auth.md): discovery in the spec's
order, PKCE S256, the ``resource`` it was told, the scopes it was asked for, and what it did
when its token was refused.

The flow's records belong to no MCP connection: the authorization server's exchanges are on
the connection ``auth``, and the MCP endpoints' ``401`` refusals on ``-`` (a request refused
outside any session). :func:`in_flow` tells them from the connections' records, and the report
gives them to every HTTP client of the recording (one agent per recording, as the lab is used;
with several HTTP clients at once, each is shown the same flow)."""

from __future__ import annotations

import bisect
import json
import re
from bisect import insort
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ..traffic import TrafficRecord
from .http import sessionless
from .model import EVERY, Check, Family, auth_conn, check

if TYPE_CHECKING:
    from .client import ClientFold


PRM = "/.well-known/oauth-protected-resource"
"""The protected resource metadata's path (and its path-aware variants below it)."""

AS_METADATA = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
"""The authorization server metadata's well-known names (RFC 8414, OpenID discovery); an issuer
with a path has them with the path inserted or appended."""

STEP_UP = "insufficient_scope: "
"""How the resource's `403` starts: a tool needs a scope the token lacks (`… needs SCOPE…`)."""

TOKEN_REFUSALS = (
    "the access token is not one this server issued",
    "the access token has expired",
    "the access token was issued for another resource",
    "the access token was revoked",
    "the access token was issued by an authorization server this resource no longer uses",
)
"""How the resource refuses a token it was sent (a bare ``401`` asks for one)."""


def in_flow(r: TrafficRecord) -> bool:
    """Whether `r` belongs to the auth flow rather than to an MCP connection: the auth lab's
    exchanges, and the ``401``/``403`` refusals outside any session."""
    return auth_conn(r.conn) or (sessionless(r.conn) and _refusal(r))


def _refusal(r: TrafficRecord) -> bool:
    """A `401` (no or a refused token) or `403` (a scope to step up to) of the MCP endpoints."""
    return (r.http or {}).get("status") in (401, 403)


class Auth(Family):
    """The authorization flow's checks. The flow is small next to the MCP traffic (some twenty
    records per authorization): its records and the client's own refusals are kept, in seq
    order, and the checks computed from them when they have changed."""

    routes = EVERY

    def __init__(self) -> None:
        self.flow: list[TrafficRecord] = []
        self._checks: list[Check] | None = None
        """The checks of the flow as it is (None: to compute)."""

    def __deepcopy__(self, memo: dict[int, object]) -> Auth:
        # The records are not changed: a new HTTP client's copy of the flow shares them.
        twin = Auth()
        twin.flow = list(self.flow)
        twin._checks = self._checks
        return twin

    def add(self, r: TrafficRecord) -> None:
        if auth_conn(r.conn) or _refusal(r):
            insort(self.flow, r, key=_seq)
            self._checks = None

    def finish(self, client: ClientFold) -> list[Check]:
        if self._checks is None:
            self._checks = auth(self.flow)
        return self._checks


def _seq(r: TrafficRecord) -> int:
    return r.seq


def _path(r: TrafficRecord) -> str:
    return str((r.http or {}).get("path") or "")


def _form(r: TrafficRecord) -> dict[str, str]:
    """A request's query or form (as recorded: secrets redacted), first values."""
    return {k: v[0] for k, v in parse_qs(r.raw, keep_blank_values=True).items()}


def _challenge(r: TrafficRecord) -> str:
    """The `WWW-Authenticate` a refusal of the MCP endpoints answered with ('' for none)."""
    return str(((r.http or {}).get("headers") or {}).get("www-authenticate") or "")


def _param(r: TrafficRecord, name: str) -> str | None:
    """A parameter of a refusal's challenge (its quoted-string value), if it has it."""
    found = re.search(rf'(?:^|[ ,]){name}="((?:[^"\\]|\\.)*)"', _challenge(r))
    return re.sub(r"\\(.)", r"\1", found.group(1)) if found else None


def _needed(refusal: TrafficRecord) -> set[str]:
    """The scopes a step-up refusal names."""
    return set((refusal.error or "").rpartition(" needs ")[2].split())


def _body(r: TrafficRecord | None) -> dict[str, Any]:
    try:
        value = json.loads(r.raw) if r is not None else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def auth(flow: list[TrafficRecord]) -> list[Check]:
    """The authorization flow's checks from its records, in wire order (not exercised without
    the auth lab)."""
    asked = [r for r in flow if r.dir == "in"]
    answers = [r for r in flow if r.dir == "out"]
    answered_at = [r.seq for r in answers]

    def answer(request: TrafficRecord) -> TrafficRecord | None:
        """The first answer after `request` (a search, not a scan: called per request)."""
        i = bisect.bisect_right(answered_at, request.seq)
        return answers[i] if i < len(answers) else None

    # A custom metadata URL (`resource_metadata_path`) is known by what it answered.
    prm = [r for r in asked if _path(r).startswith(PRM) or "authorization_servers" in _body(answer(r))]
    metadata = [r for r in asked if any(name in _path(r) for name in AS_METADATA)]
    authorizations = [r for r in asked if _path(r).endswith("/authorize")]
    tokens = [r for r in asked if _path(r).endswith("/token")]
    code_grants = [r for r in tokens if _form(r).get("grant_type") == "authorization_code"]
    refreshes = [r for r in tokens if _form(r).get("grant_type") == "refresh_token"]
    # What the resource published: the first of its metadata answered 200 (after a fallback,
    # the first request may have been a 404).
    documents = [a for a in map(answer, prm) if a is not None and (a.http or {}).get("status") == 200]
    published = _body(documents[0]) if documents else {}
    resource = published.get("resource")
    supported = published.get("scopes_supported") or []
    refused_tokens = [r for r in asked if not auth_conn(r.conn) and (r.error or "") in TOKEN_REFUSALS]

    challenges = [r for r in flow if r.dir == "out" and _challenge(r)]
    named = _param(challenges[0], "resource_metadata") if challenges else None
    # The metadata the challenge named comes first (the suite's `prm-priority-order`).
    early = [r for r in metadata if not prm or r.seq < prm[0].seq]
    if named and prm and not named.endswith(_path(prm[0])):
        early.append(prm[0])
    weak = [r for r in authorizations if _form(r).get("code_challenge_method") != "S256"]
    wrong_resource = [
        r
        for r in [*authorizations, *code_grants, *refreshes]
        if resource is not None and _form(r).get("resource") != resource
    ]

    def expected(authorization: TrafficRecord) -> set[str]:
        """The scopes a client is to ask for: the last challenge's before the request, else
        the resource's `scopes_supported` (MCP's scope selection)."""
        before = [c for c in challenges if c.seq < authorization.seq and _param(c, "scope")]
        return set((_param(before[-1], "scope") or "").split()) if before else set(supported)

    narrow = [r for r in authorizations if not expected(r) <= set(_form(r).get("scope", "").split())]
    recovered = [refused for refused in refused_tokens if any(r.seq > refused.seq for r in [*authorizations, *tokens])]
    stuck = [r for r in refused_tokens if r not in recovered]
    step_ups = [r for r in asked if r.dir == "in" and (r.error or "").startswith(STEP_UP)]
    stepped = [
        later
        for challenge in step_ups
        for later in authorizations
        if later.seq > challenge.seq and _needed(challenge) <= set(_form(later).get("scope", "").split())
    ]
    unstepped = [c for c in step_ups if not any(a.seq > c.seq for a in stepped)]
    registrations = [r for r in asked if _path(r).endswith("/register")]
    as_documents = [_body(answer(r)) for r in metadata]
    offered = any("offline_access" in (d.get("scopes_supported") or []) for d in as_documents)
    no_refresh = [r for r in registrations if "refresh_token" not in (_body(r).get("grant_types") or [])]
    asked_offline = [r for r in authorizations if "offline_access" in _form(r).get("scope", "").split()]
    bad_callbacks = _bad_callbacks(authorizations, answer, published, as_documents)
    redeemed = [
        r
        for r in code_grants
        if any(_form(r).get("code") == code and r.seq > bad.seq for code, bad, _ in bad_callbacks)
    ]
    mismatched = _mismatched(prm, metadata, answer, published)
    used_anyway = [r for r in [*authorizations, *tokens] if mismatched and r.seq > mismatched[0].seq]
    faulted = [r for r in asked if r.fault]
    reused, at_new = _after_migration(prm, registrations, [*authorizations, *tokens], answer)
    loops = [r for r in faulted if _loops(r, asked)]
    return [
        check(
            "auth.discovery",
            "discovers the protected resource's metadata first, then its authorization server's",
            (early[:1] or [*prm[:1], *metadata[:1]]) if prm or metadata else None,
            failed=bool(early),
            detail=" → ".join(dict.fromkeys(_path(r) for r in sorted([*prm, *metadata], key=lambda r: r.seq))),
        ),
        check(
            "auth.pkce_s256",
            "uses PKCE with S256 on every authorization request",
            weak[:1] or authorizations[:1],
            failed=bool(weak),
            detail=f"code_challenge_method={_form(weak[0]).get('code_challenge_method', 'missing')}" if weak else "",
        ),
        check(
            "auth.resource",
            "sends resource exactly as the protected resource's metadata publishes it (authorize, token, refresh)",
            wrong_resource[:1] or [*authorizations, *code_grants][:1],
            failed=bool(wrong_resource),
            detail=(
                f"{_path(wrong_resource[0])}: resource={_form(wrong_resource[0]).get('resource', 'missing')}"
                if wrong_resource
                else ""
            ),
        ),
        check(
            "auth.scope",
            "asks for the scopes the challenge and the metadata name",
            narrow[:1] or authorizations[:1] if supported or any(_param(c, "scope") for c in challenges) else None,
            failed=bool(narrow),
            detail=f"asked {_form(narrow[0]).get('scope') or 'none'}" if narrow else "",
        ),
        check(
            "auth.refresh",
            "renews its access token with its refresh token",
            refreshes[:1],
            detail=f"refresh {len(refreshes)}" if refreshes else "",
        ),
        check(
            "auth.step_up",
            "after 403 insufficient_scope, authorizes again for the scope it names",
            unstepped[:1] or stepped[:1],
            failed=bool(unstepped),
            detail=", ".join(dict.fromkeys(" ".join(sorted(_needed(c))) for c in step_ups)),
        ),
        check(
            "auth.callback",
            "refuses an authorization response with a wrong or missing iss, another state, or a replayed code",
            redeemed[:1] or [r for _, r, _ in bad_callbacks][:1],
            failed=bool(redeemed),
            detail=", ".join(dict.fromkeys(why for _, _, why in bad_callbacks)),
        ),
        check(
            "auth.mismatch",
            "refuses metadata that names another resource or another issuer",
            used_anyway[:1] or mismatched[:1],
            failed=bool(used_anyway),
            detail=f"then {_path(used_anyway[0])}" if used_anyway else "",
        ),
        check(
            "auth.offline_access",
            "registers for refresh_token (and may ask offline_access) when the authorization server offers it",
            (no_refresh[:1] or registrations[:1]) if offered else None,
            failed=bool(no_refresh),
            detail="asked offline_access" if asked_offline else "did not ask offline_access",
        ),
        check(
            "auth.migration",
            "after the resource names another authorization server, registers there anew (no credentials carried over)",
            reused[:1] or at_new[:1] or None,
            failed=bool(reused),
            detail=f"reused {_form(reused[0]).get('client_id')} at {_path(reused[0])}" if reused else "",
        ),
        check(
            "auth.faults",
            "reacts to each scripted auth fault without looping",
            loops[:1] or faulted[:1],
            failed=bool(loops),
            detail="; ".join(_reaction(r, asked) for r in faulted[:6]),
        ),
        check(
            "auth.recovers",
            "after its token is refused (expired, revoked), refreshes or authorizes again",
            stuck[:1] or recovered[:1],
            failed=bool(stuck),
            detail=", ".join(dict.fromkeys(r.error or "" for r in refused_tokens)),
        ),
    ]


def _bad_callbacks(
    authorizations: list[TrafficRecord],
    answer: Any,
    published: dict[str, Any],
    as_documents: list[dict[str, Any]],
) -> list[tuple[str, TrafficRecord, str]]:
    """The authorization responses a client must not act on, as their (redacted) codes, their
    requests and why: an
    `iss` other than the issuer the resource named (or none, when the server advertised it),
    another `state` than the request's, a code seen in an earlier response (a replay)."""
    issuers = published.get("authorization_servers") or []
    issuer = issuers[0] if issuers else None
    advertised = any(d.get("authorization_response_iss_parameter_supported") is True for d in as_documents)
    seen: set[str] = set()
    bad = []
    for request in authorizations:
        response = answer(request)
        if response is None or "?" not in response.raw:
            continue
        given = {k: v[0] for k, v in parse_qs(response.raw.split("?", 1)[1], keep_blank_values=True).items()}
        code = given.get("code")
        if code is None:
            continue
        why = None
        if "iss" in given and issuer is not None and given["iss"] != issuer:
            why = "wrong iss"
        elif "iss" not in given and advertised:
            why = "missing iss"
        elif given.get("state") != _form(request).get("state"):
            why = "another state"
        elif code in seen:
            why = "replayed code"
        seen.add(code)
        if why:
            bad.append((code, request, why))
    return bad


def _mismatched(
    prm: list[TrafficRecord], metadata: list[TrafficRecord], answer: Any, published: dict[str, Any]
) -> list[TrafficRecord]:
    """The metadata requests answered with a document a client must not use: protected resource
    metadata whose `resource` is on another host than its authorization server, authorization
    server metadata whose `issuer` is not the one the resource named."""
    issuers = published.get("authorization_servers") or []
    out = []
    for r in prm:
        doc = _body(answer(r))
        servers = doc.get("authorization_servers") or []
        if doc.get("resource") and servers and _host(doc["resource"]) != _host(servers[0]):
            out.append(r)
    for r in metadata:
        doc = _body(answer(r))
        if issuers and doc.get("issuer") and doc["issuer"] not in issuers:
            out.append(r)
    return sorted(out, key=lambda r: r.seq)


def _host(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[0]


def _next(r: TrafficRecord, asked: list[TrafficRecord]) -> TrafficRecord | None:
    later = [a for a in asked if a.seq > r.seq]
    return later[0] if later else None


def _reaction(r: TrafficRecord, asked: list[TrafficRecord]) -> str:
    """`rule action at path → what the client sent next`."""
    mark = r.fault or {}
    then = _next(r, asked)
    return f"{mark.get('rule')} {mark.get('action')} at {_path(r)} → {_path(then) if then else 'nothing more'}"


def _loops(r: TrafficRecord, asked: list[TrafficRecord]) -> bool:
    """Whether the client sent the faulted request again more than 5 times in a row."""
    later = [a for a in asked if a.seq > r.seq][:6]
    return len(later) == 6 and all(_path(a) == _path(r) for a in later)


def _after_migration(
    prm: list[TrafficRecord], registrations: list[TrafficRecord], uses: list[TrafficRecord], answer: Any
) -> tuple[list[TrafficRecord], list[TrafficRecord]]:
    """When the resource's metadata named another authorization server than before (it
    migrated): the requests to the new one that carry a client id registered at an earlier one,
    and every request to the new one."""
    issuers = list(
        dict.fromkeys(
            server
            for r in prm
            for server in (_body(answer(r)).get("authorization_servers") or [])[:1]
            if isinstance(server, str)
        )
    )
    if len(issuers) < 2:
        return [], []
    new = "/" + issuers[-1].split("://", 1)[-1].partition("/")[2]
    at_new = [r for r in uses if _path(r).startswith(new.rstrip("/") + "/")]
    earlier = {
        _body(answer(r)).get("client_id") for r in registrations if not _path(r).startswith(new.rstrip("/") + "/")
    }
    return [r for r in at_new if _form(r).get("client_id") in earlier], at_new
