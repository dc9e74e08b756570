//! End-to-end tests of the protocol engine over in-memory connections: lifecycle, batches,
//! cancellation, progress, logging, server → client requests, pagination, list_changed.

use _core::server::handler::{tool_fn, HandlerError, ToolFn};
use _core::server::registry::Registry;
use _core::server::registry::Tool;
use _core::server::{Server, ServerConfig};
use _core::transport::memory::{self, MemoryConnection};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

struct Client {
    conn: MemoryConnection,
}

impl Client {
    fn new(server: &Arc<Server>) -> Self {
        Self {
            conn: memory::connect(server, &tokio::runtime::Handle::current()),
        }
    }

    fn send(&self, frame: impl Into<String>) {
        self.conn
            .to_server
            .as_ref()
            .unwrap()
            .send(frame.into().into_bytes())
            .unwrap();
    }

    fn send_json(&self, v: Value) {
        self.send(v.to_string());
    }

    async fn recv(&mut self) -> Value {
        let text = tokio::time::timeout(WAIT, self.conn.from_server.recv())
            .await
            .expect("timed out")
            .expect("closed");
        serde_json::from_str(&text).unwrap()
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send_json(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.recv().await
    }

    async fn initialize(&mut self, version: &str) -> Value {
        self.initialize_with(version, json!({})).await
    }

    async fn initialize_with(&mut self, version: &str, capabilities: Value) -> Value {
        let params = json!({ "protocolVersion": version, "capabilities": capabilities, "clientInfo": { "name": "t", "version": "1" } });
        let r = self.request(0, "initialize", params).await;
        self.send_json(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        r
    }
}

/// A server with `echo` and `get-sum` (from the `everything` catalog) and the test tools below.
fn server(page_size: Option<usize>) -> Arc<Server> {
    let config = ServerConfig {
        page_size,
        ..ServerConfig::default()
    };
    let s = Server::new(config, Registry::default()).unwrap();
    s.add_tool(_core::catalog::everything::echo().unwrap());
    s.add_tool(_core::catalog::everything::get_sum().unwrap());
    s.add_tool(slow_tool());
    s.add_tool(log_tool());
    s.add_tool(ask_tool());
    s
}

/// A server as [`server`] makes it (no page size) and a client initialized at `version`.
async fn initialized(version: &str) -> (Arc<Server>, Client) {
    let s = server(None);
    let mut c = Client::new(&s);
    c.initialize(version).await;
    (s, c)
}

/// A tool `name` that takes any object, served by `handler` (the test tools here).
fn test_tool(name: &str, handler: ToolFn) -> Tool {
    let definition = json!({ "name": name, "inputSchema": { "type": "object" } });
    Tool::new(definition, handler).unwrap()
}

/// Reports progress 1/2, then waits until cancelled (or 30 s).
fn slow_tool() -> Tool {
    test_tool(
        "slow",
        tool_fn(|ctx, _| async move {
            ctx.progress(1.0, Some(2.0), Some("half"));
            tokio::select! {
                () = ctx.cancelled() => Err(HandlerError::failed("cancelled")),
                () = tokio::time::sleep(Duration::from_secs(30)) => Ok(json!({ "content": [] })),
            }
        }),
    )
}

/// Logs one message at each of debug and error.
fn log_tool() -> Tool {
    test_tool(
        "log",
        tool_fn(|ctx, _| async move {
            ctx.log(_core::protocol::LogLevel::Debug, json!("quiet"), None);
            ctx.log(_core::protocol::LogLevel::Error, json!("loud"), Some("t"));
            Ok(json!({ "content": [] }))
        }),
    )
}

/// Asks the client for its roots and returns how many it got.
fn ask_tool() -> Tool {
    test_tool(
        "ask",
        tool_fn(|ctx, _| async move {
            let roots = ctx
                .ask_client("roots/list", None)
                .await
                .map_err(HandlerError::Rpc)?;
            let n = roots["roots"].as_array().map_or(0, Vec::len);
            Ok(json!({ "content": [{ "type": "text", "text": format!("{n} roots") }] }))
        }),
    )
}

#[tokio::test]
async fn initialize_negotiates_and_refuses_a_second_time() {
    let s = server(None);
    let mut c = Client::new(&s);
    let r = c.initialize("1999-01-01").await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["serverInfo"]["name"], "everything-mcp");
    let again = json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } });
    let r = c.request(1, "initialize", again).await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["error"]["message"], "Invalid Request: initialize was already received on this connection (negotiated 2025-11-25)");

    let mut old = Client::new(&s);
    let r = old.initialize("2024-11-05").await;
    assert_eq!(r["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(
        r["result"]["serverInfo"],
        json!({ "name": "everything-mcp", "version": env!("CARGO_PKG_VERSION") })
    );
    assert!(r["result"]["capabilities"].get("completions").is_none());
    let tools = old.request(2, "tools/list", json!({})).await;
    let echo = &tools["result"]["tools"][0];
    assert_eq!(echo["name"], "echo");
    assert!(
        echo.get("title").is_none()
            && echo.get("annotations").is_none()
            && echo.get("execution").is_none()
    );
}

