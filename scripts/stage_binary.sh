#!/usr/bin/env bash
# Builds the native `everything-mcp` and stages it where maturin takes wheel data from
# (`everything_mcp._core.data/scripts/`, git-ignored), so the next `maturin build` puts it in the
# wheel and pip installs it on PATH. The release workflow runs this before maturin (inside the
# manylinux container on Linux); scripts/wheel.sh runs it, builds, and unstages.
# Usage: scripts/stage_binary.sh [cargo build args: --profile P, --release, --target T, ...]
set -euo pipefail
cd "$(dirname "$0")/.."

staged=everything_mcp._core.data/scripts
# The binary's path, from cargo's own report of what it built (wherever --target, --profile and
# CARGO_TARGET_DIR put it); JSON escapes a Windows path's backslashes. No Python needed: the
# release workflow runs this where none may be on PATH.
built=$(cargo build --bin everything-mcp --message-format=json-render-diagnostics "$@" |
    sed -n 's/.*"executable":"\([^"]*everything-mcp[^"]*\)".*/\1/p' | tail -n 1 | sed 's/\\\\/\\/g')
[ -n "$built" ] || { echo "stage_binary: cargo built no everything-mcp" >&2; exit 1; }
rm -rf everything_mcp._core.data
mkdir -p "$staged"
cp "$built" "$staged/"
echo "$staged/$(basename "$built")"
