/* Negative view malformed: posts a JSON-RPC frame without a method, a string that is no JSON-RPC object and a
 * frame with jsonrpc 1.0, then does the handshake: the host must survive them. */
  var ID = "negative.malformed_survived";
  B.declare([[ID, "after malformed JSON-RPC frames the handshake still works"]]);
  B.mount("negative view: malformed");
  var IDS = ["everything-mcp-malformed-no-method", "everything-mcp-malformed-version"];
  B.post({ jsonrpc: "2.0", id: IDS[0], params: {} });
  B.post("everything-mcp: this string is not a JSON-RPC object");
  B.post({ jsonrpc: "1.0", id: IDS[1], method: "ping" });
  B.sleep(500).then(function () {
    return B.handshake();
  }).then(function (a) {
    var answers = B.strays.filter(function (s) { return IDS.indexOf(s.frame.id) >= 0; }).map(function (s) {
      return s.frame.id.replace("everything-mcp-malformed-", "") + " → " +
        ("error" in s.frame ? "error " + (s.frame.error && s.frame.error.code) + " " + B.brief(s.frame.error && s.frame.error.message, 60) : "result " + B.brief(s.frame.result, 60));
    });
    var ev = "3 malformed frames (no method, a string, jsonrpc 1.0); answers to them: " + (answers.length ? answers.join("; ") : "none");
    if (a.kind === "result" && a.result && a.result.protocolVersion) B.set(ID, PASS, "the handshake worked after them (protocolVersion " + B.brief(a.result.protocolVersion) + "); " + ev);
    else B.set(ID, FAIL, "the handshake after them: " + B.describeAnswer(a) + "; " + ev);
    B.autoSize();
    return B.waitCorrelation(1500);
  }).then(function () { return B.submit("final"); })
    .catch(function (e) { console.error("everything-mcp negative view failed:", e); });
