// The auth lab (docs/auth.md) with the official TypeScript SDK's OAuth client provider: against
// `http --auth oauth`, the SDK discovers, registers, sends the user to /authorize and throws
// UnauthorizedError; the test plays the browser (the lab approves at once, so the code is in
// the redirect's Location), hands the code to finishAuth, and connects again with the token.
// Run by scripts/conformance.sh with the control API test (Node's type stripping):
//
//   MCP_SDK_DIR=<node_modules>/@modelcontextprotocol/sdk EVERYTHING_MCP_PYTHON=python3 \
//     node --experimental-strip-types --test tests/ts/auth_flow.test.ts

import { test } from "node:test";
import assert from "node:assert/strict";
import { load, startCli } from "./cli.ts";

test("the TypeScript client's OAuth provider completes the authorization code flow", { timeout: 30_000 }, async () => {
  const { Client } = await load("client/index.js");
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  const { UnauthorizedError } = await load("client/auth.js");
  const { server, base_url, url } = await startCli(["http", "--port", "0", "--auth", "oauth", "--keep-traffic", "1000"]);
  try {

    // What a host application keeps for the SDK: its registration, tokens and PKCE verifier.
    const kept: Record<string, any> = {};
    let sentTo: URL | undefined;
    const provider = {
      redirectUrl: "http://127.0.0.1:8976/callback",
      clientMetadata: {
        client_name: "ts-auth-test",
        redirect_uris: ["http://127.0.0.1:8976/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      clientInformation: () => kept.client,
      saveClientInformation: (info: unknown) => { kept.client = info; },
      tokens: () => kept.tokens,
      saveTokens: (tokens: unknown) => { kept.tokens = tokens; },
      redirectToAuthorization: (at: URL) => { sentTo = at; },
      saveCodeVerifier: (verifier: string) => { kept.verifier = verifier; },
      codeVerifier: () => kept.verifier,
    };

    const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await assert.rejects(new Client({ name: "ts-auth-test", version: "1.0.0" }).connect(first), UnauthorizedError);
    assert.ok(sentTo, "the SDK sent the user to the authorization endpoint");
    assert.equal(sentTo.origin + sentTo.pathname, `${base_url}/authorize`);
    assert.equal(sentTo.searchParams.get("code_challenge_method"), "S256");
    assert.equal(sentTo.searchParams.get("resource"), url);

    // The browser: the lab approves at once and redirects back with the code, state and iss.
    const approved = await fetch(sentTo, { redirect: "manual" });
    assert.equal(approved.status, 302);
    const back = new URL(approved.headers.get("location")!);
    assert.equal(back.searchParams.get("state"), sentTo.searchParams.get("state"));
    assert.equal(back.searchParams.get("iss"), base_url);
    await first.finishAuth(back.searchParams.get("code")!);
    assert.equal(kept.tokens.token_type, "Bearer");

    const client = new Client({ name: "ts-auth-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
    const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
    assert.deepEqual(result.content, [{ type: "text", text: "Echo: hi" }]);
    await client.close();

    // The traffic shows the whole flow, and not one secret.
    const text = await (await fetch(`${base_url}/_control/traffic?since=0`)).text();
    const paths = text.trim().split("\n").map((line) => JSON.parse(line))
      .filter((r) => r.dir === "in" && r.http?.path).map((r) => `${r.http.path} ${r.http.status}`);
    for (const step of ["/register 201", "/authorize 302", "/token 200"]) {
      assert.ok(paths.includes(step), `${step} in ${paths.join(", ")}`);
    }
    assert.ok(!text.includes(kept.tokens.access_token), "the access token is redacted");
    assert.ok(!text.includes(kept.verifier), "the PKCE verifier is redacted");
  } finally {
    server.kill();
  }
});
