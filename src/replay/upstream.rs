//! The real server a replay passes requests to when it records (`upstream`): a command spoken to
//! over its stdin and stdout, or a Streamable HTTP URL. One [`Upstream`] is one connection to it;
//! [`Upstream::call`] sends a request and yields what came back for it (the server's
//! notifications and requests on the way, then its answer) as [`Back`] frames, so the replay can
//! pass each on to its own client as it arrives.

use crate::jsonrpc::{ErrorObject, RequestId};
use crate::lock::lock;
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Map, Value};
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Where the real server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A command line, spawned with its stdin and stdout piped (stderr passed through).
    Command(Vec<String>),
    /// A Streamable HTTP endpoint (`http://host:port/mcp`).
    Url(String),
}

impl Target {
    /// `http://…` is a URL; anything else a command line, split as a shell splits words
    /// (quotes group, no expansion). `https://` is refused: the client has no TLS.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.starts_with("http://") {
            return Ok(Self::Url(text.to_string()));
        }
        if text.starts_with("https://") {
            return Err(format!("{text}: https upstreams are not supported; use http:// (a local server or a tunnel)"));
        }
        let words = split_words(text)?;
        if words.is_empty() {
            return Err("the upstream command is empty".into());
        }
        Ok(Self::Command(words))
    }
}

/// A frame the real server sent back while a request was under way.
#[derive(Debug)]
pub enum Back {
    /// A notification (progress, a log message, …).
    Notify(String, Option<Value>),
    /// A request to the client: its id there, method and params; answer it with
    /// [`Upstream::reply`].
    Ask(Value, String, Option<Value>),
    /// The request's answer.
    Answer(Result<Value, ErrorObject>),
}

/// Where the upstream's frames that belong to no request under way go.
pub type Unsolicited = mpsc::UnboundedSender<Back>;

/// One connection to the real server.
pub struct Upstream {
    /// How frames reach it.
    link: Link,
    /// The next request id (the upstream's id space, apart from the live client's).
    next_id: AtomicI64,
    /// The requests under way: their id's text → where their frames go.
    calls: Arc<Mutex<Calls>>,
}

/// The requests under way on a connection, newest last: a frame that names no request (a
/// notification on stdio) goes to the newest, or, with none, to the unsolicited channel.
#[derive(Default)]
struct Calls {
    /// Id text → channel, in the order sent.
    open: Vec<(String, mpsc::UnboundedSender<Back>)>,
    /// Where frames outside any request go.
    unsolicited: Option<Unsolicited>,
}

impl Calls {
    /// Where a frame for no particular request goes.
    fn newest(&self) -> Option<mpsc::UnboundedSender<Back>> {
        self.open
            .last()
            .map(|(_, tx)| tx.clone())
            .or_else(|| self.unsolicited.clone())
    }
}

/// The transport of a connection.
enum Link {
    /// A child process: lines to its stdin (a reader task takes its stdout).
    Stdio {
        /// Lines to write.
        lines: mpsc::UnboundedSender<String>,
    },
    /// Streamable HTTP: one POST per frame.
    Http {
        /// The endpoint.
        url: String,
        /// The HTTP client.
        client: Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
        /// The session the server gave at `initialize`, sent back on every later POST.
        session: Mutex<Option<String>>,
        /// The protocol revision negotiated, sent as `MCP-Protocol-Version`.
        revision: Mutex<Option<String>>,
    },
}

