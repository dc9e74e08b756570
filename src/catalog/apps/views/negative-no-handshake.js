/* Negative view no-handshake: sends nothing for 1.5 s and records what the host sends meanwhile (it must send
 * nothing before initialized), then does the handshake only to submit the result. */
  var ID = "negative.no_handshake_quiet";
  B.declare([[ID, "the host sends nothing to a view that has not sent ui/initialize (1.5 s)"]]);
  B.mount("negative view: no-handshake");
  B.sleep(1500).then(function () {
    var got = B.preInit.slice();
    return B.handshake().then(function (a) {
      var after = "; then the handshake: " + (a.kind === "result" ? "ok" : B.describeAnswer(a));
      if (got.length) B.set(ID, FAIL, got.length + " message(s) in 1.5 s without any ui/initialize: " +
        got.slice(0, 6).map(function (m) { return m.desc; }).join(", ") + (got.length > 6 ? ", …" : "") + after);
      else B.set(ID, PASS, "nothing in 1.5 s without any ui/initialize" + (B.pingsAnswered ? " (" + B.pingsAnswered + " ping answered)" : "") + after);
      B.autoSize();
      return B.waitCorrelation(1500);
    });
  }).then(function () { return B.submit("final"); })
    .catch(function (e) { console.error("everything-mcp negative view failed:", e); });
