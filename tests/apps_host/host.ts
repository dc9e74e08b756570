// The MCP Apps test host (host.html): the official TypeScript client
// (@modelcontextprotocol/client) talks to the server, the official AppBridge
// (@modelcontextprotocol/ext-apps/app-bridge) to the View, which runs behind a sandbox proxy
// (sandbox.html) on a second origin. Bundled by scripts/apps_host.sh into one file. This page
// connects, calls the tool and runs the flow; the View's side (bridge, frame, guards) is
// view_bridge.ts, the log log.ts.
//
// Query parameters:
//   server   the MCP endpoint (http://127.0.0.1:PORT/mcp)
//   tool     the tool to call (default apps_selftest); args: its JSON arguments (default {})
//   sandbox  the proxy page on another origin (http://127.0.0.1:OTHER/sandbox.html)
//   era      legacy (default: initialize, 2025-11-25) | modern (2026-07-28, stateless)
//   variant  good (default) | early-input | forward-model-only | no-proxy | ignore-csp |
//            drop-capability: each one named deviation from the good host
//   wait     ms to wait for the View's `initialized` before giving up (default 10000)
//   theme    light (default) | dark: the initial theme (host-context-changed toggles it)
//   partials how many tool-input-partial to send before tool-input (default: 3 when the
//            arguments' JSON is 1000 chars or more, else 0); each has the string arguments cut short
//
// window.__host = {log, done, teardown(), cancel(), state}: `log` is every step and every
// bridge message (both ways) and MCP request, `done` resolves with a summary once the tool
// result (or cancellation) went to the View and the theme toggle after it, `teardown()` sends
// ui/resource-teardown and resolves once the View answered or 3 s passed.

import {
  Client,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type ClientCapabilities,
  type Tool,
} from "@modelcontextprotocol/client";
import { RESOURCE_MIME_TYPE, getToolUiResourceUri, type AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import { brief, errorText, log, note, type Json, type Summary } from "./log";
import { View, waitFor } from "./view_bridge";

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const MODERN = "2026-07-28";
const HOST_INFO = { name: "everything-mcp-apps-host", version: "1.0.0" };
const TEARDOWN_TIMEOUT_MS = 3000;
const VARIANTS = ["good", "early-input", "forward-model-only", "no-proxy", "ignore-csp", "drop-capability"];

const query = new URLSearchParams(window.location.search);
const cfg = {
  server: query.get("server") ?? "",
  tool: query.get("tool") ?? "apps_selftest",
  args: JSON.parse(query.get("args") ?? "{}") as Json,
  sandbox: query.get("sandbox") ?? "",
  era: query.get("era") ?? "legacy",
  variant: query.get("variant") ?? "good",
  waitMs: Number(query.get("wait") ?? "10000"),
  theme: (query.get("theme") === "dark" ? "dark" : "light") as "light" | "dark",
  partials: 0,
};
cfg.partials = Number(query.get("partials") ?? (JSON.stringify(cfg.args).length >= 1000 ? 3 : 0));

const state: Summary = { ok: false, variant: cfg.variant, tool: cfg.tool, rendered: false, initialized: false };

let resolveDone!: (s: Summary) => void;
const done = new Promise<Summary>((r) => (resolveDone = r));
let bridge: AppBridge | undefined;
const abort = new AbortController();

async function teardown(): Promise<{ acked: boolean; ms: number; error?: string }> {
  const t0 = performance.now();
  if (!bridge || !state.initialized) {
    note("host", "teardown: no initialized View");
    return { acked: false, ms: 0, error: "no initialized View" };
  }
  note("host", "teardown: ui/resource-teardown sent, awaiting the View's answer");
  try {
    await bridge.teardownResource({}, { timeout: TEARDOWN_TIMEOUT_MS });
    const ms = Math.round(performance.now() - t0);
    note("host", `teardown: the View answered after ${ms} ms`);
    return { acked: true, ms };
  } catch (e) {
    const ms = Math.round(performance.now() - t0);
    note("host", `teardown: no answer (${ms} ms): ${errorText(e)}`);
    return { acked: false, ms, error: errorText(e) };
  }
}

function cancel(reason = "cancelled by the user"): void {
  note("host", `cancel: ${reason}`);
  abort.abort(reason);
}

(window as unknown as { __host: unknown }).__host = { log, done, teardown, cancel, state, cfg };

/** fetch for the MCP transport, logging each JSON-RPC message posted (with whether it carries
 * the ui extension in a 2026-07-28 `_meta` envelope). */
function loggedFetch(label: string): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit) => {
    if (init?.method === "POST" && typeof init.body === "string") {
      try {
        const body = JSON.parse(init.body) as Json | Json[];
        for (const msg of Array.isArray(body) ? body : [body]) {
          const params = msg.params as Json | undefined;
          const meta = params?._meta as Json | undefined;
          const caps = meta?.["io.modelcontextprotocol/clientCapabilities"] as Json | undefined;
          const initCaps = msg.method === "initialize" ? ((params?.capabilities as Json | undefined) ?? {}) : undefined;
          const ext = ((caps ?? initCaps)?.extensions as Json | undefined)?.[UI_EXTENSION];
          const uiNote = caps !== undefined || initCaps !== undefined ? (ext ? " [ui ext]" : " [no ui ext]") : "";
          note(label, brief(msg) + uiNote, { method: msg.method, id: msg.id, uiExtension: ext ?? null, meta });
        }
      } catch {
        // not JSON: not ours to log
      }
    }
    return fetch(input, init);
  };
}