#[tokio::test]
async fn initialize_params_are_checked() {
    let s = server(None);
    let mut c = Client::new(&s);
    let r = c
        .request(
            1,
            "initialize",
            json!({ "capabilities": {}, "clientInfo": { "name": "t" } }),
        )
        .await;
    assert_eq!(
        r["error"],
        json!({ "code": -32602, "message": "Invalid params: missing required \"protocolVersion\"" })
    );
    let r = c
        .request(
            2,
            "initialize",
            json!({ "protocolVersion": 5, "capabilities": {}, "clientInfo": { "name": "t" } }),
        )
        .await;
    assert_eq!(
        r["error"]["message"],
        "Invalid params: \"protocolVersion\" must be a string, got a number"
    );
    // The connection is still usable: a valid initialize succeeds afterwards.
    assert_eq!(
        c.initialize("2025-06-18").await["result"]["protocolVersion"],
        "2025-06-18"
    );
}

#[tokio::test]
async fn batches_only_in_2025_03_26() {
    let (s, mut c) = initialized("2025-03-26").await;
    c.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"b"}}},5]"#);
    let r = c.recv().await;
    let items = r.as_array().expect("a batch reply is an array");
    assert_eq!(items.len(), 3);
    assert!(items.contains(&json!({ "jsonrpc": "2.0", "id": 1, "result": {} })));
    assert!(items.contains(&json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": "Invalid Request: expected a JSON object, got a number" } })));
    assert!(items
        .iter()
        .any(|i| i["id"] == 2 && i["result"]["content"][0]["text"] == "Echo: b"));

    let mut c = Client::new(&s);
    c.initialize("2025-06-18").await;
    c.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    let r = c.recv().await;
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["error"]["message"], "Invalid Request: JSON-RPC batches are not supported in protocol revision 2025-06-18 (only 2025-03-26 allows them); send one message per frame");
    assert_eq!(c.request(9, "ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn cancellation_stops_the_handler_and_suppresses_the_response() {
    let (s, mut c) = initialized("2025-11-25").await;
    c.send_json(json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "slow", "_meta": { "progressToken": "p1" } } }));
    let progress = c.recv().await;
    assert_eq!(
        progress,
        json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": { "progressToken": "p1", "progress": 1, "total": 2, "message": "half" } })
    );
    c.send_json(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 7, "reason": "test" } }));
    // The next frame is the ping's response: the cancelled call was never answered.
    let r = c.request(8, "ping", json!({})).await;
    assert_eq!(r["id"], 8);
    let calls: Vec<_> = s
        .recorder
        .since(0)
        .into_iter()
        .filter(|r| r.id == Some(7.into()))
        .map(|r| r.kind)
        .collect();
    assert_eq!(calls, [_core::traffic::Kind::Request]);
}

#[tokio::test]
async fn duplicate_in_flight_ids_are_refused() {
    let (_s, mut c) = initialized("2025-11-25").await;
    c.send_json(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "slow" } }),
    );
    let r = c.request(1, "tools/list", json!({})).await;
    assert_eq!(
        r["error"]["message"],
        "Invalid Request: request id 1 is already in flight on this connection"
    );
}

#[tokio::test]
async fn log_messages_follow_the_session_level() {
    let (_s, mut c) = initialized("2025-11-25").await;
    let r = c.request(1, "tools/call", json!({ "name": "log" })).await;
    assert_eq!(
        r["params"]["data"], "quiet",
        "no level set: everything is sent"
    );
    assert_eq!(
        c.recv().await["params"],
        json!({ "level": "error", "logger": "t", "data": "loud" })
    );
    assert_eq!(c.recv().await["id"], 1);
    assert_eq!(
        c.request(2, "logging/setLevel", json!({ "level": "warning" }))
            .await["result"],
        json!({})
    );
    let r = c.request(3, "tools/call", json!({ "name": "log" })).await;
    assert_eq!(r["params"]["data"], "loud");
    assert_eq!(c.recv().await["id"], 3);
    let r = c
        .request(4, "logging/setLevel", json!({ "level": "loud" }))
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn server_requests_are_correlated_with_client_responses() {
    let s = server(None);
    let mut c = Client::new(&s);
    c.initialize_with("2025-11-25", json!({ "roots": {} }))
        .await;
    c.send_json(json!({ "jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": { "name": "ask" } }));
    let ask = c.recv().await;
    assert_eq!(ask["method"], "roots/list");
    // An unrelated response is ignored; the right one completes the tool.
    c.send_json(json!({ "jsonrpc": "2.0", "id": 999, "result": {} }));
    c.send_json(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "roots": [{ "uri": "file:///a" }] } }));
    let r = c.recv().await;
    assert_eq!(r["result"]["content"][0]["text"], "1 roots");
}

