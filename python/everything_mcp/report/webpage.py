"""The HTML report: the lab page (``/_lab/``, served by the core) with the records and their
report written into it, one self-contained file that needs nothing from the network
(``python -m everything_mcp report FILE… --html out.html``, the pytest plugin's
``--everything-mcp-report DIR``). The page is one file for both: live, it reads the control
API; here, the data it would have read is in the file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

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


def render(records: Iterable[TrafficRecord], report: dict[str, Any], title: str) -> str:
    """The page with `records` and `report` (``Report.to_json()``) written into it."""
    data = {"title": title, "records": [record_json(r) for r in records], "report": report}
    # Inside <script>, `</` could end the element early and `<!--` open a comment: both are
    # written as JSON escapes, which parse to the same text.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/").replace("<!--", "<\\u0021--")
    template: str = _core.LAB_PAGE
    if DATA_SLOT not in template:
        raise RuntimeError("the lab page has no data slot")
    return template.replace(DATA_SLOT, f'<script id="lab-data" type="application/json">{text}</script>', 1)
