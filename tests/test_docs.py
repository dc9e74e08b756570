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


def test_eras_md_example_runs(pytester: pytest.Pytester) -> None:
    (example,) = re.findall(r"```python\n(.*?)```", (DOCS / "eras.md").read_text(), re.S)
    pytester.makepyfile(test_example=example)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-W", "ignore::DeprecationWarning")
    # Once per anyio backend the plugin parametrizes (asyncio, trio), never a failure.
    assert result.ret == 0 and result.parseoutcomes()["passed"] >= 1


ROOT = DOCS.parent
PATH_SPAN = re.compile(r"`((?:src|python|bench|tests|scripts)/[^`\s]*)(?: \([^`]*\))?`")
"""A backticked repository path, optionally followed by what to look for in it: `src/x.rs (fn)`."""


def expand_braces(path: str) -> list[str]:
    """`src/python/{server,errors}.rs` → `src/python/server.rs`, `src/python/errors.rs`."""
    match = re.search(r"\{([^{}]*)\}", path)
    if match is None:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [p for alt in match.group(1).split(",") for p in expand_braces(head + alt + tail)]


def doc_paths() -> list[tuple[str, str]]:
    """(document, path) for every repository path the README and docs/*.md name."""
    found = []
    for doc in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for span in PATH_SPAN.findall(doc.read_text()):
            found += [(doc.relative_to(ROOT).as_posix(), p) for p in expand_braces(span)]
    return found


def test_brace_lists_expand() -> None:
    assert expand_braces("src/python/{server,connection}.rs") == ["src/python/server.rs", "src/python/connection.rs"]
    assert expand_braces("src/{a,b}/{c,d}.rs") == ["src/a/c.rs", "src/a/d.rs", "src/b/c.rs", "src/b/d.rs"]
    spans = PATH_SPAN.findall("see `src/x.rs (drive)`, `python/` and `src/server/methods/*.rs`")
    assert spans == ["src/x.rs", "python/", "src/server/methods/*.rs"]


def test_documented_paths_exist() -> None:
    paths = doc_paths()
    assert len(paths) > 30, "the documentation names fewer paths than it does: is the pattern broken?"
    missing = [f"{doc}: {path}" for doc, path in paths if not any(ROOT.glob(path.rstrip("/")))]
    assert not missing, "paths named in the documentation that do not exist:\n" + "\n".join(missing)


def test_tasks_md_example_runs(pytester: pytest.Pytester) -> None:
    # The gate example drives a task through working → input_required → completed.
    (example,) = re.findall(r"```python\n(.*?)```", (DOCS / "tasks.md").read_text(), re.S)
    pytester.makepyfile(test_example=example)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
