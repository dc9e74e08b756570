#!/usr/bin/env bash
# Builds the MCP Apps test host (tests/apps_host/): installs pinned npm packages into
# .cache/apps-host (ignored by git) and bundles host.ts and sandbox.ts, with the static pages,
# into .cache/apps-host/dist/, which the browser tests serve (tests/apps_host/serve.py). The
# bundle holds everything: no network at runtime.
#
#   @modelcontextprotocol/ext-apps  the official AppBridge (host side of the View bridge)
#   @modelcontextprotocol/client    the official TypeScript MCP client (v2): AppBridge extends
#                                   its Protocol and takes its Client (ext-apps' peer
#                                   dependencies client and core ^2; core comes with client)
#   esbuild                         the bundler
#
# Usage: scripts/apps_host.sh   (again: a no-op while the sources, this script and the packages
#                               are those of the last build)
# Skips (exit 0) when the npm registry cannot be reached; fails on any other error.
set -euo pipefail
cd "$(dirname "$0")/.."

EXT_APPS=2.0.4
MCP_SDK=2.4.0
ESBUILD=0.28.2
cache=.cache/apps-host
src=tests/apps_host
dist=$cache/dist
mkdir -p "$cache/logs"
packages=("@modelcontextprotocol/ext-apps@$EXT_APPS" "@modelcontextprotocol/client@$MCP_SDK" "esbuild@$ESBUILD")

if [ ! -f "$cache/.installed" ] || [ "$(cat "$cache/.installed")" != "${packages[*]}" ]; then
  rc=0
  timeout 60 npm view --fetch-retries=1 "@modelcontextprotocol/ext-apps@$EXT_APPS" version >/dev/null \
    2>"$cache/logs/npm-view.err" || rc=$?
  if [ $rc -ne 0 ]; then
    # 124: no answer within 60 s (npm keeps retrying a refused or silent registry).
    if [ $rc -eq 124 ] || grep -qiE "ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|network|fetch failed" "$cache/logs/npm-view.err"; then
      echo "apps_host: the npm registry cannot be reached; SKIPPING the MCP Apps test host build" >&2
      cat "$cache/logs/npm-view.err" >&2
      exit 0
    fi
    cat "$cache/logs/npm-view.err" >&2
    exit 1
  fi
  [ -f "$cache/package.json" ] || echo '{"private":true}' > "$cache/package.json"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error --save-exact "${packages[@]}" \
    >"$cache/logs/install.log" 2>&1 || { cat "$cache/logs/install.log" >&2; exit 1; }
  echo "${packages[*]}" > "$cache/.installed"
fi

# Rebuild unless the last build was of exactly these sources, this script and these packages
# (their hashes in dist/.built) and every output is there.
sources=$(cat "$src"/*.ts "$src"/*.html scripts/apps_host.sh "$cache/.installed" | sha256sum | cut -d' ' -f1)
outputs_present() { for f in host.html host.js sandbox.html sandbox.js; do [ -f "$dist/$f" ] || return 1; done; }
if outputs_present && [ "$(cat "$dist/.built" 2>/dev/null)" = "$sources" ]; then
  echo "apps_host: $dist is up to date"
  exit 0
fi
mkdir -p "$dist"
# esbuild resolves the packages from the cache (NODE_PATH), for the browser (the SDK's browser
# shims), as one IIFE file each.
NODE_PATH="$PWD/$cache/node_modules" "$cache/node_modules/.bin/esbuild" \
  "$src/host.ts" "$src/sandbox.ts" --bundle --minify --format=iife --platform=browser --target=chrome110 \
  --outdir="$dist" --sourcemap --log-level=warning \
  >"$cache/logs/esbuild.log" 2>&1 || { cat "$cache/logs/esbuild.log" >&2; exit 1; }
cp "$src/host.html" "$src/sandbox.html" "$dist/"
echo "$sources" > "$dist/.built"
echo "apps_host: built $dist (ext-apps $EXT_APPS, client $MCP_SDK, esbuild $ESBUILD)"
