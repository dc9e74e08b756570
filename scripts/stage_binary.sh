#!/usr/bin/env bash
# Builds the native `everything-mcp` and stages it where maturin takes wheel data from
# (`everything_mcp._core.data/scripts/`, git-ignored), so the next `maturin build` puts it in the
# wheel and pip installs it on PATH. The release workflow runs this before maturin (inside the
# manylinux container on Linux); scripts/wheel.sh runs it, builds, and unstages.
# Usage: scripts/stage_binary.sh [cargo build args: --profile P, --release, --target T, ...]
set -euo pipefail
cd "$(dirname "$0")/.."

staged=everything_mcp._core.data/scripts
built=$(cargo build --bin everything-mcp --message-format=json-render-diagnostics "$@" |
    python3 -c 'import json, sys
paths = [m["executable"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and m.get("executable")]
print(paths[-1] if paths else "")')
[ -n "$built" ] || { echo "stage_binary: cargo built no everything-mcp" >&2; exit 1; }
rm -rf everything_mcp._core.data
mkdir -p "$staged"
cp "$built" "$staged/"
echo "$staged/$(basename "$built")"
