// The record of the MCP Apps test host (host.ts): `log` (window.__host.log) holds every step,
// every bridge message (both ways) and every MCP request, each also a line of the page's #log;
// `Summary` is what window.__host.done resolves with.

import type { CallToolResult, JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from "@modelcontextprotocol/client";
import type { PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

export type Json = Record<string, unknown>;

export interface LogEntry {
  t: number; // ms since the page started
  kind: string; // "host" | "error" | "view->host" | "host->view" | "mcp" | "mcp-view"
  text: string;
  msg?: unknown;
}

export interface Summary {
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

const started = performance.now();
export const log: LogEntry[] = [];
const logView = document.getElementById("log");

export function note(kind: string, text: string, msg?: unknown): void {
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

export function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/** A JSON-RPC message in one line: its id, method (with the name, uri or mode it is about) or
 * error, or "result". */
export function brief(msg: Json): string {
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
export class LoggedTransport implements Transport {
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
