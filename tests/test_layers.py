"""The crate's layers: every module of `src/` sits in one layer of the table below, imports only
its own layer or the ones under it, and no two modules import each other, directly or around a
ring. The table is the one in docs/architecture.md ("Layers"); a module added without a row, an
upward import or a cycle fails here with the import that breaks the rule.

An import is any path a module names (a `use` line, or a path written inline such as
`crate::server::tasks::Task`), outside comments, strings and `#[cfg(test)]` code; a `mod x;`
line is not one."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

# Bottom to top. A module belongs to the row naming the longest prefix of its path ("" is the
# crate root alone). Modules of one row may import each other (without a cycle).
LAYERS: list[tuple[str, list[str]]] = [
    ("foundations", ["error", "field_error", "fast_map", "lock", "jsnum", "field", "clock", "logging"]),
    ("JSON-RPC", ["jsonrpc"]),
    ("MCP protocol", ["protocol"]),
    ("traffic", ["traffic"]),
    (
        "server state",
        [
            "server::limits",
            "server::config",
            "server::sink",
            "server::outgoing",
            "server::scope",
            "server::session",
            "server::report_hook",
            "server::request_state",
            "server::rounds",
            "server::pagination",
            "server::uri_template",
            "server::frontmatter",
            "server::skills",
            "server::listeners",
            "server::seams",
            "server::tasks::task",
            "server::tasks::mailbox",
            "server::tasks::store",
            "server::tasks::gate",
            "server::tasks::wire",
        ],
    ),
    ("faults", ["faults"]),
    ("server model", ["server::model"]),
    (
        "serving",
        [
            "server::handler",
            "server::registry",
            "server::context",
            "server::exchange",
            "server::serve",
            "server::seamed",
            "server::dispatch",
            "server::stateless",
            "server::methods",
            "server::tasks",
            "server::listen",
        ],
    ),
    ("server", ["server"]),
    ("catalogs", ["catalog"]),
    ("replay", ["replay"]),
    ("transports", ["transport"]),
    ("options", ["options"]),
    ("command line", ["cli"]),
    ("fuzz targets", ["fuzzing"]),
    ("binding", ["python"]),
    ("crate root", ["", "main"]),
]

PATH = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*"


def modules(src: Path) -> dict[tuple[str, ...], Path]:
    """Every module of the crate under `src`, by path (`("server", "session")`)."""
    found = {}
    for file in src.rglob("*.rs"):
        parts = list(file.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib"):
            parts = parts[:-1]
        found[tuple(parts)] = file
    return found


def code_of(text: str) -> str:
    """The module's code as the layers see it: no test code, comments, strings or `mod` lines."""
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return re.sub(r"\bmod\s+\w+\s*;", "", text)


def resolve(mod: tuple[str, ...], segments: list[str], known: dict[tuple[str, ...], Path]) -> tuple[str, ...] | None:
    """The module a path names (its longest prefix that is a module), or None for a path that
    leaves the crate (`std::`, `serde_json::`, ...)."""
    if segments[0] == "crate":
        current: list[str] = []
        segments = segments[1:]
    elif segments[0] in ("super", "self"):
        current = list(mod)
        while segments and segments[0] in ("super", "self"):
            if segments[0] == "super":
                current = current[:-1]
            segments = segments[1:]
    elif (*mod, segments[0]) in known:
        current = list(mod)  # a child named without `self::`
    else:
        return None
    for segment in segments:
        if (*current, segment) not in known:
            break
        current.append(segment)
    return tuple(current)


def inline_modules(code: str) -> list[tuple[int, int, str]]:
    """The spans of inline modules (`mod name { ... }`) in `code`: paths inside one are
    resolved from it (its `super` is the file's module)."""
    spans = []
    for found in re.finditer(r"\bmod\s+(\w+)\s*\{", code):
        depth, i = 1, found.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        spans.append((found.end(), i, found.group(1)))
    return spans


