"""The MCP Apps test host: a web host page (host.html/host.ts, the official TypeScript client and
AppBridge), its sandbox proxy (sandbox.html/sandbox.ts) and `serve.py`, which serves the bundle
scripts/apps_host.sh builds. See serve.py."""
