"""The conformance suite's `auth/basic-cimd` here (docs/auth.md, "Client ID Metadata Documents"):
the official client's URL is its `client_id`; the documents and URLs the lab refuses; a
loopback document fetched."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import pytest
from auth_scenarios_support import (
    OfficialFlow,
    after_challenge,
    code_for,
    redeem,
    scenario_server,
)

from conftest import WAIT
from oauth_client import (
    REDIRECT_URI,
    UNTIL_AUTHORIZED,
    authorize,
    base_of,
    http_flow,
    jwt_claims,
    until_served,
)

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]


# --- basic-cimd -----------------------------------------------------------------------------------

CIMD = "https://app.example/client.json"
CIMD_DOC = {
    "client_id": CIMD,
    "client_name": "app",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code", "refresh_token"],
}


async def test_basic_cimd_the_url_is_the_client_id() -> None:
    """auth/basic-cimd: the authorization server advertises Client ID Metadata Documents and the
    lab holds the client's (`client_documents`): the official client given `client_metadata_url`
    uses that URL as its `client_id` at `/authorize` and `/token`, as a public client, and never
    registers."""
    with scenario_server(client_documents={CIMD: CIMD_DOC}) as srv:
        me = OfficialFlow(srv)
        assert await me.echo(client_metadata_url=CIMD) == "Echo: hi"
        flow = http_flow(srv)
        clients = srv.auth.clients
    assert until_served(flow) == after_challenge(*[e for e in UNTIL_AUTHORIZED if e[1] != "/register"])
    assert "/register" not in [path for _, path, _ in flow]
    (asked,) = me.asked
    assert asked["client_id"] == CIMD
    (exchange,) = me.log.to("/token")
    assert exchange.form["client_id"] == CIMD and "client_secret" not in exchange.form
    assert "authorization" not in exchange.request.headers
    assert me.storage.client_info is not None and me.storage.client_info.token_endpoint_auth_method == "none"
    assert me.storage.tokens is not None and jwt_claims(me.storage.tokens.access_token)["client_id"] == CIMD
    assert clients == [CIMD_DOC]


def cimd(url: str, **changes: Any) -> dict[str, Any]:
    return {"client_id": url, "client_name": "app", "redirect_uris": [REDIRECT_URI], **changes}


BAD_DOCUMENTS = {
    "https://app.example/other.json": cimd("https://app.example/other.json", client_id="https://app.example/x.json"),
    "https://app.example/narrow.json": cimd("https://app.example/narrow.json", redirect_uris=["http://127.0.0.1:1/cb"]),
    "https://app.example/anonymous.json": {"client_id": "https://app.example/anonymous.json", "redirect_uris": []},
}


def test_basic_cimd_documents_the_lab_refuses() -> None:
    """A client_id URL whose document names another client_id, lacks the request's
    `redirect_uri`, or lacks `client_name`, and a URL the lab has no copy of (not loopback, not
    seeded): 400 `invalid_client` in place, never a redirect, each saying why."""
    with (
        scenario_server(client_documents=BAD_DOCUMENTS) as srv,
        httpx.Client(base_url=base_of(srv), timeout=WAIT) as http,
    ):
        at = "the Client ID Metadata Document at https://app.example/"
        expected = [
            f'{at}other.json: its client_id is "https://app.example/x.json", not its own URL',
            f"{at}narrow.json: redirect_uri {REDIRECT_URI} is not one of its redirect_uris",
            f"{at}anonymous.json: client_name is required",
            "client_id https://unseeded.example/client.json names a Client ID Metadata Document the lab has no copy"
            " of: it fetches only loopback http URLs (a test's own server); seed the others (client_documents,"
            " srv.auth.add_client_document)",
        ]
        for url, description in zip([*BAD_DOCUMENTS, "https://unseeded.example/client.json"], expected, strict=True):
            r = authorize(http, url)
            assert (r.status_code, "location" in r.headers) == (400, False), url
            assert r.json() == {"error": "invalid_client", "error_description": description}
        assert http_flow(srv) == [("GET", "/authorize", 400)] * 4
        assert srv.auth.clients == []


def test_basic_cimd_client_id_urls_the_draft_forbids_are_refused() -> None:
    """draft-ietf-oauth-client-id-metadata-document §3: a client_id URL MUST NOT contain a
    fragment, single- or double-dot path segments, or a username and password. Seeded with a
    document naming itself, each is still refused (400 `invalid_client`)."""
    urls = ["https://app.example/c.json#frag", "https://app.example/a/../c.json", "https://u:p@app.example/c.json"]
    with (
        scenario_server(client_documents={url: cimd(url) for url in urls}) as srv,
        httpx.Client(base_url=base_of(srv), timeout=WAIT) as http,
    ):
        answers = [authorize(http, url) for url in urls]
        assert [(r.status_code, r.json().get("error") if r.status_code == 400 else None) for r in answers] == [
            (400, "invalid_client")
        ] * 3


class DocumentHost(http.server.BaseHTTPRequestHandler):
    """Serves a Client ID Metadata Document naming its own URL, at any path of `origin`; keeps
    the paths it was asked for in `served`."""

    origin: ClassVar[str]
    served: ClassVar[list[str]]

    def do_GET(self) -> None:
        self.served.append(self.path)
        body = json.dumps(cimd(self.origin + self.path, client_name="loopback app")).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def document_host() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server of Client ID Metadata Documents: its `/client.json` URL and the
    paths it was asked for."""

    class Host(DocumentHost):
        served: ClassVar[list[str]] = []

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Host)
    Host.origin = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"{Host.origin}/client.json", Host.served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(WAIT)


def test_basic_cimd_a_loopback_document_is_fetched(document_host: tuple[str, list[str]]) -> None:
    """A client_id that is a plain http URL on 127.0.0.1 (a test's own server) is fetched when
    the authorization request names it, once: the code it redirects with is redeemed by that
    client_id as a public client."""
    url, served = document_host
    with scenario_server() as srv, httpx.Client(base_url=base_of(srv), timeout=WAIT) as http:
        params, verifier = code_for(http, url)
        assert (params["state"], params["iss"]) == ("state-1", base_of(srv))
        exchange = redeem(http, url, params["code"], verifier)
        assert exchange.status_code == 200, exchange.text
        assert jwt_claims(exchange.json()["access_token"])["client_id"] == url
        assert http_flow(srv) == [("GET", "/authorize", 302), ("POST", "/token", 200)]
        assert srv.auth.clients == [cimd(url, client_name="loopback app")]
    assert served == ["/client.json"]
