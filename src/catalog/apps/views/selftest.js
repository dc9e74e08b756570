/* The self-testing view: every check of the contract's list, decided from what this page sees,
 * shown live and submitted through the host (apps_submit_results: initial, final, teardown). */
  var T_PROXY = 10000, T_REQUEST = 10000, T_PROBE = 10000, T_ERA = 15000, T_MALFORMED = 5000, QUIET_MS = 300;

  /* CSP violations, recorded from the first moment (the evidence for "blocked"). */
  var violations = [];
  document.addEventListener("securitypolicyviolation", function (e) {
    violations.push({ uri: String(e.blockedURI || ""), dir: String(e.effectiveDirective || e.violatedDirective || ""),
      disposition: e.disposition, policy: String(e.originalPolicy || "") });
  });

  B.declare([
    ["handshake.result_fields", "ui/initialize result has protocolVersion, hostInfo, hostCapabilities, hostContext"],
    ["handshake.quiet_before_initialized", "the host sends nothing before ui/notifications/initialized"],
    ["handshake.malformed_refused", "a ui/initialize without appCapabilities is answered with an error"],
    ["input.tool_input_once", "ui/notifications/tool-input arrives exactly once"],
    ["input.before_result", "tool-input arrives before tool-result"],
    ["input.partial_stops", "tool-input-partial only before tool-input"],
    ["result.nonce", "the nonce agrees in structuredContent, _meta and the text"],
    ["result.cancelled", "tool-cancelled is reported"],
    ["proxy.app_only_allowed", "tools/call of an app-only tool reaches the server"],
    ["proxy.model_only_refused", "tools/call of a model-only tool is refused"],
    ["proxy.unknown_tool_error", "tools/call of an unknown tool gives an error"],
    ["proxy.resources_read", "resources/read of this view's resource returns its text"],
    ["proxy.logging", "notifications/message (log) sent when logging is declared"],
    ["request.open_link", "ui/open-link is answered"],
    ["request.message", "ui/message (content as ContentBlock[]) is answered"],
    ["request.update_model_context", "ui/update-model-context is answered"],
    ["request.display_mode", "ui/request-display-mode fullscreen answers a declared mode"],
    ["request.display_mode_undeclared", "ui/request-display-mode pip (undeclared) does not answer pip"],
    ["request.download_file", "ui/download-file is answered"],
    ["context.host_context_merged", "host-context-changed arrives and is merged"],
    ["context.size_changed_obeyed", "a larger size-changed makes the frame taller"],
    ["sandbox.proxy_frame", "the view's parent is a proxy frame, not the host page"],
    ["sandbox.distinct_origin", "the view cannot read the host page (distinct origin)"],
    ["csp.connect_declared", "fetch to the declared origin as expected"],
    ["csp.connect_undeclared", "fetch to the undeclared origin is blocked by CSP"],
    ["csp.resource_script", "a script from the declared origin as expected"],
    ["csp.frame", "a frame from the declared origin as expected"],
    ["permissions.allow", "declared permissions are allowed by the permissions policy"],
    ["teardown.received", "ui/resource-teardown arrives"],
    ["teardown.waited", "the host waits for the teardown answer"],
    ["era2026.input_required", "an app-called tool that needs input completes"],
    ["era2026.task", "an app-called tool that runs as a task completes"]
  ]);
  B.mount("MCP Apps self-test");

  var finalSent = false, tornDown = false, resubmitTimer = null, resubmits = 0;
  function resubmitLater() {
    if (!finalSent || tornDown || resubmits >= 20) return;
    resubmits++;
    clearTimeout(resubmitTimer);
    resubmitTimer = setTimeout(function () { B.submit("final"); }, 300);
  }
  function answerIsError(a) { return a.kind === "error" || (a.kind === "result" && a.result && a.result.isError === true); }
  function errText(a) {
    return a.kind === "error" ? "error " + a.error.code + " " + B.brief(a.error.message, 120)
      : "isError result: " + B.brief(B.resultText(a.result) || a.result, 120);
  }
  function keys(o) { return o && typeof o === "object" ? Object.keys(o) : []; }

  /* ---------------- data flow (registered before anything is sent) ---------------- */
  var flow = { seq: 0, partials: [], inputs: [], results: [], cancels: [] };
  B.onNotification("ui/notifications/tool-input-partial", function () {
    flow.partials.push({ seq: ++flow.seq, afterInput: flow.inputs.length > 0 }); evalFlow(false); resubmitLater();
  });
  B.onNotification("ui/notifications/tool-input", function (p) {
    flow.inputs.push({ seq: ++flow.seq, args: p.arguments }); evalFlow(false); resubmitLater();
  });
  B.onNotification("ui/notifications/tool-result", function (p) {
    flow.results.push({ seq: ++flow.seq, inputsBefore: flow.inputs.length, params: p }); evalFlow(false); resubmitLater();
  });
  B.onNotification("ui/notifications/tool-cancelled", function (p) {
    flow.cancels.push({ seq: ++flow.seq, reason: p.reason }); evalFlow(false); resubmitLater();
  });

  var RESULT_VARIANT_TOOLS = ["apps_result_text", "apps_result_error", "apps_result_media", "apps_result_empty"];
  function nonceCheck(r) {
    r = r || {};
    var sc = r.structuredContent, meta = r._meta, text = B.resultText(r);
    var m = /nonce ([^;\s]+)/.exec(text);
    var toolMatch = /everything-mcp apps: (\S+) for/.exec(text);
    var tool = (sc && sc.tool) || (toolMatch && toolMatch[1]) || null;
    var src = { structuredContent: sc && sc.nonce, _meta: meta && meta["everything-mcp/nonce"], text: m ? m[1] : undefined };
    var present = Object.keys(src).filter(function (k) { return src[k] !== undefined && src[k] !== null; });
    var values = present.map(function (k) { return String(src[k]); });
    var shown = present.map(function (k) { return k + "=" + values[present.indexOf(k)]; }).join(", ");
    var reduced = tool && RESULT_VARIANT_TOOLS.indexOf(tool) >= 0;
    var extra = (r.isError ? "; isError" : "") + (flow.results.length > 1 ? "; " + flow.results.length + " tool-results (the first judged)" : "");
    if (!present.length) {
      if (reduced || !Array.isArray(r.content) || !r.content.length)
        return [NE, "the result carries no nonce (" + (tool || "content " + B.brief(r.content, 60)) + ")" + extra];
      return [FAIL, "no nonce in structuredContent, _meta or the text: " + B.brief(r, 120) + extra];
    }
    var same = values.every(function (v) { return v === values[0]; });
    if (!same) return [FAIL, "nonces differ: " + shown + extra];
    if (!reduced && present.length < 3) {
      var missing = Object.keys(src).filter(function (k) { return present.indexOf(k) < 0; });
      return [FAIL, "nonce " + values[0] + " in " + present.join(", ") + " but missing in " + missing.join(", ") + " (dropped by the host?)" + extra];
    }
    return [PASS, "nonce " + values[0] + " in " + present.join(", ") + (reduced ? " (" + tool + ")" : "") + extra];
  }

  function evalFlow(final) {
    var n = flow.inputs.length;
    if (n === 1) B.set("input.tool_input_once", PASS, "1 tool-input, arguments " + B.brief(flow.inputs[0].args, 100));
    else if (n > 1) B.set("input.tool_input_once", FAIL, n + " tool-input notifications");
    else if (final) B.set("input.tool_input_once", FAIL, "no tool-input arrived" + (flow.results.length ? " (but " + flow.results.length + " tool-result)" : ""));

    if (flow.results.length) {
      var first = flow.results[0];
      if (first.inputsBefore > 0) B.set("input.before_result", PASS, "tool-input (#" + flow.inputs[0].seq + ") before tool-result (#" + first.seq + ")");
      else B.set("input.before_result", FAIL, "tool-result (#" + first.seq + ") arrived before any tool-input");
      var nc = nonceCheck(first.params);
      B.set("result.nonce", nc[0], nc[1] + (B.correlationId ? "; correlation " + B.correlationId + " from " + B.correlationSource : "; no correlationId"));
    } else if (final) {
      var why = flow.cancels.length ? "no tool-result (the call was cancelled)" : "no tool-result arrived within the test";
      B.set("input.before_result", NE, why);
      B.set("result.nonce", NE, why);
    }

    var late = flow.partials.filter(function (p) { return p.afterInput; }).length;
    if (late) B.set("input.partial_stops", FAIL, late + " tool-input-partial after tool-input (of " + flow.partials.length + ")");
    else if (flow.partials.length && n) B.set("input.partial_stops", PASS, flow.partials.length + " tool-input-partial, all before tool-input");
    else if (final) B.set("input.partial_stops", NE, flow.partials.length ? flow.partials.length + " partial(s) but no tool-input" : "no tool-input-partial sent");

    if (flow.cancels.length) B.set("result.cancelled", PASS, "tool-cancelled, reason " + B.brief(flow.cancels[0].reason, 80) + (flow.results.length ? " (and a tool-result too)" : ""));
    else if (final) B.set("result.cancelled", NE, C.variant === "slow"
      ? "no cancellation within the test" + (flow.results.length ? " (the result arrived)" : "")
      : "not a cancellable call (variant " + C.variant + ")");
  }

  /* ---------------- host → view: context, teardown ---------------- */
  var contextChanges = [];
  B.onNotification("ui/notifications/host-context-changed", function (p) {
    // the bridge has merged p already (its own handler ran first)
    var ctx = B.host.context || {};
    var changed = keys(p);
    var ok = changed.every(function (k) { return JSON.stringify(ctx[k]) === JSON.stringify(p[k]); });
    var before = B.get("context.host_context_merged").status;
    contextChanges.push(changed);
    B.set("context.host_context_merged", ok ? PASS : FAIL, contextChanges.length + " host-context-changed; last changed " +
      (changed.join(", ") || "nothing") + "; merged context keys: " + keys(ctx).join(", "));
    if (before !== B.get("context.host_context_merged").status) resubmitLater();   // not on every resize
  });

  B.onNotification("ui/resource-teardown", function (params) {
    if (tornDown) return;
    tornDown = true;
    clearTimeout(resubmitTimer);
    B.set("teardown.received", PASS, "ui/resource-teardown sent as a NOTIFICATION (the spec: a request) at " + (B.now() / 1000).toFixed(1) + " s, reason " + B.brief(params && params.reason, 80));
    B.set("teardown.waited", NE, "teardown sent as a notification: no answer to wait for");
    evalFlow(true);
    B.settleRemaining("not settled before ui/resource-teardown");
    B.submit("teardown");
  });
  B.onRequest("ui/resource-teardown", function (params) {
    tornDown = true;
    clearTimeout(resubmitTimer);
    B.set("teardown.received", PASS, "ui/resource-teardown at " + (B.now() / 1000).toFixed(1) + " s, reason " + B.brief(params && params.reason, 80));
    evalFlow(true);
    B.settleRemaining("not settled before ui/resource-teardown");
    // stays a failure unless the view lives on for the wait and submits again
    B.set("teardown.waited", FAIL, "no submission after the 300 ms wait arrived: the host tore the view down sooner");
    // the second post only after the first landed: posts on two connections may overtake
    var first = B.submit("teardown").catch(function () {});
    return Promise.all([first, B.sleep(300)]).then(function () {
      B.set("teardown.waited", PASS, "the view was still alive 300 ms after ui/resource-teardown; answered after this submission");
      return Promise.race([B.submit("teardown"), B.sleep(1000)]);
    }).then(function () { return {}; });
  });

  /* ---------------- sandbox ---------------- */
  function sandboxChecks() {
    var depth = 0, w = window;
    while (w !== w.parent && depth < 10) { w = w.parent; depth++; }
    if (window.parent === window) B.set("sandbox.proxy_frame", FAIL, "the view is not in a frame");
    else if (window.parent === window.top) B.set("sandbox.proxy_frame", FAIL, "the view's parent is the top page: no proxy frame");
    else B.set("sandbox.proxy_frame", PASS, "parent !== top (the view is " + depth + " frames deep)");

    var own = window.origin || location.origin;   // location.origin is "null" in about:srcdoc even when same-origin
    var anc = (location.ancestorOrigins && location.ancestorOrigins.length) ? Array.prototype.slice.call(location.ancestorOrigins) : null;
    var parentInfo, topInfo, topReadable = false, topOrigin = null;
    try { parentInfo = "parent readable (" + new URL(window.parent.location.href).origin + ")"; }
    catch (e) { parentInfo = "parent.location.href threw " + (e && e.name); }
    try { topOrigin = new URL(window.top.location.href).origin; topReadable = true; topInfo = "top.location.href readable (" + topOrigin + ")"; }
    catch (e) { topInfo = "top.location.href threw " + (e && e.name); }
    var hostOrigin = anc ? anc[anc.length - 1] : (document.referrer ? safeOrigin(document.referrer) + " (referrer)" : "unknown");
    var evidence = "view origin " + own + "; " + parentInfo + "; " + topInfo + "; host " + hostOrigin +
      (anc ? "; ancestorOrigins " + anc.join(" < ") : "");
    if (window.top === window) B.set("sandbox.distinct_origin", FAIL, "not framed: " + evidence);
    else if (topReadable) B.set("sandbox.distinct_origin", FAIL, "the view can read the host page: " + evidence);
    else B.set("sandbox.distinct_origin", PASS, evidence);
  }
  function safeOrigin(u) { try { return new URL(u).origin; } catch (e) { return String(u); } }

  /* ---------------- proxied calls ---------------- */
  function proxyChecks() {
    var caps = B.host.capabilities || {};
    var note = caps.serverTools ? "" : " (serverTools not declared)";
    var jobs = [];
    jobs.push(B.request("tools/call", { name: C.tools.appOnly, arguments: {} }, T_PROXY).then(function (a) {
      var sc = a.kind === "result" && a.result && a.result.structuredContent;
      if (sc && sc.reached === true && !a.result.isError) B.set("proxy.app_only_allowed", PASS, "reached: " + B.brief(sc, 100) + note);
      else B.set("proxy.app_only_allowed", FAIL, (a.kind === "result" ? (a.result && a.result.isError ? errText(a) : "result without structuredContent.reached: " + B.brief(a.result, 100)) : B.describeAnswer(a)) + note);
    }));
    jobs.push(B.request("tools/call", { name: C.tools.modelOnly, arguments: {} }, T_PROXY).then(function (a) {
      var sc = a.kind === "result" && a.result && a.result.structuredContent;
      if (sc && sc.reached === true) B.set("proxy.model_only_refused", FAIL, "the host forwarded a model-only call: " + B.brief(a.result, 100));
      else if (answerIsError(a)) B.set("proxy.model_only_refused", PASS, "refused: " + errText(a));
      else if (a.kind === "timeout") B.set("proxy.model_only_refused", FAIL, "no answer in " + T_PROXY / 1000 + " s (neither refused nor answered)");
      else B.set("proxy.model_only_refused", FAIL, "unexpected result (not an error): " + B.brief(a.result, 100));
    }));
    jobs.push(B.request("tools/call", { name: C.tools.unknown, arguments: {} }, T_PROXY).then(function (a) {
      if (answerIsError(a)) B.set("proxy.unknown_tool_error", PASS, errText(a));
      else B.set("proxy.unknown_tool_error", FAIL, a.kind === "timeout" ? "no answer in " + T_PROXY / 1000 + " s" : "a result without isError: " + B.brief(a.result, 100));
    }));
    if (!caps.serverResources) B.set("proxy.resources_read", NE, "hostCapabilities.serverResources not declared");
    else jobs.push(B.request("resources/read", { uri: C.resourceUri }, T_PROXY).then(function (a) {
      if (a.kind !== "result") { B.set("proxy.resources_read", FAIL, B.describeAnswer(a)); return; }
      var item = a.result && Array.isArray(a.result.contents) ? a.result.contents[0] : null;
      var text = item && typeof item.text === "string" ? item.text : null;
      var how = "text";
      if (text === null && item && typeof item.blob === "string") {
        how = "blob";
        try { text = new TextDecoder().decode(Uint8Array.from(atob(item.blob), function (c) { return c.charCodeAt(0); })); } catch (e) { text = null; }
      }
      if (text !== null && text.indexOf("everything-mcp-config") >= 0)
        B.set("proxy.resources_read", PASS, a.result.contents.length + " item(s), " + how + " of " + text.length + " chars, mimeType " + (item.mimeType || "?") + ", uri " + item.uri);
      else B.set("proxy.resources_read", FAIL, "no view text in the answer: " + B.brief(a.result, 120));
    }));
    if (caps.logging) {
      B.notify("notifications/message", { level: "info", logger: "everything-mcp-view",
        data: { view: C.view, variant: C.variant, correlationId: B.correlationId, message: "everything-mcp self-test log probe" } });
      B.set("proxy.logging", PASS, "sent notifications/message (level info)");
    } else B.set("proxy.logging", NE, "hostCapabilities.logging not declared");
    return Promise.all(jobs);
  }

  /* ---------------- requests ---------------- */
  function answered(id, a, capNote) {
    if (a.kind === "timeout") { B.set(id, FAIL, "no answer in " + a.timeoutMs / 1000 + " s" + capNote); return; }
    if (a.kind === "error") {
      if (a.error && a.error.code === -32601) B.set(id, FAIL, "method not found (-32601) although the capability is declared" + capNote);
      else B.set(id, PASS, "answered with an error (a refusal): " + errText(a) + capNote);
      return;
    }
    B.set(id, PASS, "result " + B.brief(a.result, 100) + (a.result && a.result.isError ? " (isError: refused)" : "") + " in " + a.ms + " ms" + capNote);
  }
  function requestChecks() {
    var caps = B.host.capabilities || {};
    var corr = B.correlationId || "none";
    var jobs = [];
    if (!caps.openLinks) B.set("request.open_link", NE, "hostCapabilities.openLinks not declared");
    else {
      var url = C.probes.declared ? C.probes.declared + "/_apps/ping?probe=open-link" : "https://example.invalid/";
      jobs.push(B.request("ui/open-link", { url: url }, T_REQUEST).then(function (a) { answered("request.open_link", a, "; url " + url); }));
    }
    if (!caps.message) B.set("request.message", NE, "hostCapabilities.message not declared");
    else jobs.push(B.request("ui/message", { role: "user", content: [{ type: "text",
      text: "everything-mcp self-test: a ui/message probe from the view (correlation " + corr + "). No action needed." }] }, T_REQUEST)
      .then(function (a) { answered("request.message", a, ""); }));
    if (!caps.updateModelContext) B.set("request.update_model_context", NE, "hostCapabilities.updateModelContext not declared");
    else jobs.push(B.request("ui/update-model-context", {
      content: [{ type: "text", text: "everything-mcp self-test view context (correlation " + corr + ")" }],
      structuredContent: { everythingMcp: { view: C.view, variant: C.variant, correlationId: B.correlationId } } }, T_REQUEST)
      .then(function (a) { answered("request.update_model_context", a, ""); }));
    if (!caps.downloadFile) B.set("request.download_file", NE, "hostCapabilities.downloadFile not declared");
    else jobs.push(B.request("ui/download-file", { contents: [{ type: "resource", resource: {
      uri: "file:///everything-mcp-selftest.txt", mimeType: "text/plain",
      text: "everything-mcp self-test download (correlation " + corr + ")\n" } }] }, T_REQUEST)
      .then(function (a) { answered("request.download_file", a, ""); }));
    return Promise.all(jobs);
  }

  function displayModeChecks() {
    var declared = C.expect.displayModes || [];
    var hostModes = (B.host.context && B.host.context.availableDisplayModes) || null;
    var hostNote = "; host offers " + (hostModes ? "[" + hostModes.join(", ") + "]" : "(no availableDisplayModes)");
    var current = (B.host.context && B.host.context.displayMode) || "inline";
    var chain = Promise.resolve();
    if (declared.indexOf("fullscreen") < 0) B.set("request.display_mode", NE, "fullscreen not among the view's declared modes [" + declared.join(", ") + "]");
    else chain = chain.then(function () {
      return B.request("ui/request-display-mode", { mode: "fullscreen" }, T_REQUEST).then(function (a) {
        var mode = a.kind === "result" && a.result ? a.result.mode : undefined;
        if (a.kind !== "result") B.set("request.display_mode", FAIL, "asked fullscreen: " + B.describeAnswer(a) + hostNote);
        else if (declared.indexOf(mode) >= 0) { current = mode; B.set("request.display_mode", PASS, "asked fullscreen → mode " + mode + hostNote); }
        else B.set("request.display_mode", FAIL, "asked fullscreen → mode " + B.brief(mode) + ", not a declared mode [" + declared.join(", ") + "]" + hostNote);
      });
    });
    if (declared.indexOf("pip") >= 0) B.set("request.display_mode_undeclared", NE, "pip is declared by this view");
    else chain = chain.then(function () { return B.sleep(200); }).then(function () {
      return B.request("ui/request-display-mode", { mode: "pip" }, T_REQUEST).then(function (a) {
        var mode = a.kind === "result" && a.result ? a.result.mode : undefined;
        if (a.kind === "timeout") B.set("request.display_mode_undeclared", FAIL, "asked pip: no answer in " + T_REQUEST / 1000 + " s");
        else if (a.kind === "error") B.set("request.display_mode_undeclared", PASS, "asked pip (undeclared): declined with " + errText(a));
        else if (mode === "pip") B.set("request.display_mode_undeclared", FAIL, "asked pip (undeclared) → the host switched to pip");
        else { if (mode) current = mode; B.set("request.display_mode_undeclared", PASS, "asked pip (undeclared) → mode " + B.brief(mode) + hostNote); }
      });
    });
    return chain.then(function () {
      if (current !== "inline" && declared.indexOf("inline") >= 0) return B.request("ui/request-display-mode", { mode: "inline" }, T_REQUEST);
    });
  }

  /* ---------------- host → view: size and context ---------------- */
  function sizeCheck() {
    var cd = (B.host.context && B.host.context.containerDimensions) || {};
    if (typeof cd.height === "number") {
      B.set("context.size_changed_obeyed", NE, "fixed container height " + cd.height + " px: the host need not follow size-changed");
      return Promise.resolve();
    }
    var h0 = window.innerHeight;
    var target = Math.max(h0 + 120, B.contentHeight());
    if (typeof cd.maxHeight === "number") target = Math.min(target, cd.maxHeight);
    if (target <= h0) {
      B.set("context.size_changed_obeyed", NE, "already at containerDimensions.maxHeight " + cd.maxHeight + " px");
      B.autoSize();
      return Promise.resolve();
    }
    B.sendSize(target);
    return B.sleep(700).then(function () {
      var h1 = window.innerHeight;
      if (h1 > h0) B.set("context.size_changed_obeyed", PASS, "asked height " + target + " px: innerHeight " + h0 + " → " + h1 + " px");
      else B.set("context.size_changed_obeyed", FAIL, "asked height " + target + " px: innerHeight stayed " + h0 + " px after 700 ms" +
        (cd.maxHeight ? " (maxHeight " + cd.maxHeight + ")" : ""));
      B.autoSize();
    });
  }
  function contextWatch() {
    return B.sleep(1500).then(function () {
      if (B.isPending("context.host_context_merged")) B.set("context.host_context_merged", NE, "no host-context-changed within 1.5 s of initialized");
    });
  }

  /* ---------------- CSP and permissions ---------------- */
  function findViolation(origin, dir) {
    for (var i = 0; i < violations.length; i++) {
      var v = violations[i];
      if (v.uri.indexOf(origin) === 0 && v.dir.indexOf(dir) === 0) return v;
    }
    return null;
  }
  function violationText(v) {
    var pol = v.policy.split(";").filter(function (d) { return d.trim().indexOf(v.dir.split("-elem")[0]) === 0 || d.trim().indexOf(v.dir) === 0; })[0];
    return "securitypolicyviolation " + v.dir + (v.disposition === "report" ? " (report-only)" : "") + (pol ? " [" + pol.trim() + "]" : "");
  }
  function probeFetch(base, probe) {
    var url = base + "/_apps/ping?probe=" + probe;
    var ctl = window.AbortController ? new AbortController() : null;
    var timer = setTimeout(function () { if (ctl) ctl.abort(); }, T_PROBE);
    return fetch(url, { cache: "no-store", signal: ctl ? ctl.signal : undefined }).then(function (r) {
      clearTimeout(timer);
      return r.text().then(function (body) {
        if (r.ok && body.indexOf(probe) >= 0) return { outcome: "allowed", evidence: "fetch " + url + " → HTTP " + r.status + " " + B.brief(body, 60) };
        return { outcome: "inconclusive", evidence: "fetch " + url + " → HTTP " + r.status + " " + B.brief(body, 60) };
      });
    }, function (e) {
      clearTimeout(timer);
      return B.sleep(200).then(function () {
        var v = findViolation(base, "connect-src");
        if (v && v.disposition !== "report") return { outcome: "blocked", evidence: "fetch " + url + " rejected; " + violationText(v) };
        return { outcome: "inconclusive", evidence: "fetch " + url + " rejected (" + (e && e.name) + ": " + B.brief(e && e.message, 60) + ") without a securitypolicyviolation: not shown to be CSP" };
      });
    });
  }
  function probeScript(base) {
    return new Promise(function (resolve) {
      var url = base + "/_apps/probe.js?probe=script";
      var done = false;
      function finish(outcome, evidence) { if (!done) { done = true; resolve({ outcome: outcome, evidence: evidence }); } }
      var s = document.createElement("script");
      s.src = url;
      s.onload = function () {
        var ran = window.__everythingMcpProbes && window.__everythingMcpProbes.script === true;
        finish(ran ? "allowed" : "inconclusive", "script " + url + (ran ? " loaded and ran" : " loaded but did not set the probe flag"));
      };
      s.onerror = function () {
        setTimeout(function () {
          var v = findViolation(base, "script-src");
          finish(v && v.disposition !== "report" ? "blocked" : "inconclusive", "script " + url + " failed; " + (v ? violationText(v) : "no securitypolicyviolation (network error?)"));
        }, 200);
      };
      setTimeout(function () { finish("inconclusive", "script " + url + ": no load or error in " + T_PROBE / 1000 + " s"); }, T_PROBE);
      document.head.appendChild(s);
    });
  }
  function probeFrame(base) {
    return new Promise(function (resolve) {
      var url = base + "/_apps/frame.html?probe=frame";
      var f = document.createElement("iframe");
      var done = false, poll;
      function finish(outcome, evidence) {
        if (done) return;
        done = true; clearInterval(poll); window.removeEventListener("message", onMsg);
        if (f.parentNode) f.parentNode.removeChild(f);
        resolve({ outcome: outcome, evidence: evidence });
      }
      function onMsg(ev) {
        if (ev.source === f.contentWindow && ev.data && ev.data.everythingMcpFrame === "frame") finish("allowed", "frame " + url + " loaded and posted {everythingMcpFrame}");
      }
      window.addEventListener("message", onMsg);
      poll = setInterval(function () {
        var v = findViolation(base, "frame-src") || findViolation(base, "child-src") || findViolation(base, "default-src");
        if (v && v.disposition !== "report") finish("blocked", "frame " + url + " blocked; " + violationText(v));
      }, 100);
      setTimeout(function () { finish("inconclusive", "frame " + url + ": no message and no securitypolicyviolation in " + T_PROBE / 1000 + " s"); }, T_PROBE);
      f.src = url;
      f.title = "everything-mcp frame probe";
      f.setAttribute("aria-hidden", "true");
      f.style.cssText = "position:absolute;width:1px;height:1px;border:0;left:-10px;top:-10px;opacity:0";
      document.body.appendChild(f);
    });
  }
  function judge(id, expected, res) {
    var ok = res.outcome === expected;
    B.set(id, ok ? PASS : FAIL, "expected " + expected + ", " + (res.outcome === "inconclusive" ? "inconclusive" : res.outcome) + ": " + res.evidence);
  }
  function cspChecks() {
    var P = C.probes, E = C.expect;
    if (!P.declared) {
      ["csp.connect_declared", "csp.connect_undeclared", "csp.resource_script", "csp.frame"].forEach(function (id) {
        B.set(id, NE, "no probe origins (the server has no HTTP listener)");
      });
      return Promise.resolve();
    }
    var jobs = [
      probeFetch(P.declared, "connect-declared").then(function (r) { judge("csp.connect_declared", E.connectDeclared, r); }),
      probeScript(P.declared).then(function (r) { judge("csp.resource_script", E.scriptDeclared, r); }),
      probeFrame(P.declared).then(function (r) { judge("csp.frame", E.frameDeclared, r); })
    ];
    if (P.undeclared) jobs.push(probeFetch(P.undeclared, "connect-undeclared").then(function (r) { judge("csp.connect_undeclared", E.connectUndeclared || "blocked", r); }));
    else B.set("csp.connect_undeclared", NE, "no undeclared probe origin");
    return Promise.all(jobs);
  }
  var FEATURES = { camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" };
  function permissionsCheck() {
    var want = C.expect.permissions || [];
    var granted = keys(B.host.capabilities && B.host.capabilities.sandbox && B.host.capabilities.sandbox.permissions);
    var note = "; host says granted [" + granted.join(", ") + "]";
    var fp = document.permissionsPolicy || document.featurePolicy;
    if (!want.length) { B.set("permissions.allow", NE, "no permissions declared for this resource"); return; }
    if (!fp || typeof fp.allowsFeature !== "function") { B.set("permissions.allow", NE, "no document.permissionsPolicy/featurePolicy API here" + note); return; }
    var allowed = [], denied = [];
    want.forEach(function (k) {
      var feat = FEATURES[k] || k, ok = false;
      try { ok = fp.allowsFeature(feat); } catch (e) { ok = false; }
      (ok ? allowed : denied).push(feat);
    });
    B.set("permissions.allow", denied.length ? FAIL : PASS, "allowed [" + allowed.join(", ") + "]" + (denied.length ? ", denied [" + denied.join(", ") + "]" : "") + note);
  }

  /* ---------------- 2026-07-28: input_required and tasks through the view ---------------- */
  var UNKNOWN_TOOL = /unknown tool|tool not found|no such tool|not found: *apps_|tool .* (not found|unknown)/i;
  function eraCheck(id, tool) {
    return B.request("tools/call", { name: tool, arguments: {} }, T_ERA).then(function (a) {
      if (a.kind === "timeout") { B.set(id, FAIL, "no answer in " + T_ERA / 1000 + " s"); return; }
      var msg = a.kind === "error" ? String(a.error && a.error.message) : B.resultText(a.result);
      if (answerIsError(a)) {
        if (UNKNOWN_TOOL.test(msg)) B.set(id, NE, "the server does not offer " + tool + " here: " + errText(a));
        else B.set(id, FAIL, errText(a));
        return;
      }
      var r = a.result || {};
      if ((r.resultType && r.resultType !== "complete") || r.task || r.inputRequests)
        B.set(id, FAIL, "an unfinished result reached the view (resultType " + (r.resultType || (r.task ? "task" : "?")) + "): " + B.brief(r, 100));
      else B.set(id, PASS, "final result in " + a.ms + " ms: " + B.brief(msg || r, 100));
    });
  }

  /* ---------------- the run ---------------- */
  function main() {
    sandboxChecks();
    // 1. a malformed ui/initialize (no appCapabilities): must be refused
    var lateNote = function (late) {
      var c = B.get("handshake.malformed_refused");
      B.set("handshake.malformed_refused", c.status, c.evidence + "; answered late: " + B.describeAnswer(late));
      resubmitLater();
    };
    return B.request("ui/initialize", { protocolVersion: B.PROTOCOL_VERSION, appInfo: B.APP_INFO }, T_MALFORMED, { onLate: lateNote }).then(function (bad) {
      if (bad.kind === "error") B.set("handshake.malformed_refused", PASS, "refused: error " + bad.error.code + " " + B.brief(bad.error.message, 100));
      else if (bad.kind === "timeout") B.set("handshake.malformed_refused", FAIL, "no answer in " + T_MALFORMED / 1000 + " s");
      else B.set("handshake.malformed_refused", FAIL, "accepted without appCapabilities: result keys " + keys(bad.result).join(", "));
      // 2. the real one
      return B.request("ui/initialize", B.initializeParams(), 5000);
    }).then(function (a) {
      B.adoptInitResult(a);
      if (a.kind !== "result") B.set("handshake.result_fields", FAIL, B.describeAnswer(a));
      else {
        var r = a.result || {};
        var missing = ["protocolVersion", "hostInfo", "hostCapabilities", "hostContext"].filter(function (k) { return r[k] === undefined || r[k] === null; });
        var info = r.hostInfo || {};
        var ev = "protocolVersion " + B.brief(r.protocolVersion) + ", hostInfo " + B.brief(info.name) + " " + B.brief(info.version) +
          ", hostCapabilities [" + keys(r.hostCapabilities).join(", ") + "], hostContext [" + keys(r.hostContext).join(", ") + "]";
        B.set("handshake.result_fields", missing.length ? FAIL : PASS, (missing.length ? "missing " + missing.join(", ") + "; " : "") + ev);
      }
      // initialized goes out QUIET_MS after the answer: what a host sends right after answering
      // ui/initialize (without waiting for initialized) then arrives before it, visibly
      return B.sleep(QUIET_MS);
    }).then(function () {
      B.sendInitialized();
      var early = B.preInit.slice();
      if (!early.length) B.set("handshake.quiet_before_initialized", PASS, "nothing before initialized (sent " + QUIET_MS + " ms after the ui/initialize answer)" + (B.pingsAnswered ? "; " + B.pingsAnswered + " ping answered" : ""));
      else B.set("handshake.quiet_before_initialized", FAIL, early.length + " message(s) before initialized: " +
        early.slice(0, 6).map(function (m) { return m.desc; }).join(", ") + (early.length > 6 ? ", …" : ""));
      evalFlow(false);
      return B.waitFor(function () { return flow.results.length || flow.cancels.length; }, 1000);
    }).then(function () {
      B.submit("initial");
      permissionsCheck();
      var batch = [proxyChecks(), requestChecks(), cspChecks(), contextWatch(),
        eraCheck("era2026.input_required", C.tools.inputRequired), eraCheck("era2026.task", C.tools.task),
        sizeCheck().then(displayModeChecks)];
      return Promise.all(batch);
    }).then(function () {
      // give the tool result a moment if it is still on its way (a slow call is judged as it stands)
      return B.waitFor(function () { return flow.results.length || flow.cancels.length; }, 1500);
    }).then(function () {
      if (tornDown) return;
      evalFlow(true);
      B.settleRemaining("not settled before the final submission");
      ["teardown.received", "teardown.waited"].forEach(function (id) {
        if (B.get(id).evidence === "not settled before the final submission") B.set(id, NE, "no ui/resource-teardown before the final submission");
      });
      finalSent = true;
      return B.submit("final");
    });
  }
  main().catch(function (e) { console.error("everything-mcp self-test failed:", e); });
