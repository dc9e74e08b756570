/* everything-mcp MCP Apps view bridge: raw JSON-RPC 2.0 over window.parent.postMessage, no SDK
 * (an SDK's leniency must not hide a host's bug). The server inlines this file into every view,
 * in place of the bridge marker comment inside that view's own inline script element; a view is
 * always served as one self-contained HTML document. It provides:
 *   - the config the server injected (#everything-mcp-config),
 *   - requests with a timeout (never rejecting: {kind:"result"|"error"|"timeout"}), notifications,
 *     handlers for the host's notifications and requests (ping answered, unknown requests -32601),
 *   - the record of what the host sent before the view's ui/notifications/initialized,
 *   - the checklist (id, status, evidence), its rendering, and the apps_submit_results submission.
 * Views read it as the global EMCP. This file must never contain a closing script tag, the
 * bridge marker or the config marker (the server replaces both everywhere). */
var EMCP = (function () {
  "use strict";

  var PROTOCOL_VERSION = "2026-01-26";
  var APP_INFO = { name: "everything-mcp-view", version: "1.0.0" };
  var PASS = "pass", FAIL = "fail", NE = "not exercised", PENDING = "pending";
  var NO_REPLY = { noReply: true };

  var DEFAULT_CONFIG = {
    view: "selftest", variant: "default", resourceUri: "ui://everything-mcp/selftest",
    probes: { declared: null, undeclared: null },
    expect: { connectDeclared: "allowed", connectUndeclared: "blocked", scriptDeclared: "allowed",
      frameDeclared: "blocked", permissions: [], displayModes: ["inline", "fullscreen"] },
    tools: { submit: "apps_submit_results", appOnly: "apps_app_only", modelOnly: "apps_model_only",
      unknown: "apps_no_such_tool", early: "apps_early_probe", inputRequired: "apps_input_required",
      task: "apps_task" }
  };

  function readConfig() {
    var el = document.getElementById("everything-mcp-config");
    var text = el ? el.textContent : "";
    try {
      var parsed = JSON.parse(text);
      if (!parsed || typeof parsed !== "object") throw new Error("not an object");
      var cfg = Object.assign({}, DEFAULT_CONFIG, parsed);
      ["probes", "expect", "tools"].forEach(function (k) {
        cfg[k] = Object.assign({}, DEFAULT_CONFIG[k], parsed[k] || {});
      });
      return { config: cfg, error: null };
    } catch (e) {
      return { config: DEFAULT_CONFIG, error: "config not injected or not JSON (" + (el ? "placeholder left" : "no #everything-mcp-config") + "): defaults used" };
    }
  }

  var rc = readConfig();
  var t0 = (window.performance && performance.now) ? performance.now() : Date.now();

  var B = {
    PROTOCOL_VERSION: PROTOCOL_VERSION, APP_INFO: APP_INFO,
    PASS: PASS, FAIL: FAIL, NE: NE, PENDING: PENDING, NO_REPLY: NO_REPLY,
    config: rc.config, configError: rc.error,
    host: { info: null, capabilities: null, context: null, protocolVersion: null },
    initializeSent: false, initializedSent: false,
    preInit: [],      // what the host sent before ui/notifications/initialized (no answers to us, no ping)
    received: [],     // every message from the host: {t, desc}
    strays: [],       // answers whose id the view never used (or already settled)
    correlationId: null, correlationSource: null,
    toolResults: 0,
    submissions: [],
    pingsAnswered: 0
  };

  B.now = function () {
    var t = (window.performance && performance.now) ? performance.now() : Date.now();
    return Math.round(t - t0);
  };
  B.sleep = function (ms) { return new Promise(function (r) { setTimeout(r, ms); }); };

  /* A short, safe description of anything (for evidence). */
  B.brief = function (value, max) {
    var s;
    try { s = typeof value === "string" ? value : JSON.stringify(value); } catch (e) { s = String(value); }
    if (s === undefined) s = String(value);
    max = max || 160;
    return s.length > max ? s.slice(0, max - 1) + "…" : s;
  };
  B.describeAnswer = function (a) {
    if (!a) return "nothing";
    if (a.kind === "timeout") return "no answer in " + (a.timeoutMs / 1000) + " s";
    if (a.kind === "error") return "error " + (a.error && a.error.code) + " " + B.brief(a.error && a.error.message, 120);
    return "result " + B.brief(a.result, 140);
  };
  /* Text of a CallToolResult's text blocks. */
  B.resultText = function (r) {
    if (!r || !Array.isArray(r.content)) return "";
    return r.content.filter(function (b) { return b && b.type === "text" && typeof b.text === "string"; })
      .map(function (b) { return b.text; }).join("\n");
  };

  /* ---- wire ---- */
  var nextId = 1;
  var pending = new Map();   // id -> {resolve, timer, method, onLate, settled}
  var notificationHandlers = {};
  var requestHandlers = {};
  var anyListeners = [];

  B.post = function (frame) { window.parent.postMessage(frame, "*"); };

  B.request = function (method, params, timeoutMs, opts) {
    var id = nextId++;
    var frame = { jsonrpc: "2.0", id: id, method: method };
    if (params !== undefined) frame.params = params;
    timeoutMs = timeoutMs || 3000;
    if (method === "ui/initialize") B.initializeSent = true;
    var started = B.now();
    return new Promise(function (resolve) {
      var entry = { method: method, onLate: opts && opts.onLate, settled: false };
      entry.resolve = function (answer) {
        if (entry.settled) {
          pending.delete(id);
          if (entry.onLate) entry.onLate(answer);
          return;
        }
        entry.settled = true;
        clearTimeout(entry.timer);
        pending.delete(id);
        answer.ms = B.now() - started;
        resolve(answer);
      };
      entry.timer = setTimeout(function () {
        entry.settled = true;
        if (!entry.onLate) pending.delete(id);   // a late answer then counts as a stray
        resolve({ kind: "timeout", timeoutMs: timeoutMs, ms: B.now() - started });
      }, timeoutMs);
      pending.set(id, entry);
      try { B.post(frame); } catch (e) {
        entry.settled = true; clearTimeout(entry.timer); pending.delete(id);
        resolve({ kind: "error", error: { code: "post", message: String(e) }, ms: 0 });
      }
    });
  };

  B.notify = function (method, params) {
    var frame = { jsonrpc: "2.0", method: method };
    if (params !== undefined) frame.params = params;
    B.post(frame);
  };
  B.reply = function (id, result) { B.post({ jsonrpc: "2.0", id: id, result: result }); };
  B.replyError = function (id, code, message) { B.post({ jsonrpc: "2.0", id: id, error: { code: code, message: message } }); };

  B.onNotification = function (method, fn) { (notificationHandlers[method] = notificationHandlers[method] || []).push(fn); };
  /* fn(params, frame) returns the result (or a promise of it), B.NO_REPLY to never answer, or throws {code, message}. */
  B.onRequest = function (method, fn) { requestHandlers[method] = fn; };
  B.onAny = function (fn) { anyListeners.push(fn); };

  function describeFrame(m) {
    if (m === null || typeof m !== "object") return "non-object frame " + B.brief(m, 60);
    if (typeof m.method === "string") return m.method + ("id" in m ? " (request)" : "");
    if ("id" in m) return "answer to unknown id " + B.brief(m.id, 40);
    return "frame " + B.brief(m, 60);
  }

  function handleRequest(m) {
    var fn = requestHandlers[m.method];
    if (m.method === "ping" && !fn) { B.pingsAnswered++; B.reply(m.id, {}); return; }
    if (!fn) { B.replyError(m.id, -32601, "Method not found: " + m.method); return; }
    Promise.resolve().then(function () { return fn(m.params, m); }).then(function (result) {
      if (result === NO_REPLY) return;
      B.reply(m.id, result === undefined ? {} : result);
    }, function (err) {
      B.replyError(m.id, (err && typeof err.code === "number") ? err.code : -32603, (err && err.message) || String(err));
    });
  }

  window.addEventListener("message", function (ev) {
    if (ev.source !== window.parent && ev.source !== window.top) return;   // e.g. the CSP frame probe
    if (ev.source === window) return;
    var m = ev.data;
    var t = B.now();
    var isObj = m !== null && typeof m === "object";
    var isAnswer = isObj && !("method" in m) && ("id" in m) && ("result" in m || "error" in m);
    var mine = isAnswer && pending.has(m.id);
    var isPing = isObj && m.method === "ping" && ("id" in m);
    B.received.push({ t: t, desc: mine ? "answer to " + pending.get(m.id).method : describeFrame(m) });
    if (B.received.length > 400) B.received.shift();
    if (!B.initializedSent && !mine && !isPing) B.preInit.push({ t: t, desc: describeFrame(m), frame: m });
    anyListeners.forEach(function (fn) { try { fn(m, { mine: mine }); } catch (e) { console.error(e); } });
    if (!isObj || m.jsonrpc !== "2.0") { render(); return; }
    if (isAnswer) {
      if (mine) {
        pending.get(m.id).resolve("error" in m ? { kind: "error", error: m.error } : { kind: "result", result: m.result });
      } else {
        B.strays.push({ t: t, frame: m });
      }
      return;
    }
    if (typeof m.method !== "string") { render(); return; }
    if ("id" in m && !requestHandlers[m.method] && notificationHandlers[m.method]) {
      // a notification the host sent with an id: handled as the notification it is, and told so
      B.replyError(m.id, -32600, m.method + " is a notification; it must not carry an id");
    } else if ("id" in m) { handleRequest(m); render(); return; }
    (notificationHandlers[m.method] || []).forEach(function (fn) {
      try { fn(m.params || {}, m); } catch (e) { console.error(e); }
    });
    render();
  });

  /* ---- correlation: the first tool-result's structuredContent.correlationId ---- */
  B.onNotification("ui/notifications/tool-result", function (p) {
    B.toolResults++;
    if (B.correlationId !== null) return;
    var sc = p && p.structuredContent, meta = p && p._meta;
    var m = /correlation ([^;\s]+)/.exec(B.resultText(p));
    if (sc && sc.correlationId != null) { B.correlationId = String(sc.correlationId); B.correlationSource = "structuredContent"; }
    else if (meta && meta["everything-mcp/correlationId"] != null) { B.correlationId = String(meta["everything-mcp/correlationId"]); B.correlationSource = "_meta"; }
    else if (m) { B.correlationId = m[1]; B.correlationSource = "text"; }
  });
  B.waitFor = function (pred, ms) {
    return new Promise(function (resolve) {
      var start = Date.now();
      (function poll() {
        var v = false;
        try { v = pred(); } catch (e) { v = false; }
        if (v || Date.now() - start >= ms) resolve(!!v); else setTimeout(poll, 50);
      })();
    });
  };
  B.waitCorrelation = function (ms) { return B.waitFor(function () { return B.correlationId !== null; }, ms); };

  /* ---- handshake ---- */
  B.initializeParams = function () {
    return { protocolVersion: PROTOCOL_VERSION, appInfo: APP_INFO,
      appCapabilities: { availableDisplayModes: B.config.expect.displayModes || ["inline"] } };
  };
  B.adoptInitResult = function (a) {
    if (a && a.kind === "result" && a.result && typeof a.result === "object") {
      B.host.info = a.result.hostInfo || null;
      B.host.capabilities = a.result.hostCapabilities || null;
      B.host.context = a.result.hostContext || null;
      B.host.protocolVersion = a.result.protocolVersion || null;
      applyTheme();
    }
    render();
  };
  B.sendInitialized = function () {
    B.notify("ui/notifications/initialized", {});
    B.initializedSent = true;
    B.initializedAt = B.now();
    render();
  };
  /* ui/initialize (well formed) + initialized; resolves to the initialize answer. */
  B.handshake = function (timeoutMs) {
    return B.request("ui/initialize", B.initializeParams(), timeoutMs || 5000).then(function (a) {
      B.adoptInitResult(a);
      B.sendInitialized();
      return a;
    });
  };
  B.mergeContext = function (partial) {
    B.host.context = Object.assign({}, B.host.context || {}, partial || {});
    applyTheme();
    render();
  };
  B.onNotification("ui/notifications/host-context-changed", function (p) { B.mergeContext(p); });
  function applyTheme() {
    var theme = B.host.context && B.host.context.theme;
    if (theme === "dark" || theme === "light") document.documentElement.setAttribute("data-theme", theme);
  }

  /* ---- size: the content's height, and the SDK-like auto-resize ---- */
  B.contentHeight = function () {
    var root = document.getElementById("emcp-root");
    return Math.ceil(root ? root.getBoundingClientRect().height : document.body.scrollHeight);
  };
  var lastSent = null, autoTimer = null;
  B.sendSize = function (height) {
    var h = Math.ceil(height);
    if (h === lastSent) return;
    lastSent = h;
    B.notify("ui/notifications/size-changed", { width: Math.ceil(window.innerWidth), height: h });
  };
  B.autoSize = function () {
    var fixed = B.host.context && B.host.context.containerDimensions && typeof B.host.context.containerDimensions.height === "number";
    if (fixed || B.autoSizing) return;
    B.autoSizing = true;
    var send = function () { clearTimeout(autoTimer); autoTimer = setTimeout(function () { B.sendSize(B.contentHeight()); }, 80); };
    if (window.ResizeObserver) new ResizeObserver(send).observe(document.getElementById("emcp-root") || document.body);
    send();
  };

  /* ---- checks ---- */
  var checks = new Map();   // id -> {id, title, status, evidence, t}
  B.declare = function (list) {
    list.forEach(function (c) { checks.set(c[0], { id: c[0], title: c[1] || "", status: PENDING, evidence: "", t: null }); });
    render();
  };
  B.set = function (id, status, evidence) {
    var c = checks.get(id);
    if (!c) { c = { id: id, title: "" }; checks.set(id, c); }
    c.status = status;
    c.evidence = B.brief(evidence == null ? "" : String(evidence), 400);
    c.t = B.now();
    render();
  };
  B.get = function (id) { return checks.get(id); };
  B.isPending = function (id) { var c = checks.get(id); return !c || c.status === PENDING; };
  B.settleRemaining = function (why, except) {
    checks.forEach(function (c) {
      if (c.status === PENDING && !(except && except.indexOf(c.id) >= 0)) B.set(c.id, NE, why);
    });
  };
  B.settled = function () {
    var out = [];
    checks.forEach(function (c) { if (c.status !== PENDING) out.push({ id: c.id, status: c.status, evidence: c.evidence }); });
    return out;
  };

  /* ---- submission through the host: tools/call apps_submit_results ---- */
  B.submit = function (phase, timeoutMs) {
    var rec = { phase: phase, t: B.now(), state: "sent", detail: "" };
    B.submissions.push(rec);
    var args = { view: B.config.view, variant: B.config.variant, correlationId: B.correlationId, phase: phase,
      checks: B.settled(), hostInfo: B.host.info, userAgent: navigator.userAgent };
    render();
    return B.request("tools/call", { name: B.config.tools.submit, arguments: args }, timeoutMs || 5000).then(function (a) {
      rec.state = a.kind === "result" ? (a.result && a.result.isError ? "isError" : "ok") : a.kind;
      rec.detail = B.describeAnswer(a);
      rec.checks = args.checks.length;
      render();
      return a;
    });
  };

  /* ---- rendering ---- */
  var CSS = [
    ":root{color-scheme:light;--bg:#fff;--fg:#16181d;--muted:#5b6270;--line:#dde1e7;--pass:#137333;--passbg:#e6f4ea;--fail:#b3261e;--failbg:#fce8e6;--ne:#5f6368;--nebg:#eceff1;--pend:#8a5a00;--pendbg:#fff4d6}",
    "html[data-theme=dark]{color-scheme:dark;--bg:#17191d;--fg:#eceef2;--muted:#a3aab6;--line:#343841;--pass:#81c995;--passbg:#1e3a27;--fail:#f28b82;--failbg:#4a1f1c;--ne:#bdc1c6;--nebg:#2d3036;--pend:#fdd663;--pendbg:#3d3420}",
    "html,body{margin:0;padding:0;background:var(--bg);color:var(--fg);font:13px/1.35 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}",
    "#emcp-root{padding:10px 12px}",
    "h1{font-size:15px;margin:0 0 4px}",
    ".meta{color:var(--muted);margin:0 0 2px;word-break:break-word}.meta b{color:var(--fg);font-weight:600}",
    ".warn{color:var(--fail);font-weight:600}",
    ".sum{margin:6px 0}.sum span{display:inline-block;padding:1px 7px;border-radius:9px;margin-right:6px;font-weight:600}",
    "table{border-collapse:collapse;width:100%;table-layout:fixed}",
    "td{border-top:1px solid var(--line);padding:3px 6px;vertical-align:top;word-break:break-word}",
    "td.id{width:22em;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}",
    "td.st{width:8.6em}td.ev{color:var(--fg)}",
    "@media (max-width:640px){td.id{width:40%}td.st{width:7.4em}}",
    ".s{display:inline-block;min-width:7.6em;text-align:center;border-radius:4px;font-weight:700;font-size:10.5px;padding:1px 4px;text-transform:uppercase;white-space:nowrap}",
    ".s-pass{color:var(--pass);background:var(--passbg)}.s-fail{color:var(--fail);background:var(--failbg)}",
    ".s-ne{color:var(--ne);background:var(--nebg)}.s-pending{color:var(--pend);background:var(--pendbg)}",
    "details{margin-top:8px;color:var(--muted);font-size:12px}details pre{white-space:pre-wrap;margin:4px 0}"
  ].join("\n");
  var ui = null, renderQueued = false;
  B.mount = function (title) {
    var style = document.createElement("style");
    style.textContent = CSS;
    document.head.appendChild(style);
    var root = document.getElementById("emcp-root");
    if (!root) { root = document.createElement("div"); root.id = "emcp-root"; document.body.appendChild(root); }
    root.textContent = "";
    var h1 = document.createElement("h1"); h1.textContent = "everything-mcp · " + title; root.appendChild(h1);
    ui = { root: root, host: el("div", "meta"), view: el("div", "meta"), subs: el("div", "meta"), warn: el("div", "warn"),
      sum: el("div", "sum"), table: document.createElement("table"), log: document.createElement("details") };
    [ui.host, ui.view, ui.subs, ui.warn, ui.sum, ui.table, ui.log].forEach(function (n) { root.appendChild(n); });
    ui.log.appendChild(el("summary", "", "messages from the host"));
    ui.logPre = el("pre", "");
    ui.log.appendChild(ui.logPre);
    render();
  };
  function el(tag, cls, text) { var n = document.createElement(tag); if (cls) n.className = cls; if (text) n.textContent = text; return n; }
  function kv(parent, label, value) {
    parent.appendChild(document.createTextNode(label + " "));
    var b = document.createElement("b"); b.textContent = value; parent.appendChild(b);
    parent.appendChild(document.createTextNode("   "));
  }
  function render() {
    if (!ui || renderQueued) return;
    renderQueued = true;
    (window.requestAnimationFrame || setTimeout)(function () { renderQueued = false; draw(); });
  }
  B.render = render;
  function draw() {
    var info = B.host.info, cfg = B.config;
    ui.host.textContent = "";
    kv(ui.host, "host", info ? ((info.title || info.name || "?") + (info.version ? " " + info.version : "")) : (B.initializeSent ? "(no hostInfo)" : "(not initialized yet)"));
    kv(ui.host, "bridge", B.host.protocolVersion || "?");
    kv(ui.host, "era", cfg.era || "unknown");
    kv(ui.host, "theme", (B.host.context && B.host.context.theme) || "?");
    kv(ui.host, "display", (B.host.context && B.host.context.displayMode) || "?");
    ui.view.textContent = "";
    kv(ui.view, "view", cfg.view);
    kv(ui.view, "variant", cfg.variant);
    kv(ui.view, "correlation", B.correlationId === null ? "(none yet)" : B.correlationId);
    kv(ui.view, "t", (B.now() / 1000).toFixed(1) + " s");
    ui.subs.textContent = "";
    kv(ui.subs, "submitted", B.submissions.length ? (B.submissions.length > 5 ? "(" + (B.submissions.length - 4) + " earlier) " : "") + B.submissions.slice(-4).map(function (s) {
      return s.phase + " " + (s.state === "ok" ? "✓" : s.state === "sent" ? "…" : "✗ " + s.detail) + (s.checks != null ? " (" + s.checks + ")" : "");
    }).join(" · ") : "nothing yet");
    ui.warn.textContent = B.configError || "";
    var counts = { pass: 0, fail: 0, ne: 0, pending: 0 };
    var rows = [];
    checks.forEach(function (c) {
      var k = c.status === PASS ? "pass" : c.status === FAIL ? "fail" : c.status === NE ? "ne" : "pending";
      counts[k]++;
      rows.push([c, k]);
    });
    ui.sum.textContent = "";
    [["pass", "pass"], ["fail", "fail"], ["ne", "not exercised"], ["pending", "pending"]].forEach(function (p) {
      var s = el("span", "s-" + p[0], counts[p[0]] + " " + p[1]); ui.sum.appendChild(s);
    });
    var tbody = document.createElement("tbody");
    rows.forEach(function (r) {
      var c = r[0], tr = document.createElement("tr");
      var tdId = el("td", "id", c.id); if (c.title) tdId.title = c.title;
      var tdSt = el("td", "st"); tdSt.appendChild(el("span", "s s-" + r[1], c.status));
      var tdEv = el("td", "ev", c.evidence || (c.status === PENDING ? c.title : ""));
      tr.appendChild(tdId); tr.appendChild(tdSt); tr.appendChild(tdEv); tbody.appendChild(tr);
    });
    ui.table.textContent = "";
    ui.table.appendChild(tbody);
    ui.logPre.textContent = B.received.map(function (r) { return (r.t / 1000).toFixed(2) + "s  " + r.desc; }).join("\n");
  }
  setInterval(render, 1000);

  window.addEventListener("error", function (e) {
    console.error("everything-mcp view error:", e.message);
  });
  return B;
})();
