"""The MCP Apps checks (``apps.*``, docs/apps.md): what the server saw of a host of the ``apps``
catalog's views, and what the views saw of it from inside its iframe.

The server's vantage: whether the host declared the UI extension with the apps MIME type (in
``initialize``, or in 2026-07-28 on every request), whether it read the view of each tool it
called (before the call: a prefetch), whether the view's calls came on the model's session, and
whether a view posted results. The view's vantage: each check a view posted through
``apps_submit_results`` becomes ``apps.view.<id>``, merged over the views and variants the host
rendered (a failure anywhere fails it, and the detail names where).

A client that never declared the extension, read a ``ui://`` resource or posted a view's results
is no MCP Apps host: it gets none of these checks (``not applicable`` in a matrix with a host)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..traffic import TrafficRecord
from .model import Check, Family, Status, meta, params, result, verdict

if TYPE_CHECKING:
    from ..traffic import TrafficView
    from .result import Report

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SUBMIT = "apps_submit_results"

SERVER_CHECKS = {
    "apps.declared": f"declares the UI extension with mimeTypes [{MIME}]",
    "apps.declared_every_request": "declares the UI extension on every request (2026-07-28)",
    "apps.resource_read": "reads the ui:// view of each tool it calls (resources/read)",
    "apps.same_session": "the view's calls come on the model's session (handshake era)",
    "apps.view_results": "a view rendered and posted its results (apps_submit_results)",
}
"""The checks the server's vantage gives, in report order."""

VIEW_CHECKS = {
    "handshake.result_fields": "ui/initialize's result has protocolVersion, hostInfo, hostCapabilities, hostContext",
    "handshake.quiet_before_initialized": "the host sends nothing to the view before ui/notifications/initialized",
    "handshake.malformed_refused": "a ui/initialize without appCapabilities is refused",
    "input.tool_input_once": "tool-input arrives exactly once",
    "input.before_result": "tool-input arrives before tool-result",
    "input.partial_stops": "tool-input-partial stops once tool-input is sent",
    "result.nonce": "tool-result carries the call's result intact (the nonce three ways)",
    "result.cancelled": "a cancelled call is reported with tool-cancelled",
    "proxy.app_only_allowed": "the view may call an app-only tool",
    "proxy.model_only_refused": "the view's call to a model-only tool is refused",
    "proxy.unknown_tool_error": "the view's call to an unknown tool is an error",
    "proxy.resources_read": "the view may read a resource (resources/read)",
    "proxy.logging": "the view may log (notifications/message)",
    "request.open_link": "ui/open-link is answered",
    "request.message": "ui/message is answered",
    "request.update_model_context": "ui/update-model-context is answered",
    "request.display_mode": "ui/request-display-mode answers a mode the view declared",
    "request.display_mode_undeclared": "a mode the view did not declare is not granted",
    "request.download_file": "ui/download-file is answered",
    "context.host_context_merged": "host-context-changed arrives and is merged",
    "context.size_changed_obeyed": "the iframe is resized after size-changed",
    "sandbox.proxy_frame": "a sandbox proxy frame sits between the host and the view",
    "sandbox.distinct_origin": "the view's origin is not the host's",
    "csp.connect_declared": "the declared connect origin is reachable as declared",
    "csp.connect_undeclared": "an undeclared origin is blocked (connect-src)",
    "csp.resource_script": "a script from resourceDomains loads as declared",
    "csp.frame": "a frame from frameDomains loads as declared",
    "permissions.allow": "the declared permissions are allowed to the iframe",
    "teardown.received": "ui/resource-teardown reaches the view",
    "teardown.waited": "the host waits for the view's teardown answer",
    "era2026.input_required": "a view's call that needs input completes (2026-07-28)",
    "era2026.task": "a view's call that may run as a task completes",
    "negative.no_handshake_quiet": "a view that delays its handshake hears nothing before it",
    "negative.malformed_survived": "malformed JSON-RPC from a view does not break the bridge",
    "negative.unknown_method_32601": "an unknown ui/ request is answered -32601",
    "negative.early_calls_refused": "a view's call before its handshake is not forwarded",
    "negative.size_flood_survived": "500 size-changed at once do not break the bridge",
    "negative.teardown_never_acked": "a view that never answers teardown is torn down anyway",
}
"""The checks the views post (their ids without the ``apps.view.`` prefix), in report order."""

ORDER = [*SERVER_CHECKS, *(f"apps.view.{id}" for id in VIEW_CHECKS)]
"""Every ``apps.*`` check in report order (a view's unknown ids come after them)."""

HANDSHAKE_ONLY = ("apps.same_session",)
STATELESS_ONLY = ("apps.declared_every_request",)


def declared_ui(capabilities: Any) -> dict[str, Any] | None:
    """The UI extension's settings in a client's `capabilities` (None: not declared)."""
    if not isinstance(capabilities, dict):
        return None
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION) if isinstance(extensions, dict) else None
    return settings if isinstance(settings, dict) else None


LINKED_TEXT = re.compile(r"^everything-mcp apps: \S+ for (\S+); nonce [0-9a-f]+; correlation ([0-9a-f]+)$")
"""The text of a linked tool's result (the catalog's ``linked_result``): its view and correlation."""


