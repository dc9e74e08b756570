#!/usr/bin/env node
// The `everything-mcp` command of the npm package: it finds the native binary in the platform
// package that npm installed among this package's optionalDependencies (one package per
// platform, e.g. everything-mcp-linux-x64, each limited by its `os`, `cpu` and `libc` fields so
// that only the matching one is installed), runs it with this process's arguments and stdio,
// hands SIGINT, SIGTERM and SIGHUP on to it, and ends the way it ended: with its exit code, or
// by the same signal. Layout and packing: docs/distribution.md.
"use strict";

const { spawn } = require("child_process");
const { constants } = require("os");

const manifest = require("../package.json");

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Whether this Linux uses musl (Alpine...) rather than glibc: glibc reports its version. */
function isMusl() {
  try {
    if (process.report.excludeNetwork !== undefined) process.report.excludeNetwork = true;
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

/** The platform packages that may serve this machine, best first. */
function candidates() {
  const base = `${manifest.name}-${process.platform}-${process.arch}`;
  if (process.platform !== "linux") return [base];
  // npm installs only the package whose `libc` matches; should both be there (a package
  // manager that ignores `libc`), musl systems take the musl build and glibc systems the glibc one.
  return isMusl() ? [`${base}-musl`, base] : [base, `${base}-musl`];
}

function fail(lines) {
  process.stderr.write(lines.map((line) => `everything-mcp: ${line}\n`).join(""));
  process.exit(1);
}

function findBinary() {
  const exe = process.platform === "win32" ? "everything-mcp.exe" : "everything-mcp";
  const wanted = candidates();
  for (const name of wanted) {
    try {
      return require.resolve(`${name}/bin/${exe}`);
    } catch {
      // not installed: try the next one
    }
  }
  const supported = Object.keys(manifest.optionalDependencies || {});
  const libc = process.platform === "linux" ? (isMusl() ? ", musl" : ", glibc") : "";
  const where = `${process.platform}-${process.arch}${libc}`;
  const name = wanted.find((candidate) => supported.includes(candidate));
  if (name === undefined) {
    const platforms = supported.map((package_) => package_.slice(manifest.name.length + 1));
    fail([
      `no native binary is built for this platform (${where}); the platforms served: ${platforms.join(", ")}.`,
      "Elsewhere, the same server comes as the Python package everything-mcp (pip install everything-mcp).",
    ]);
  }
  fail([
    `no native binary for this platform (${where}): ${name}@${manifest.version} is not installed.`,
    `npm installs it with ${manifest.name}@${manifest.version}, as an optional dependency, unless optional dependencies`,
    "are left out (--omit=optional, --no-optional) or a lockfile written on another platform leaves it out.",
    "Install again with optional dependencies (if need be, remove node_modules and the lockfile first).",
  ]);
}

function run(binary) {
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on("error", (error) => {
    const hint =
      error.code === "ENOENT" || error.code === "EACCES"
        ? " (the binary is there but cannot be run: built for another platform or libc, or not executable?)"
        : "";
    fail([`cannot start ${binary}: ${error.message}${hint}`]);
  });
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code === null ? 1 : code);
    // Ended by a signal: end this process by the same one, so the caller sees what happened.
    for (const forwarded of FORWARDED) process.removeListener(forwarded, forward);
    try {
      process.kill(process.pid, signal);
    } catch {
      // a signal this process cannot raise on itself: the shell's convention below
    }
    // A signal that does not end a Node process (SIGPIPE is ignored, for one).
    setTimeout(() => process.exit(128 + (constants.signals[signal] || 0)), 100);
  });
}

run(findBinary());
