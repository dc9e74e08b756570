/* Negative view unknown-method: after the handshake, a request ui/x-everything-mcp-unknown that the host must
 * answer with JSON-RPC error -32601 (method not found). */
  var ID = "negative.unknown_method_32601";
  B.declare([[ID, "a request of an unknown ui/ method is answered with error -32601"]]);
  B.mount("negative view: unknown-method");
  B.handshake().then(function () {
    B.autoSize();
    return B.request("ui/x-everything-mcp-unknown", {}, 10000);
  }).then(function (a) {
    if (a.kind === "error" && a.error && a.error.code === -32601) B.set(ID, PASS, "error -32601 " + B.brief(a.error.message, 100));
    else if (a.kind === "error") B.set(ID, FAIL, "error " + (a.error && a.error.code) + " (expected -32601) " + B.brief(a.error && a.error.message, 100));
    else if (a.kind === "timeout") B.set(ID, FAIL, "no answer in 3 s");
    else B.set(ID, FAIL, "a result for an unknown method: " + B.brief(a.result, 100));
    return B.waitCorrelation(1500);
  }).then(function () { return B.submit("final"); })
    .catch(function (e) { console.error("everything-mcp negative view failed:", e); });