impl Upstream {
    /// Connects to `target`: spawns the command (ended when the connection is dropped) or
    /// prepares the HTTP client. Frames for no request go to `unsolicited`.
    pub fn connect(target: &Target, unsolicited: Option<Unsolicited>) -> Result<Arc<Self>, String> {
        let calls = Arc::new(Mutex::new(Calls {
            open: Vec::new(),
            unsolicited,
        }));
        let link = match target {
            Target::Url(url) => Link::Http {
                url: url.clone(),
                client: Client::builder(TokioExecutor::new()).build_http(),
                session: Mutex::new(None),
                revision: Mutex::new(None),
            },
            Target::Command(words) => {
                let mut child = tokio::process::Command::new(&words[0])
                    .args(&words[1..])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit())
                    .kill_on_drop(true)
                    .spawn()
                    .map_err(|e| {
                        format!("the upstream command {:?} did not start: {e}", words[0])
                    })?;
                let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take())
                else {
                    return Err("the upstream command has no stdin or stdout".into());
                };
                let (lines, mut to_write) = mpsc::unbounded_channel::<String>();
                tokio::spawn(async move {
                    while let Some(line) = to_write.recv().await {
                        if stdin.write_all(line.as_bytes()).await.is_err()
                            || stdin.write_all(b"\n").await.is_err()
                            || stdin.flush().await.is_err()
                        {
                            break;
                        }
                    }
                    // The writer ends with the connection: the child sees EOF and exits; the
                    // child handle, owned here, kills it if it does not.
                    drop(stdin);
                    let _ =
                        tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await;
                });
                let reading = calls.clone();
                tokio::spawn(async move {
                    let mut stdout = BufReader::new(stdout).lines();
                    while let Ok(Some(line)) = stdout.next_line().await {
                        if let Ok(message) = serde_json::from_str::<Value>(&line) {
                            deliver(&reading, message, None);
                        }
                    }
                    // The server went: every request under way fails.
                    let open = std::mem::take(&mut lock(&reading).open);
                    for (_, tx) in open {
                        let _ = tx.send(Back::Answer(Err(gone())));
                    }
                });
                Link::Stdio { lines }
            }
        };
        Ok(Arc::new(Self {
            link,
            next_id: AtomicI64::new(1),
            calls,
        }))
    }

    /// Sends request `method` with `params` (`_meta` in them); the returned channel yields what
    /// came back for it, its answer last. Dropping the receiver before the answer cancels it
    /// upstream ([`Upstream::cancel`] with the returned id).
    pub fn call(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
    ) -> (RequestId, mpsc::UnboundedReceiver<Back>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let mut request = Map::new();
        request.insert("jsonrpc".into(), "2.0".into());
        request.insert("id".into(), id.into());
        request.insert("method".into(), method.into());
        if let Some(params) = params {
            request.insert("params".into(), params);
        }
        let key = Value::from(id).to_string();
        lock(&self.calls).open.push((key, tx.clone()));
        let frame = Value::Object(request);
        match &self.link {
            Link::Stdio { lines } => {
                if lines.send(frame.to_string()).is_err() {
                    let _ = tx.send(Back::Answer(Err(gone())));
                }
            }
            Link::Http { .. } => {
                let this = self.clone();
                tokio::spawn(async move { this.post(frame, Some(tx)).await });
            }
        }
        (RequestId::from(id), rx)
    }

    /// Sends a notification.
    pub fn notify(self: &Arc<Self>, method: &str, params: Option<Value>) {
        let mut frame = json!({ "jsonrpc": "2.0", "method": method });
        if let Some(params) = params {
            frame["params"] = params;
        }
        self.send(frame);
    }

    /// Answers the server's request `id` (a [`Back::Ask`]).
    pub fn reply(self: &Arc<Self>, id: Value, answer: Result<Value, ErrorObject>) {
        let frame = match answer {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        self.send(frame);
    }

    /// Tells the server request `id` is no longer wanted, and forgets it.
    pub fn cancel(self: &Arc<Self>, id: &RequestId) {
        let key = serde_json::to_value(id).unwrap_or(Value::Null).to_string();
        let was_open = {
            let mut calls = lock(&self.calls);
            let before = calls.open.len();
            calls.open.retain(|(k, _)| *k != key);
            calls.open.len() != before
        };
        if was_open {
            self.notify(
                "notifications/cancelled",
                Some(json!({ "requestId": id, "reason": "the client cancelled it" })),
            );
        }
    }

    /// Sends a frame that expects no answer.
    fn send(self: &Arc<Self>, frame: Value) {
        match &self.link {
            Link::Stdio { lines } => {
                let _ = lines.send(frame.to_string());
            }
            Link::Http { .. } => {
                let this = self.clone();
                tokio::spawn(async move { this.post(frame, None).await });
            }
        }
    }

    /// POSTs `frame` and hands what comes back to `tx` (or, for a frame that is not a
    /// request, to the connection's routing).
    async fn post(self: Arc<Self>, frame: Value, tx: Option<mpsc::UnboundedSender<Back>>) {
        let Link::Http {
            url,
            client,
            session,
            revision,
        } = &self.link
        else {
            return;
        };
        let fail = |e: String| {
            if let Some(tx) = &tx {
                let _ = tx.send(Back::Answer(Err(ErrorObject::internal(format!(
                    "the upstream server did not answer: {e}"
                )))));
            }
        };
        let mut request = hyper::Request::post(url.as_str())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = lock(session).clone() {
            request = request.header("mcp-session-id", s);
        }
        match routing(&frame) {
            // A stateless request names its revision, method and target in headers too.
            Some(headers) => {
                for (name, value) in headers {
                    request = request.header(name, value);
                }
            }
            None => {
                if let Some(v) = lock(revision).clone() {
                    request = request.header("mcp-protocol-version", v);
                }
            }
        }
        let body = Full::new(Bytes::from(frame.to_string()));
        let request = match request.body(body) {
            Ok(r) => r,
            Err(e) => return fail(e.to_string()),
        };
        let response = match client.request(request).await {
            Ok(r) => r,
            Err(e) => return fail(e.to_string()),
        };
        let headers = response.headers().clone();
        if let Some(s) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            *lock(session) = Some(s.to_string());
        }
        let sse = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let status = response.status();
        let mut body = response.into_body();
        let mut pending = String::new();
        let mut whole = Vec::new();
        while let Some(Ok(chunk)) = body.frame().await {
            let Ok(data) = chunk.into_data() else {
                continue;
            };
            if !sse {
                whole.extend_from_slice(&data);
                continue;
            }
            pending.push_str(&String::from_utf8_lossy(&data));
            while let Some((event, rest)) = next_event(&pending) {
                if let Ok(message) = serde_json::from_str::<Value>(&event) {
                    self.note_revision(&message);
                    deliver(&self.calls, message, tx.as_ref());
                }
                pending = rest;
            }
        }
        if sse {
            return;
        }
        match serde_json::from_slice::<Value>(&whole) {
            Ok(message) if message.is_object() => {
                self.note_revision(&message);
                deliver(&self.calls, message, tx.as_ref());
            }
            _ if tx.is_some() && !status.is_success() => fail(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&whole)
            )),
            _ => {}
        }
    }

    /// Keeps the revision an `initialize` answer names, for the header of later POSTs.
    fn note_revision(&self, message: &Value) {
        if let (Link::Http { revision, .. }, Some(v)) =
            (&self.link, message["result"]["protocolVersion"].as_str())
        {
            *lock(revision) = Some(v.to_string());
        }
    }
}