#[tokio::test]
async fn lists_paginate_with_opaque_cursors() {
    let s = server(Some(2));
    let mut c = Client::new(&s);
    c.initialize("2025-11-25").await;
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    for id in 1.. {
        let r = c
            .request(id, "tools/list", json!({ "cursor": cursor }))
            .await;
        names.extend(
            r["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        cursor = r["result"]
            .get("nextCursor")
            .cloned()
            .unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(names, ["echo", "get-sum", "slow", "log", "ask"]);
    let r = c
        .request(99, "tools/list", json!({ "cursor": "bogus" }))
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn registry_changes_notify_initialized_sessions() {
    let options = _core::catalog::Options::default();
    let registry = _core::catalog::registry(&["everything"], &options).unwrap();
    let s = Server::new(ServerConfig::default(), registry).unwrap();
    let mut ready = Client::new(&s);
    ready.initialize("2025-11-25").await;
    let fresh = Client::new(&s);
    s.add_tool(log_tool());
    assert_eq!(
        ready.recv().await,
        json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" })
    );
    assert!(s.remove_tool("log"));
    assert_eq!(
        ready.recv().await["method"],
        "notifications/tools/list_changed"
    );
    let _ = fresh; // a session that never initialized gets nothing
    let fresh_frames = s
        .recorder
        .since(0)
        .into_iter()
        .filter(|r| r.conn == fresh.conn.id)
        .count();
    assert_eq!(fresh_frames, 0);
}

#[tokio::test]
async fn stdio_ends_promptly_at_eof_even_with_a_handler_running() {
    use _core::traffic::TransportKind;
    use _core::transport::stdio::serve_io;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let s = server(None);
    let (mut client_w, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, client_r) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(serve_io(
        s,
        server_r,
        server_w,
        TransportKind::Stdio,
        Default::default(),
    ));
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let slow = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#;
    client_w
        .write_all(format!("{init}\n{slow}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = BufReader::new(client_r).lines();
    assert!(lines
        .next_line()
        .await
        .unwrap()
        .unwrap()
        .contains("\"id\":0"));
    drop(client_w); // EOF while `slow` waits for 30 s
    let t0 = std::time::Instant::now();
    tokio::time::timeout(WAIT, serving)
        .await
        .expect("serve_io did not end")
        .unwrap()
        .unwrap();
    let elapsed = t0.elapsed();
    assert!(elapsed < Duration::from_millis(500), "took {elapsed:?}");
    // Nothing more was written: the cancelled call got no response.
    assert_eq!(lines.next_line().await.unwrap(), None);
}

/// Mutated and random frames: each gets at most one reply, nothing panics, the connection
/// keeps serving.
#[tokio::test]
async fn garbage_never_stops_the_server() {
    let (s, mut c) = initialized("2025-03-26").await;
    let seeds = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}"#,
        r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}]"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}}}"#,
    ];
    // A small deterministic xorshift generator: the same cases on every run.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = br#"{}[]":,0123456789-.eE truefalsnul\u"#;
    for round in 0..2000u64 {
        let seed = seeds[(round % seeds.len() as u64) as usize].as_bytes();
        let mut frame = seed.to_vec();
        for _ in 0..=(rand() % 4) {
            let pos = (rand() as usize) % frame.len().max(1);
            match rand() % 3 {
                0 => frame[pos] = alphabet[(rand() as usize) % alphabet.len()],
                1 => {
                    frame.remove(pos);
                }
                _ => frame.insert(pos, (rand() % 256) as u8),
            }
            if frame.is_empty() {
                break;
            }
        }
        frame.retain(|&b| b != b'\n');
        c.send(String::from_utf8_lossy(&frame).into_owned());
    }
    // Whatever those produced, a ping is still answered.
    c.send_json(json!({ "jsonrpc": "2.0", "id": "last", "method": "ping" }));
    loop {
        let r = c.recv().await;
        if r.get("id") == Some(&json!("last")) {
            assert_eq!(r["result"], json!({}));
            break;
        }
    }
    // The recorder saw every inbound frame.
    let inbound = s
        .recorder
        .since(0)
        .iter()
        .filter(|r| r.dir == _core::traffic::Direction::In)
        .count();
    assert!(inbound >= 2002, "{inbound}");
}

/// Panics, always.
fn panic_tool() -> Tool {
    test_tool(
        "boom",
        tool_fn(|_ctx, _| async move {
            if true {
                panic!("kaboom");
            }
            Ok(json!({}))
        }),
    )
}

#[tokio::test]
async fn a_reused_id_after_cancel_is_still_cancellable() {
    let (_s, mut c) = initialized("2025-11-25").await;
    let slow =
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": { "name": "slow" } });
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 5 } });
    c.send_json(slow.clone());
    c.send_json(cancel.clone());
    c.send_json(slow);
    c.send_json(cancel);
    assert_eq!(c.request(6, "ping", json!({})).await["id"], 6);
    // Neither call is answered: both cancellations were decided before the ping, in order,
    // and a cancelled request's response is suppressed whenever its handler ends.
    assert!(c.conn.from_server.try_recv().is_err());
}

