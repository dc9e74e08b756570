#!/usr/bin/env bash
# Build a free-threaded CPython 3.14 ("python3.14t", configured with
# --disable-gil) into .cache/python-ft, and a venv from it with maturin in
# .cache/venv-ft, on a Debian bookworm machine where we are root, and install
# this package into that venv (for the free-threaded benchmark).
#
# Why 3.14: PyO3 0.30 (which this project uses) refuses free-threaded CPython
# below 3.14 ("PyO3 does not support the free-threaded build of CPython
# versions below 3.14"), so a 3.13t build is of no use here.
#
# Why this route: bookworm ships only Python 3.11, and the only network we have
# is the package registries (Debian's apt, Python's, Rust's and npm's); the
# upstream CPython download site and GitHub are not reachable. Debian's
# *source* package python3.14 carries the pristine upstream CPython tarball as
# its .orig.tar.xz, so we add a deb-src-only entry for sid (unstable), let apt
# fetch that source (apt checks it against the signed sid index), remove the
# entry again, and build the source with bookworm's own compiler and -dev
# libraries. Nothing from sid is installed as a binary, so no system package
# is replaced.
#
# KNOWN PROBLEM: the Debian mirror reachable here lists python3.14 in the sid
# and forky Sources indexes, but answers 404 for its source files (.dsc,
# .orig.tar.xz), for every listed version, so step 2 fails and the script
# stops with "no python3.14 orig tarball downloaded". (It does serve
# python3.14's *binary* .debs, but Debian builds no free-threaded variant.)
#
# Idempotent: if .cache/python-ft already holds a working free-threaded
# interpreter and the venv has maturin, it does nothing; if only the source
# tarball is already in .cache/ft, it rebuilds without touching apt sources.
#
# Usage: bash scripts/free_threaded_python.sh      (from anywhere; as root)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache"
SRC_DIR="$CACHE/ft"            # downloaded source package + build tree
PREFIX="$CACHE/python-ft"      # install prefix of the free-threaded build
VENV="$CACHE/venv-ft"          # venv made from it
PY="$PREFIX/bin/python3.14t"
SRC_PKG="python3.14"           # Debian source package that carries CPython
# sid rather than forky (testing): both have python3.14, but each new 3.14.x
# upload lands in sid first and reaches forky only after it migrates, so sid
# has the newest release (3.14.10 vs forky's 3.14.8 when this was written).
# Stable trixie has only 3.13.
SRC_SUITE="sid"
APT_SRC_FILE="/etc/apt/sources.list.d/ft-src.sources"
NICE="nice -n 10"              # keep the build from disturbing other jobs

log() { printf '[free_threaded_python] %s\n' "$*" >&2; }

# True when $1 is a free-threaded interpreter (Py_GIL_DISABLED=1, GIL really
# off at run time) that has the modules pip and maturin need (ssl, zlib,
# ctypes via libffi, hashlib).
interp_ok() {
    [ -x "$1" ] && "$1" - <<'EOF' >/dev/null 2>&1
import sys, sysconfig
import ssl, zlib, ctypes, hashlib, bz2, lzma  # noqa: F401
assert sysconfig.get_config_var("Py_GIL_DISABLED") == 1
assert not sys._is_gil_enabled()
EOF
}

# Print the URI of the machine's own bookworm (non-security) Debian entry, from
# the deb822 *.sources files (the bookworm default), else from sources.list.
find_bookworm_mirror() {
    local files uri=""
    files="$(ls /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -vxF "$APT_SRC_FILE" || true)"
    if [ -n "$files" ]; then
        # shellcheck disable=SC2086
        uri="$(awk '
            function flush() { if (uris != "" && suites ~ / bookworm /) { print uris; found = 1; exit } uris = ""; suites = "" }
            FNR == 1 { flush() }
            /^[[:space:]]*$/ { flush(); next }
            $1 == "URIs:"   { uris = $2 }
            $1 == "Suites:" { $1 = ""; suites = $0 " " }
            END { if (!found) flush() }
        ' $files)"
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri="$(awk '$1 == "deb" && / bookworm / { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)"
    fi
    printf '%s\n' "$uri"
}

venv_ok() {
    interp_ok "$VENV/bin/python" && "$VENV/bin/maturin" --version >/dev/null 2>&1
}

if interp_ok "$PY" && venv_ok; then
    log "already present: $("$PY" -VV)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    log "must run as root (apt-get)"; exit 1
fi
export DEBIAN_FRONTEND=noninteractive

if ! interp_ok "$PY"; then
    mkdir -p "$SRC_DIR"
    cd "$SRC_DIR"
    if ! ls "${SRC_PKG}"_*.orig.tar.xz >/dev/null 2>&1; then
        # --- 1. apt: a temporary deb-src-only entry for sid, in its own file -
        # Types: deb-src only, so apt can fetch sid *sources* but will never
        # install sid binaries (no new libc, no replaced system packages). The
        # existing bookworm entries are left alone. The mirror URI is taken
        # from the machine's own bookworm entry, so no host name is written
        # here.
        mirror="$(find_bookworm_mirror)"
        if [ -z "$mirror" ]; then
            log "could not find the bookworm Debian mirror in /etc/apt sources"; exit 1
        fi
        log "writing $APT_SRC_FILE ($mirror $SRC_SUITE, deb-src only, temporary)"
        # The entry is removed again as soon as the source is downloaded (and
        # by this trap if anything fails first), so the machine's apt sources
        # are left as they were: an extra suite there would make every later
        # `apt-get update` (e.g. in the project's test command) fetch sid's
        # index too. No `apt-get update` is needed after the removal: the
        # leftover sid index files under /var/lib/apt/lists are ignored by apt
        # and dropped by the next `apt-get update` anyway.
        trap 'rm -f "$APT_SRC_FILE"' EXIT
        printf '%s\n' "Types: deb-src
