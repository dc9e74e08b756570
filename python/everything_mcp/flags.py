"""The command line's option flags: one per server and HTTP option (``_core.SERVER_OPTIONS``,
``_core.HTTP_OPTIONS``), each storing it under the option's own name, and the value types they
parse. Imported only when a parser is built: a bare ``stdio`` (what clients spawn) builds none."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:
    import argparse

LOG_LEVELS = ("off", "error", "warn", "info", "debug", "trace")
_LOG_ALIASES = {"warning": "warn"}
DEFAULT_PORT = 3001
"""The reference server's default port (also read from ``PORT``)."""
LAB_KEEP_TRAFFIC = 100_000
"""Records an HTTP server with the lab page keeps in memory (unless ``--keep-traffic`` is
given), within ``--keep-traffic-bytes``: the page and ``GET /_control/report`` read them."""


def _log_level(value: str) -> str:
    import argparse

    level = _LOG_ALIASES.get(value.lower(), value.lower())
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"invalid level {value!r} (choose from {', '.join(LOG_LEVELS)})")
    return level


def _count(value: str) -> int:
    """A non-negative integer option."""
    import argparse

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {n}")
    return n


def _tool_scope(value: str) -> dict[str, str]:
    """``TOOL=SCOPE``."""
    import argparse

    tool, sep, scope = value.partition("=")
    if not (sep and tool and scope):
        raise argparse.ArgumentTypeError(f"expected TOOL=SCOPE, got {value!r}")
    return {tool: scope}


def _client(value: str) -> dict[str, Any]:
    """A pre-registered client: its metadata as JSON, or ``ID:SECRET`` (a confidential client of
    the client credentials grant, authenticating with HTTP Basic)."""
    import argparse

    if value.lstrip().startswith("{"):
        try:
            client = json.loads(value)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"not JSON client metadata: {e}") from None
        if not isinstance(client, dict):
            raise argparse.ArgumentTypeError("client metadata is a JSON object")
        return client
    client_id, sep, secret = value.partition(":")
    if not (sep and client_id and secret):
        raise argparse.ArgumentTypeError(f"expected ID:SECRET or JSON client metadata, got {value!r}")
    return {
        "client_id": client_id,
        "client_secret": secret,
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": "client_secret_basic",
    }


def _client_document(value: str) -> dict[str, Any]:
    """``URL=FILE``: a Client ID Metadata Document read from FILE, for the client whose id is URL."""
    import argparse

    url, sep, path = value.partition("=")
    if not (sep and url and path):
        raise argparse.ArgumentTypeError(f"expected URL=FILE, got {value!r}")
    try:
        with open(path, encoding="utf-8") as f:
            return {url: json.load(f)}
    except (OSError, ValueError) as e:
        raise argparse.ArgumentTypeError(f"{path}: {e}") from None


def _merge_action() -> type[argparse.Action]:
    """An argparse action that merges each value (a dict) into the option's dict (defined on
    demand: a bare `stdio` imports no argparse)."""
    import argparse

    class Merge(argparse.Action):
        def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
            merged = dict(getattr(namespace, self.dest, None) or {})
            merged.update(values)
            setattr(namespace, self.dest, merged)

    return Merge


def _catalogs(value: str) -> list[str]:
    import argparse

    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in _core.CATALOGS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown catalog {value!r} (choose from {', '.join(_core.CATALOGS)})")
    return names


def _port(value: str) -> int:
    import argparse

    n = _count(value)
    if n > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, got {n}")
    return n


def _default_port() -> int:
    try:
        return int(os.environ.get("PORT", DEFAULT_PORT))
    except ValueError:
        return DEFAULT_PORT


def _millis(value: str) -> float | None:
    """A whole number of milliseconds as seconds; 0 is unset."""
    n = _count(value)
    return n / 1000 if n else None