#[tokio::test]
async fn subscriptions_get_resource_updates() {
    let s = server(None);
    let mut a = Client::new(&s);
    let mut b = Client::new(&s);
    a.initialize("2025-11-25").await;
    b.initialize("2025-11-25").await;
    assert_eq!(
        a.request(1, "resources/subscribe", json!({ "uri": "demo://x" }))
            .await["result"],
        json!({})
    );
    assert_eq!(s.notify_resource_updated("demo://x"), 1);
    assert_eq!(
        a.recv().await,
        json!({ "jsonrpc": "2.0", "method": "notifications/resources/updated", "params": { "uri": "demo://x" } })
    );
    assert_eq!(
        a.request(2, "resources/unsubscribe", json!({ "uri": "demo://x" }))
            .await["result"],
        json!({})
    );
    assert_eq!(s.notify_resource_updated("demo://x"), 0);
    assert_eq!(
        b.request(3, "ping", json!({})).await["id"],
        3,
        "b never got a notification"
    );
}

#[tokio::test]
async fn resources_prompts_and_templates_are_served_and_announced() {
    use _core::server::handler::{prompt_fn, resource_fn, template_fn};
    use _core::server::registry::{Prompt, Resource, ResourceTemplate};
    use _core::server::uri_template::UriTemplate;

    let (s, mut c) = initialized("2025-03-26").await;
    s.add_resource(Resource {
        definition: json!({ "uri": "demo://a", "name": "a", "title": "A" })
            .as_object()
            .unwrap()
            .clone(),
        handler: resource_fn(|_ctx, uri| async move {
            Ok(vec![json!({ "uri": uri, "text": "hello" })])
        }),
    });
    assert_eq!(
        c.recv().await["method"],
        "notifications/resources/list_changed"
    );
    s.add_template(ResourceTemplate {
        definition: json!({ "uriTemplate": "demo://t/{id}", "name": "t" })
            .as_object()
            .unwrap()
            .clone(),
        template: UriTemplate::parse("demo://t/{id}").unwrap(),
        handler: template_fn(|_ctx, uri, vars| async move {
            Ok(vec![json!({ "uri": uri, "text": vars["id"] })])
        }),
    });
    assert_eq!(
        c.recv().await["method"],
        "notifications/resources/list_changed"
    );
    s.add_prompt(Prompt {
        definition: json!({ "name": "p", "title": "P", "arguments": [{ "name": "who", "title": "Who", "required": true }] }).as_object().unwrap().clone(),
        handler: prompt_fn(|_ctx, args| async move {
            Ok(json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": format!("hi {}", args["who"].as_str().unwrap_or("")) } }] }))
        }),
    });
    assert_eq!(
        c.recv().await["method"],
        "notifications/prompts/list_changed"
    );

    // Listed in the 2025-03-26 shapes: no titles.
    assert_eq!(
        c.request(1, "resources/list", json!({})).await["result"],
        json!({ "resources": [{ "uri": "demo://a", "name": "a" }] })
    );
    assert_eq!(
        c.request(2, "prompts/list", json!({})).await["result"]["prompts"][0],
        json!({ "name": "p", "arguments": [{ "name": "who", "required": true }] })
    );
    let r = c
        .request(3, "resources/read", json!({ "uri": "demo://t/42" }))
        .await;
    assert_eq!(
        r["result"],
        json!({ "contents": [{ "uri": "demo://t/42", "text": "42" }] })
    );
    let r = c.request(4, "prompts/get", json!({ "name": "p" })).await;
    assert_eq!(
        r["error"]["message"],
        "MCP error -32602: Invalid arguments for prompt p: Invalid input: expected string, received undefined at who"
    );
    let r = c
        .request(
            5,
            "prompts/get",
            json!({ "name": "p", "arguments": { "who": "you" } }),
        )
        .await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "hi you");
}

