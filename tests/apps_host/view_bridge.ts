// The View side of the MCP Apps test host (host.ts): the official AppBridge
// (@modelcontextprotocol/ext-apps/app-bridge) to the View, the frame the View runs in (the
// sandbox proxy on a second origin, sandbox.html; or, `no-proxy`, a srcdoc frame of the host
// page), the host's answers to the View's requests, and the guards AppBridge leaves to the host:
// messages only from the frame's origin, no request before `initialized`, no tools/call of a
// tool hidden from apps. The variants' deviations on this side are marked DEVIATION.

import { ProtocolError, type Client, type ServerCapabilities, type Tool } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  buildAllowAttribute,
  type McpUiHostCapabilities,
  type McpUiHostContext,
  type McpUiResourceCsp,
  type McpUiResourcePermissions,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { buildCsp, withCsp } from "./csp";
import { LoggedTransport, note, type Json, type Summary } from "./log";

const HOST_MODES = ["inline", "fullscreen"] as const;

type Variables = NonNullable<NonNullable<McpUiHostContext["styles"]>["variables"]>;

export interface ViewOptions {
  /** The client the View's proxied requests go through (drop-capability: one that does not
   * declare the ui extension). */
  client: Client;
  hostInfo: { name: string; version: string };
  /** The host's query parameters (host.ts `cfg`). */
  cfg: { variant: string; sandbox: string; theme: "light" | "dark"; args: Json };
  /** The summary: `rendered`, `policy` and `initialized` are set here. */
  state: Summary;
  /** The tool called, with a UI resource. */
  tool: Tool;
  /** The View: its HTML and its resource's `_meta.ui`. */
  html: string;
  ui: Json;
  serverCaps: ServerCapabilities;
  /** The server's tools by name, and how to list them again into it (a tool the View calls that
   * is not in it yet). */
  tools: Map<string, Tool>;
  relistTools: () => Promise<void>;
  /** Called when the View asks for teardown. */
  onRequestTeardown: () => void;
}

export function waitFor<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)),
  ]);
}

/** One View: the bridge and its handlers, and the frame on the page, on construction; the bridge
 * connected to the frame by `connect()`. */
export class View {
  readonly bridge: AppBridge;
  /** Resolves once the View sent ui/notifications/initialized. */
  readonly initialized: Promise<void>;
  private readonly opts: ViewOptions;
  private readonly csp: McpUiResourceCsp | undefined;
  private readonly permissions: McpUiResourcePermissions | undefined;
  private readonly frame: HTMLIFrameElement;
  private readonly proxyReady: Promise<void> | undefined;
  private displayMode: "inline" | "fullscreen" | "pip";
  // Never changed in place: AppBridge keeps the object it is given and diffs the next one.
  private hostContext: McpUiHostContext;
  private sent: boolean;

  constructor(opts: ViewOptions) {
    const { cfg, state, ui, serverCaps } = opts;
    this.opts = opts;
    this.csp = ui.csp as McpUiResourceCsp | undefined;
    this.permissions = ui.permissions as McpUiResourcePermissions | undefined;
    this.sent = false;

    this.displayMode = "inline";
    const frameBox = document.getElementById("view")!;
    if (ui.prefersBorder === true) frameBox.classList.add("border");
    this.hostContext = {
      toolInfo: { tool: opts.tool },
      theme: cfg.theme,
      styles: {
        variables: {
          "--color-background-primary": cfg.theme === "dark" ? "#1e1e1e" : "#ffffff",
          "--color-text-primary": cfg.theme === "dark" ? "#eeeeee" : "#111111",
          "--font-sans": "system-ui, sans-serif",
        } as Variables, // the SDK's type lists every standard key; a host sends the ones it has
      },
      displayMode: this.displayMode,
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
      sandbox: { csp: this.csp ?? {}, permissions: this.permissions ?? {} },
    };
    const b = new AppBridge(opts.client, opts.hostInfo, capabilities, { hostContext: { ...this.hostContext } });
    this.bridge = b;

    let resolveInitialized!: () => void;
    this.initialized = new Promise<void>((r) => (resolveInitialized = r));
    b.oninitialized = () => {
      state.initialized = true;
      note("host", "the View is initialized");
      resolveInitialized();
    };
    this.answerRequests(frameBox);
    const { frame, proxyReady } = this.createFrame(frameBox);
    this.frame = frame;
    this.proxyReady = proxyReady;
  }

