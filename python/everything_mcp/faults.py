"""Scripted faults: rules that make the server misbehave exactly when a test says.

``srv.faults.add(match={...}, action={...})`` puts a rule in force and returns its handle: how
many frames it hit (``rule.hits``), ``rule.remove()``, and a context manager that removes it on
exit. The rule format is the one ``--faults FILE`` and the control API read (docs/faults.md)::

    with srv.faults.add(match={"method": "tools/call", "name": "echo", "nth": 2},
                        action={"error": {"code": -32000, "message": "boom"}}) as rule:
        ...
    assert rule.hits == 1
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import _core


class FaultRule:
    """A fault rule in force (or taken out): its id, what was written, and its hits."""

    def __init__(self, core: _core.Server, rule_id: str, spec: Mapping[str, Any]) -> None:
        self._core = core
        self.id = rule_id
        """The rule's id (as given, or ``r<n>``)."""
        self.spec = dict(spec)
        """The rule as written (``match``, ``action``, ``id``)."""
        self._last_hits = 0

    @property
    def hits(self) -> int:
        """How many frames the rule acted on (after ``remove()``: as many as when it was removed)."""
        hits = self._core.fault_hits(self.id)
        if hits is not None:
            self._last_hits = hits
        return self._last_hits

    @property
    def active(self) -> bool:
        """Whether the rule is still in force."""
        return self._core.fault_hits(self.id) is not None

    def remove(self) -> bool:
        """Takes the rule out; whether it was in force."""
        _ = self.hits
        return self._core.remove_fault(self.id)

    def __enter__(self) -> FaultRule:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"FaultRule({self.id!r}, hits={self.hits}, {json.dumps(self.spec)})"


class Faults:
    """A server's fault rules (``Server.faults``)."""

    def __init__(self, core: _core.Server) -> None:
        self._core = core

    def add(
        self,
        match: Mapping[str, Any] | None = None,
        action: Mapping[str, Any] | None = None,
        *,
        id: str | None = None,
    ) -> FaultRule:
        """Puts a rule in force: ``match`` (which frames; none: every frame from the client) and
        ``action`` (what happens to them). A malformed rule raises ``ConfigError`` naming the
        member and the problem."""
        spec: dict[str, Any] = {"match": dict(match or {}), "action": dict(action or {})}
        if id is not None:
            spec["id"] = id
        return self.add_rule(spec)

    def add_rule(self, rule: Mapping[str, Any]) -> FaultRule:
        """Puts a rule written as one mapping (``{"match": ..., "action": ..., "id": ...}``) in force."""
        rule_id = self._core.add_fault(json.dumps(dict(rule)))
        return FaultRule(self._core, rule_id, {**rule, "id": rule_id})

    def preset(self, name: str, seed: int = 0) -> list[FaultRule]:
        """Puts a named preset's rules in force (``flaky-network``, ``slow-server``,
        ``version-skew``, ``ignore-cancel``; docs/faults.md), drawing from ``seed``. An unknown
        name raises ``ConfigError`` naming the known ones."""
        return self._handles(self._core.add_fault_preset(name, seed))

    def load(self, path: str | os.PathLike[str]) -> list[FaultRule]:
        """Puts every rule of a fault file in force (all or none); an error names the line."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return self.load_text(text)

    def load_text(self, text: str) -> list[FaultRule]:
        """:meth:`load` from the file's text."""
        return self._handles(self._core.load_faults(text))

    def _handles(self, ids: list[str]) -> list[FaultRule]:
        """The handles of the rules in force whose ids are ``ids``, in order."""
        wanted = set(ids)
        return [rule for rule in self.rules if rule.id in wanted]

    @property
    def rules(self) -> list[FaultRule]:
        """The rules in force, in order."""
        out = []
        for line in self._core.faults():
            spec = json.loads(line)
            spec.pop("hits", None)
            out.append(FaultRule(self._core, spec["id"], spec))
        return out

    def clear(self) -> None:
        """Takes every rule out."""
        self._core.clear_faults()

    def __iter__(self) -> Iterator[FaultRule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self._core.faults())