def _add_server_options(p: argparse.ArgumentParser) -> None:
    """One flag per server option (``_core.SERVER_OPTIONS``, but those the CLI fixes), each
    storing it under the option's name; ``tests/test_cli.py`` checks that none is missing. Their
    defaults are the CLI's (``cli._server_defaults``), set by the parser."""
    import argparse

    defaults = _core.DEFAULTS
    p.add_argument("--record", metavar="FILE", help="append every frame in and out to FILE as JSON lines")
    p.add_argument(
        "--keep-traffic",
        metavar="N",
        type=_count,
        help="keep the newest N records in memory for the control API's GET /_control/traffic (default: 0, none;"
        f" {LAB_KEEP_TRAFFIC:,} with the lab page)",
    )
    p.add_argument(
        "--keep-traffic-bytes",
        metavar="BYTES",
        type=_count,
        help="and no more than BYTES of them: the oldest are dropped first, and counted"
        f" (default: {defaults['keep_traffic_bytes']:,}; GET /_control/traffic/stats)",
    )
    p.add_argument(
        "--faults-preset",
        metavar="NAME",
        action="append",
        dest="faults_preset",
        help="put a named fault preset in force (repeatable): flaky-network, slow-server, version-skew, ignore-cancel",
    )
    p.add_argument("--faults-seed", metavar="N", type=_count, help="the seed of the presets that draw (default: 0)")
    p.add_argument(
        "--faults",
        metavar="FILE",
        help='put the fault rules of FILE in force (a JSON array of rules, or {"rules": [...]}; docs/faults.md)',
    )
    p.add_argument(
        "--log-level",
        metavar="LEVEL",
        type=_log_level,
        help=f"diagnostics on stderr: {', '.join(LOG_LEVELS)} (default: warn)",
    )
    p.add_argument(
        "--revision",
        metavar="REV",
        action="append",
        dest="revisions",
        choices=_core.SUPPORTED_REVISIONS,
        help="accept only this protocol revision, repeatable (default: all)",
    )
    p.add_argument(
        "--era",
        choices=_core.ERAS,
        help="serve the handshake era (2024-11-05 … 2025-11-25), the stateless era (2026-07-28)"
        f" or both side by side; narrows --revision (default: {defaults['era']})",
    )
    p.add_argument("--page-size", metavar="N", type=_count, help="items per */list page (default: one page)")
    p.add_argument(
        "--max-message-bytes",
        metavar="N",
        type=_count,
        help="largest accepted frame or HTTP body; larger ones are refused"
        f" (default: {defaults['max_message_bytes'] // 2**20} MiB)",
    )
    p.add_argument("--server-name", metavar="NAME", dest="name", help=f"serverInfo.name (default: {defaults['name']})")
    p.add_argument(
        "--server-title",
        metavar="TITLE",
        dest="title",
        help="serverInfo.title (default: ours, none with a --server-name of your own)",
    )
    p.add_argument(
        "--server-version",
        metavar="VERSION",
        dest="version",
        help=f"serverInfo.version (default: {defaults['version']})",
    )
    p.add_argument(
        "--instructions", metavar="TEXT", help="the instructions of the initialize result (default: the catalog's)"
    )
    p.add_argument(
        "--worker-threads",
        metavar="N",
        type=_count,
        help=f"threads of the server's runtime (default {defaults['worker_threads']})",
    )
    p.add_argument(
        "--tick-ms",
        metavar="MS",
        type=_millis,
        dest="tick",
        help="interval of every periodic catalog timer (and of the everything catalog's task stages and"
        " polls), instead of the reference's 1-15 s",
    )
    p.add_argument(
        "--update-delay",
        metavar="SECONDS",
        type=float,
        help="review-lab: seconds from a subscription to the update"
        f" ($MCP_TEST_UPDATE_DELAY_SECONDS, default {defaults['update_delay']:g})",
    )
    p.add_argument(
        "--send-list-changed",
        action=argparse.BooleanOptionalAction,
        help="review-lab: also send resources/list_changed with the update ($MCP_TEST_SEND_LIST_CHANGED=true)",
    )
    p.add_argument(
        "--apps",
        choices=("gate", "always", "off"),
        help="apps catalog: who sees the views' _meta.ui and the app-only tools: gate (a host that declared"
        f" the UI extension), always, off (default: {defaults['apps']})",
    )
    p.add_argument(
        "--expose-env",
        action="store_const",
        const=True,
        help="get-env/printEnv show secret-looking variables instead of <redacted>",
    )
    p.add_argument(
        "--task-ttl",
        metavar="SECONDS",
        type=float,
        help=f"how long a task is kept after it is created or settles (default {defaults['task_ttl']:g})",
    )
    p.add_argument(
        "--task-poll-interval",
        metavar="SECONDS",
        type=float,
        help=f"the pollInterval suggested to clients polling a task (default {defaults['task_poll_interval']:g})",
    )
    p.add_argument(
        "--clock",
        choices=["real", "manual"],
        help="the clock every timer runs on: real (default), or manual, moved only by"
        " POST /_control/clock/advance (docs/clock.md)",
    )
    p.add_argument(
        "--catalog",
        metavar="NAMES",
        action="extend",
        dest="catalogs",
        type=_catalogs,
        help=f"catalogs to serve, comma-separated or repeated: {', '.join(_core.CATALOGS)}"
        f" (default: {','.join(defaults['catalogs'])})",
    )


