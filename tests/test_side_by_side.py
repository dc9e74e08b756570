"""Side by side with the real reference server (bench/side_by_side.py): every difference must be a
documented, deliberate one (docs/side-by-side.md). Skipped unless the reference is installed in
.cache/reference (`python -m bench.side_by_side --install`), so a machine without npm still passes;
and skipped in `scripts/test`, whose conformance step has just run the same comparison
(`EVERYTHING_MCP_SIDE_BY_SIDE_RAN=1`; it took 23 s of pytest's time, twice over)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "side_by_side.py"


def load_script():
    spec = importlib.util.spec_from_file_location("side_by_side", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


sbs = load_script()


@pytest.mark.timeout(120)
@pytest.mark.skipif(
    not sbs.reference_installed(),
    reason=(
        f"the reference {sbs.REF_PACKAGE}@{sbs.REF_VERSION} is not installed in .cache/reference "
        "(or node is missing): run `python -m bench.side_by_side --install`"
    ),
)
@pytest.mark.skipif(
    os.environ.get("EVERYTHING_MCP_SIDE_BY_SIDE_RAN") == "1",
    reason="scripts/conformance.sh compared the two servers earlier in this run (bench/side_by_side.py)",
)
def test_only_deliberate_differences_from_the_reference() -> None:
    reports = sbs.run_all()
    assert len(reports) > 50, "the script compared fewer items than it should"
    real = [
        f"{rep.item} {path}: reference {sbs.short(ref)} / ours {sbs.short(ours)}"
        for rep in reports
        for path, ref, ours in rep.unexpected
    ]
    assert not real, "real differences from the reference:\n" + "\n".join(real)
