// What the TypeScript tests share: the SDK loaded from MCP_SDK_DIR, and the CLI started as a
// subprocess, announced by its first stderr line. The CLI is `$EVERYTHING_MCP_PYTHON -m
// everything_mcp` unless EVERYTHING_MCP_COMMAND gives another command as a JSON array of argv,
// e.g. '["node_modules/.bin/everything-mcp"]' for the npm package's native binary.

import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = process.env.MCP_SDK_DIR ?? "";
const python = process.env.EVERYTHING_MCP_PYTHON ?? "python3";
const command: string[] = process.env.EVERYTHING_MCP_COMMAND
  ? JSON.parse(process.env.EVERYTHING_MCP_COMMAND)
  : [python, "-m", "everything_mcp"];

/** A module of the official TypeScript SDK (its ESM build), e.g. "client/index.js". */
export const load = (path: string) => import(pathToFileURL(join(sdk, "dist", "esm", path)).href);

/** `python -m everything_mcp ARGS` (or the command of EVERYTHING_MCP_COMMAND) running, with what
 * it announced: `url` and `base_url`. */
export async function startCli(args: string[]): Promise<{ server: ChildProcess; url: string; base_url: string }> {
  const server = spawn(command[0], [...command.slice(1), ...args], { stdio: ["ignore", "ignore", "pipe"] });
  const announced: string = await new Promise((resolve, reject) => {
    createInterface({ input: server.stderr! }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`the server exited (${code})`)));
  });
  return { server, ...JSON.parse(announced) };
}
