// The sandbox proxy of the MCP Apps test host (sandbox.html, served on an origin other than the
// host page's), modelled on ext-apps' examples/basic-host/src/sandbox.ts:
//
//   host page (host.ts) <-> this proxy frame <-> the View's inner frame
//
// - It announces itself with `ui/notifications/sandbox-proxy-ready` to the page that embeds it
//   (its origin from document.referrer) and waits for `ui/notifications/sandbox-resource-ready
//   {html, sandbox?, csp?, permissions?}`.
// - It writes the View's HTML into an inner iframe (same origin as this proxy, sandboxed
//   `allow-scripts allow-same-origin allow-forms`, with `allow` from the permissions) with
//   document.write, as basic-host does. basic-host puts the policy in an HTTP header of
//   sandbox.html, which the inner about:blank document inherits; our pages come from a plain
//   static server, so sandbox.html is served WITHOUT a policy (nothing to inherit) and the policy
//   built from `csp` (csp.ts) is a <meta http-equiv> written ahead of the View's own markup.
//   `?csp=off` in this page's URL (the host's `ignore-csp` variant) writes the HTML with no policy.
// - It relays every other JSON-RPC message both ways, never `ui/notifications/sandbox-*`, and
//   only from the expected origins (the host's; its own for the inner frame).

import { allowAttribute, buildCsp, withCsp, type UiCsp, type UiPermissions } from "./csp";

const PROXY_READY = "ui/notifications/sandbox-proxy-ready";
const RESOURCE_READY = "ui/notifications/sandbox-resource-ready";
const RESERVED = "ui/notifications/sandbox-";

interface ProxyState {
  hostOrigin: string;
  policy: string | null;
  allow: string;
  sandbox: string;
  relayed: { toView: number; toHost: number; dropped: number };
}

function fail(message: string): never {
  document.body.textContent = `sandbox proxy: ${message}`;
  throw new Error(message);
}

if (window.self === window.top) fail("this page only runs inside the host's iframe");
if (!document.referrer) fail("no referrer: cannot tell the host's origin");
const HOST_ORIGIN = new URL(document.referrer).origin;
const OWN_ORIGIN = window.location.origin;
if (HOST_ORIGIN === OWN_ORIGIN) fail(`the host and the proxy share the origin ${OWN_ORIGIN}`);
const APPLY_CSP = new URLSearchParams(window.location.search).get("csp") !== "off";

const state: ProxyState = {
  hostOrigin: HOST_ORIGIN,
  policy: null,
  allow: "",
  sandbox: "allow-scripts allow-same-origin allow-forms",
  relayed: { toView: 0, toHost: 0, dropped: 0 },
};
(window as unknown as { __proxy: ProxyState }).__proxy = state;

const inner = document.createElement("iframe");
inner.setAttribute("sandbox", state.sandbox);
inner.setAttribute("title", "MCP App view");
document.body.appendChild(inner);
let loaded = false;

function isReserved(data: unknown): boolean {
  const method = (data as { method?: unknown } | null)?.method;
  return typeof method === "string" && method.startsWith(RESERVED);
}

function load(params: { html?: unknown; sandbox?: unknown; csp?: UiCsp; permissions?: UiPermissions }): void {
  if (loaded) return; // one View per proxy
  if (typeof params.html !== "string") return;
  loaded = true;
  if (typeof params.sandbox === "string") {
    state.sandbox = params.sandbox;
    inner.setAttribute("sandbox", params.sandbox);
  }
  state.allow = allowAttribute(params.permissions);
  if (state.allow) inner.setAttribute("allow", state.allow);
  state.policy = APPLY_CSP ? buildCsp(params.csp) : null;
  document.documentElement.dataset.policy = state.policy ?? "none";
  const html = state.policy === null ? params.html : withCsp(params.html, state.policy);
  const doc = inner.contentDocument;
  if (doc) {
    doc.open();
    doc.write(html);
    doc.close();
  } else {
    // The inner frame is cross-origin (a `sandbox` without allow-same-origin): srcdoc then, which
    // carries the same meta policy.
    inner.srcdoc = html;
  }
}

window.addEventListener("message", (event: MessageEvent) => {
  const data = event.data;
  if (event.source === window.parent) {
    if (event.origin !== HOST_ORIGIN) {
      state.relayed.dropped++;
      console.error("[sandbox] message from an unexpected origin", event.origin);
      return;
    }
    if (data?.method === RESOURCE_READY) {
      load(data.params ?? {});
    } else if (isReserved(data)) {
      state.relayed.dropped++;
    } else {
      state.relayed.toView++;
      inner.contentWindow?.postMessage(data, "*");
    }
  } else if (event.source === inner.contentWindow) {
    // The inner frame shares this origin unless the host's `sandbox` dropped allow-same-origin
    // (then it is opaque: "null").
    const expected = inner.getAttribute("sandbox")?.includes("allow-same-origin") ? OWN_ORIGIN : "null";
    if (event.origin !== expected || isReserved(data)) {
      state.relayed.dropped++;
      return;
    }
    state.relayed.toHost++;
    window.parent.postMessage(data, HOST_ORIGIN);
  }
});

window.parent.postMessage({ jsonrpc: "2.0", method: PROXY_READY, params: {} }, HOST_ORIGIN);
