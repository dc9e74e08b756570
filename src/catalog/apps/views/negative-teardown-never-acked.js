/* Negative view teardown-never-acked: handshake, submit, and never answer ui/resource-teardown (the host must
 * tear it down anyway, after its own timeout); it submits that the request arrived. */
  var ID = "negative.teardown_never_acked";
  B.declare([[ID, "ui/resource-teardown arrives; this view never answers it"]]);
  B.mount("negative view: teardown-never-acked");
  B.onRequest("ui/resource-teardown", function (params) {
    B.set(ID, PASS, "received, not acked (reason " + B.brief(params && params.reason, 80) + ", at " + (B.now() / 1000).toFixed(1) + " s)");
    B.submit("teardown");
    return B.NO_REPLY;
  });
  B.handshake().then(function () {
    B.autoSize();
    return B.waitCorrelation(1500);
  }).then(function () {
    if (B.isPending(ID)) B.set(ID, NE, "no ui/resource-teardown yet");
    return B.submit("final");
  }).catch(function (e) { console.error("everything-mcp negative view failed:", e); });