def linked_call(answer: dict[str, Any]) -> tuple[str, str] | None:
    """(correlation id, view URI) of a linked tool's result: from ``structuredContent``, else
    from its text (the result variants without structured content)."""
    structured = answer.get("structuredContent")
    if isinstance(structured, dict):
        correlation, uri = structured.get("correlationId"), structured.get("resourceUri")
        if isinstance(correlation, str) and isinstance(uri, str):
            return correlation, uri
    content = answer.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    found = LINKED_TEXT.match(text) if isinstance(text, str) else None
    return (found.group(2), found.group(1)) if found else None


def has_mime(settings: dict[str, Any]) -> bool:
    """Whether the extension's settings list the apps MIME type."""
    mimes = settings.get("mimeTypes")
    return isinstance(mimes, list) and MIME in mimes


class Apps(Family):
    """The ``apps.*`` checks (see the module's docstring)."""

    routes = frozenset({("in", "request")})

    def __init__(self) -> None:
        self.declared: int | None = None
        """The first request that declared the extension (with the MIME type or not)."""
        self.without_mime: int | None = None
        """The first declaration without the apps MIME type."""
        self.mimes: Any = None
        self.stateless = 0
        """2026-07-28 requests seen."""
        self.bare: list[int] = []
        """2026-07-28 requests without the extension, after one declared it (the first few)."""
        self.bare_count = 0
        self.reads: dict[str, list[int]] = {}
        """``resources/read`` of ``ui://`` URIs: their seqs (the first few), by URI."""
        self.calls: dict[str, tuple[int, str, str]] = {}
        """The linked tools' answered calls by correlation id: (seq, connection, view URI)."""
        self.submissions: list[tuple[int, str, dict[str, Any]]] = []
        """The views' submissions: (seq, connection, arguments)."""

    def add(self, r: TrafficRecord) -> None:
        method = r.method or ""
        if method == "initialize":
            self._declaration(r, params(r).get("capabilities"))
        elif r.era != "handshake":
            self.stateless += 1
            settings = self._declaration(r, meta(r).get(CAPABILITIES))
            if settings is None and self.declared is not None:
                self.bare_count += 1
                if len(self.bare) < 8:
                    self.bare.append(r.seq)
        if method == "resources/read":
            uri = params(r).get("uri")
            if isinstance(uri, str) and uri.startswith("ui://"):
                seqs = self.reads.setdefault(uri, [])
                if len(seqs) < 8:
                    seqs.append(r.seq)
        elif method == "tools/call" and params(r).get("name") == SUBMIT:
            arguments = params(r).get("arguments")
            if isinstance(arguments, dict):
                self.submissions.append((r.seq, r.conn, arguments))

    def _declaration(self, r: TrafficRecord, capabilities: Any) -> dict[str, Any] | None:
        settings = declared_ui(capabilities)
        if settings is not None:
            if self.declared is None:
                self.declared = r.seq
            if not has_mime(settings) and self.without_mime is None:
                self.without_mime = r.seq
                self.mimes = settings.get("mimeTypes")
        return settings

    def answered(self, request: TrafficRecord, answer: TrafficRecord) -> None:
        if request.method == "tools/call":
            linked = linked_call(result(answer))
            if linked is not None:
                self.calls[linked[0]] = (request.seq, request.conn, linked[1])

    def host(self) -> bool:
        """Whether the client is an MCP Apps host (see the module's docstring)."""
        return self.declared is not None or bool(self.reads) or bool(self.submissions)

    def finish(self, client: Any) -> list[Check]:
        if not self.host():
            return []
        era = client.key[2]
        checks = [self._declared()]
        if era != "handshake":
            checks.append(self._every_request())
        checks.append(self._read())
        if era != "stateless":
            checks.append(self._session())
        checks.append(
            verdict(
                "apps.view_results",
                SERVER_CHECKS["apps.view_results"],
                [seq for seq, _, _ in self.submissions[:8]],
                detail=f"{len(self.submissions)} submissions" if self.submissions else "",
            )
        )
        return checks + self._views()

    def _declared(self) -> Check:
        id, description = "apps.declared", SERVER_CHECKS["apps.declared"]
        if self.declared is None:
            return Check(id, description, "fail", (), "read a ui:// view without declaring the extension")
        if self.without_mime is not None:
            return Check(id, description, "fail", (self.without_mime,), f"mimeTypes: {self.mimes!r}")
        return Check(id, description, "pass", (self.declared,))

    def _every_request(self) -> Check:
        id, description = "apps.declared_every_request", SERVER_CHECKS["apps.declared_every_request"]
        if not self.stateless or self.declared is None:
            return Check(id, description, "not exercised")
        if self.bare_count:
            detail = f"{self.bare_count} of {self.stateless} requests without it after it was declared"
            return Check(id, description, "fail", tuple(self.bare), detail)
        return Check(id, description, "pass", (self.declared,), f"{self.stateless} requests")

    def _read(self) -> Check:
        id, description = "apps.resource_read", SERVER_CHECKS["apps.resource_read"]
        views = {uri: seq for seq, _, uri in sorted(self.calls.values()) if uri.startswith("ui://")}
        if not views:
            return Check(id, description, "not exercised")
        unread = [uri for uri in views if uri not in self.reads]
        prefetched = [uri for uri, seq in views.items() if uri in self.reads and self.reads[uri][0] < seq]
        proof = tuple(sorted({self.reads[u][0] for u in views if u in self.reads} | set(views.values())))[:8]
        parts = [f"{len(views) - len(unread)} of {len(views)} views read"]
        if prefetched:
            parts.append(f"{len(prefetched)} before the call (prefetch)")
        reread = [u for u in views if len(self.reads.get(u, ())) > 1]
        if reread:
            parts.append(f"{len(reread)} read again")
        if unread:
            parts.append("never read: " + ", ".join(unread[:3]))
        return Check(id, description, "fail" if unread else "pass", proof, "; ".join(parts))

    def _session(self) -> Check:
        id, description = "apps.same_session", SERVER_CHECKS["apps.same_session"]
        paired = [
            (seq, conn, self.calls[args["correlationId"]])
            for seq, conn, args in self.submissions
            if isinstance(args.get("correlationId"), str) and args["correlationId"] in self.calls
        ]
        if not paired:
            return Check(id, description, "not exercised")
        apart = [(seq, conn, call) for seq, conn, call in paired if conn != call[1]]
        if apart:
            seq, conn, (call_seq, call_conn, _) = apart[0]
            detail = f"the model's call on {call_conn}, the view's on {conn}"
            return Check(id, description, "fail", (call_seq, seq), detail)
        seq, _, (call_seq, _, _) = paired[0]
        return Check(id, description, "pass", (call_seq, seq))

    def _views(self) -> list[Check]:
        """Each check the views posted, merged over views and variants (later submissions of a
        view replace its earlier ones check by check)."""
        latest: dict[tuple[str, str, str], tuple[int, str, str]] = {}
        for seq, _, args in self.submissions:
            where = (str(args.get("view", "?")), str(args.get("variant", "default")))
            for item in args.get("checks") or ():
                if isinstance(item, dict) and isinstance(item.get("id"), str):
                    posted = item.get("status")
                    if posted in ("pass", "fail", "not exercised"):
                        latest[(*where, item["id"])] = (seq, str(posted), str(item.get("evidence", "")))
        merged: dict[str, list[tuple[str, int, str, str]]] = {}
        for (view, variant, id), (seq, posted, evidence) in latest.items():
            label = view if variant == "default" else f"{view}/{variant}"
            merged.setdefault(id, []).append((label, seq, posted, evidence))
        checks = []
        for id in [*[i for i in VIEW_CHECKS if i in merged], *sorted(set(merged) - set(VIEW_CHECKS))]:
            seen = merged[id]
            failed = [s for s in seen if s[2] == "fail"]
            passed = [s for s in seen if s[2] == "pass"]
            status: Status = "fail" if failed else "pass" if passed else "not exercised"
            shown = failed or passed or seen
            detail = "; ".join(f"{label}: {evidence}" if evidence else label for label, _, _, evidence in shown[:3])
            if len(shown) > 3:
                detail += f"; and {len(shown) - 3} more"
            proof = tuple(sorted({s[1] for s in shown}))[:8] if status != "not exercised" else ()
            description = VIEW_CHECKS.get(id, "a check the view posted")
            checks.append(Check(f"apps.view.{id}", description, status, proof, detail))
        return checks


