// The control API from a test suite in another language: Node's own test runner and the official
// TypeScript SDK's client (run by scripts/conformance.sh, part of the test command, with Node's
// type stripping). It starts the CLI, registers a canned tool and a fault through /_control/,
// calls the tool with the SDK's client, and reads the rule's hits and the traffic back.
//
//   MCP_SDK_DIR=<node_modules>/@modelcontextprotocol/sdk EVERYTHING_MCP_PYTHON=python3 \
//     node --experimental-strip-types --test tests/ts/control_api.test.ts

import { test } from "node:test";
import assert from "node:assert/strict";
import { load, startCli } from "./cli.ts";

test("a canned tool and a fault, put in force over HTTP, as the TypeScript client sees them", { timeout: 30_000 }, async () => {
  const { Client } = await load("client/index.js");
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  const { server, base_url } = await startCli(["http", "--port", "0", "--catalog", "none", "--keep-traffic", "1000"]);
  try {
    const control = `${base_url}/_control`;
    const post = (path: string, body: unknown) =>
      fetch(control + path, { method: "POST", body: JSON.stringify(body) });

    const weather = { name: "weather", description: "Canned.", results: [{ content: [{ type: "text", text: "sunny" }] }] };
    assert.equal((await post("/tools", weather)).status, 201);
    const rule = { match: { method: "tools/call", name: "weather", nth: 2 }, action: { error: { code: -32000, message: "boom" } } };
    const added = await (await post("/faults", rule)).json();
    const bad = await post("/faults", { match: { nth: 0 }, action: { drop: true } });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.field, "match.nth");

    const client = new Client({ name: "ts-control-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base_url}/mcp`)));
    const first = await client.callTool({ name: "weather", arguments: {} });
    assert.deepEqual(first.content, [{ type: "text", text: "sunny" }]);
    await assert.rejects(client.callTool({ name: "weather", arguments: {} }), /boom/);
    const third = await client.callTool({ name: "weather", arguments: {} });
    assert.deepEqual(third.content, [{ type: "text", text: "sunny" }]);
    await client.close();

    const hits = (await (await fetch(`${control}/faults/${added.id}`)).json()).hits;
    assert.equal(hits, 1);
    const text = await (await fetch(`${control}/traffic?since=0`)).text();
    const records = text.trim().split("\n").map((line) => JSON.parse(line));
    const marked = records.filter((r) => r.fault);
    assert.deepEqual(marked.map((r) => [r.method, r.fault]), [["tools/call", { rule: added.id, action: "error" }]]);
  } finally {
    server.kill();
  }
});