def _add_http_options(p: argparse.ArgumentParser) -> None:
    """The listener's address and one flag per HTTP option (``_core.HTTP_OPTIONS``), each storing
    it under the option's name."""
    import argparse

    defaults = _core.DEFAULTS
    p.add_argument("--host", help=f"address to bind (default: {defaults['host']})")
    p.add_argument(
        "--port",
        type=_port,
        default=_default_port(),
        help=f"port to bind; 0 picks a free one (default: $PORT or {DEFAULT_PORT})",
    )
    p.add_argument(
        "--strict-port",
        action="store_const",
        const=True,
        help="fail if the port is busy instead of trying the next 20",
    )
    p.add_argument(
        "--json-response",
        action="store_const",
        const=True,
        help="answer POSTed requests with application/json instead of an SSE stream",
    )
    p.add_argument(
        "--allow-host",
        metavar="HOST",
        action="append",
        dest="allow_hosts",
        help="also accept this Host (DNS-rebinding guard; repeatable; * for any)",
    )
    p.add_argument(
        "--allow-origin",
        metavar="ORIGIN",
        action="append",
        dest="allow_origins",
        help="also accept this Origin, e.g. https://app.example (repeatable; * for any)",
    )
    p.add_argument(
        "--max-sessions",
        metavar="N",
        type=_count,
        help=f"most concurrent sessions (default {defaults['max_sessions']})",
    )
    p.add_argument(
        "--session-timeout",
        metavar="SECONDS",
        type=float,
        dest="session_idle_timeout",
        help=f"end sessions idle this long; 0 never (default {defaults['session_idle_timeout']:g})",
    )
    p.add_argument(
        "--event-store",
        metavar="N",
        type=_count,
        dest="event_store_capacity",
        help=f"SSE events kept per session for Last-Event-ID resumption (default {defaults['event_store_capacity']})",
    )
    p.add_argument(
        "--sse-retry",
        metavar="SECONDS",
        type=float,
        help=f"the reconnection delay sent with each POST stream's first event (default {defaults['sse_retry']:g})",
    )
    p.add_argument(
        "--keepalive",
        metavar="SECONDS",
        type=float,
        help=f"interval of keepalive comments on open SSE streams (default {defaults['keepalive']:g})",
    )
    p.add_argument(
        "--no-standalone-stream",
        action="store_const",
        const=False,
        dest="standalone_stream",
        help="answer GET /mcp with 405 instead of opening a standalone SSE stream",
    )
    p.add_argument(
        "--no-control",
        action="store_const",
        const=False,
        dest="control",
        help="do not serve the control API at /_control/ (docs/control-api.md)",
    )
    p.add_argument(
        "--control-token",
        metavar="TOKEN",
        dest="control_token",
        help="every control API call must carry Authorization: Bearer TOKEN",
    )
    p.add_argument(
        "--auth",
        choices=("none", "bearer", "oauth"),
        help="protect the MCP endpoints: static bearer tokens (--token), or OAuth with the built-in authorization"
        " server (docs/auth.md); default none",
    )
    p.add_argument(
        "--token", metavar="T", action="append", dest="tokens", help="with --auth bearer: a token accepted (repeatable)"
    )
    p.add_argument(
        "--scope",
        metavar="S",
        action="append",
        dest="scopes",
        help="with --auth oauth: a scope the server knows and asks for (repeatable;"
        f" default {' '.join(defaults['scopes'])})",
    )
    p.add_argument(
        "--token-ttl",
        metavar="S",
        type=float,
        dest="token_ttl",
        help=f"with --auth oauth: access tokens' lifetime in seconds (default {defaults['token_ttl']:g})",
    )
    p.add_argument(
        "--tool-scope",
        metavar="TOOL=SCOPE",
        type=_tool_scope,
        action=_merge_action(),
        dest="tool_scopes",
        help="with --auth oauth: calling TOOL needs SCOPE beyond the --scope ones (403 insufficient_scope:"
        " scope step-up; repeatable)",
    )
    p.add_argument(
        "--issuer-path",
        metavar="PATH",
        dest="issuer_path",
        help="with --auth oauth: the issuer's path after the listener's base (/tenant1): its metadata is found by"
        " path insertion, its endpoints are under it",
    )
    p.add_argument(
        "--resource-metadata-path",
        metavar="PATH",
        dest="resource_metadata_path",
        help="with --auth oauth: serve the protected resource's metadata at this path too, and name it in the 401"
        " challenge",
    )
    p.add_argument(
        "--client",
        metavar="ID:SECRET|JSON",
        type=_client,
        action="append",
        dest="clients",
        help="with --auth oauth: a pre-registered client: ID:SECRET (client credentials, HTTP Basic) or its"
        " metadata as JSON with its client_id (repeatable)",
    )
    p.add_argument(
        "--client-document",
        metavar="URL=FILE",
        type=_client_document,
        action=_merge_action(),
        dest="client_documents",
        help="with --auth oauth: the Client ID Metadata Document of the client whose id is URL, read from FILE"
        " (repeatable; only loopback URLs are fetched)",
    )
    p.add_argument(
        "--consent",
        choices=("auto", "page"),
        help="with --auth oauth: approve authorization requests at once (auto, the default) or ask a person on a page",
    )
    p.add_argument(
        "--lab",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="serve the live lab page at /_lab/ (default: when bound to loopback; docs/report.md); it keeps"
        f" the newest {LAB_KEEP_TRAFFIC:,} records in memory (within --keep-traffic-bytes) unless --keep-traffic"
        " says otherwise",
    )
