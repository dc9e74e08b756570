#!/usr/bin/env bash
# Builds the npm packages of the native binary (docs/distribution.md): the platform package
# everything-mcp-PLATFORM, made from npm/platform/ with BINARY in it, and the launcher
# everything-mcp, made from npm/everything-mcp/ with every platform package of
# npm/everything-mcp/package.json as an optional dependency. Both get the version of
# Cargo.toml's [package]. `npm pack` writes the two tarballs into OUTDIR; their paths are
# printed, the launcher's first. Offline: nothing is fetched.
#
# Usage: scripts/npm_pack.sh BINARY OUTDIR [PLATFORM]
#   PLATFORM is Node's process.platform-process.arch, with -musl for a Linux musl build:
#   linux-x64, linux-x64-musl, linux-arm64, darwin-arm64, win32-x64, ... (default: this
#   machine's, as Node sees it).
#   e.g. cargo build --release --bin everything-mcp && scripts/npm_pack.sh target/release/everything-mcp dist/npm
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 BINARY OUTDIR [PLATFORM]" >&2
    exit 2
fi
binary=$1
outdir=$2
platform=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "npm_pack: $tool is not on PATH" >&2; exit 1; }
done
[ -f "$binary" ] || { echo "npm_pack: no binary at $binary" >&2; exit 1; }

version=$(sed -n '/^\[package\]/,/^\[/ s/^version *= *"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$version" ] || { echo "npm_pack: no version in the [package] of $root/Cargo.toml" >&2; exit 1; }

if [ -z "$platform" ]; then
    # shellcheck disable=SC2016  # JavaScript, not shell
    platform=$(node -e '
        let musl = false;
        if (process.platform === "linux") {
            try { musl = !process.report.getReport().header.glibcVersionRuntime; } catch {}
        }
        console.log(`${process.platform}-${process.arch}${musl ? "-musl" : ""}`);')
fi

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$root/npm/everything-mcp" "$stage/launcher"
mkdir -p "$stage/platform/bin"

# The manifests: the version everywhere, and the platform package's name, os, cpu and libc.
exe=everything-mcp
case $platform in win32-*) exe=everything-mcp.exe ;; esac
# shellcheck disable=SC2016  # JavaScript, not shell
node -e '
    const fs = require("fs");
    const [stage, templates, version, platform] = process.argv.slice(1);
    const read = (file) => JSON.parse(fs.readFileSync(file, "utf8"));
    const write = (file, json) => fs.writeFileSync(file, JSON.stringify(json, null, 2) + "\n");

    const launcher = read(`${stage}/launcher/package.json`);
    const name = `${launcher.name}-${platform}`;
    const served = Object.keys(launcher.optionalDependencies);
    if (!served.includes(name)) {
        const platforms = served.map((p) => p.slice(launcher.name.length + 1)).join(", ");
        console.error(`npm_pack: ${platform} is not a platform of npm/everything-mcp/package.json (${platforms})`);
        process.exit(1);
    }
    launcher.version = version;
    for (const dependency of served) launcher.optionalDependencies[dependency] = version;
    write(`${stage}/launcher/package.json`, launcher);

    const [os, cpu, libc] = platform.split("-");
    const manifest = read(`${templates}/package.template.json`);
    Object.assign(manifest, { name, version, os: [os], cpu: [cpu] });
    manifest.description = manifest.description.replaceAll("@PLATFORM@", platform);
    if (os === "linux") manifest.libc = [libc === "musl" ? "musl" : "glibc"];
    write(`${stage}/platform/package.json`, manifest);
' "$stage" "$root/npm/platform" "$version" "$platform"
sed -e "s/@PLATFORM@/$platform/g" -e "s/@EXE@/$exe/g" "$root/npm/platform/README.md" >"$stage/platform/README.md"
cp "$binary" "$stage/platform/bin/$exe"
chmod 755 "$stage/platform/bin/$exe"

pack() {  # package directory: prints the tarball's path
    local name
    name=$(cd "$1" && npm pack --offline --ignore-scripts --loglevel=error --pack-destination "$outdir" | tail -n 1)
    [ -f "$outdir/$name" ] || { echo "npm_pack: npm pack in $1 made no $outdir/$name" >&2; exit 1; }
    echo "$outdir/$name"
}
pack "$stage/launcher"
pack "$stage/platform"