#[tokio::test]
async fn progress_has_no_message_in_2024_11_05() {
    let (_s, mut c) = initialized("2024-11-05").await;
    c.send_json(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "slow", "_meta": { "progressToken": 9 } } }));
    assert_eq!(
        c.recv().await["params"],
        json!({ "progressToken": 9, "progress": 1, "total": 2 })
    );
}

#[tokio::test]
async fn batches_of_notifications_and_responses_get_no_reply() {
    let (s, mut c) = initialized("2025-03-26").await;
    c.send(r#"[{"jsonrpc":"2.0","method":"notifications/progress","params":{}},{"jsonrpc":"2.0","id":77,"result":{}}]"#);
    assert_eq!(
        c.request(2, "ping", json!({})).await["id"],
        2,
        "the batch produced no frame"
    );
    let batch = s
        .recorder
        .since(0)
        .into_iter()
        .find(|r| r.kind == _core::traffic::Kind::Batch)
        .unwrap();
    assert_eq!(batch.error, None);
}

/// Every built-in method name routes to a handler: none of them is answered `-32601`, whatever
/// its params (a name listed without a route would be). The server serves a skill, so the
/// skills extension's methods are routed too.
#[tokio::test]
async fn every_listed_method_routes_to_a_handler() {
    use _core::protocol::method_names::ClientRequest;
    let s = server(None);
    for skill in _core::catalog::skills::skills().unwrap() {
        s.add_skill(skill);
    }
    let mut c = Client::new(&s);
    c.initialize("2025-11-25").await;
    let mut stateless = Client::new(&s);
    let envelope = json!({ "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    } });
    for (id, method) in (1..).zip(ClientRequest::ALL) {
        for (era, client, params, served) in [
            ("handshake", &mut c, json!({}), method.in_handshake_era()),
            (
                "stateless",
                &mut stateless,
                envelope.clone(),
                method.in_stateless_era(),
            ),
        ] {
            if *method == ClientRequest::Listen && served {
                continue; // a stream, not an answer
            }
            let r = client.request(id, method.as_str(), params).await;
            assert_eq!(r["id"], id, "{method}: {r}");
            let code = &r["error"]["code"];
            if served {
                assert_ne!(
                    code, -32601,
                    "{method} is listed but not routed ({era}): {r}"
                );
            } else {
                assert_eq!(code, -32601, "{method} is not in the {era} era: {r}");
            }
        }
    }
}

/// An extension's methods (`skills/*`, `resources/directory/read`) are unknown (`-32601`) on a
/// server that does not declare the extension, in both eras, as any other unknown method.
#[tokio::test]
async fn extension_methods_are_unknown_without_the_extension() {
    use _core::protocol::method_names::ClientRequest;
    let (s, mut c) = initialized("2025-11-25").await;
    let mut stateless = Client::new(&s);
    let envelope = json!({ "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    } });
    let extension_methods = ClientRequest::ALL
        .iter()
        .filter(|m| m.extension().is_some());
    for (id, method) in (1..).zip(extension_methods) {
        for (client, params) in [(&mut c, json!({})), (&mut stateless, envelope.clone())] {
            let r = client.request(id, method.as_str(), params).await;
            assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        }
    }
}

/// Two unkeyed asks of one `join!`: in the stateless era both land in ONE `inputRequests`
/// (automatic keys "1" and "2"), and the next round's answers complete the call.
#[tokio::test]
async fn the_asks_of_one_join_share_a_round_in_the_stateless_era() {
    let s = server(None);
    s.add_tool(test_tool(
        "two",
        tool_fn(|ctx, _| async move {
            let (a, b) = tokio::join!(
                ctx.ask_client("roots/list", None),
                ctx.ask_client(
                    "sampling/createMessage",
                    Some(json!({ "messages": [], "maxTokens": 1 }))
                ),
            );
            let a = a.map_err(HandlerError::Rpc)?;
            let b = b.map_err(HandlerError::Rpc)?;
            let text = format!(
                "{} roots, {}",
                a["roots"].as_array().map_or(0, Vec::len),
                b["content"]["text"]
            );
            Ok(json!({ "content": [{ "type": "text", "text": text }] }))
        }),
    ));
    let mut c = Client::new(&s);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "roots": {}, "sampling": {} }
    });
    let r1 = c
        .request(
            1,
            "tools/call",
            json!({ "name": "two", "arguments": {}, "_meta": meta }),
        )
        .await;
    let round = &r1["result"];
    assert_eq!(round["resultType"], "input_required");
    assert_eq!(
        round["inputRequests"]["1"],
        json!({ "method": "roots/list" })
    );
    assert_eq!(
        round["inputRequests"]["2"]["method"],
        "sampling/createMessage"
    );
    let answers = json!({
        "1": { "roots": [{ "uri": "file:///x" }] },
        "2": { "role": "assistant", "content": { "type": "text", "text": "hi" }, "model": "m" }
    });
    let params = json!({ "name": "two", "arguments": {}, "_meta": meta, "inputResponses": answers, "requestState": round["requestState"] });
    let r2 = c.request(2, "tools/call", params).await;
    assert_eq!(r2["result"]["content"][0]["text"], "1 roots, \"hi\"");
    assert_eq!(r2["result"]["resultType"], "complete");
}

/// Receives until a frame that `matches` (skipping the task's status notifications).
async fn recv_until(c: &mut Client, matches: impl Fn(&Value) -> bool) -> Value {
    loop {
        let m = c.recv().await;
        if matches(&m) {
            return m;
        }
    }
}

/// Sends a request and returns its answer, skipping whatever comes before it.
async fn call(c: &mut Client, id: i64, method: &str, params: Value) -> Value {
    c.send_json(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
    recv_until(c, |m| m["id"] == id && m.get("method").is_none()).await
}

#[tokio::test]
async fn a_gate_holds_a_task_until_the_test_moves_it() {
    use _core::jsonrpc::ErrorObject;
    use _core::server::rounds::Ask;
    let s = server(None);
    let def = json!({ "name": "gated", "inputSchema": { "type": "object" }, "execution": { "taskSupport": "required" } });
    let handler = tool_fn(|_, _| async { Err(HandlerError::failed("the handler ran")) });
    s.add_tool(Tool::new(def, handler).unwrap());
    let gate = s.gates.open("gated");
    let mut c = Client::new(&s);
    c.initialize_with("2025-11-25", json!({ "elicitation": {} }))
        .await;
    let params = json!({ "name": "gated", "arguments": { "n": 1 }, "task": {} });
    let created = call(&mut c, 1, "tools/call", params).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let held = tokio::time::timeout(WAIT, gate.nth(0)).await.unwrap();
    assert_eq!(&*held.task.id, id);
    assert_eq!(held.task.arguments, json!({ "n": 1 }));

    // A status message is applied before `status` returns.
    held.status("step 1".into()).await.unwrap();
    let got = call(&mut c, 2, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["statusMessage"], "step 1");
    assert_eq!(got["result"]["status"], "working");

    // An ask is a related-task request; the task is input_required until it is answered.
    let asking = {
        let held = held.clone();
        tokio::spawn(async move {
            let params = json!({ "message": "Go?", "requestedSchema": { "type": "object" } });
            held.ask(Ask {
                key: String::new(),
                method: "elicitation/create".into(),
                params: Some(params),
            })
            .await
        })
    };
    let ask = recv_until(&mut c, |m| m["method"] == "elicitation/create").await;
    assert_eq!(
        ask["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    let got = call(&mut c, 3, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["status"], "input_required");
    c.send_json(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "decline" } }));
    let answer = tokio::time::timeout(WAIT, asking).await.unwrap().unwrap();
    assert_eq!(answer.unwrap(), json!({ "action": "decline" }));

    // Settling waits until the task has settled; a second settle finds it ended.
    let result = json!({ "content": [{ "type": "text", "text": "held and released" }] });
    held.settle(Ok(result.clone())).await.unwrap();
    assert!(held
        .settle(Err(ErrorObject::internal("late")))
        .await
        .is_err());
    let r = call(&mut c, 4, "tasks/result", json!({ "taskId": id })).await;
    assert_eq!(r["result"]["content"], result["content"]);

    // Closed, the gate lets the handler run.
    assert!(s.gates.close("gated"));
    let params = json!({ "name": "gated", "arguments": {}, "task": {} });
    let created = call(&mut c, 5, "tools/call", params).await;
    let id = created["result"]["task"]["taskId"].clone();
    let r = call(&mut c, 6, "tasks/result", json!({ "taskId": id })).await;
    assert_eq!(r["result"]["content"][0]["text"], "the handler ran");
}

/// Returns what its handler sees of the request's `_meta`: all of it, and its `progressToken`.
fn meta_tool() -> Tool {
    test_tool(
        "meta",
        tool_fn(|ctx, _| async move {
            Ok(json!({ "content": [], "meta": ctx.meta_map(), "token": ctx.progress_token() }))
        }),
    )
}

/// A stateless request's handler sees its envelope as sent (the handshake era's `_meta` is a
/// row of [`requests_get_their_answers`]).
#[tokio::test]
async fn handlers_see_the_meta_that_was_sent_in_the_stateless_era() {
    let s = server(None);
    s.add_tool(meta_tool());
    // Stateless: the envelope, spaced, with a repeated member and one of the server's own.
    let meta = r#"{ "progressToken" : "p1", "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}, "x":[1,{"y":null}], "x\u0021":2, "x":3 }"#;
    let mut c = Client::new(&s);
    c.send(format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{meta},"name":"meta","arguments":{{}}}}}}"#
    ));
    let r = c.recv().await;
    let sent: Value = serde_json::from_str(meta).unwrap();
    assert_eq!(r["result"]["meta"].to_string(), sent.to_string());
    assert_eq!(r["result"]["token"], "p1");
}

