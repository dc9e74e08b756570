"""A report of clients of both eras (docs/report.md, "Clients of both eras"): the official client
recorded in the handshake era (`mode="legacy"`) and in 2026-07-28 (its default), read together
by the CLI as a matrix, a table, `--json` and the HTML page. Every client has every check of any
client; the other era's are "not applicable"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from everything_mcp import Server

from browser import chromium_page
from conftest import SERVER_CMD, WAIT

pytestmark = pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")

DOC = "demo://resource/static/document/features.md"
LIFECYCLE = ["lifecycle.initialize", "lifecycle.initialized", "lifecycle.envelope", "lifecycle.capabilities"]
HANDSHAKE, STATELESS = "mcp 0.1.0 (handshake, stdio)", "mcp 0.1.0 (stateless, stdio)"


def record(path: Path, mode: str) -> str:
    """The official client in `mode` over stdio: it lists the resources and reads one."""

    async def drive(srv: Server) -> None:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params), mode=mode) as client:  # type: ignore[arg-type]
                await client.list_resources()
                await client.read_resource(DOC)

    with Server(catalogs=["everything"], record=str(path)) as srv:
        anyio.run(drive, srv)
    return str(path)


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A record file of each era: the handshake's, then 2026-07-28's."""
    tmp = tmp_path_factory.mktemp("eras")
    return [record(tmp / "legacy.jsonl", "legacy"), record(tmp / "auto.jsonl", "auto")]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SERVER_CMD, "report", *args], capture_output=True, text=True, timeout=WAIT * 3)


def test_the_markdown_matrix_has_every_check_of_either_era(both: list[str]) -> None:
    done = cli(*both, "--markdown")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"| check | {HANDSHAKE} | {STATELESS} |"
    rows = {line.split(" | ")[0].strip("| "): [c.strip(" |") for c in line.split(" | ")[1:]] for line in lines[2:]}
    ids = list(rows)
    # The lifecycle's rows of both eras together, in catalog order, after the level.
    assert ids[:5] == ["subscription level", *LIFECYCLE]
    assert rows["subscription level"] == ["3", "3"]
    assert rows["lifecycle.initialize"] == ["pass", "n/a"]
    assert rows["lifecycle.initialized"] == ["pass", "n/a"]
    assert rows["lifecycle.envelope"] == ["n/a", "pass"]
    assert rows["subscription.read"] == ["pass", "pass"]
    assert len(ids) == 1 + 47  # the level, and every check of the catalog (both eras' lifecycle)


def test_json_and_the_table_mark_the_other_eras_checks_not_applicable(both: list[str]) -> None:
    done = cli(*both, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["version"] == 2  # a status a reader of version 1 does not know
    handshake, stateless = data["clients"]
    assert [c["id"] for c in handshake["checks"]] == [c["id"] for c in stateless["checks"]]
    envelope = next(c for c in handshake["checks"] if c["id"] == "lifecycle.envelope")
    assert envelope == {
        "id": "lifecycle.envelope",
        "description": "every request carries the 2026-07-28 envelope (its revision in _meta)",
        "status": "not applicable",
        "seqs": [],
        "detail": "not applicable: 2026-07-28 only",
    }
    initialize = next(c for c in stateless["checks"] if c["id"] == "lifecycle.initialize")
    assert (initialize["status"], initialize["detail"]) == ("not applicable", "not applicable: handshake era only")
    table = cli(*both).stdout
    assert "  n/a  lifecycle.envelope " in table
    assert "  n/a  lifecycle.initialize " in table
    # One file, one era: no check is not applicable.
    alone = json.loads(cli(both[1], "--json").stdout)["clients"][0]
    assert [c["id"] for c in alone["checks"]][:2] == ["lifecycle.envelope", "lifecycle.capabilities"]
    assert "not applicable" not in {c["status"] for c in alone["checks"]}


def test_the_html_page_says_not_applicable(both: list[str], tmp_path: Path) -> None:
    out = tmp_path / "both.html"
    done = cli(*both, "--html", str(out))
    assert done.returncode == 0, done.stderr
    with chromium_page() as page:
        page.goto(out.as_uri())
        assert page.locator("[data-client]").count() == 2
        envelope = page.locator(f'[data-client="{HANDSHAKE}"] [data-check="lifecycle.envelope"]')
        assert "not applicable: 2026-07-28 only" in envelope.inner_text()
        initialized = page.locator(f'[data-client="{STATELESS}"] [data-check="lifecycle.initialized"]')
        assert "not applicable: handshake era only" in initialized.inner_text()