/** The official client in the era asked for: `versionNegotiation.mode` "legacy" (the default:
 * initialize, 2025-11-25) or pinned to 2026-07-28 (server/discover; then every request carries
 * the `_meta` envelope with these capabilities). */
async function connectClient(label: string, withUi: boolean): Promise<Client> {
  const capabilities: ClientCapabilities = { elicitation: { form: {} } };
  if (withUi) capabilities.extensions = { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } };
  const client = new Client(HOST_INFO, {
    capabilities,
    versionNegotiation: cfg.era === "modern" ? { mode: { pin: MODERN } } : { mode: "legacy" },
  });
  // A tool the View calls may ask the user (elicitation; 2026-07-28: an input_required result
  // the client fulfils): this host accepts, filling the form from its schema.
  client.setRequestHandler("elicitation/create", async (request) => {
    note("host", `elicitation from the server: ${JSON.stringify(request.params).slice(0, 200)}`);
    const schema = (request.params as { requestedSchema?: { properties?: Record<string, Json> } }).requestedSchema;
    const content: Record<string, string | number | boolean> = {};
    for (const [key, property] of Object.entries(schema?.properties ?? {})) {
      const given = property.default;
      if (typeof given === "string" || typeof given === "number" || typeof given === "boolean") content[key] = given;
      else if (property.type === "boolean") content[key] = true;
      else if (property.type === "number" || property.type === "integer") content[key] = 1;
      else if (Array.isArray(property.enum) && typeof property.enum[0] === "string") content[key] = property.enum[0];
      else content[key] = "everything-mcp apps host";
    }
    return { action: "accept", content };
  });
  const transport = new StreamableHTTPClientTransport(new URL(cfg.server), { fetch: loggedFetch(label) });
  await client.connect(transport);
  note(
    "host",
    `${label}: connected, era ${client.getProtocolEra()}, protocol ${client.getNegotiatedProtocolVersion()}, ` +
      `server ${JSON.stringify(client.getServerVersion())}, ui extension ${withUi ? "declared" : "NOT declared"}`,
  );
  return client;
}

async function allTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

async function listedResource(client: Client, uri: string): Promise<Json | undefined> {
  if (!client.getServerCapabilities()?.resources) return undefined;
  try {
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor ? { cursor } : undefined);
      const found = page.resources.find((r) => r.uri === uri);
      if (found) return found as unknown as Json;
      cursor = page.nextCursor;
    } while (cursor);
  } catch (e) {
    note("host", `resources/list failed: ${errorText(e)}`);
  }
  return undefined;
}