/// Routes one frame from the server: an answer to its request's channel (which it closes), a
/// request or a notification to `to` (the POST it came on), or else the newest request under
/// way, or the unsolicited channel.
fn deliver(calls: &Mutex<Calls>, message: Value, to: Option<&mpsc::UnboundedSender<Back>>) {
    let method = message["method"].as_str().map(str::to_string);
    let params = message.get("params").cloned();
    let back = match (method, message.get("id")) {
        (Some(method), Some(id)) => Back::Ask(id.clone(), method, params),
        (Some(method), None) => Back::Notify(method, params),
        (None, Some(id)) => {
            let key = id.to_string();
            let mut calls = lock(calls);
            let Some(at) = calls.open.iter().position(|(k, _)| *k == key) else {
                return;
            };
            let (_, tx) = calls.open.remove(at);
            let answer = match message.get("error") {
                Some(e) => Err(serde_json::from_value(e.clone())
                    .unwrap_or_else(|_| ErrorObject::internal(format!("upstream error: {e}")))),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(Back::Answer(answer));
            return;
        }
        (None, None) => return,
    };
    let target = to.cloned().or_else(|| lock(calls).newest());
    if let Some(tx) = target {
        let _ = tx.send(back);
    }
}

/// The routing headers of a stateless request (`frame` carries the 2026-07-28 envelope in its
/// `_meta`): `MCP-Protocol-Version`, `Mcp-Method` and, for the methods that name a target,
/// `Mcp-Name` (base64-wrapped when not plain ASCII); `None` for any other frame.
fn routing(frame: &Value) -> Option<Vec<(&'static str, String)>> {
    let method = frame["method"].as_str()?;
    let params = &frame["params"];
    let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()?;
    let mut headers = vec![
        ("mcp-protocol-version", version.to_string()),
        ("mcp-method", method.to_string()),
    ];
    let named = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return Some(headers),
    };
    if let Some(name) = params[named].as_str() {
        let plain = name.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
        let value = match plain {
            true => name.to_string(),
            false => format!(
                "=?base64?{}?=",
                base64::engine::general_purpose::STANDARD.encode(name)
            ),
        };
        headers.push(("mcp-name", value));
    }
    Some(headers)
}

/// The next whole SSE event's data in `buffer`, and what follows it (`\n` or `\r\n` lines).
fn next_event(buffer: &str) -> Option<(String, String)> {
    let normalized;
    let text = if buffer.contains('\r') {
        normalized = buffer.replace("\r\n", "\n");
        normalized.as_str()
    } else {
        buffer
    };
    let end = text.find("\n\n")?;
    let data: Vec<&str> = text[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    Some((data.join("\n"), text[end + 2..].to_string()))
}

/// The error of a request whose server went away.
fn gone() -> ErrorObject {
    ErrorObject::internal("the upstream server closed the connection")
}

/// `text` split into words as a shell would: whitespace separates, single and double quotes
/// group, a backslash escapes the next character; nothing is expanded.
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (q, '\\') if q != Some('\'') => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (_, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in the upstream command {text:?}"));
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_words() {
        assert_eq!(
            Target::parse("python -m 'my server' --x \"a b\" c\\ d").unwrap(),
            Target::Command(vec![
                "python".into(),
                "-m".into(),
                "my server".into(),
                "--x".into(),
                "a b".into(),
                "c d".into()
            ])
        );
        assert_eq!(
            Target::parse("http://127.0.0.1:1/mcp").unwrap(),
            Target::Url("http://127.0.0.1:1/mcp".into())
        );
        assert!(Target::parse("'open").is_err());
        assert!(Target::parse("https://example.test/mcp").is_err());
        assert!(Target::parse("  ").is_err());
    }

    #[test]
    fn sse_events_with_either_line_ending() {
        let (data, rest) = next_event("event: message\r\ndata: {\"a\":1}\r\n\r\ndata: x").unwrap();
        assert_eq!(data, "{\"a\":1}");
        assert_eq!(rest, "data: x");
        assert!(next_event("data: x\n").is_none());
        assert_eq!(next_event(": ping\n\n").unwrap().0, "");
    }
}
