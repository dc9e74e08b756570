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


def test_every_rule_and_action_of_the_auth_faults_page_goes_in_force() -> None:
    """docs/auth-faults.md's actions (its tables' first column) and whole rules (the tables of
    faults and scenarios) are rules a server with the auth lab takes as written."""
    doc = (DOC.parent / "auth-faults.md").read_text(encoding="utf-8")
    actions = re.findall(r"^\| `(\{.*?\})` \|", doc, flags=re.M)
    rules = [r for r in re.findall(r"`(\{\"match\": .*?\})`", doc) if '"action"' in r]
    assert len(actions) == 12 and len(rules) >= 16, (len(actions), len(rules))
    with Server(catalogs=["none"]) as srv:
        srv.start_http(auth="oauth")
        for action in actions:
            parsed = json.loads(action)
            at = {"consent": "authorize", "expired_token": "token", "oauth_error": "token"}
            step = next((s for k, s in at.items() if k in parsed), "token")
            match = {} if "challenge" in parsed else {"auth": step}
            srv.faults.add(match=match, action=parsed)
            srv.faults.clear()
        for rule in rules:
            srv.faults.add_rule(json.loads(rule))
            srv.faults.clear()
