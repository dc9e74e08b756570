// The MCP Apps test host (host.html): the official TypeScript client
// (@modelcontextprotocol/client) talks to the server, the official AppBridge
// (@modelcontextprotocol/ext-apps/app-bridge) to the View, which runs behind a sandbox proxy
// (sandbox.html) on a second origin. Bundled by scripts/apps_host.sh into one file.
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
  ProtocolError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type ClientCapabilities,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
  type Tool,
} from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  buildAllowAttribute,
  getToolUiResourceUri,
  type McpUiHostCapabilities,
  type McpUiHostContext,
  type McpUiResourceCsp,
  type McpUiResourcePermissions,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { buildCsp, withCsp } from "./csp";

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const MODERN = "2026-07-28";
const HOST_INFO = { name: "everything-mcp-apps-host", version: "1.0.0" };
const HOST_MODES = ["inline", "fullscreen"] as const;
const TEARDOWN_TIMEOUT_MS = 3000;
const VARIANTS = ["good", "early-input", "forward-model-only", "no-proxy", "ignore-csp", "drop-capability"];

type Json = Record<string, unknown>;
interface LogEntry {
  t: number; // ms since the page started
  kind: string; // "host" | "error" | "view->host" | "host->view" | "mcp" | "mcp-view"
  text: string;
  msg?: unknown;
}

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

const started = performance.now();
const log: LogEntry[] = [];
const logView = document.getElementById("log");
function note(kind: string, text: string, msg?: unknown): void {
  const entry: LogEntry = { t: Math.round(performance.now() - started), kind, text };
  if (msg !== undefined) entry.msg = msg;
  log.push(entry);
  if (logView) {
    const line = document.createElement("div");
    line.className = `k-${kind.replace(/[^a-z]/g, "")}`;
    line.textContent = `${String(entry.t).padStart(6)} ${kind.padEnd(10)} ${text}`;
    logView.appendChild(line);
  }
}

interface Summary {
  ok: boolean;
  error?: string;
  era?: string;
  protocolVersion?: string;
  variant: string;
  tool: string;
  resourceUri?: string;
  rendered: boolean;
  initialized: boolean;
  result?: CallToolResult;
  cancelled?: string;
  policy?: string | null;
}
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

function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

function brief(msg: Json): string {
  const id = msg.id !== undefined ? `#${String(msg.id)} ` : "";
  if (typeof msg.method === "string") {
    const params = msg.params as Json | undefined;
    const name = params && typeof params.name === "string" ? ` ${params.name}` : "";
    const uri = params && typeof params.uri === "string" ? ` ${params.uri}` : "";
    const mode = params && typeof params.mode === "string" ? ` ${params.mode}` : "";
    return `${id}${msg.method}${name}${uri}${mode}`;
  }
  if (msg.error !== undefined) {
    const err = msg.error as Json;
    return `${id}error ${String(err.code)} ${String(err.message)}`;
  }
  return `${id}result`;
}

/** A copy fit for the log: the View's HTML replaced by its length. */
function loggable(msg: Json): Json {
  if (msg.method === "ui/notifications/sandbox-resource-ready") {
    const params = { ...(msg.params as Json) };
    if (typeof params.html === "string") params.html = `<${params.html.length} chars>`;
    return { ...msg, params };
  }
  return msg;
}

/** The bridge's postMessage transport, every message logged both ways; `onIncoming` sees a
 * View message before the bridge does. */
class LoggedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  onIncoming?: (message: Json) => void;
  constructor(private inner: PostMessageTransport) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e: Error) => this.onerror?.(e);
    inner.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
      note("view->host", brief(message as Json), message);
      this.onIncoming?.(message as Json);
      this.onmessage?.(message, extra);
    };
  }
  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    note("host->view", brief(message as Json), loggable(message as Json));
    return this.inner.send(message, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

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

function waitFor<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)),
  ]);
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
  let tools = await allTools(client);
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
  const csp = ui.csp as McpUiResourceCsp | undefined;
  const permissions = ui.permissions as McpUiResourcePermissions | undefined;

  // The View's proxied requests: through the same client, or (drop-capability) a second one
  // that does not declare the ui extension.
  const viewClient = cfg.variant === "drop-capability" ? await connectClient("mcp-view", false) : client;

  let displayMode: "inline" | "fullscreen" | "pip" = "inline";
  const frameBox = document.getElementById("view")!;
  if (ui.prefersBorder === true) frameBox.classList.add("border");
  type Variables = NonNullable<NonNullable<McpUiHostContext["styles"]>["variables"]>;
  // Never changed in place: AppBridge keeps the object it is given and diffs the next one.
  let hostContext: McpUiHostContext = {
    toolInfo: { tool },
    theme: cfg.theme,
    styles: {
      variables: {
        "--color-background-primary": cfg.theme === "dark" ? "#1e1e1e" : "#ffffff",
        "--color-text-primary": cfg.theme === "dark" ? "#eeeeee" : "#111111",
        "--font-sans": "system-ui, sans-serif",
      } as Variables, // the SDK's type lists every standard key; a host sends the ones it has
    },
    displayMode,
    availableDisplayModes: [...HOST_MODES],
    containerDimensions: { width: frameBox.clientWidth || 760, maxHeight: 4000 },
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    userAgent: navigator.userAgent,
    platform: "web",
    deviceCapabilities: { touch: false, hover: true },
    safeAreaInsets: { top: 0, right: 0, bottom: 0, left: 0 },
  };
  const capabilities: McpUiHostCapabilities = {
    openLinks: {},
    downloadFile: {},
    serverTools: serverCaps.tools ? { listChanged: !!serverCaps.tools.listChanged } : undefined,
    serverResources: serverCaps.resources ? { listChanged: !!serverCaps.resources.listChanged } : undefined,
    logging: {},
    updateModelContext: { text: {}, image: {}, resource: {}, resourceLink: {}, structuredContent: {} },
    message: { text: {}, image: {}, resource: {}, resourceLink: {} },
    sandbox: { csp: csp ?? {}, permissions: permissions ?? {} },
  };
  const b = new AppBridge(viewClient, HOST_INFO, capabilities, { hostContext: { ...hostContext } });
  bridge = b;

  let resolveInitialized!: () => void;
  const initialized = new Promise<void>((r) => (resolveInitialized = r));
  b.oninitialized = () => {
    state.initialized = true;
    note("host", "the View is initialized");
    resolveInitialized();
  };
  b.onmessage = async (params) => {
    note("host", `ui/message (${params.role}): ${JSON.stringify(params.content).slice(0, 200)}`);
    return {};
  };
  b.onopenlink = async (params) => {
    // A real host opens a tab; this one records the link (the test browser stays offline).
    note("host", `ui/open-link ${params.url}`);
    return {};
  };
  b.onupdatemodelcontext = async (params) => {
    note("host", `ui/update-model-context (kept for the next turn): ${JSON.stringify(params).slice(0, 200)}`);
    return {};
  };
  b.ondownloadfile = async (params) => {
    note("host", `ui/download-file: ${params.contents.length} item(s)`);
    return {};
  };
  b.onloggingmessage = (params) => note("host", `log from the View [${params.level}]: ${JSON.stringify(params.data)}`);
  b.onrequestteardown = () => {
    note("host", "the View asked for teardown");
    void teardown();
  };
  b.onrequestdisplaymode = async (params) => {
    const declared = b.getAppCapabilities()?.availableDisplayModes ?? [];
    const mode = params.mode;
    if (declared.includes(mode) && (HOST_MODES as readonly string[]).includes(mode)) {
      displayMode = mode;
      frameBox.classList.toggle("fullscreen", mode === "fullscreen");
      note("host", `display mode -> ${mode}`);
      hostContext = { ...hostContext, displayMode: mode };
      b.setHostContext(hostContext);
    } else {
      note("host", `display mode ${mode} refused (View declared ${JSON.stringify(declared)}); stays ${displayMode}`);
    }
    return { mode: displayMode };
  };

  // The frame: a proxy on the sandbox origin (good), or the View itself (no-proxy).
  const frame = document.createElement("iframe");
  frame.title = "MCP App";
  const allow = buildAllowAttribute(permissions);
  if (allow) frame.setAttribute("allow", allow); // the proxy must hold what it delegates
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  b.onsizechange = ({ width, height }) => {
    if (height !== undefined) frame.style.height = `${Math.ceil(height)}px`;
    if (width !== undefined) frame.style.minWidth = `min(${Math.ceil(width)}px, 100%)`;
    note("host", `size-changed ${width ?? "-"}x${height ?? "-"}: iframe height ${frame.style.height}`);
  };

  let proxyReady: Promise<void> | undefined;
  if (cfg.variant === "no-proxy") {
    // DEVIATION no-proxy: the View's HTML straight into an iframe of this page (srcdoc), with
    // the same policy and permissions, but no proxy frame and no second origin.
    state.policy = buildCsp(csp);
    frame.srcdoc = withCsp(html, state.policy);
  } else {
    const proxyUrl = new URL(cfg.sandbox);
    if (proxyUrl.origin === window.location.origin) throw new Error("the sandbox proxy must be on another origin");
    // DEVIATION ignore-csp: the proxy is told to apply no policy at all.
    if (cfg.variant === "ignore-csp") proxyUrl.searchParams.set("csp", "off");
    state.policy = cfg.variant === "ignore-csp" ? null : buildCsp(csp);
    proxyReady = new Promise<void>((resolve) => {
      const listener = (event: MessageEvent) => {
        if (event.source === frame.contentWindow && event.origin === proxyUrl.origin &&
            event.data?.method === "ui/notifications/sandbox-proxy-ready") {
          window.removeEventListener("message", listener);
          note("view->host", "ui/notifications/sandbox-proxy-ready (from the proxy)", event.data);
          resolve();
        }
      };
      window.addEventListener("message", listener);
    });
    frame.src = proxyUrl.href;
  }
  frameBox.appendChild(frame);
  state.rendered = true;
  if (proxyReady) await waitFor(proxyReady, 10000, "sandbox-proxy-ready");

  // PostMessageTransport accepts any message from the frame's window: drop those that do not
  // come from the origin the frame should have (the proxy's; this page's for a srcdoc frame).
  const frameOrigin = cfg.variant === "no-proxy" ? window.location.origin : new URL(cfg.sandbox).origin;
  window.addEventListener("message", (event) => {
    if (event.source === frame.contentWindow && event.origin !== frameOrigin) {
      event.stopImmediatePropagation();
      note("host", `dropped a message from the View's frame with origin ${event.origin} (expected ${frameOrigin})`);
    }
  }, true);
  const transport = new LoggedTransport(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  let inputSent = false;
  const sendInput = () => {
    if (inputSent) return;
    inputSent = true;
    void b.sendToolInput({ arguments: cfg.args });
  };
  if (cfg.variant === "early-input") {
    // DEVIATION early-input: tool-input as soon as the View's ui/initialize arrives, before
    // the View has sent `initialized` (before the bridge even answered).
    transport.onIncoming = (msg) => {
      if (msg.method === "ui/initialize") sendInput();
    };
  }
  await b.connect(transport);

  // AppBridge only warns about a View request before `initialized`: refuse them (every host
  // method and every forwarded one; ui/initialize and ping are the bridge's own, never gated).
  function gated<P, X, R>(
    method: string,
    handler: ((params: P, extra: X) => Promise<R>) | undefined,
  ): ((params: P, extra: X) => Promise<R>) | undefined {
    if (!handler) return handler;
    return async (params: P, extra: X) => {
      if (!state.initialized) {
        note("host", `refused the View's ${method}: it came before ui/notifications/initialized`);
        throw new ProtocolError(-32600, `${method} before ui/notifications/initialized`);
      }
      return handler(params, extra);
    };
  }

  if (cfg.variant !== "forward-model-only") {
    // AppBridge forwards a View's tools/call to the server whatever the tool's visibility:
    // refuse tools whose `_meta.ui.visibility` lacks "app" (omitted means ["model","app"]).
    const forward = b.oncalltool!;
    b.oncalltool = async (params, extra) => {
      let target = byName.get(params.name);
      if (!target) {
        tools = await allTools(client);
        for (const t of tools) byName.set(t.name, t);
        target = byName.get(params.name);
      }
      const visibility = (target?._meta?.ui as { visibility?: unknown } | undefined)?.visibility;
      if (target && Array.isArray(visibility) && !visibility.includes("app")) {
        note("host", `refused the View's tools/call ${params.name}: visibility ${JSON.stringify(visibility)}`);
        throw new ProtocolError(-32000, `tool ${params.name} is not available to apps (visibility ${JSON.stringify(visibility)})`);
      }
      return forward(params, extra);
    };
  } // DEVIATION forward-model-only: AppBridge's own forwarding, unguarded.
  b.oncalltool = gated("tools/call", b.oncalltool);
  b.onreadresource = gated("resources/read", b.onreadresource);
  b.onlistresources = gated("resources/list", b.onlistresources);
  b.onlistresourcetemplates = gated("resources/templates/list", b.onlistresourcetemplates);
  b.onlistprompts = gated("prompts/list", b.onlistprompts);
  b.onmessage = gated("ui/message", b.onmessage);
  b.onopenlink = gated("ui/open-link", b.onopenlink);
  b.onupdatemodelcontext = gated("ui/update-model-context", b.onupdatemodelcontext);
  b.ondownloadfile = gated("ui/download-file", b.ondownloadfile);
  b.onrequestdisplaymode = gated("ui/request-display-mode", b.onrequestdisplaymode);

  if (cfg.variant !== "no-proxy") {
    await b.sendSandboxResourceReady({ html, csp, permissions });
  }
  note("host", `waiting for the View's initialized (policy: ${state.policy ?? "none"})`);
  try {
    await waitFor(initialized, cfg.waitMs, "the View's initialized");
  } catch (e) {
    note("host", `${errorText(e)}: no tool-input or result sent`);
    state.ok = true;
    return;
  }
  for (let k = 1; k <= cfg.partials && !inputSent; k++) {
    await b.sendToolInputPartial({ arguments: partialArguments(cfg.args, k / (cfg.partials + 1)) });
  }
  sendInput();
  let result: CallToolResult | undefined;
  try {
    result = await call;
    state.result = result;
    await b.sendToolResult(result);
  } catch (e) {
    state.cancelled = e instanceof Error ? e.message : String(e);
    await b.sendToolCancelled({ reason: state.cancelled });
  }
  // A host-side change after a moment: the theme flips.
  await new Promise((r) => setTimeout(r, 300));
  hostContext = { ...hostContext, theme: hostContext.theme === "dark" ? "light" : "dark" };
  document.documentElement.dataset.theme = hostContext.theme;
  b.setHostContext(hostContext);
  note("host", `host-context-changed: theme ${hostContext.theme}`);
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
