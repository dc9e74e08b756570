"""The auth lab's settings from the command line (docs/auth.md, "Settings"): `everything-mcp
http --auth oauth` (the native command and `python -m everything_mcp`) with a pre-registered
client (`--client ID:SECRET` or its JSON metadata), a Client ID Metadata Document read from a file (`--client-document
URL=FILE`), a tenant issuer (`--issuer-path`), a custom metadata URL (`--resource-metadata-path`)
and the consent page (`--consent page`), each checked on the wire of a real subprocess; and the
mistakes the CLI refuses before serving."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from conftest import WAIT, cli_http_server
from oauth_client import REDIRECT_URI, pkce

DOC_URL = "https://app.example/client.json"


def test_pre_registered_clients_documents_tenant_and_page_from_flags(tmp_path: Path, cli_cmd: list[str]) -> None:
    """Every auth flag at once: `pre:s3` gets a token by client credentials with HTTP Basic at the
    tenant's token endpoint; the JSON client is registered with the id it names; the document's
    client is shown the consent page; the challenge names the custom metadata URL, which serves
    the protected resource's metadata."""
    doc = tmp_path / "client.json"
    doc.write_text(json.dumps({"client_id": DOC_URL, "client_name": "Doc App", "redirect_uris": [REDIRECT_URI]}))
    app = {"client_id": "app", "client_secret": "x", "redirect_uris": [REDIRECT_URI], "client_name": "App"}
    args = [
        "--auth",
        "oauth",
        "--client",
        "pre:s3",
        "--client",
        json.dumps(app),
        "--client-document",
        f"{DOC_URL}={doc}",
        "--issuer-path",
        "/t1",
        "--resource-metadata-path",
        "/custom/prm.json",
        "--consent",
        "page",
    ]
    with (
        cli_http_server(*args, command=cli_cmd) as url,
        httpx.Client(base_url=url.rsplit("/mcp", 1)[0], timeout=WAIT) as http,
    ):
        base = str(http.base_url).rstrip("/")
        challenge = http.post("/mcp", json={}).headers["www-authenticate"]
        assert challenge == f'Bearer resource_metadata="{base}/custom/prm.json", scope="mcp:basic"'
        prm = http.get("/custom/prm.json").json()
        assert (prm["resource"], prm["authorization_servers"]) == (f"{base}/mcp", [f"{base}/t1"])
        assert http.get("/.well-known/oauth-authorization-server/t1").json()["issuer"] == f"{base}/t1"
        assert http.get("/.well-known/oauth-authorization-server").status_code == 404

        r = http.post("/t1/token", data={"grant_type": "client_credentials"}, auth=("pre", "s3"))
        assert r.status_code == 200 and r.json()["token_type"] == "Bearer", r.text
        wrong = http.post("/t1/token", data={"grant_type": "client_credentials"}, auth=("pre", "nope"))
        assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_client")

        query = {
            "response_type": "code",
            "redirect_uri": REDIRECT_URI,
            "state": "s",
            "code_challenge": pkce()[1],
            "code_challenge_method": "S256",
        }
        for client_id, name in [("app", "App"), (DOC_URL, "Doc App")]:
            page = http.get("/t1/authorize", params={**query, "client_id": client_id})
            assert page.status_code == 200 and f'<span id="client">{name}</span>' in page.text, page.text


def test_bad_auth_flags_stop_the_cli_before_it_serves(tmp_path: Path, cli_cmd: list[str]) -> None:
    """A malformed `--client`, a `--client-document` whose file is missing, and an issuer path
    that is not one are usage errors (exit 2) naming the problem."""
    for args, said in [
        (["--client", "no-secret"], "expected ID:SECRET or JSON client metadata"),
        (["--client-document", f"{DOC_URL}={tmp_path / 'missing.json'}"], "missing.json"),
        (["--issuer-path", "tenant1"], 'issuer_path "tenant1" is not a path'),
    ]:
        out = subprocess.run(
            [*cli_cmd, "http", "--port", "0", "--auth", "oauth", *args],
            capture_output=True,
            text=True,
            timeout=WAIT,
            stdin=subprocess.DEVNULL,
        )
        assert out.returncode == 2, (args, out.stderr)
        assert said in out.stderr, (args, out.stderr)
