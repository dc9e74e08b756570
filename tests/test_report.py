"""The report (docs/report.md): checks computed from traffic, per client. Recorded runs of the
official `mcp` client in both eras and of raw JSON-RPC clients that skip steps, asserted check by
check; the CLI's table, JSON and Markdown matrix over record files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from everything_mcp import Server

from conftest import SERVER_CMD, WAIT, StdioServer, accept_an_elicitation, climb_the_ladder

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

DOC = "demo://resource/static/document/features.md"


def statuses(client: object, prefix: str) -> dict[str, str]:
    return {c.id: c.status for c in client.checks if c.id.startswith(prefix)}  # type: ignore[attr-defined]


async def test_the_subscription_ladder_of_the_official_client_in_the_handshake_era() -> None:
    """It lists, reads, subscribes, receives the update, re-reads and sees the new version,
    then unsubscribes: level 7."""
    with Server(catalogs=["none"]) as srv:
        await climb_the_ladder(srv)
        mine = srv.report().client("mcp")
        assert (mine.era, mine.transport, mine.level()) == ("handshake", "stdio", 7)
        assert mine.check("subscription.closed").status == "pass"
        assert statuses(mine, "lifecycle.") == {
            "lifecycle.initialize": "pass",
            "lifecycle.initialized": "pass",
            "lifecycle.capabilities": "not exercised",
        }
        mine.assert_level("subscription", 7)


async def test_assert_level_on_the_report_of_its_one_client() -> None:
    """`srv.report().assert_level(...)` reads the report's one client; a report of none or of
    several says which clients it has."""
    with Server(catalogs=["none"]) as srv:
        await climb_the_ladder(srv)
        report = srv.report()
        assert report.level() == report.level("subscription") == 7
        report.assert_level("subscription", 7)
        with pytest.raises(AssertionError, match="reached subscription level 7, not 8"):
            report.assert_level("subscription", 8)
    with Server(catalogs=["everything"]) as srv:
        with pytest.raises(LookupError, match="the report has no client"):
            srv.report().assert_level("subscription", 1)
        with anyio.fail_after(WAIT):
            for mode in ("legacy", "auto"):
                async with Client(StdioServerParameters(**srv.stdio_params), mode=mode) as client:  # type: ignore[arg-type]
                    await client.read_resource(DOC)
        with pytest.raises(LookupError) as several:
            srv.report().assert_level("subscription", 3)
        assert str(several.value) == (
            "assert_level() is for a report of one client; this one has 2: 'mcp 0.1.0 (handshake, stdio)',"
            " 'mcp 0.1.0 (stateless, stdio)' (pick one: report.client(NAME))"
        )
        with pytest.raises(LookupError, match="level"):
            srv.report().level()
        for client in srv.report().clients:
            client.assert_level("subscription", 1)


async def test_the_stateless_era_official_client_reads_without_subscribing() -> None:
    with Server(catalogs=["everything"]) as srv:
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params)) as client:
                await client.list_resources()
                await client.read_resource(DOC)
        mine = srv.report().client("mcp")
        assert (mine.era, mine.level()) == ("stateless", 3)
        assert statuses(mine, "subscription.")["subscription.subscribed"] == "not exercised"
        assert mine.check("lifecycle.envelope").status == "pass"
        with pytest.raises(AssertionError, match="reached subscription level 3, not 5"):
            mine.assert_level("subscription", 5)


def test_raw_clients_that_skip_steps() -> None:
    """One never sends `initialized`; one subscribes and never re-reads after the update; one
    ignores a `list_changed`. Each failing check is the one it skipped."""
    with Server(catalogs=["everything"]) as srv:
        srv.start_http()
        conn = srv.connect()
        send = lambda m: conn.send(json.dumps(m))  # noqa: E731
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "skipper", "version": "1"}}
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        conn.recv(timeout=WAIT)
        send({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": DOC}})
        conn.recv(timeout=WAIT)
        send({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": DOC}})
        conn.recv(timeout=WAIT)
        srv.notify_resource_updated(DOC)
        srv.notify_list_changed("tools")
        conn.recv(timeout=WAIT)
        conn.recv(timeout=WAIT)
        skipper = srv.report().client("skipper")
        assert skipper.check("lifecycle.initialized").status == "fail"
        assert skipper.level() == 1  # connected, but never listed the resources
        assert statuses(skipper, "subscription.") == {
            "subscription.connected": "pass",
            "subscription.discovered": "not exercised",
            "subscription.read": "pass",
            "subscription.subscribed": "pass",
            "subscription.notified": "pass",
            "subscription.reread": "not exercised",
            "subscription.changed": "not exercised",
            "subscription.closed": "not exercised",
        }
        assert skipper.check("list_changed.tools").status == "fail"
        assert skipper.check("list_changed.prompts").status == "not exercised"
        assert skipper.check("errors.malformed").status == "pass"


def test_a_client_that_ignores_a_503_fails_the_retry_check(tmp_path: Path) -> None:
    record = tmp_path / "traffic.jsonl"
    with Server(catalogs=["everything"], record=str(record)) as srv:
        srv.faults.add(match={"method": "tools/list"}, action={"http_status": 503})
        url = srv.start_http()
        import httpx

        h = {"Accept": "application/json, text/event-stream"}
        ping = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "quitter", "version": "1"},
                }
            },
        }
        h |= {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
        assert httpx.post(url, json=ping, headers=h, timeout=WAIT).status_code == 503
        quitter = srv.report().client("quitter")
        assert quitter.check("faults.retry_503").status == "fail"
    out = subprocess.run(
        [*SERVER_CMD, "report", str(record), "--json"], capture_output=True, text=True, timeout=WAIT, check=True
    )
    data = json.loads(out.stdout)
    assert data["version"] == 2
    (client,) = data["clients"]
    assert client["client"] == {"name": "quitter", "version": "1"}
    assert {c["id"]: c["status"] for c in client["checks"]}["faults.retry_503"] == "fail"


def test_a_matrix_over_three_recorded_clients(tmp_path: Path) -> None:
    files = []
    for name, steps in [("lister", 1), ("reader", 2), ("quiet", 0)]:
        path = tmp_path / f"{name}.jsonl"
        server = StdioServer("stdio", "--record", str(path))
        try:
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "1"}}
            server.request(0, "initialize", init)
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            server.recv()  # the tools/list_changed the catalog announces
            if steps >= 1:
                server.request(1, "resources/list")
            if steps >= 2:
                server.request(2, "resources/read", {"uri": DOC})
            server.close_stdin()
            server.proc.wait(timeout=WAIT)
        finally:
            server.stop()
        files.append(str(path))
    out = subprocess.run(
        [*SERVER_CMD, "report", *files, "--markdown"], capture_output=True, text=True, timeout=WAIT, check=True
    )
    rows = {
        line.split(" | ")[0].strip("| "): [c.strip(" |") for c in line.split(" | ")[1:]]
        for line in out.stdout.splitlines()
    }
    labels = ["lister 1 (handshake, stdio)", "reader 1 (handshake, stdio)", "quiet 1 (handshake, stdio)"]
    # Every cell: the rows named here, and "-" (not exercised) in all the others.
    exercised = {
        "subscription level": ["2", "3", "1"],
        "lifecycle.initialize": ["pass", "pass", "pass"],
        "lifecycle.initialized": ["pass", "pass", "pass"],
        "subscription.connected": ["pass", "pass", "pass"],
        "subscription.discovered": ["pass", "pass", "-"],
        "subscription.read": ["-", "pass", "-"],
        # The catalog announces a tools/list_changed after initialized; none of them re-listed.
        "list_changed.tools": ["FAIL", "FAIL", "FAIL"],
        "errors.malformed": ["pass", "pass", "pass"],
        "errors.unknown_method": ["pass", "pass", "pass"],
    }
    ids = [line.split(" | ")[0].strip("| ") for line in out.stdout.splitlines()[3:]]
    assert len(ids) == 46  # every check of the catalog (report/checks.py)
    assert rows == {"check": labels, "---": ["---", "---", "---"]} | {
        id: exercised.get(id, ["-", "-", "-"]) for id in ["subscription level", *ids]
    }
    # The same matrix in --json.
    whole = json.loads(
        subprocess.run(
            [*SERVER_CMD, "report", *files, "--json"], capture_output=True, text=True, timeout=WAIT, check=True
        ).stdout
    )
    cell = {"pass": "pass", "fail": "FAIL", "not exercised": "-"}
    assert [
        f"{c['client']['name']} {c['client']['version']} ({c['era']}, {c['transport']})" for c in whole["clients"]
    ] == labels
    assert [str(c["levels"]["subscription"]) for c in whole["clients"]] == exercised["subscription level"]
    for id in ids:
        assert [cell[{k["id"]: k["status"] for k in c["checks"]}[id]] for c in whole["clients"]] == exercised.get(
            id, ["-", "-", "-"]
        ), id
    table = subprocess.run(
        [*SERVER_CMD, "report", files[1]], capture_output=True, text=True, timeout=WAIT, check=True
    ).stdout
    assert table.startswith("reader 1 (handshake, stdio)  subscription level 3/7\n")
    assert "  ok   subscription.read" in table


async def test_questions_progress_pagination_and_the_header_in_the_handshake_era() -> None:
    async def sample(_context: object, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="ok"), model="m")

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        pass

    with Server(catalogs=["everything"], page_size=1) as srv:
        with anyio.fail_after(WAIT):
            async with Client(srv.start_http(), mode="legacy", sampling_callback=sample) as client:
                await srv.aask("sampling/createMessage", {"messages": [], "maxTokens": 5})
                await client.call_tool(
                    "trigger-long-running-operation", {"duration": 0.01, "steps": 1}, progress_callback=on_progress
                )
                await client.list_prompts()  # the first page only
        mine = srv.report().client("mcp")
        assert statuses(mine, "asks.") == {
            "asks.sampling": "pass",
            "asks.elicitation": "not exercised",
            "asks.roots": "not exercised",
            "asks.mrtr_retried": "not exercised",
        }
        assert mine.check("progress.token").status == "pass"
        assert mine.check("pagination.followed").status == "fail"
        assert mine.check("http.protocol_version_header").status == "pass"
        assert mine.check("cancel.sent").status == "not exercised"


async def test_a_multi_round_retry_and_a_fallback_in_2026() -> None:
    with Server(catalogs=["conformance"]) as srv:
        await accept_an_elicitation(srv)
        assert srv.report().client("mcp").check("asks.mrtr_retried").status == "pass"
    with Server(catalogs=["everything"]) as srv:
        srv.faults.preset("version-skew")
        with anyio.fail_after(WAIT):
            async with Client(StdioServerParameters(**srv.stdio_params)) as client:
                assert client.protocol_version == "2025-11-25"
        # Reported in the era it ended up speaking.
        fell_back = srv.report().client("mcp")
        assert (fell_back.era, fell_back.revision) == ("handshake", "2025-11-25")
        assert fell_back.check("faults.fallback_after_32022").status == "pass"
        assert fell_back.check("lifecycle.initialize").status == "pass"