function decodeBlob(blob: string): string {
  const bytes = Uint8Array.from(atob(blob), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

function uiMeta(item: Json | undefined): Json | undefined {
  const meta = item?._meta as Json | undefined;
  const ui = meta?.ui;
  return ui && typeof ui === "object" ? (ui as Json) : undefined;
}

function showFallback(result: CallToolResult | undefined): void {
  const box = document.getElementById("fallback");
  if (!box || !result) return;
  const texts = result.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text);
  box.textContent = `text fallback: ${texts.join("\n") || "(no text)"}`;
}

/** The arguments as streamed so far: each string value cut to `fraction` of its length (what a
 * host recovers from incomplete JSON by closing it). */
function partialArguments(args: Json, fraction: number): Json {
  const cut: Json = {};
  for (const [key, value] of Object.entries(args)) {
    cut[key] = typeof value === "string" ? value.slice(0, Math.floor(value.length * fraction)) : value;
  }
  return cut;
}

async function main(): Promise<void> {
  if (!VARIANTS.includes(cfg.variant)) throw new Error(`unknown variant ${cfg.variant}`);
  if (!cfg.server) throw new Error("no ?server= (the MCP endpoint)");
  if (!cfg.sandbox && cfg.variant !== "no-proxy") throw new Error("no ?sandbox= (the proxy page on another origin)");
  note("host", `variant ${cfg.variant}, era ${cfg.era}, tool ${cfg.tool}, args ${JSON.stringify(cfg.args)}`);

  const client = await connectClient("mcp", true);
  state.era = client.getProtocolEra();
  state.protocolVersion = client.getNegotiatedProtocolVersion();
  const serverCaps = client.getServerCapabilities() ?? {};
  note("host", `server capabilities ${JSON.stringify(serverCaps)}`);
  const tools = await allTools(client);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const tool = byName.get(cfg.tool);
  if (!tool) throw new Error(`tool ${cfg.tool} is not listed`);
  note("host", `tool ${cfg.tool} _meta ${JSON.stringify(tool._meta ?? null)}`);

  // The model's call: the tool runs while the View loads, as in a chat host.
  const call = client.callTool({ name: cfg.tool, arguments: cfg.args }, { signal: abort.signal });
  call.then(
    (r) => note("host", `tools/call ${cfg.tool} answered${r.isError ? " (isError)" : ""}`, r),
    (e) => note("host", `tools/call ${cfg.tool} failed: ${errorText(e)}`),
  );

  let uri: string | undefined;
  try {
    uri = getToolUiResourceUri(tool);
  } catch (e) {
    note("host", `no UI: ${errorText(e)}`);
  }
  if (!uri) {
    note("host", "no UI resource for this tool: text fallback only");
    showFallback(await call.catch(() => undefined));
    state.ok = true;
    return;
  }
  state.resourceUri = uri;

  const listed = await listedResource(client, uri);
  let read;
  try {
    read = await client.readResource({ uri });
  } catch (e) {
    note("host", `no UI: resources/read ${uri} failed: ${errorText(e)}`);
    showFallback(await call.catch(() => undefined));
    state.ok = true;
    return;
  }
  const item = (read.contents.find((c) => c.uri === uri) ?? read.contents[0]) as Json | undefined;
  if (!item || item.mimeType !== RESOURCE_MIME_TYPE) {
    note("host", `no UI: ${uri} has mimeType ${String(item?.mimeType)}, not ${RESOURCE_MIME_TYPE}`);
    showFallback(await call.catch(() => undefined));
    state.ok = true;
    return;
  }
  const html = typeof item.text === "string" ? item.text : decodeBlob(String(item.blob ?? ""));
  // `_meta.ui` of the read content item wins over the resources/list entry's, field by field.
  const ui: Json = { ...(uiMeta(listed) ?? {}), ...(uiMeta(item) ?? {}) };
  note("host", `resource ${uri}: ${html.length} chars, _meta.ui ${JSON.stringify(ui)} ` +
    `(read item: ${uiMeta(item) ? "yes" : "no"}, list entry: ${listed ? (uiMeta(listed) ? "yes" : "no") : "unlisted"})`);

  // The View's proxied requests: through the same client, or (drop-capability) a second one
  // that does not declare the ui extension.
  const viewClient = cfg.variant === "drop-capability" ? await connectClient("mcp-view", false) : client;
  const view = new View({
    client: viewClient,
    hostInfo: HOST_INFO,
    cfg,
    state,
    tool,
    html,
    ui,
    serverCaps,
    tools: byName,
    relistTools: async () => {
      for (const t of await allTools(client)) byName.set(t.name, t);
    },
    onRequestTeardown: () => void teardown(),
  });
  bridge = view.bridge;
  await view.connect();

  note("host", `waiting for the View's initialized (policy: ${state.policy ?? "none"})`);
  try {
    await waitFor(view.initialized, cfg.waitMs, "the View's initialized");
  } catch (e) {
    note("host", `${errorText(e)}: no tool-input or result sent`);
    state.ok = true;
    return;
  }
  for (let k = 1; k <= cfg.partials && !view.inputSent; k++) {
    await view.bridge.sendToolInputPartial({ arguments: partialArguments(cfg.args, k / (cfg.partials + 1)) });
  }
  view.sendInput();
  let result: CallToolResult | undefined;
  try {
    result = await call;
    state.result = result;
    await view.bridge.sendToolResult(result);
  } catch (e) {
    state.cancelled = e instanceof Error ? e.message : String(e);
    await view.bridge.sendToolCancelled({ reason: state.cancelled });
  }
  // A host-side change after a moment: the theme flips.
  await new Promise((r) => setTimeout(r, 300));
  note("host", `host-context-changed: theme ${view.toggleTheme()}`);
  state.ok = true;
}

main()
  .catch((e) => {
    state.ok = false;
    state.error = errorText(e);
    note("error", state.error);
  })
  .finally(() => {
    document.documentElement.dataset.done = state.ok ? "ok" : "error";
    resolveDone(state);
  });
