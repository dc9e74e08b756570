#!/usr/bin/env bash
# The fuzz targets of src/fuzzing (frames, http, files) under libFuzzer (docs/reliability.md,
# "Fuzzing"). The engine is libfuzzer-sys, a cargo dependency of fuzz/ that compiles libFuzzer
# itself: no cargo-fuzz and no nightly toolchain are needed. The coverage instrumentation
# cargo-fuzz would add to every crate goes on this workspace's crates only (scripts/fuzz-rustc),
# so the smoke run's build reuses the dependencies `cargo test` built.
#
# Each target runs SECONDS (default 10) from its committed corpus (fuzz/corpus/NAME); what it
# finds new goes to a scratch folder, a crash to fuzz/artifacts/NAME/ (replay it with
# `target/fuzz/NAME fuzz/artifacts/NAME/crash-...`). `--long` builds optimised (the `fuzz`
# profile: a release without fat LTO, debug assertions on) for long runs.
#
# Skipped, saying why, without a C++ compiler (libFuzzer is C++); under CI=true that fails.
# Usage: scripts/fuzz.sh [--long] [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=dev
dir=debug
if [ "${1:-}" = --long ]; then
    profile=fuzz
    dir=fuzz
    shift
fi
seconds=${1:-10}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frames http files)

if ! command -v "${CXX:-c++}" >/dev/null 2>&1; then
    why="no C++ compiler (${CXX:-c++}) to build libFuzzer with"
    if [ "${CI:-}" = true ]; then
        echo "fuzz smoke failed: $why"
        exit 1
    fi
    echo "fuzz smoke skipped: $why; cargo test ran every target over its corpus and mutations of it"
    exit 0
fi

started=$SECONDS
bins=()
for target in "${targets[@]}"; do bins+=(--bin "$target"); done
RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/fuzz-rustc" \
    cargo build --quiet -p everything-mcp-fuzz --profile "$profile" "${bins[@]}"
echo "fuzz targets built ($profile profile) in $((SECONDS - started)) s"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in "${targets[@]}"; do
    mkdir -p "$scratch/$target" "fuzz/artifacts/$target"
    echo "== fuzz $target for ${seconds} s"
    status=0
    "target/$dir/$target" "$scratch/$target" "fuzz/corpus/$target" \
        -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$target/" >"$scratch/$target.log" 2>&1 || status=$?
    # The last status line (executions, edges covered, features, corpus) and the final stats.
    grep -E "^#[0-9]+.*cov: " "$scratch/$target.log" | tail -1 || true
    grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)" \
        "$scratch/$target.log" || true
    if [ "$status" != 0 ]; then
        tail -40 "$scratch/$target.log"
        echo "fuzz target $target failed (exit $status): the input is in fuzz/artifacts/$target/"
        exit 1
    fi
done
