"""docs/faults.md's examples run: every JSON block on the page is a rule or a fault file, and
each goes in force on a real server as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

from everything_mcp import Server

DOC = Path(__file__).resolve().parent.parent / "docs" / "faults.md"


def json_blocks() -> list[str]:
    return re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_every_example_of_the_faults_page_goes_in_force() -> None:
    blocks = json_blocks()
    assert blocks, "the page has JSON examples"
    with Server(catalogs=["none"]) as srv:
        for block in blocks:
            loaded = srv.faults.load_text(block)
            assert loaded, block
            srv.faults.clear()
        # The inline rules of the action tables (the actions, the changes to the answer) are
        # rules too.
        table = DOC.read_text(encoding="utf-8").split("## Actions", 1)[1].split("## Presets", 1)[0]
        actions = re.findall(r"^\| `(\{.*?\})` \|", table, flags=re.M)
        assert len(actions) == 33
        for action in actions:
            srv.faults.add(action=json.loads(action))
            srv.faults.clear()
