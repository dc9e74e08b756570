/* Negative view size-flood: after the handshake, 500 ui/notifications/size-changed in one burst, then a ping the
 * host must still answer. */
  var ID = "negative.size_flood_survived";
  B.declare([[ID, "after a burst of 500 size-changed the host still answers a ping"]]);
  B.mount("negative view: size-flood");
  var N = 500;
  B.handshake().then(function () {
    var w = Math.ceil(window.innerWidth);
    for (var i = 0; i < N; i++) B.notify("ui/notifications/size-changed", { width: w, height: 150 + (i % 100) * 3 });
    return B.request("ping", undefined, 10000);
  }).then(function (a) {
    if (a.kind === "result") B.set(ID, PASS, "ping answered " + a.ms + " ms after a burst of " + N + " size-changed; innerHeight now " + window.innerHeight + " px");
    else B.set(ID, FAIL, "ping after a burst of " + N + " size-changed: " + B.describeAnswer(a));
    B.autoSize();
    return B.waitCorrelation(1500);
  }).then(function () { return B.submit("final"); })
    .catch(function (e) { console.error("everything-mcp negative view failed:", e); });