URIs: $mirror
Suites: $SRC_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" > "$APT_SRC_FILE"
        apt-get update -qq

        # --- 2. fetch the pristine CPython source via apt ---------------------
        # --download-only: we only want the .orig.tar.xz (upstream's tarball);
        # Debian's patches (.debian.tar.xz) are not applied. The version is
        # the newest python3.14 that sid currently has (old ones leave the
        # mirror, so no pin).
        log "apt-get source --download-only $SRC_PKG ($SRC_SUITE)"
        # apt warns that _apt cannot write here and downloads as root: harmless.
        apt-get source -qq --download-only "$SRC_PKG/$SRC_SUITE" 2>&1 \
            | grep -v 'unsandboxed as root' >&2 || true

        rm -f "$APT_SRC_FILE"
        trap - EXIT
        log "removed $APT_SRC_FILE again"
    fi
    tarball="$(ls -1 "${SRC_PKG}"_*.orig.tar.xz 2>/dev/null | sort -V | tail -n1 || true)"
    [ -n "$tarball" ] && [ -f "$tarball" ] || {
        log "no ${SRC_PKG} orig tarball downloaded (see apt's errors above; a 404 means the Debian mirror does not serve that source)"
        exit 1; }

    # --- 3. build dependencies, all from bookworm -----------------------------
    # build-essential: gcc/make. libssl-dev, zlib1g-dev, libffi-dev: ssl, zlib
    # and ctypes, which pip (and ensurepip) need. The others give the usual
    # stdlib modules (bz2, lzma, sqlite3, readline, uuid). pkg-config lets
    # configure find them; xz-utils unpacks the .tar.xz. (libzstd-dev, for
    # 3.14's optional compression.zstd, is left out: nothing here needs it.)
    apt-get install -y -qq --no-install-recommends \
        build-essential pkg-config xz-utils \
        libssl-dev zlib1g-dev libffi-dev \
        libbz2-dev liblzma-dev libsqlite3-dev libreadline-dev uuid-dev >/dev/null

    # --- 4. unpack into a clean tree ------------------------------------------
    # (the tarball's top folder, Python-3.14.x, is stripped: build/ is the tree)
    rm -rf "${SRC_DIR:?}/build"
    mkdir "$SRC_DIR/build"
    tar -xf "$tarball" --strip-components=1 -C "$SRC_DIR/build"
    cd "$SRC_DIR/build"

    # --- 5. configure, build, install -------------------------------------------
    # --disable-gil: the free-threaded build (binary python3.14t, lib/python3.14t).
    # No --enable-optimizations/--with-lto: PGO would run the test suite and
    # take far longer; we want it quick. ensurepip stays on (the default): it
    # installs pip from the wheel bundled in the source, without network.
    # A half-installed prefix from an earlier failed run is removed first.
    rm -rf "${PREFIX:?}"
    log "configure (--disable-gil --prefix=$PREFIX)"
    $NICE ./configure --disable-gil --prefix="$PREFIX" >"$SRC_DIR/configure.log" 2>&1 \
        || { tail -n 30 "$SRC_DIR/configure.log" >&2; exit 1; }
    log "make -j$(nproc)"
    $NICE make -j"$(nproc)" >"$SRC_DIR/make.log" 2>&1 \
        || { tail -n 30 "$SRC_DIR/make.log" >&2; exit 1; }
    log "make install"
    $NICE make install >"$SRC_DIR/install.log" 2>&1 \
        || { tail -n 30 "$SRC_DIR/install.log" >&2; exit 1; }

    # The build tree (~0.5 GB) is no longer needed; the tarball is kept so a
    # rebuild needs no download.
    cd "$SRC_DIR"
    rm -rf "${SRC_DIR:?}/build"

    interp_ok "$PY" || { log "built interpreter failed its check"; exit 1; }
fi

# --- 6. venv with maturin ------------------------------------------------------
# A venv from the free-threaded interpreter (its pip comes from ensurepip), and
# maturin from PyPI, so Rust extensions can be built for python3.14t.
if ! venv_ok; then
    log "venv $VENV + pip install maturin"
    rm -rf "${VENV:?}"
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check maturin
    venv_ok || { log "venv check failed"; exit 1; }
fi

"$PY" -c "import sys, sysconfig; print(sys.version, 'Py_GIL_DISABLED=%s' % sysconfig.get_config_var('Py_GIL_DISABLED'), 'GIL enabled:', sys._is_gil_enabled())"

# --- 7. this package, built for python3.14t ------------------------------------
# A version-specific wheel (maturin builds one for a free-threaded interpreter: the abi3 wheel
# is for the regular ones), so `python -m bench.run --only free-threaded` measures Python
# handlers running in parallel (docs/benchmarks.md).
log "pip install $ROOT (the release profile; a few minutes)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$ROOT"
"$VENV/bin/python" -c "import sys, everything_mcp; assert not sys._is_gil_enabled(), 'importing everything_mcp enabled the GIL'; print('everything_mcp', everything_mcp.__version__, 'on a free-threaded interpreter, GIL off')"