def imports(src: Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Module -> the modules it names."""
    known = modules(src)
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = defaultdict(set)
    for mod, file in known.items():
        code = code_of(file.read_text(encoding="utf-8"))
        inline = inline_modules(code)

        def base(at: int, mod: tuple[str, ...] = mod, inline: list[tuple[int, int, str]] = inline) -> tuple[str, ...]:
            return next(((*mod, name) for start, end, name in inline if start <= at < end), mod)

        paths: list[tuple[int, list[str]]] = []
        for group in re.finditer(r"(?<![\w:])(" + PATH + r")::\{([^{}]*)\}", code):
            for item in group.group(2).split(","):
                item = item.strip().split(" as ")[0].strip()
                if item:
                    segments = group.group(1).split("::") + [s for s in item.split("::") if s != "self"]
                    paths.append((group.start(), segments))
        for path in re.finditer(r"(?<![\w:])(" + PATH + r")(?!\w)(?!::[A-Za-z_{])", code):
            segments = path.group(1).split("::")
            if len(segments) > 1:
                paths.append((path.start(), segments))
        for at, segments in paths:
            target = resolve(base(at), segments, known)
            if target is not None and target != mod:
                edges[mod].add(target)
    return edges


def layer_of(mod: tuple[str, ...], layers: list[tuple[str, list[str]]]) -> int | None:
    """The index of the row whose longest prefix names `mod`."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            parts = tuple(prefix.split("::")) if prefix else ()
            matches = mod[: len(parts)] == parts if parts else mod == ()  # "": the root only
            if matches and (best is None or len(parts) > best[1]):
                best = (index, len(parts))
    return None if best is None else best[0]


def name(mod: tuple[str, ...]) -> str:
    return "::".join(mod) or "crate"


def violations(src: Path, layers: list[tuple[str, list[str]]]) -> list[str]:
    """Every break of the rules: a module in no row, an import of a higher row, and each import
    cycle (a parent module that names a child its child names back is one)."""
    known = modules(src)
    edges = imports(src)
    found = []
    for mod in sorted(known):
        if layer_of(mod, layers) is None:
            found.append(f"{name(mod)} is in no layer")
    for mod in sorted(edges):
        here = layer_of(mod, layers)
        for target in sorted(edges[mod]):
            there = layer_of(target, layers)
            if here is not None and there is not None and there > here:
                found.append(
                    f"upward import: {name(mod)} ({layers[here][0]}) names {name(target)} ({layers[there][0]})"
                )
    # Cycles: Tarjan's strongly connected components.
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    on_stack: set[tuple[str, ...]] = set()
    counter = [0]

    def visit(v: tuple[str, ...]) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            ring = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                ring.append(w)
                if w == v:
                    break
            if len(ring) > 1:
                found.append("import cycle: " + ", ".join(sorted(name(m) for m in ring)))

    for v in sorted(known):
        if v not in index:
            visit(v)
    return found


def test_the_crate_is_layered_without_cycles() -> None:
    assert violations(SRC, LAYERS) == []


def write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return root


TOY_LAYERS = [("low", ["low"]), ("high", ["high"]), ("root", [""])]


def test_an_upward_import_fails(tmp_path: Path) -> None:
    src = write(tmp_path, {"lib.rs": "mod low; mod high;", "low.rs": "use crate::high::Thing;", "high.rs": ""})
    assert violations(src, TOY_LAYERS) == ["upward import: low (low) names high (high)"]


def test_a_grouped_or_nested_upward_import_fails(tmp_path: Path) -> None:
    src = write(
        tmp_path,
        {
            "lib.rs": "mod low; mod high;",
            "low.rs": "use crate::{high::X};\nuse crate::high::deep::{Y, Z};",
            "high/mod.rs": "pub mod deep;",
            "high/deep.rs": "",
        },
    )
    assert violations(src, TOY_LAYERS) == [
        "upward import: low (low) names high (high)",
        "upward import: low (low) names high::deep (high)",
    ]


def test_a_cycle_fails(tmp_path: Path) -> None:
    src = write(
        tmp_path,
        {
            "lib.rs": "mod low;",
            "low/mod.rs": "mod a; mod b;",
            "low/a.rs": "use super::b::B;\npub struct A;",
            "low/b.rs": "pub struct B(crate::low::a::A);",
        },
    )
    assert violations(src, TOY_LAYERS) == ["import cycle: low::a, low::b"]


def test_test_code_comments_and_strings_do_not_count(tmp_path: Path) -> None:
    src = write(
        tmp_path,
        {
            "lib.rs": "mod low; mod high;",
            "low.rs": (
                '// crate::high::X\nconst S: &str = "crate::high::X";\n#[cfg(test)]\nmod tests { use crate::high::X; }'
            ),
            "high.rs": "use crate::low::S;",
        },
    )
    assert violations(src, TOY_LAYERS) == []


@pytest.mark.parametrize("module", ["server::dispatch", "transport::http::mcp"])
def test_every_named_module_exists(module: str) -> None:
    assert tuple(module.split("::")) in modules(SRC)
