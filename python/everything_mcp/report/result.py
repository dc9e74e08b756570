"""A report as it is read: :class:`ClientReport` (one client's checks and latencies) and
:class:`Report` (every client, with how many records the checks did not see), as a table, a
Markdown matrix or ``--json``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .ladder import level
from .model import Check

SCHEMA_VERSION = 2
"""The version of ``--json``'s schema (raised when a change would break a reader). 2: a check's
status may be ``not applicable`` (every client of a report lists every check of any of its
clients), and ``dropped`` says how many records the checks did not see."""

DROPPED_HINT = "raise keep_traffic_bytes / --keep-traffic-bytes"
"""How to keep more records in memory (the note of a report whose checks missed some)."""


@dataclass(frozen=True)
class ClientReport:
    """The checks of one client."""

    name: str
    """Its ``clientInfo.name`` (``?`` when it sent none)."""
    version: str
    """Its ``clientInfo.version``."""
    era: str | None
    """``handshake`` or ``stateless``."""
    revision: str | None
    """The revision it spoke."""
    transport: str
    """``stdio``, ``http``, ``sse`` or ``memory``."""
    checks: tuple[Check, ...]
    """Every check, in catalog order (in a report of clients of both eras, the other era's
    checks too, ``not applicable``)."""
    latency: dict[str, dict[str, Any]] = field(default_factory=dict)
    """How long the server took to answer it, per method: ``{"count", "p50_ms", "max_ms"}``
    (not a check: a measure)."""

    @property
    def label(self) -> str:
        """``name version (era, transport)``, a matrix column's title."""
        return f"{self.name} {self.version} ({self.era or '?'}, {self.transport})"

    def check(self, id: str) -> Check:
        """The check `id`."""
        for c in self.checks:
            if c.id == id:
                return c
        raise KeyError(id)

    def level(self, ladder: str = "subscription") -> int:
        """How far up `ladder` the client went (the subscription ladder: 0-7)."""
        return level(self.checks, ladder)

    def assert_level(self, ladder: str, at_least: int) -> None:
        """Fails with the checks of `ladder` unless the client reached `at_least`."""
        reached = self.level(ladder)
        if reached < at_least:
            table = "\n".join(f"  {c.id}: {c.status}" for c in self.checks if c.id.startswith(f"{ladder}."))
            raise AssertionError(f"{self.label} reached {ladder} level {reached}, not {at_least}:\n{table}")

    @property
    def apps_host(self) -> bool:
        """Whether the client is an MCP Apps host (it has ``apps.*`` checks of its own: it
        declared the UI extension, read a ``ui://`` view or a view posted results through it)."""
        return any(c.id.startswith("apps.") and c.status != "not applicable" for c in self.checks)

    def apps(self) -> dict[str, Check]:
        """The client's ``apps.*`` checks by id (docs/apps.md): the server's vantage
        (``apps.declared``, ...) and each check its views posted (``apps.view.<id>``)."""
        return {c.id: c for c in self.checks if c.id.startswith("apps.") and c.status != "not applicable"}

    def assert_apps(self, passed: Iterable[str] = (), failed: Iterable[str] = ()) -> None:
        """Fails with the client's ``apps.*`` checks unless each of `passed` passed and each of
        `failed` failed (ids with or without the ``apps.`` prefix: ``"view.csp.connect_undeclared"``)."""
        checks = self.apps()
        wrong = [
            (_apps_id(id), want)
            for ids, want in ((passed, "pass"), (failed, "fail"))
            for id in ids
            if checks.get(_apps_id(id), Check(_apps_id(id), "", "not exercised")).status != want
        ]
        if wrong:
            table = "\n".join(f"  {c.id}: {c.status}" + (f" ({c.detail})" if c.detail else "") for c in checks.values())
            expected = ", ".join(f"{id} {want}" for id, want in wrong)
            raise AssertionError(f"{self.label}: expected {expected}; its apps checks:\n{table}")

    def to_json(self) -> dict[str, Any]:
        return {
            "client": {"name": self.name, "version": self.version},
            "era": self.era,
            "revision": self.revision,
            "transport": self.transport,
            "levels": {"subscription": self.level()},
            "checks": [c.to_json() for c in self.checks],
            "latency": self.latency,
        }


def _apps_id(id: str) -> str:
    """An apps check's full id (``view.result.nonce`` → ``apps.view.result.nonce``)."""
    return id if id.startswith("apps.") else f"apps.{id}"


def rows(clients: tuple[ClientReport, ...]) -> tuple[str, ...]:
    """Every check of any of `clients`, in catalog order: the rows of their matrix."""
    from .checks import ORDER

    seen = dict.fromkeys(c.id for client in clients for c in client.checks)
    return tuple(sorted(seen, key=lambda id: ORDER.get(id, len(ORDER))))


def aligned(client: ClientReport, ids: tuple[str, ...], descriptions: dict[str, str]) -> ClientReport:
    """`client` with a check for each of `ids`, in that order: those it has not (a check of
    the other era) ``not applicable``."""
    from .checks import not_applicable

    if len(client.checks) == len(ids) and all(c.id == id for c, id in zip(client.checks, ids, strict=True)):
        return client
    have = {c.id: c for c in client.checks}
    checks = tuple(
        have.get(id) or Check(id, descriptions.get(id, ""), "not applicable", (), not_applicable(id)) for id in ids
    )
    return replace(client, checks=checks)


