"""The Python examples of the documentation run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCKS = re.findall(r"```python\n(.*?)```", (DOCS / "python-api.md").read_text(), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"python-api-{i}" for i in range(len(BLOCKS))])
def test_python_api_examples(code: str) -> None:
    exec(compile(code, "docs/python-api.md", "exec"), {"__name__": "docs_example"})


pytest_plugins = ["pytester"]


def test_pytest_md_example_runs_in_parallel(pytester: pytest.Pytester) -> None:
    (example,) = re.findall(r"```python\n(.*?)```", (DOCS / "pytest.md").read_text(), re.S)
    pytester.makepyfile(test_example=example)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "-q")
    result.assert_outcomes(passed=3)