/// Returns what the client declared for this request: its capabilities and identity.
fn declared_tool() -> Tool {
    test_tool(
        "declared",
        tool_fn(|ctx, _| async move {
            let info = ctx.client_info().map(|i| i.to_value());
            Ok(json!({ "content": [], "capabilities": *ctx.client_capabilities(), "client": info }))
        }),
    )
}

/// Stateless requests on one connection are each served under their own envelope: the
/// connection keeps no declarations between them (capabilities, identity, log level).
#[tokio::test]
async fn each_stateless_request_on_a_connection_is_served_under_its_own_envelope() {
    let s = server(None);
    s.add_tool(declared_tool());
    let mut c = Client::new(&s);
    let envelope = |caps: Value, name: &str, level: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": { "name": name, "version": "1" },
        });
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        meta
    };
    let asks = [
        (1, json!({ "sampling": {} }), "a"),
        (2, json!({}), "b"),
        (3, json!({ "roots": {} }), "a"),
    ];
    for (id, caps, name) in asks {
        let params = json!({ "name": "declared", "arguments": {}, "_meta": envelope(caps.clone(), name, None) });
        let r = c.request(id, "tools/call", params).await;
        assert_eq!(r["result"]["capabilities"], caps, "request {id}");
        assert_eq!(r["result"]["client"]["name"], name, "request {id}");
    }
    // The log level is the request's own too: debug and up, none, error and up.
    for (id, level, expected) in [
        (4, Some("debug"), vec!["quiet", "loud"]),
        (5, None, vec![]),
        (6, Some("error"), vec!["loud"]),
    ] {
        let params =
            json!({ "name": "log", "arguments": {}, "_meta": envelope(json!({}), "a", level) });
        c.send_json(
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }),
        );
        let mut logged = Vec::new();
        loop {
            let m = c.recv().await;
            if m["id"] == id {
                break;
            }
            logged.push(m["params"]["data"].as_str().unwrap_or_default().to_string());
        }
        assert_eq!(logged, expected, "request {id} (logLevel {level:?})");
    }
}

