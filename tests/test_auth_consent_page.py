"""The auth lab's consent page (docs/auth.md, "The consent step"): with `consent="page"` (or a
fault rule's `"consent": "page"` for one attempt) `/authorize` shows a person the client, where
the answer goes and the scopes asked for, and their answer goes back to the client as the
headless step's would. Driven in headless Chromium (tests/browser.py) as a person would, the
client's side played with raw httpx: the code the page's redirect carries is redeemed, and the
token has the scopes left ticked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest

from everything_mcp import Server

from browser import chromium_page, keep_screenshot
from conftest import WAIT
from oauth_client import REDIRECT_URI, SCOPE, SCOPES, http_flow, pkce, register_code_client, token


@pytest.fixture
def lab() -> Iterator[Server]:
    """A server whose consent step a person answers."""
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(auth="oauth", scopes=SCOPES, consent="page")
        yield srv


def authorize_url(base: str, client_id: str, challenge: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": SCOPE,
        "state": "state-7",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{base}/mcp",
    }
    return f"{base}/authorize?{urlencode(query)}"


def answer_on_the_page(url: str, untick: list[str], button: str, shot: str | None = None) -> dict[str, str]:
    """Opens the consent page at `url` in Chromium, unticks the scopes `untick`, presses `button`
    and returns the query the browser is sent back to the client with (the `Location` of the
    form's answer: nothing listens at the client's redirect URI). `shot`: the name the page's
    screenshot is kept under (docs/auth.md shows it)."""
    errors: list[str] = []
    with chromium_page() as page:
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        assert page.locator("#client").inner_text() == "raw"
        assert page.locator("#redirect-host").inner_text() == "127.0.0.1:8976"
        assert page.locator("#scopes input").evaluate_all("boxes => boxes.map(b => b.value)") == SCOPES
        for scope in untick:
            page.locator(f'#scopes input[value="{scope}"]').uncheck()
        if shot:
            keep_screenshot(page, shot)
        with page.expect_response(lambda r: r.url.endswith("/authorize/decide")) as answered:
            page.locator(f"#{button}").click()
        assert answered.value.status == 302
        back = answered.value.headers["location"]
    assert errors == []
    assert back.split("?", 1)[0] == REDIRECT_URI
    return dict(parse_qsl(urlsplit(back).query))


def test_a_person_approves_some_scopes_on_the_page(lab: Server) -> None:
    """The page lists `mcp:basic` and `mcp:write`; with `mcp:write` unticked, Approve sends the
    browser back with a code, the request's `state` and the issuer; the code's token has only
    `mcp:basic`. The page is one self-contained document under a policy that loads nothing."""
    base = lab.base_url or ""
    with httpx.Client(base_url=base, timeout=WAIT) as http:
        client_id = register_code_client(http)["client_id"]
        verifier, challenge = pkce()
        url = authorize_url(base, client_id, challenge)
        shown = http.get(url, follow_redirects=False)
        assert shown.status_code == 200 and shown.headers["content-type"] == "text/html; charset=utf-8"
        assert shown.headers["content-security-policy"].startswith("default-src 'none'")
        assert "<script" not in shown.text
        params = answer_on_the_page(url, ["mcp:write"], "approve", "consent-page.png")
        assert (params["state"], params["iss"]) == ("state-7", base)
        form = {"grant_type": "authorization_code", "code": params["code"], "redirect_uri": REDIRECT_URI}
        r = token(http, **form, client_id=client_id, code_verifier=verifier, resource=f"{base}/mcp")
        assert r.status_code == 200, r.text
        assert r.json()["scope"] == "mcp:basic"
    assert [e for e in http_flow(lab) if "authorize" in e[1]] == [
        ("GET", "/authorize", 200),  # the page, fetched by the test
        ("GET", "/authorize", 200),  # and by the browser
        ("POST", "/authorize/decide", 302),
    ]


def test_a_person_denies_on_the_page(lab: Server) -> None:
    """Deny sends the browser back with `error=access_denied`, the `state` and the issuer, and no
    code; the request it answered is gone (a second answer to it is refused)."""
    base = lab.base_url or ""
    with httpx.Client(base_url=base, timeout=WAIT) as http:
        client_id = register_code_client(http)["client_id"]
        params = answer_on_the_page(authorize_url(base, client_id, pkce()[1]), [], "deny")
        assert params == {
            "error": "access_denied",
            "error_description": "the user denied the request",
            "state": "state-7",
            "iss": base,
        }
        again = http.post("/authorize/decide", data={"request": "anything", "decision": "approve"})
        assert again.status_code == 400 and again.json()["error"] == "invalid_request"


def test_one_attempt_on_the_page_by_a_fault_rule() -> None:
    """`"consent": "page"` makes one authorization request a person's to answer; the others are
    approved at once, as without the page."""
    with Server(catalogs=["everything"]) as srv:
        srv.start_http(auth="oauth", scopes=SCOPES)
        srv.auth.consent("approve", "page")
        base = srv.base_url or ""
        with httpx.Client(base_url=base, timeout=WAIT) as http:
            client_id = register_code_client(http)["client_id"]
            answers: list[Any] = [http.get(authorize_url(base, client_id, pkce()[1])) for _ in range(3)]
        assert [a.status_code for a in answers] == [302, 200, 302]
        assert 'action="' + base + '/authorize/decide"' in answers[1].text
