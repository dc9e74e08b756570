"""The pytest plugin, tested with pytest's own `pytester`: fixtures, marker, traffic attached to
failing tests and saved as JSONL and as an HTML report; sync, pytest-asyncio and anyio (asyncio and trio) tests."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = """
import json
import anyio
import pytest
import httpx

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"accept": "application/json, text/event-stream"}

def test_sync(everything_mcp):
    r = httpx.post(everything_mcp.http_url, json=INIT, headers=HEADERS)
    assert r.status_code == 200
    assert everything_mcp.traffic.wait_for("initialize", timeout=5).id == 1

@pytest.mark.everything_mcp(catalogs=["none"], json_response=True)
def test_marker(everything_mcp):
    assert everything_mcp.tool_names == []
    r = httpx.post(everything_mcp.http_url, json=INIT, headers=HEADERS)
    assert r.headers["content-type"] == "application/json"

def test_factory(everything_mcp_factory):
    a = everything_mcp_factory(catalogs=["conformance"])
    b = everything_mcp_factory()
    assert a.http_url != b.http_url and "test_simple_text" in a.tool_names

@pytest.mark.asyncio
async def test_pytest_asyncio(everything_mcp):
    async with httpx.AsyncClient() as client:
        r = await client.post(everything_mcp.http_url, json=INIT, headers=HEADERS)
    assert r.status_code == 200

@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_anyio(everything_mcp, anyio_backend):
    @everything_mcp.tool()
    def shout(text: str) -> str:
        return text.upper()
    await anyio.to_thread.run_sync(lambda: httpx.post(everything_mcp.http_url, json=INIT, headers=HEADERS))
    record = await everything_mcp.traffic.await_for("initialize", timeout=5)
    assert record.dir == "in"

def test_failing(everything_mcp):
    httpx.post(everything_mcp.http_url, json=INIT, headers=HEADERS)
    assert False, "deliberately"
"""


def test_plugin_fixtures_marker_and_failure_records(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    records = pytester.path / "records"
    pages = pytester.path / "pages"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--everything-mcp-records={records}", f"--everything-mcp-report={pages}", "-q"
    )
    result.assert_outcomes(passed=6, failed=1)
    # The failing test's HTML report: the page with its records and their report written in.
    (page,) = pages.glob("*.html")
    assert "test_failing" in page.name
    data = page.read_text().split('<script id="lab-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    written = json.loads(data)
    assert written["records"][0]["method"] == "initialize"
    assert [c["transport"] for c in written["report"]["clients"]] == ["http"]
    result.stdout.fnmatch_lines(
        ["*everything-mcp traffic (server 1)*", "*in  request      1      handshake initialize*"]
    )
    (saved,) = records.glob("*.jsonl")
    assert "test_failing" in saved.name
    assert '"method":"initialize"' in saved.read_text()


REPLAYED_TESTS = """
import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def test_echo(everything_mcp_replay):
    async with Client(everything_mcp_replay.http_url, mode="legacy") as client:
        r = await client.call_tool("echo", {"message": "hi"})
        assert r.content[0].text == "Echo: hi"

@pytest.mark.everything_mcp_replay("sums", json_response=True)
async def test_named(everything_mcp_replay):
    async with Client(everything_mcp_replay.http_url) as client:
        r = await client.call_tool("get-sum", {"a": 1, "b": 2})
        assert r.content[0].text == "The sum of 1 and 2 is 3."
"""


def test_replay_fixture_records_once_then_replays(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_replayed=REPLAYED_TESTS)
    # Record mode none (the default) and no recording: the test errors, saying how to record it.
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*no recording *test_echo.jsonl: record it with --everything-mcp-record-mode=once*"])

    result = pytester.runpytest("-p", "no:cacheprovider", "--everything-mcp-record-mode=once")
    result.assert_outcomes(passed=2)
    folder = pytester.path / "recordings" / "test_replayed"
    echo, sums = folder / "test_echo.jsonl", folder / "sums.jsonl"
    recorded = echo.read_text()
    assert [json.loads(line)["method"] for line in recorded.splitlines()][:2] == ["initialize", "initialize"]
    assert '"Echo: hi"' in recorded and '"The sum of 1 and 2 is 3."' in sums.read_text()

    # Replayed: nothing asked of a real server, nothing written.
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert echo.read_text() == recorded
    # Once more with `once`: the recordings exist, so they are replayed, not made anew.
    result = pytester.runpytest("-p", "no:cacheprovider", "--everything-mcp-record-mode=once")
    result.assert_outcomes(passed=2)
    assert echo.read_text() == recorded
