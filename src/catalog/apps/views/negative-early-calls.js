/* Negative view early-calls: a tools/call of the early probe tool before ui/initialize; the host must refuse it
 * (or at least not forward it: the server logs whether it arrived), then the handshake. */
  var ID = "negative.early_calls_refused";
  B.declare([[ID, "a tools/call sent before ui/initialize is refused or not forwarded"]]);
  B.mount("negative view: early-calls");
  var first = null, late = null, submitted = false;
  function judge() {
    var a = late || first;
    var lateNote = late ? " (answered late, after " + (first.timeoutMs / 1000) + " s)" : "";
    var sc = a.kind === "result" && a.result && a.result.structuredContent;
    if (a.kind === "timeout") B.set(ID, PASS, "no answer within " + a.timeoutMs / 1000 + " s before the handshake (not forwarded, as far as the view can see)");
    else if (a.kind === "error") B.set(ID, PASS, "refused: error " + (a.error && a.error.code) + " " + B.brief(a.error && a.error.message, 100) + lateNote);
    else if (a.result && a.result.isError && !(sc && sc.reached)) B.set(ID, PASS, "refused (isError): " + B.brief(B.resultText(a.result) || a.result, 100) + lateNote);
    else B.set(ID, FAIL, "the host forwarded a tools/call sent before ui/initialize: " + B.brief(a.result, 100) + lateNote);
  }
  B.request("tools/call", { name: C.tools.early, arguments: {} }, 1500, { onLate: function (a) {
    late = a; judge();
    if (submitted) B.submit("final");
  } }).then(function (a) {
    first = a; judge();
    return B.handshake();
  }).then(function () {
    B.autoSize();
    return B.waitCorrelation(1500);
  }).then(function () { submitted = true; return B.submit("final"); })
    .catch(function (e) { console.error("everything-mcp negative view failed:", e); });