/// Requests answered on one handshake-era (2025-11-25) connection, in order: unknown names and
/// bad params; a panicking handler (`-32603`, and its id is free again); an ask the client
/// cannot answer; the `_meta` a handler sees. Each row: what it shows, the request's id, method
/// and params, and `{JSON pointer: value}` that its answer must hold.
#[tokio::test]
async fn requests_get_their_answers() {
    let cases = json!([
        ["an unknown tool", 1, "tools/call", { "name": "nope" }, { "/error": { "code": -32602, "message": "Invalid params: Unknown tool: nope" } }],
        ["arguments against the schema", 2, "tools/call", { "name": "get-sum", "arguments": { "a": "1", "b": 2 } }, { "/result/isError": true, "/result/content/0/text": "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: \"1\" is not of type \"number\" at a" }],
        ["arguments not an object", 3, "tools/call", { "name": "echo", "arguments": [1] }, { "/error/message": "Invalid params: \"arguments\" must be an object, got an array" }],
        ["an unknown resource", 4, "resources/read", { "uri": "demo://none" }, { "/error": { "code": -32002, "message": "Resource not found: demo://none", "data": { "uri": "demo://none" } } }],
        ["an unknown prompt", 5, "prompts/get", { "name": "nope" }, { "/error/code": -32602 }],
        ["completing an unknown template", 6, "completion/complete", { "ref": { "type": "ref/resource", "uri": "x://{a}" }, "argument": { "name": "a", "value": "" } }, { "/result": { "completion": { "values": [], "total": 0, "hasMore": false } } }],
        ["a panicking handler", 7, "tools/call", { "name": "boom" }, { "/error": { "code": -32603, "message": "Internal error: the handler of tools/call panicked: kaboom" } }],
        ["the panicked request's id, reused", 7, "tools/call", { "name": "echo", "arguments": { "message": "again" } }, { "/result/content/0/text": "Echo: again" }],
        ["an ask the client did not declare the capability for", 8, "tools/call", { "name": "ask" }, { "/error/message": "the client did not declare the \"roots\" capability needed for roots/list" }],
        ["a handshake request's _meta", 9, "tools/call", { "name": "meta", "_meta": { "progressToken": 7 } }, { "/result/meta": { "progressToken": 7 }, "/result/token": 7 }],
        ["a handshake request without _meta", 10, "tools/call", { "name": "meta" }, { "/result/meta": {}, "/result/token": null }]
    ]);
    let s = server(None);
    s.add_tool(panic_tool());
    s.add_tool(meta_tool());
    let mut c = Client::new(&s);
    c.initialize("2025-11-25").await; // no "roots" declared
    for case in cases.as_array().unwrap() {
        let (what, id, method) = (&case[0], case[1].as_i64().unwrap(), &case[2]);
        let r = c
            .request(id, method.as_str().unwrap(), case[3].clone())
            .await;
        for (pointer, want) in case[4].as_object().unwrap() {
            assert_eq!(r.pointer(pointer), Some(want), "{what}: {pointer} of {r}");
        }
    }
    assert!(
        s.recorder
            .since(0)
            .iter()
            .all(|r| r.method.as_deref() != Some("roots/list")),
        "nothing was sent to a client without the roots capability"
    );
}

