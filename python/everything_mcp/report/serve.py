"""``python -m everything_mcp report FILE… --serve [--follow]``: the lab page for record files.

A stdio session has no HTTP listener of its own to serve the lab page from, so its record file
(``--record``) is watched here instead: a small loopback HTTP server serves the same page at
``/_lab/`` and the two control API endpoints it reads, ``GET /_control/traffic/stream`` (the
records as SSE events, resumable with ``since`` or ``Last-Event-ID``) and
``GET /_control/report``. With ``--follow`` the file is read as it grows, so the checklist
turns green while a person drives the agent. Nothing here drives a server: the page's buttons
need the server's own control API (``stdio --control-port N``, then ``/_lab/`` on that port).
"""

from __future__ import annotations

import bisect
import json
import os
import signal
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .. import _core
from ..traffic import TrafficRecord
from .files import RecordError, parse_line
from .result import Report

POLL_SECONDS = 0.2
"""How often a followed file is read for new lines (a file written by another process gives
no event the standard library can wait on)."""

KEEPALIVE_SECONDS = 15.0
"""Interval of keep-alive comments on an idle stream, as the server's own streams send them."""


class Watched:
    """The records of a file as it is read (or of several files, read once): the page's traffic
    and report. The report is folded as the records are read (:mod:`.fold`), so each call of
    ``GET /_control/report`` costs what the records since the last one cost."""

    def __init__(self, paths: list[str]) -> None:
        from .fold import ReportFold

        self.path = paths[0] if len(paths) == 1 else None
        self.records: list[TrafficRecord] = []
        self.fold = ReportFold()
        self.fixed: Report | None = None
        """The report of several files (each file's own, one client list)."""
        self.changed = threading.Condition()
        self.stopped = False
        self._offset = 0
        self._partial = ""
        self._line = 0
        """Lines of the file read so far (a bad one is named by its number)."""
        if self.path is None:
            from . import load_files, of_records

            # Several files: their seqs renumbered to follow one another, as `--html` does.
            files = load_files(paths)
            self.records = [r for records in files for r in records]
            self.fixed = of_records(files)

    def read_new(self, strict: bool = False) -> int:
        """Reads what the file gained since the last read (whole lines only); how many records
        that made. A line that is not a record is a :class:`RecordError` when `strict`, else
        named on stderr and skipped (a followed file goes on)."""
        if self.path is None:
            return 0
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                f.seek(self._offset)
                chunk = f.read()
                self._offset = f.tell()
        except FileNotFoundError:
            return 0  # a --record file not created yet: read once it is
        lines = (self._partial + chunk).split("\n")
        self._partial = lines.pop()
        added = []
        for line in lines:
            self._line += 1
            if not line.strip():
                continue
            try:
                added.append(parse_line(line, self.path, self._line))
            except RecordError as e:
                if strict:
                    raise
                print(f"everything-mcp: report: {e} (skipped)", file=sys.stderr, flush=True)
        if added:
            with self.changed:
                self.records.extend(added)
                for record in added:
                    self.fold.add(record)
                self.changed.notify_all()
        return len(added)

    def report(self) -> Report:
        """The report of the records read so far."""
        with self.changed:
            return self.fixed if self.fixed is not None else self.fold.finish()

    def since(self, seq: int, timeout: float) -> list[TrafficRecord] | None:
        """The records after ``seq``, waiting up to ``timeout`` for one; None once stopped."""
        with self.changed:
            self.changed.wait_for(lambda: self.stopped or bool(self.records and self.records[-1].seq > seq), timeout)
            if self.stopped:
                return None
            # Records are in seq order: the first after `seq` by bisection.
            return self.records[bisect.bisect_right(self.records, seq, key=lambda r: r.seq) :]

    def stop(self) -> None:
        """Ends every stream."""
        with self.changed:
            self.stopped = True
            self.changed.notify_all()


def _loopback(value: str) -> bool:
    """Whether a Host header or an Origin's host names this machine's loopback."""
    host = value.rsplit("://", 1)[-1]
    if host.startswith("["):
        host = host[1 : host.find("]")]
    else:
        host = host.split(":", 1)[0]
    return host in ("127.0.0.1", "localhost", "::1")