  /** The host's handlers of the View's requests and notifications. */
  private answerRequests(frameBox: HTMLElement): void {
    const b = this.bridge;
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
      this.opts.onRequestTeardown();
    };
    b.onrequestdisplaymode = async (params) => {
      const declared = b.getAppCapabilities()?.availableDisplayModes ?? [];
      const mode = params.mode;
      if (declared.includes(mode) && (HOST_MODES as readonly string[]).includes(mode)) {
        this.displayMode = mode;
        frameBox.classList.toggle("fullscreen", mode === "fullscreen");
        note("host", `display mode -> ${mode}`);
        this.hostContext = { ...this.hostContext, displayMode: mode };
        b.setHostContext(this.hostContext);
      } else {
        note("host", `display mode ${mode} refused (View declared ${JSON.stringify(declared)}); stays ${this.displayMode}`);
      }
      return { mode: this.displayMode };
    };
  }

  /** The frame: a proxy on the sandbox origin (good), or the View itself (no-proxy); on the page.
   * `proxyReady` resolves on the proxy's sandbox-proxy-ready. */
  private createFrame(frameBox: HTMLElement): { frame: HTMLIFrameElement; proxyReady: Promise<void> | undefined } {
    const { cfg, state, html } = this.opts;
    const frame = document.createElement("iframe");
    frame.title = "MCP App";
    const allow = buildAllowAttribute(this.permissions);
    if (allow) frame.setAttribute("allow", allow); // the proxy must hold what it delegates
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    this.bridge.onsizechange = ({ width, height }) => {
      if (height !== undefined) frame.style.height = `${Math.ceil(height)}px`;
      if (width !== undefined) frame.style.minWidth = `min(${Math.ceil(width)}px, 100%)`;
      note("host", `size-changed ${width ?? "-"}x${height ?? "-"}: iframe height ${frame.style.height}`);
    };

    let proxyReady: Promise<void> | undefined;
    if (cfg.variant === "no-proxy") {
      // DEVIATION no-proxy: the View's HTML straight into an iframe of this page (srcdoc), with
      // the same policy and permissions, but no proxy frame and no second origin.
      state.policy = buildCsp(this.csp);
      frame.srcdoc = withCsp(html, state.policy);
    } else {
      const proxyUrl = new URL(cfg.sandbox);
      if (proxyUrl.origin === window.location.origin) throw new Error("the sandbox proxy must be on another origin");
      // DEVIATION ignore-csp: the proxy is told to apply no policy at all.
      if (cfg.variant === "ignore-csp") proxyUrl.searchParams.set("csp", "off");
      state.policy = cfg.variant === "ignore-csp" ? null : buildCsp(this.csp);
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
    return { frame, proxyReady };
  }

  /** Once the proxy is ready: the bridge connected to the frame, the View's requests guarded,
   * and (but for no-proxy) the View's HTML handed to the proxy. */
  async connect(): Promise<void> {
    const { cfg, html } = this.opts;
    const b = this.bridge;
    const frame = this.frame;
    if (this.proxyReady) await waitFor(this.proxyReady, 10000, "sandbox-proxy-ready");

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
    if (cfg.variant === "early-input") {
      // DEVIATION early-input: tool-input as soon as the View's ui/initialize arrives, before
      // the View has sent `initialized` (before the bridge even answered).
      transport.onIncoming = (msg) => {
        if (msg.method === "ui/initialize") this.sendInput();
      };
    }
    await b.connect(transport);
    this.guardRequests();

    if (cfg.variant !== "no-proxy") {
      await b.sendSandboxResourceReady({ html, csp: this.csp, permissions: this.permissions });
    }
  }

  /** The guards on the View's requests, set once the bridge is connected (AppBridge's own
   * forwarding handlers are there from then on). */
  private guardRequests(): void {
    const { cfg, state, tools, relistTools } = this.opts;
    const b = this.bridge;
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
        let target = tools.get(params.name);
        if (!target) {
          await relistTools();
          target = tools.get(params.name);
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
  }

  /** Whether tool-input went to the View (early-input: perhaps before `initialized`). */
  get inputSent(): boolean {
    return this.sent;
  }

  /** tool-input with the call's arguments, once. */
  sendInput(): void {
    if (this.sent) return;
    this.sent = true;
    void this.bridge.sendToolInput({ arguments: this.opts.cfg.args });
  }

  /** A host-side change: the theme flips (host-context-changed); returns the new theme. */
  toggleTheme(): McpUiHostContext["theme"] {
    this.hostContext = { ...this.hostContext, theme: this.hostContext.theme === "dark" ? "light" : "dark" };
    document.documentElement.dataset.theme = this.hostContext.theme;
    this.bridge.setHostContext(this.hostContext);
    return this.hostContext.theme;
  }
}
