// A server written with the official TypeScript SDK (`McpServer`), the same surface as
// python_sdk_server.py: a tool, a progress-reporting tool, a templated resource, a prompt.
// `node typescript_sdk_server.mjs` serves stdio; `--http PORT` Streamable HTTP at /mcp
// (stateful: a session per initialize). The SDK is the one the reference server's install
// brings (.cache/reference/node_modules, or the folder $PEER_NODE_MODULES names).
import http from "node:http";
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const modules =
  process.env.PEER_NODE_MODULES ?? join(fileURLToPath(new URL(".", import.meta.url)), "../../.cache/reference/node_modules");
const require = createRequire(join(modules, "peer.js"));
const { McpServer, ResourceTemplate } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { z } = require("zod");

function build() {
  const server = new McpServer({ name: "Demo", version: "1.0.0" });
  server.tool("add", "Add two numbers.", { a: z.number(), b: z.number() }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  server.tool("count", "Count to `steps`, reporting progress.", { steps: z.number() }, async ({ steps }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
        });
      }
    }
    return { content: [{ type: "text", text: `counted ${steps}` }] };
  });
  server.resource("greeting", new ResourceTemplate("greeting://{name}", { list: undefined }), async (uri, { name }) => ({
    contents: [{ uri: uri.href, text: `Hello, ${name}!`, mimeType: "text/plain" }],
  }));
  server.prompt("greet_user", { name: z.string() }, ({ name }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Write a friendly greeting for someone named ${name}.` } }],
  }));
  return server;
}

const at = process.argv.indexOf("--http");
if (at < 0) {
  await build().connect(new StdioServerTransport());
} else {
  const port = Number(process.argv[at + 1]);
  const sessions = new Map();
  const listener = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString();
    const body = text ? JSON.parse(text) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport && body?.method === "initialize") {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      await build().connect(transport);
    }
    if (!transport) {
      // What the SDK's own examples answer a request for no known session.
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: No valid session ID provided" }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  listener.listen(port, "127.0.0.1", () => console.error(`listening on http://127.0.0.1:${port}/mcp`));
}
