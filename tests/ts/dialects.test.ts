// Dialects as the official TypeScript client sees them: for each SDK dialect, what the client
// gets from the peer itself (a server written with that SDK, tests/peers/) and from
// `everything-mcp http --dialect NAME` is the same on each point (an unknown tool, a successful
// result's isError, an unknown prompt and resource). Run by scripts/conformance.sh with the
// control API's test (MCP_SDK_DIR, EVERYTHING_MCP_PYTHON as there).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { load, startCli } from "./cli.ts";

const python = process.env.EVERYTHING_MCP_PYTHON ?? "python3";
const peers = join(import.meta.dirname, "..", "peers");

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A peer server on a free port, once its stderr says it listens. */
async function startPeer(command: string[], ready: string): Promise<{ peer: ChildProcess; url: string }> {
  const port = await freePort();
  const env = { ...process.env, PEER_NODE_MODULES: join(process.env.MCP_SDK_DIR ?? "", "..", "..") };
  const peer = spawn(command[0], [...command.slice(1), "--http", String(port)], { stdio: ["ignore", "ignore", "pipe"], env });
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: peer.stderr! });
    lines.on("line", (line) => line.includes(ready) && resolve());
    peer.once("exit", (code) => reject(new Error(`the peer exited (${code})`)));
  });
  return { peer, url: `http://127.0.0.1:${port}/mcp` };
}

/** What the client sees of the points, from the server at `url`. */
async function seen(url: string, ok: { name: string; arguments: Record<string, unknown> }) {
  const { Client } = await load("client/index.js");
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  const client = new Client({ name: "ts-dialects", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const error = (e: { code?: number; message?: string }) => ({ code: e.code, message: e.message });
  try {
    const unknownTool = await client.callTool({ name: "nope", arguments: {} });
    const success = await client.callTool(ok);
    const prompt = await client.getPrompt({ name: "nope" }).then(() => null, error);
    const resource = await client.readResource({ uri: "nope://x" }).then(() => null, error);
    return { unknownTool, isError: "isError" in success ? success.isError : "absent", prompt, resource };
  } finally {
    await client.close();
  }
}

for (const [dialect, command, ready, ok] of [
  ["python-sdk", [python, join(peers, "python_sdk_server.py")], "Uvicorn running on", { name: "add", arguments: { a: 1, b: 2 } }],
  ["typescript-sdk", [process.execPath, join(peers, "typescript_sdk_server.mjs")], "listening on", { name: "add", arguments: { a: 1, b: 2 } }],
] as const) {
  test(`${dialect}: the TypeScript client sees the peer's answers`, { timeout: 60_000 }, async () => {
    const { peer, url } = await startPeer([...command], ready);
    const { server, base_url } = await startCli(["http", "--port", "0", "--dialect", dialect]);
    try {
      const theirs = await seen(url, ok);
      const ours = await seen(`${base_url}/mcp`, { name: "echo", arguments: { message: "hi" } });
      assert.equal(theirs.unknownTool.isError, true);
      assert.notEqual(theirs.prompt, null);
      assert.deepEqual(ours, theirs);
    } finally {
      peer.kill();
      server.kill();
    }
  });
}
