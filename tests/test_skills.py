"""The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): the `skills` catalog and
`srv.skill(path)`. The official `mcp` client over HTTP where it can (it sends the extension's
requests through its generic `send_request`), raw JSON-RPC over stdio for the frames themselves
(cache hints, pagination, the handshake era)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, types
from pydantic import TypeAdapter

from everything_mcp import ConfigError, Server

from conftest import STATELESS, StdioServer, envelope

pytestmark = pytest.mark.anyio

EXTENSION = "io.modelcontextprotocol/skills"
SKILLS = ["json-rpc-triage", "release-notes", "unit-conversion"]
ANY = TypeAdapter(dict[str, Any])


async def ask(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """An extension request through the official client (its envelope, its transport)."""
    request = types.Request[Any, Any](method=method, params=params)
    result: dict[str, Any] = await client.session.send_request(request, ANY)
    return result


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


async def read_bytes(client: Client, uri: str) -> bytes:
    """A resource's raw bytes, from its text or its base64 blob."""
    (content,) = (await client.read_resource(uri)).contents
    if isinstance(content, types.TextResourceContents):
        return content.text.encode()
    assert isinstance(content, types.BlobResourceContents)
    return base64.b64decode(content.blob)


async def test_the_official_client_lists_gets_and_reads_the_catalog_skills() -> None:
    with Server(catalogs=["skills"]) as srv:
        url = srv.start_http()
        with anyio.fail_after(20):
            async with Client(url, read_timeout_seconds=10) as client:
                assert client.protocol_version == STATELESS
                assert client.server_capabilities is not None
                assert client.server_capabilities.extensions == {EXTENSION: {"directoryRead": True}}

                listed = await ask(client, "skills/list", {})
                entries = listed["skills"]
                assert [e["frontmatter"]["name"] for e in entries] == SKILLS
                for entry in entries:
                    name = entry["frontmatter"]["name"]
                    assert entry["uri"] == f"skill://{name}/SKILL.md"
                    assert entry["frontmatter"]["description"]
                    manifest = entry["resources"]
                    assert manifest[0]["uri"] == entry["uri"]
                    # Every file's bytes match its digest and size.
                    for file in manifest:
                        data = await read_bytes(client, file["uri"])
                        assert (digest(data), len(data)) == (file["digest"], file["size"]), file["uri"]
                    assert (await ask(client, "skills/get", {"uri": entry["uri"]}))["skill"] == entry

                with pytest.raises(MCPError) as unknown:
                    await ask(client, "skills/get", {"uri": "skill://no-such-skill/SKILL.md"})
                assert unknown.value.code == -32602

                # The SKILL.md resource is named and described by its frontmatter.
                resources = {r.uri: r for r in (await client.list_resources()).resources}
                skill_md = resources["skill://unit-conversion/SKILL.md"]
                assert skill_md.name == "unit-conversion"
                assert skill_md.mime_type == "text/markdown"
                assert skill_md.description == entries[2]["frontmatter"]["description"]


async def test_directory_read_lists_direct_children_and_refuses_a_file() -> None:
    with Server(catalogs=["skills"]) as srv:
        url = srv.start_http()
        with anyio.fail_after(20):
            async with Client(url, read_timeout_seconds=10) as client:
                root = await ask(client, "resources/directory/read", {"uri": "skill://json-rpc-triage"})
                assert [(r["uri"], r["mimeType"]) for r in root["resources"]] == [
                    ("skill://json-rpc-triage/SKILL.md", "text/markdown"),
                    ("skill://json-rpc-triage/reference", "inode/directory"),
                ]
                sub = await ask(client, "resources/directory/read", {"uri": "skill://json-rpc-triage/reference"})
                assert [r["uri"] for r in sub["resources"]] == ["skill://json-rpc-triage/reference/error-codes.md"]
                for not_a_directory in ("skill://json-rpc-triage/SKILL.md", "skill://nothing-here"):
                    with pytest.raises(MCPError) as refused:
                        await ask(client, "resources/directory/read", {"uri": not_a_directory})
                    assert refused.value.code == -32602


@pytest.fixture
def paged_stdio() -> Iterator[StdioServer]:
    server = StdioServer("stdio", "--catalog", "skills", "--page-size", "1")
    yield server
    server.stop()


def stateless(params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(params or {}), "_meta": envelope()}


def test_stdio_frames_carry_cache_hints_and_page_whole_entries(paged_stdio: StdioServer) -> None:
    names: list[str] = []
    cursor: str | None = None
    for id in range(1, 10):
        r = paged_stdio.request(id, "skills/list", stateless({"cursor": cursor} if cursor else None))["result"]
        assert (r["resultType"], r["ttlMs"], r["cacheScope"]) == ("complete", 0, "private")
        (entry,) = r["skills"]
        names.append(entry["frontmatter"]["name"])
        cursor = r.get("nextCursor")
        if cursor is None:
            break
    assert names == SKILLS

    got = paged_stdio.request(20, "skills/get", stateless({"uri": "skill://release-notes/SKILL.md"}))["result"]
    assert "nextCursor" not in got and got["ttlMs"] == 0 and got["cacheScope"] == "private"
    assert [f["uri"] for f in got["skill"]["resources"]] == [
        "skill://release-notes/SKILL.md",
        "skill://release-notes/templates/entry.md",
    ]

    page = paged_stdio.request(21, "resources/directory/read", stateless({"uri": "skill://release-notes"}))
    assert [r["uri"] for r in page["result"]["resources"]] == ["skill://release-notes/SKILL.md"]
    cursor = page["result"]["nextCursor"]
    page = paged_stdio.request(
        22, "resources/directory/read", stateless({"uri": "skill://release-notes", "cursor": cursor})
    )
    assert page["result"]["resources"][0]["mimeType"] == "inode/directory"
    assert "nextCursor" not in page["result"]
    # A cursor of one directory is not one of another.
    other = paged_stdio.request(
        23, "resources/directory/read", stateless({"uri": "skill://json-rpc-triage", "cursor": cursor})
    )
    assert other["error"]["code"] == -32602