class AppsResults:
    """``srv.apps``: the ``apps.*`` checks of the server's MCP Apps host, read from a fresh
    report each time (so a test waits for a view's submission, then reads)."""

    def __init__(self, report: Callable[[], Report], traffic: TrafficView) -> None:
        self._report = report
        self._traffic = traffic

    def wait(self, phase: str = "final", timeout: float = 20.0, **arguments: Any) -> TrafficRecord:
        """The first submission of a view in `phase` (``initial``, ``final``, ``teardown``) whose
        arguments contain `arguments` (``view="negative/malformed"``, ``variant="no-csp"``),
        waiting up to `timeout` seconds; an AssertionError with the traffic otherwise."""
        want = {"phase": phase, **arguments}

        def posted(r: TrafficRecord) -> bool:
            got = params(r).get("arguments")
            return isinstance(got, dict) and all(got.get(k) == v for k, v in want.items())

        return self._traffic.wait_for("tools/call", timeout, where=posted, name=SUBMIT)

    def results(self, client: str | None = None) -> dict[str, Check]:
        """The host's ``apps.*`` checks by id (the one host, or the host named `client`); a
        LookupError naming the clients when there is no such host or several."""
        return self._report().apps_host(client).apps()

    def assert_checks(self, passed: Iterable[str] = (), failed: Iterable[str] = (), client: str | None = None) -> None:
        """Fails with the host's apps checks unless each of `passed` passed and each of `failed`
        failed (:meth:`everything_mcp.report.ClientReport.assert_apps`)."""
        self._report().apps_host(client).assert_apps(passed, failed)