/// Hooks for the seams test: a request for `echo` is answered with an error instead of being
/// served, the `ping` with id 3 is dropped (never answered), and every outbound notification is
/// dropped.
struct Faulty;

impl _core::server::seams::Hooks for Faulty {
    fn inbound(
        &self,
        frame: &_core::server::seams::InboundFrame<'_>,
    ) -> _core::server::seams::Verdict {
        use _core::server::seams::{Inbound, Verdict};
        let method = frame.message.method().unwrap_or_default();
        let args = match frame.message {
            _core::jsonrpc::Message::Request(r) => {
                r.params.as_ref().and_then(|p| p.get("name")).cloned()
            }
            _ => None,
        };
        let id = frame.message.id().map(|i| i.to_string());
        Verdict::unmarked(if method == "ping" && id.as_deref() == Some("3") {
            Inbound::Drop
        } else if method == "tools/call" && args == Some(json!("echo")) {
            Inbound::Answer(_core::server::seams::Instead::Error(
                _core::jsonrpc::ErrorObject::new(-32000, "injected"),
            ))
        } else {
            Inbound::Pass
        })
    }

    fn outbound(
        &self,
        frame: &_core::server::seams::OutboundFrame<'_>,
    ) -> _core::server::seams::OutVerdict {
        use _core::server::seams::{OutVerdict, Outbound};
        if frame.text.contains("\"method\":\"notifications/") {
            OutVerdict {
                outbound: Outbound::Drop,
                mark: None,
            }
        } else {
            OutVerdict::PASS
        }
    }
}

#[tokio::test]
async fn the_seams_pass_everything_until_hooks_are_installed_and_again_once_cleared() {
    let s = server(None);
    let mut c = Client::new(&s);
    c.initialize("2025-06-18").await;
    let echo = json!({ "name": "echo", "arguments": { "message": "hi" } });
    let r = c.request(1, "tools/call", echo.clone()).await;
    assert_eq!(r["result"]["content"][0]["text"], "Echo: hi");
    s.seams.install(Arc::new(Faulty));
    let r = c.request(2, "tools/call", echo.clone()).await;
    assert_eq!(
        r,
        json!({ "jsonrpc": "2.0", "id": 2, "error": { "code": -32000, "message": "injected" } })
    );
    // A dropped ping is never answered: the next answer is the next request's.
    c.send_json(json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }));
    let r = c
        .request(
            4,
            "tools/call",
            json!({ "name": "get-sum", "arguments": { "a": 1, "b": 2 } }),
        )
        .await;
    assert_eq!(r["id"], 4);
    // The server's own notification is dropped on the way out: the next frame is the answer.
    s.notify(
        None,
        "notifications/message",
        Some(json!({ "level": "info", "data": "x" })),
    );
    let r = c.request(5, "ping", json!({})).await;
    assert_eq!(r, json!({ "jsonrpc": "2.0", "id": 5, "result": {} }));
    s.seams.clear();
    let r = c.request(6, "tools/call", echo).await;
    assert_eq!(r["result"]["content"][0]["text"], "Echo: hi");
    let recorded: Vec<_> = s
        .recorder
        .since(0)
        .iter()
        .filter_map(|r| r.method.as_deref().map(str::to_string))
        .collect();
    assert!(
        recorded.contains(&"ping".to_string()),
        "a dropped request stays on the record"
    );
    assert!(
        !recorded.contains(&"notifications/message".to_string()),
        "a dropped notification was never sent"
    );
}
