// The Content-Security-Policy a View runs under, built from its resource's `_meta.ui.csp`
// (MCP Apps, "UI resource" / "Sandbox proxy"): the restrictive default when nothing is declared,
// each declared list added to its directives only (never loosened), `object-src 'none'`.
// Shared by the sandbox proxy (sandbox.ts) and the `no-proxy` variant of the host (view_bridge.ts).

export interface UiCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

export interface UiPermissions {
  camera?: object;
  microphone?: object;
  geolocation?: object;
  clipboardWrite?: object;
}

/** The declared sources that are a single source expression: no `;`, quotes, spaces or line
 * breaks, which could add a directive or a keyword such as 'unsafe-eval' (as basic-host). */
function sources(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.filter((d): d is string => typeof d === "string" && d.length > 0 && !/[;,'"\s]/.test(d));
}

/** The policy for a View whose resource declared `csp` (undefined or {}: the default). */
export function buildCsp(csp: UiCsp | undefined): string {
  const resource = sources(csp?.resourceDomains);
  const connect = sources(csp?.connectDomains);
  const frame = sources(csp?.frameDomains);
  const baseUri = sources(csp?.baseUriDomains);
  const list = (base: string[], extra: string[]) => [...base, ...extra].join(" ");
  return [
    "default-src 'none'",
    `script-src ${list(["'self'", "'unsafe-inline'"], resource)}`,
    `style-src ${list(["'self'", "'unsafe-inline'"], resource)}`,
    `img-src ${list(["'self'", "data:"], resource)}`,
    `font-src ${list(["'self'", "data:"], resource)}`,
    `media-src ${list(["'self'", "data:"], resource)}`,
    `connect-src ${connect.length ? connect.join(" ") : "'none'"}`,
    `frame-src ${frame.length ? frame.join(" ") : "'none'"}`,
    `base-uri ${baseUri.length ? baseUri.join(" ") : "'self'"}`,
    "object-src 'none'",
  ].join("; ");
}

/** The document a View's HTML is written as so that `policy` covers all of it: a `<meta
 * http-equiv="Content-Security-Policy">` opens the head before any of the View's own markup
 * (its doctype, `<html>` and `<head>` tags then merge into these, as the HTML parser does). A
 * meta policy can only be tightened by the View (a second policy adds restrictions), never
 * lifted, also by removing the element. */
export function withCsp(html: string, policy: string): string {
  const content = policy.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  return `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="${content}">` + html;
}

/** The iframe `allow` attribute (Permissions Policy) for the declared permissions, as the SDK's
 * buildAllowAttribute: e.g. "camera; clipboard-write". */
export function allowAttribute(permissions: UiPermissions | undefined): string {
  if (!permissions) return "";
  const features: string[] = [];
  if (permissions.camera) features.push("camera");
  if (permissions.microphone) features.push("microphone");
  if (permissions.geolocation) features.push("geolocation");
  if (permissions.clipboardWrite) features.push("clipboard-write");
  return features.join("; ");
}
