//! The native `everything-mcp` from a Rust test suite, as docs/distribution.md shows it: start
//! `http --port 0`, read the `listening` line, script the server through the control API (a
//! canned tool), call the tool over MCP, read the traffic back, and stop it with SIGTERM. Plain
//! `std` HTTP/1.1 so the example needs no client crate; a real suite would use its own MCP client.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

/// The server, ended (and reaped) when the test is done, whichever way it ends.
struct Server(Option<Child>);
impl Server {
    /// The process, no longer ended on drop.
    fn into_child(mut self) -> Child {
        self.0.take().unwrap()
    }
}
impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One HTTP/1.1 request on a fresh connection: the status and the body.
fn request(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let host = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[cfg(unix)]
#[test]
fn a_rust_suite_starts_the_native_server_and_scripts_it() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_everything-mcp"))
        .args([
            "http",
            "--port",
            "0",
            "--catalog",
            "none",
            "--keep-traffic",
            "100",
            "--log-level",
            "off",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Server(Some(child));
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).unwrap();
    let announced: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(announced["event"], "listening");
    let base = announced["base_url"].as_str().unwrap().to_string();

    let weather =
        json!({"name": "weather", "results": [{"content": [{"type": "text", "text": "sunny"}]}]});
    let (status, _) = request(&base, "POST", "/_control/tools", &[], &weather.to_string());
    assert_eq!(status, 201);

    // A 2026-07-28 call: no handshake, the revision in the header and in `_meta`.
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "weather", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "rust-suite", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "weather"),
    ];
    let (status, body) = request(&base, "POST", "/mcp", &headers, &call.to_string());
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""text":"sunny""#), "{body}");

    let (status, traffic) = request(&base, "GET", "/_control/traffic", &[], "");
    assert_eq!(status, 200);
    assert!(traffic.contains("tools/call"), "{traffic}");

    // SIGTERM: a clean exit (0), awaited on a thread so the wait has a bound.
    let mut child = server.into_child();
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait().unwrap()));
    let status = rx.recv_timeout(WAIT).expect("the server did not stop");
    assert_eq!(status.code(), Some(0));
}
