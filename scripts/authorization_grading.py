"""The official conformance suite grades the auth lab's authorization server (docs/auth.md):
`conformance authorization` checks the metadata endpoint and runs the authorization code grant
with PKCE against it. The suite waits for a person's browser to come back to its callback; the
lab approves at once, so this script plays the browser: it reads the URL the suite prints,
follows the lab's redirect to the suite's callback, and lets the suite redeem the code.

Usage: python scripts/authorization_grading.py CONFORMANCE_BIN   (from scripts/conformance.sh)
Exits non-zero when a check fails, warns, or the run does not finish in time."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import urllib.request
from typing import Any

TIMEOUT = 60.0


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hands the 302 back instead of following it: its Location is the browser's next stop."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def main(conformance: str) -> int:
    server = subprocess.Popen(
        [sys.executable, "-m", "everything_mcp", "http", "--port", "0", "--auth", "oauth", "--no-lab"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        base = json.loads(server.stderr.readline())["base_url"]
        port = free_port()
        callback = f"http://127.0.0.1:{port}/callback"
        metadata = json.dumps({"redirect_uris": [callback], "token_endpoint_auth_method": "none"}).encode()
        request = urllib.request.Request(
            f"{base}/register", data=metadata, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            client = json.load(answer)["client_id"]
        arguments = ["--url", base, "--client-id", client, "--resource", f"{base}/mcp", "-p", str(port)]
        suite = subprocess.Popen(
            [conformance, "authorization", *arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert suite.stdout is not None
        # A suite that hangs is killed, which ends its output and so the loop below.
        watchdog = threading.Timer(TIMEOUT, suite.kill)
        watchdog.start()
        printed: list[str] = []
        location = ""
        for line in suite.stdout:
            printed.append(line)
            if re.match(rf"{re.escape(base)}/authorize\?", line.strip()):
                opener = urllib.request.build_opener(NoRedirect)
                try:
                    opener.open(line.strip(), timeout=TIMEOUT)
                except urllib.error.HTTPError as redirect:
                    location = redirect.headers["Location"]
                else:
                    raise SystemExit("the lab's /authorize did not redirect")
            elif line.startswith("Callback server started") and location:
                with urllib.request.urlopen(location, timeout=TIMEOUT) as back:
                    back.read()
        code = suite.wait(timeout=TIMEOUT)
        watchdog.cancel()
        output = "".join(printed)
        print(output, end="")
        if code != 0 or not re.search(r"^Total: \d+ passed, 0 failed", output, re.M) or "WARNING" in output:
            return 1
        return 0
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