def handler(watched: Watched, files: list[str]) -> type[BaseHTTPRequestHandler]:
    """The request handler of a server watching `files`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # the CLI's stderr stays quiet
            pass

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if not self._guarded():
                return
            if url.path == "/_lab":
                self._answer(HTTPStatus.PERMANENT_REDIRECT, b"", [("Location", "/_lab/")])
            elif url.path == "/_lab/":
                headers = [("Content-Security-Policy", _core.LAB_POLICY), ("Cache-Control", "no-store")]
                self._answer(HTTPStatus.OK, _core.LAB_PAGE.encode(), headers, "text/html; charset=utf-8")
            elif url.path in ("/_control", "/_control/"):
                index = {
                    "api": 1,
                    "server": {"name": "everything-mcp report", "version": _core.__version__},
                    "watching": files,
                    "endpoints": ["GET /_control/", "GET /_control/report", "GET /_control/traffic/stream?since=SEQ"],
                }
                self._json(HTTPStatus.OK, index)
            elif url.path == "/_control/report":
                self._answer(HTTPStatus.OK, watched.report().dumps().encode(), [("Cache-Control", "no-store")])
            elif url.path == "/_control/traffic/stream":
                self._stream(url.query)
            else:
                self._refuse(HTTPStatus.NOT_FOUND, "no such endpoint: GET /_control/ lists them")

        def do_POST(self) -> None:
            if self._guarded():
                message = "this page watches record files; to drive a server, open /_lab/ on its own listener"
                self._refuse(HTTPStatus.NOT_IMPLEMENTED, message)

        do_DELETE = do_POST

        def _guarded(self) -> bool:
            """The DNS-rebinding guard: loopback Host and Origin only (`403` otherwise)."""
            origin = self.headers.get("Origin")
            if _loopback(self.headers.get("Host", "")) and (origin is None or _loopback(origin)):
                return True
            self._refuse(HTTPStatus.FORBIDDEN, "only loopback Host and Origin values are served")
            return False

        def _stream(self, query: str) -> None:
            try:
                after = int(self.headers.get("Last-Event-ID") or parse_qs(query).get("since", ["0"])[0])
            except ValueError:
                self._refuse(HTTPStatus.BAD_REQUEST, "since must be a record's seq (a whole number)")
                return
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.close_connection = True
            try:
                while (records := watched.since(after, KEEPALIVE_SECONDS)) is not None:
                    if not records:
                        self.wfile.write(b": keepalive\n\n")
                    else:
                        events = "".join(f"id: {r.seq}\ndata: {_line(r)}\n\n" for r in records)
                        self.wfile.write(events.encode())
                        after = records[-1].seq
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _json(self, status: HTTPStatus, body: Any) -> None:
            self._answer(status, json.dumps(body).encode())

        def _refuse(self, status: HTTPStatus, message: str) -> None:
            self._json(status, {"error": {"field": "", "message": message}})

        def _answer(
            self,
            status: HTTPStatus,
            body: bytes,
            headers: list[tuple[str, str]] | None = None,
            content_type: str = "application/json",
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers or []:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _line(record: TrafficRecord) -> str:
    """A record as one JSON line (the file's own line, re-encoded)."""
    from .webpage import record_json

    return json.dumps(record_json(record), ensure_ascii=False, separators=(",", ":"))


def serve_files(paths: list[str], port: int, follow: bool) -> int:
    """Serves the lab page for `paths` on ``127.0.0.1:port`` until SIGINT/SIGTERM; the CLI's
    exit code. Prints ``{"event": "listening", "transport": "lab", "url": …}`` on stderr."""
    if follow and len(paths) > 1:
        print("everything-mcp: report: --follow watches one file", file=sys.stderr)
        return 2
    missing = [p for p in paths if not follow and not os.path.exists(p)]
    if missing:
        print(f"everything-mcp: report: no such file: {missing[0]}", file=sys.stderr)
        return 2
    try:
        watched = Watched(paths)
        watched.read_new(strict=True)
    except (OSError, RecordError) as e:
        print(f"everything-mcp: report: {e}", file=sys.stderr)
        return 2
    try:
        httpd = ThreadingHTTPServer(("127.0.0.1", port), handler(watched, paths))
    except OSError as e:
        print(f"everything-mcp: report: {e}", file=sys.stderr)
        return 2
    httpd.daemon_threads = True
    done = threading.Event()

    def tail() -> None:
        while not done.wait(POLL_SECONDS):
            watched.read_new()

    if follow:
        threading.Thread(target=tail, name="everything-mcp-follow", daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/_lab/"
    print(json.dumps({"event": "listening", "transport": "lab", "url": url}), file=sys.stderr, flush=True)

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        httpd.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        done.set()
        watched.stop()
        httpd.server_close()
    return 0