def test_the_handshake_era_sees_the_skill_files_as_resources() -> None:
    server = StdioServer("stdio", "--catalog", "skills")
    try:
        init = server.initialize("2025-11-25")["result"]
        assert "extensions" not in init["capabilities"]
        assert server.request(1, "skills/list", {})["error"]["code"] == -32601
        assert (
            server.request(2, "resources/directory/read", {"uri": "skill://release-notes"})["error"]["code"] == -32601
        )
        uris = [r["uri"] for r in server.request(3, "resources/list", {})["result"]["resources"]]
        assert "skill://release-notes/templates/entry.md" in uris
        (content,) = server.request(4, "resources/read", {"uri": "skill://unit-conversion/factors.csv"})["result"][
            "contents"
        ]
        assert content["mimeType"] == "text/csv" and content["text"].startswith("from,to,factor\n")
    finally:
        server.stop()


async def test_the_official_client_in_legacy_mode_reads_skill_files_as_resources() -> None:
    with Server(catalogs=["skills"]) as srv:
        url = srv.start_http()
        with anyio.fail_after(20):
            async with Client(url, mode="legacy", read_timeout_seconds=10) as client:
                assert client.protocol_version == "2025-11-25"
                assert client.server_capabilities is not None
                assert client.server_capabilities.extensions is None
                with pytest.raises(MCPError) as unknown:
                    await ask(client, "skills/list", {})
                assert unknown.value.code == -32601
                uris = [r.uri for r in (await client.list_resources()).resources]
                assert "skill://unit-conversion/SKILL.md" in uris
                data = await read_bytes(client, "skill://unit-conversion/factors.csv")
                assert data.startswith(b"from,to,factor\n")


def test_a_server_without_skills_does_not_know_the_methods(stdio_server: StdioServer) -> None:
    for id, method in enumerate(["skills/list", "skills/get", "resources/directory/read"], 1):
        r = stdio_server.request(id, method, stateless({"uri": "skill://x/SKILL.md"}))
        assert r["error"]["code"] == -32601, r


def make_skill(root: Path, name: str = "my-skill") -> dict[str, bytes]:
    """Writes a skill folder (a subfolder, a binary file, hidden entries) and returns the files
    that should be served, by path."""
    frontmatter = f"name: {name}\ndescription: A skill from a folder.\nmetadata:\n  team: qa\n"
    files = {
        "SKILL.md": f"---\n{frontmatter}---\nUse it.\n".encode(),
        "scripts/run.sh": b"#!/bin/sh\necho hi\n",
        "scripts/data/table.csv": b"a,b\n1,2\n",
        "logo.png": b"\x89PNG\r\n\x1a\n\x00\xff",
    }
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    (root / ".DS_Store").write_bytes(b"x")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_bytes(b"ref")
    return files


async def test_srv_skill_serves_a_folder_from_disk(tmp_path: Path) -> None:
    files = make_skill(tmp_path)
    with Server(catalogs=["none"]) as srv:
        assert srv.skill(tmp_path) == "skill://my-skill/SKILL.md"
        url = srv.start_http()
        with anyio.fail_after(20):
            async with Client(url, read_timeout_seconds=10) as client:
                (entry,) = (await ask(client, "skills/list", {}))["skills"]
                assert entry["frontmatter"] == {
                    "name": "my-skill",
                    "description": "A skill from a folder.",
                    "metadata": {"team": "qa"},
                }
                manifest = {f["uri"]: (f["digest"], f["size"]) for f in entry["resources"]}
                assert manifest == {
                    f"skill://my-skill/{path}": (digest(data), len(data)) for path, data in files.items()
                }, "every file but the hidden ones, with its digest and size"
                for path, data in files.items():
                    assert await read_bytes(client, f"skill://my-skill/{path}") == data
                children = await ask(client, "resources/directory/read", {"uri": "skill://my-skill/scripts"})
                assert [(c["uri"], c["mimeType"]) for c in children["resources"]] == [
                    ("skill://my-skill/scripts/run.sh", "text/x-shellscript"),
                    ("skill://my-skill/scripts/data", "inode/directory"),
                ]

        # Serving the folder again picks up its changes (a removed file is gone).
        (tmp_path / "logo.png").unlink()
        (tmp_path / "SKILL.md").write_bytes(files["SKILL.md"] + b"More.\n")
        srv.skill(tmp_path)
        with anyio.fail_after(20):
            async with Client(url, read_timeout_seconds=10) as client:
                (entry,) = (await ask(client, "skills/list", {}))["skills"]
                assert len(entry["resources"]) == 3
                assert entry["resources"][0]["size"] == len(files["SKILL.md"]) + 6
                uris = [r.uri for r in (await client.list_resources()).resources]
                assert "skill://my-skill/logo.png" not in uris


def test_srv_skill_refuses_what_is_not_a_skill(tmp_path: Path) -> None:
    with Server(catalogs=["none"]) as srv:
        with pytest.raises(NotADirectoryError):
            srv.skill(tmp_path / "missing")
        with pytest.raises(ConfigError, match=r"SKILL\.md"):
            srv.skill(tmp_path)
        make_skill(tmp_path, name="Not_Valid")
        with pytest.raises(ConfigError, match="naming rules"):
            srv.skill(tmp_path)
        (tmp_path / "SKILL.md").write_text("no frontmatter\n")
        with pytest.raises(ConfigError, match="frontmatter"):
            srv.skill(tmp_path)
