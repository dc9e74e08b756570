"""Record files (``--record``, docs/traffic-format.md) as the report reads them: a record at a
time, a line that is not a record named by its file and line (``FILE:LINE: …``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import MISSING, fields, replace
from pathlib import Path

from ..traffic import TrafficRecord

REQUIRED = tuple(f.name for f in fields(TrafficRecord) if f.default is MISSING and f.default_factory is MISSING)
"""The members every record has (the later ones, ``era``, ``task``, ``fault``…, may be absent)."""

KNOWN = frozenset(f.name for f in fields(TrafficRecord))

TYPES: dict[str, tuple[type, ...]] = {
    "seq": (int,),
    "conn": (str,),
    "transport": (str,),
    "kind": (str,),
    "raw": (str,),
    "http": (dict, type(None)),
}


class RecordError(ValueError):
    """A line of a record file that is not a record; its message starts with ``FILE:LINE:``."""


def parse_line(line: str, path: str | Path, number: int) -> TrafficRecord:
    """Line `number` of `path` as a record (:class:`RecordError` when it is not one)."""
    try:
        data = json.loads(line.strip())
    except ValueError as e:
        raise RecordError(f"{path}:{number}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}:{number}: not a traffic record (a JSON object; docs/traffic-format.md)")
    missing = [name for name in REQUIRED if name not in data]
    if missing:
        raise RecordError(f"{path}:{number}: not a traffic record: no {', '.join(missing)}")
    wrong = [name for name, types in TYPES.items() if not isinstance(data[name], types) or isinstance(data[name], bool)]
    if data["dir"] not in ("in", "out"):
        wrong.insert(0, "dir")
    if wrong:
        raise RecordError(f"{path}:{number}: not a traffic record: {', '.join(wrong)} of the wrong kind")
    return TrafficRecord(**{k: v for k, v in data.items() if k in KNOWN})


def read_records(path: str | Path, rename: tuple[str, int] | None = None) -> Iterator[TrafficRecord]:
    """The records of file `path`, in order; with `rename` (a name, an offset), each one's
    connection named ``name:conn`` and its seq moved on by the offset."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise RecordError(f"{path}:{number}: not UTF-8 text ({e.reason})") from None
            if not line.strip():
                continue
            record = parse_line(line, path, number)
            if rename is not None:
                name, offset = rename
                record = replace(record, seq=record.seq + offset, conn=f"{name}:{record.conn}")
            yield record


def each_file(paths: Iterable[str]) -> Iterator[tuple[str, Iterator[TrafficRecord]]]:
    """Each file and its records, read as they are taken; with several files, each file's
    ``seq`` numbers go on from the previous file's last (so one page can show them all) and its
    connections are named ``file:conn``. A file's records must be taken before the next file's."""
    paths = list(paths)
    last = 0
    for path in paths:
        if len(paths) == 1:
            yield path, read_records(path)
            continue

        def renamed(path: str = path, offset: int = last) -> Iterator[TrafficRecord]:
            nonlocal last
            for record in read_records(path, (Path(path).name, offset)):
                last = record.seq
                yield record

        yield path, renamed()
