#!/usr/bin/env bash
# Builds the wheel people install: the extension module and the native `everything-mcp` (one
# abi3 wheel per platform, CPython >= 3.10), into target/wheels/. Prints the wheel's path.
# Usage: scripts/wheel.sh [--profile P] [more maturin build args]   (default profile: release)
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
if [ "${1:-}" = --profile ]; then
    profile=$2
    shift 2
fi
trap 'rm -rf everything_mcp._core.data' EXIT
scripts/stage_binary.sh --profile "$profile" >/dev/null
out=$(mktemp -d)
maturin build --quiet --profile "$profile" --out "$out" "$@" >&2
mkdir -p target/wheels
wheel=$(find "$out" -name '*.whl' -print -quit)
mv "$wheel" target/wheels/
rm -rf "$out"
echo "target/wheels/$(basename "$wheel")"
