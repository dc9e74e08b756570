"""The HTML report: the lab page (``/_lab/``, served by the core) with the records and their
report written into it, one self-contained file that needs nothing from the network
(``python -m everything_mcp report FILE… --html out.html``, the pytest plugin's
``--everything-mcp-report DIR``). The page is one file for both: live, it reads the control
API; here, the data it would have read is in the file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from .. import _core
from ..traffic import TrafficRecord

DATA_SLOT = '<script id="lab-data" type="application/json">null</script>'
"""Where the page takes its data from: ``null`` is live mode (the control API)."""


def record_json(record: TrafficRecord) -> dict[str, Any]:
    """`record` as a line of the record file has it (docs/traffic-format.md)."""
    fields = {name: getattr(record, name) for name in record.__dataclass_fields__}
    if fields.get("fault") is None:
        fields.pop("fault", None)
    return fields


def write(out: TextIO, records: Iterable[TrafficRecord], report: dict[str, Any], title: str) -> None:
    """Writes the page with `records` and `report` (``Report.to_json()``) in it to `out`, a record
    at a time: one JSON text of 100k records, and its escaped copies, took 1.1 GB more than the
    records themselves (`bench.lab`). A report whose checks did not see every record says so in
    the page's title."""
    template: str = _core.LAB_PAGE
    head, found, tail = template.partition(DATA_SLOT)
    if not found:
        raise RuntimeError("the lab page has no data slot")
    out.write(head)
    out.write('<script id="lab-data" type="application/json">')
    if report.get("dropped"):
        from . import Report

        # The page shows its title: the note goes there.
        title = f"{title} \N{EM DASH} {Report((), report['dropped']).note()}"
    out.write(_inert(json.dumps({"title": title, "report": report})[:-1]))
    out.write(',"records":[')
    for i, record in enumerate(records):
        if i:
            out.write(",")
        out.write(_inert(json.dumps(record_json(record), separators=(",", ":"))))
    out.write("]}</script>")
    out.write(tail)


def _inert(text: str) -> str:
    """JSON text that cannot end the <script> it is in: `</` could close the element early and
    `<!--` open a comment, so both are written as JSON escapes, which parse to the same text."""
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")