def align(clients: tuple[ClientReport, ...]) -> tuple[ClientReport, ...]:
    """`clients`, each with every row of their matrix (:func:`aligned`)."""
    from .checks import DESCRIPTIONS

    ids = rows(clients)
    descriptions = DESCRIPTIONS | {c.id: c.description for client in clients for c in client.checks}
    return tuple(aligned(c, ids, descriptions) for c in clients)


@dataclass(frozen=True)
class Report:
    """The clients a set of records shows, each with its checks."""

    clients: tuple[ClientReport, ...]
    dropped: int = 0
    """Records the checks did not see: the server's memory bound dropped them before they were
    read (0 for record files, which hold every record)."""

    def __post_init__(self) -> None:
        # Every client has every row of the matrix, whoever made the report.
        object.__setattr__(self, "clients", align(tuple(self.clients)))

    def client(self, name: str | None = None) -> ClientReport:
        """The one client (named `name`, when several)."""
        found = [c for c in self.clients if name is None or c.name == name]
        if len(found) != 1:
            raise LookupError(f"{len(found)} clients named {name!r} in {[c.label for c in self.clients]}")
        return found[0]

    def _only(self, what: str) -> ClientReport:
        """The one client of the report, for `what` (a LookupError naming them otherwise)."""
        if len(self.clients) == 1:
            return self.clients[0]
        if not self.clients:
            raise LookupError(f"{what}: the report has no client (no client traffic)")
        labels = ", ".join(repr(c.label) for c in self.clients)
        raise LookupError(
            f"{what} is for a report of one client; this one has {len(self.clients)}: {labels}"
            " (pick one: report.client(NAME))"
        )

    def level(self, ladder: str = "subscription") -> int:
        """How far up `ladder` the report's one client went (:meth:`ClientReport.level`)."""
        return self._only("level()").level(ladder)

    def assert_level(self, ladder: str, at_least: int) -> None:
        """Fails with the checks of `ladder` unless the report's one client reached `at_least`
        (:meth:`ClientReport.assert_level`); a report of no client or of several is a
        LookupError that names them."""
        self._only("assert_level()").assert_level(ladder, at_least)

    def apps_host(self, name: str | None = None) -> ClientReport:
        """The one MCP Apps host of the report (named `name`, when several):
        :attr:`ClientReport.apps_host`."""
        found = [c for c in self.clients if c.apps_host and (name is None or c.name == name)]
        if len(found) != 1:
            labels = [c.label for c in found] or [c.label for c in self.clients]
            raise LookupError(f"{len(found)} MCP Apps hosts{f' named {name!r}' if name else ''} in {labels}")
        return found[0]

    def note(self) -> str:
        """What a person should know before reading the checks ('' when nothing)."""
        if not self.dropped:
            return ""
        records = "record was" if self.dropped == 1 else "records were"
        return (
            f"note: the checks saw only part of the traffic: {self.dropped:,} {records} dropped from memory"
            f" before they were read ({DROPPED_HINT})"
        )

    def to_json(self) -> dict[str, Any]:
        """The report as ``--json`` writes it (``docs/report.md`` has the schema)."""
        return {"version": SCHEMA_VERSION, "dropped": self.dropped, "clients": [c.to_json() for c in self.clients]}

    def dumps(self) -> str:
        """``--json``'s text."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    def table(self, color: bool = False) -> str:
        """A readable table: one block per client, a line per check (with `color`, ANSI colours:
        pass green, fail red, not exercised and not applicable dim)."""
        mark = {"pass": "ok  ", "fail": "FAIL", "not exercised": "-   ", "not applicable": "n/a "}
        paint = {"pass": "32", "fail": "1;31", "not exercised": "2", "not applicable": "2"}

        def ink(text: str, code: str) -> str:
            return f"\x1b[{code}m{text}\x1b[0m" if color else text

        blocks = [ink(self.note(), "1;33")] if self.dropped else []
        for c in self.clients:
            lines = [ink(f"{c.label}  subscription level {c.level()}/7", "1")]
            lines += [
                ink(f"  {mark[k.status]} {k.id:<30}", paint[k.status])
                + f" {k.description}"
                + (f": {k.detail}" if k.detail else "")
                for k in c.checks
            ]
            lines += [
                f"  latency  {m:<30} n={v['count']:<6} p50 {v['p50_ms']} ms  max {v['max_ms']} ms"
                for m, v in c.latency.items()
            ]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"

    def markdown(self) -> str:
        """The compatibility matrix: checks as rows, clients as columns (a check of the other
        era is ``n/a``)."""
        cell = {"pass": "pass", "fail": "FAIL", "not exercised": "-", "not applicable": "n/a"}
        head = "| check | " + " | ".join(c.label for c in self.clients) + " |"
        rule = "| --- |" + " --- |" * len(self.clients)
        table = ["| subscription level | " + " | ".join(str(c.level()) for c in self.clients) + " |"]
        for id in rows(self.clients):
            table.append(f"| {id} | " + " | ".join(cell[c.check(id).status] for c in self.clients) + " |")
        note = ["", self.note()] if self.dropped else []
        return "\n".join([head, rule, *table, *note]) + "\n"
