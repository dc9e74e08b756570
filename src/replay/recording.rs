//! A recording read back: the traffic records of one or more `--record` files
//! ([`docs/traffic-format.md`]) turned into what a replay answers from. Each client request
//! becomes an [`Episode`]: the request, what the server sent while it was being served (its
//! notifications and its requests to the client, with the client's answers), its answer, and
//! what the server sent after it unprompted (timed from the answer). A client notification
//! becomes a [`Trigger`] with what the server sent after it.
//!
//! Where a frame the server sent belongs is read from the record: on a Streamable HTTP POST's
//! stream, the request answered on that stream; a progress notification, the request whose
//! `progressToken` it names; on a connection without streams (stdio, legacy SSE), the request
//! most recently begun and not yet answered; on the standalone stream (`"0"`), or when no
//! request is in flight, the last thing the client did.

use crate::error::Error;
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::protocol::Revision;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What the server sent on its own while serving a request, or after something the client did.
#[derive(Debug, Clone)]
pub enum Sent {
    /// A notification: its method and params.
    Notify {
        /// The method.
        method: String,
        /// The params as recorded.
        params: Option<Value>,
    },
    /// A request to the client, and the client's recorded answer (`None`: it never answered).
    Ask {
        /// The method (`sampling/createMessage`, `elicitation/create`, `roots/list`, …).
        method: String,
        /// The params as recorded.
        params: Option<Value>,
        /// The client's answer: a result or an error.
        answer: Option<Result<Value, ErrorObject>>,
    },
}

/// One frame the server sent, and where it went.
#[derive(Debug, Clone)]
pub struct Step {
    /// The frame.
    pub sent: Sent,
    /// Whether it went on the session's standalone stream (Streamable HTTP `"0"`) rather than
    /// with the request's answer: replayed there too.
    pub standalone: bool,
    /// How long after the previous point (the answer, or the step before) it was sent: what a
    /// frame sent after an answer waits on replay. Unused for steps sent during a request,
    /// which follow each other at once.
    pub delay: Duration,
}

/// One client request, what it got, and what followed it.
#[derive(Debug, Clone)]
pub struct Episode {
    /// The request's position in its file (its record's `seq`).
    pub seq: u64,
    /// The recorded connection it came on, made unique across files and runs (`FILE#RUN:conn`).
    pub conn: Arc<str>,
    /// The method.
    pub method: String,
    /// The request as matched: `{"id", "method", "params"}` (with `_meta` inside params).
    pub request: Value,
    /// The `progressToken` of its `_meta`, if any: replayed progress names the live one.
    pub progress_token: Option<Value>,
    /// What the server sent while serving it, in order.
    pub steps: Vec<Step>,
    /// Its answer: a result or an error; `None` when none was recorded (the client cancelled
    /// it, or the recording ended first, as a listen stream does).
    pub answer: Option<Result<Value, ErrorObject>>,
    /// What the server sent after answering it, before the client's next frame on that
    /// connection.
    pub after: Vec<Step>,
}

/// One client notification and what the server sent after it.
#[derive(Debug, Clone)]
pub struct Trigger {
    /// The recorded connection (as [`Episode::conn`]).
    pub conn: Arc<str>,
    /// The notification's method.
    pub method: String,
    /// Its params as recorded.
    pub params: Option<Value>,
    /// What followed it.
    pub after: Vec<Step>,
}

/// A frame the client sent, in the order sent ([`Recording::client`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFrame {
    /// A request: this episode.
    Request(usize),
    /// A notification: this trigger.
    Notification(usize),
}

/// Every episode and trigger of a recording, in recorded order.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The files it was read from.
    pub files: Vec<PathBuf>,
    /// The client requests, by recorded order (file, run, `seq`).
    pub episodes: Vec<Episode>,
    /// The client notifications, in recorded order.
    pub triggers: Vec<Trigger>,
    /// The client's requests and notifications together, in recorded order (what `verify`
    /// sends again).
    pub client: Vec<ClientFrame>,
    /// The protocol revisions the recording's exchanges were served under.
    pub revisions: Vec<Revision>,
}

/// Where a frame the server sent is filed.
#[derive(Clone, Copy)]
enum Owner {
    /// Sent while this episode was being served.
    During(usize),
    /// Sent after this episode's answer.
    AfterEpisode(usize),
    /// Sent after this trigger.
    AfterTrigger(usize),
}

/// The reading state of one recorded connection.
#[derive(Default)]
struct Conn {
    /// Requests in flight: recorded id → episode.
    open: HashMap<String, usize>,
    /// Requests begun, newest last (the owner of a frame on a connection without streams).
    begun: Vec<usize>,
    /// The server's requests awaiting the client's answer: recorded id → where the step is.
    asks: HashMap<String, (Owner, usize)>,
    /// The last thing the client did that frames sent unprompted follow, and when.
    last: Option<(Owner, u64)>,
}

impl Recording {
    /// Reads `files` (each a JSON-lines traffic record, several runs in one file allowed). A
    /// line that is not a record is an error naming the file and line.
    pub fn load(files: &[PathBuf]) -> Result<Self, Error> {
        let mut recording = Recording {
            files: files.to_vec(),
            ..Recording::default()
        };
        for (n, file) in files.iter().enumerate() {
            let text = std::fs::read_to_string(file)
                .map_err(|e| Error::Recording(format!("{}: {e}", file.display())))?;
            let records = parse(file, &text)?;
            recording.add(n + 1, &records);
        }
        Ok(recording)
    }

    /// Reads one recording from its text, as [`Recording::load`] reads a file named `name`.
    pub fn from_text(name: &std::path::Path, text: &str) -> Result<Self, Error> {
        let mut recording = Recording {
            files: vec![name.to_path_buf()],
            ..Recording::default()
        };
        let records = parse(name, text)?;
        recording.add(1, &records);
        Ok(recording)
    }

    /// Files the records of file number `file` (from 1) into episodes and triggers.
    fn add(&mut self, file: usize, records: &[Value]) {
        // A stream of a Streamable HTTP connection → the id of the request answered on it.
        let mut answered_on: HashMap<(String, String), String> = HashMap::new();
        let mut run = 0;
        let mut previous = 0;
        let mut runs = Vec::with_capacity(records.len());
        for r in records {
            let seq = r["seq"].as_u64().unwrap_or(0);
            if seq <= previous {
                run += 1;
            }
            previous = seq;
            runs.push(run);
            let conn = format!("{file}#{run}:{}", r["conn"].as_str().unwrap_or("-"));
            if r["dir"] == "out" && matches!(r["kind"].as_str(), Some("response" | "error")) {
                if let (Some(stream), Some(id)) = (r["stream"].as_str(), id_key(&r["id"])) {
                    answered_on.insert((conn, stream.to_string()), id);
                }
            }
        }
        let mut conns: HashMap<String, Conn> = HashMap::new();
        for (r, run) in records.iter().zip(runs) {
            let conn_key = format!("{file}#{run}:{}", r["conn"].as_str().unwrap_or("-"));
            if let Some(revision) = r["revision"].as_str().and_then(|v| v.parse().ok()) {
                if !self.revisions.contains(&revision) {
                    self.revisions.push(revision);
                }
            }
            let Some(msg) = message(r) else { continue };
            let t = r["t_ns"].as_u64().unwrap_or(0);
            let conn = conns.entry(conn_key.clone()).or_default();
            let kind = r["kind"].as_str().unwrap_or("");
            let stream = r["stream"].as_str();
            match (r["dir"].as_str(), kind) {
                (Some("in"), "request") => {
                    let index = self.episodes.len();
                    let meta = msg["params"]["_meta"].as_object();
                    self.episodes.push(Episode {
                        seq: r["seq"].as_u64().unwrap_or(0),
                        conn: conn_key.as_str().into(),
                        method: msg["method"].as_str().unwrap_or("").to_string(),
                        request: request_value(&msg),
                        progress_token: meta.and_then(|m| m.get("progressToken")).cloned(),
                        steps: Vec::new(),
                        answer: None,
                        after: Vec::new(),
                    });
                    if let Some(id) = id_key(&msg["id"]) {
                        conn.open.insert(id, index);
                    }
                    conn.begun.push(index);
                    self.client.push(ClientFrame::Request(index));
                }
                (Some("in"), "notification") => {
                    let index = self.triggers.len();
                    self.triggers.push(Trigger {
                        conn: conn_key.as_str().into(),
                        method: msg["method"].as_str().unwrap_or("").to_string(),
                        params: msg.get("params").cloned(),
                        after: Vec::new(),
                    });
                    self.client.push(ClientFrame::Notification(index));
                    conn.last = Some((Owner::AfterTrigger(index), t));
                }
                (Some("in"), "response" | "error") => {
                    let Some((owner, step)) =
                        id_key(&msg["id"]).and_then(|id| conn.asks.remove(&id))
                    else {
                        continue;
                    };
                    if let Some(Sent::Ask { answer, .. }) =
                        self.step_mut(owner, step).map(|s| &mut s.sent)
                    {
                        *answer = Some(outcome(&msg));
                    }
                }
                (Some("out"), "response" | "error") => {
                    let Some(index) = id_key(&msg["id"]).and_then(|id| conn.open.remove(&id))
                    else {
                        continue;
                    };
                    self.episodes[index].answer = Some(outcome(&msg));
                    conn.begun.retain(|&i| i != index);
                    conn.last = Some((Owner::AfterEpisode(index), t));
                }
                (Some("out"), "notification" | "request") => {
                    let during = match stream {
                        Some("0") => None,
                        Some(s) => answered_on
                            .get(&(conn_key.clone(), s.to_string()))
                            .and_then(|id| conn.open.get(id).copied()),
                        None => None,
                    }
                    .or_else(|| self.progress_owner(conn, &msg))
                    .or_else(|| match (r["transport"].as_str(), stream) {
                        (Some("http"), _) | (_, Some("0")) => None,
                        _ => conn.begun.last().copied(),
                    });
                    let (owner, delay) = match (during, conn.last) {
                        (Some(index), _) => (Owner::During(index), Duration::ZERO),
                        (None, Some((owner, since))) => {
                            conn.last = Some((owner, t));
                            (owner, Duration::from_nanos(t.saturating_sub(since)))
                        }
                        (None, None) => continue,
                    };
                    let sent = match kind {
                        "request" => Sent::Ask {
                            method: msg["method"].as_str().unwrap_or("").to_string(),
                            params: msg.get("params").cloned(),
                            answer: None,
                        },
                        _ => Sent::Notify {
                            method: msg["method"].as_str().unwrap_or("").to_string(),
                            params: msg.get("params").cloned(),
                        },
                    };
                    let step = Step {
                        sent,
                        standalone: stream == Some("0"),
                        delay,
                    };
                    let at = self.push_step(owner, step);
                    if kind == "request" {
                        if let Some(id) = id_key(&msg["id"]) {
                            conn.asks.insert(id, (owner, at));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The episode in flight on `conn` whose `progressToken` a progress notification names.
    fn progress_owner(&self, conn: &Conn, msg: &Value) -> Option<usize> {
        if msg["method"] != "notifications/progress" {
            return None;
        }
        let token = &msg["params"]["progressToken"];
        conn.open
            .values()
            .copied()
            .find(|&i| self.episodes[i].progress_token.as_ref() == Some(token))
    }

    /// Files `step` with `owner`; returns its index there.
    fn push_step(&mut self, owner: Owner, step: Step) -> usize {
        let steps = match owner {
            Owner::During(i) => &mut self.episodes[i].steps,
            Owner::AfterEpisode(i) => &mut self.episodes[i].after,
            Owner::AfterTrigger(i) => &mut self.triggers[i].after,
        };
        steps.push(step);
        steps.len() - 1
    }

    /// The step `at` of `owner`.
    fn step_mut(&mut self, owner: Owner, at: usize) -> Option<&mut Step> {
        match owner {
            Owner::During(i) => self.episodes[i].steps.get_mut(at),
            Owner::AfterEpisode(i) => self.episodes[i].after.get_mut(at),
            Owner::AfterTrigger(i) => self.triggers[i].after.get_mut(at),
        }
    }

    /// The serverInfo the recording's server gave (its first `initialize` answer's, or the
    /// `_meta` of a stateless answer), if any.
    pub fn server_info(&self) -> Option<&Map<String, Value>> {
        self.episodes.iter().find_map(|e| match &e.answer {
            Some(Ok(result)) => result["serverInfo"]
                .as_object()
                .or_else(|| result["_meta"]["io.modelcontextprotocol/serverInfo"].as_object()),
            _ => None,
        })
    }
}

/// The records of `text`, read from `file`: one JSON object per non-empty line.
fn parse(file: &Path, text: &str) -> Result<Vec<Value>, Error> {
    let mut records = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = serde_json::from_str(line).map_err(|e| {
            Error::Recording(format!(
                "{} line {}: not a traffic record: {e}",
                file.display(),
                n + 1
            ))
        })?;
        if !record.is_object() || !record["dir"].is_string() {
            return Err(Error::Recording(format!(
                "{} line {}: not a traffic record (no \"dir\")",
                file.display(),
                n + 1
            )));
        }
        records.push(record);
    }
    Ok(records)
}

/// The record's message: `msg`, or `raw` parsed (files may omit `msg`); `None` when the frame
/// was not a JSON object.
fn message(record: &Value) -> Option<Value> {
    match &record["msg"] {
        Value::Object(_) => Some(record["msg"].clone()),
        _ => record["raw"]
            .as_str()
            .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
            .filter(Value::is_object),
    }
}

/// A request as it is matched: its id, method and params (`{}` when absent), `_meta` included.
pub fn request_value(msg: &Value) -> Value {
    let mut request = Map::new();
    request.insert("id".into(), msg["id"].clone());
    request.insert("method".into(), msg["method"].clone());
    // Absent params are an empty object, as the live request's are.
    let params = match msg.get("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(params) => params.clone(),
    };
    request.insert("params".into(), params);
    Value::Object(request)
}

/// An answer as recorded: its result, or its error object.
fn outcome(msg: &Value) -> Result<Value, ErrorObject> {
    match msg.get("error") {
        Some(error) => Err(serde_json::from_value(error.clone())
            .unwrap_or_else(|_| ErrorObject::internal(format!("recorded error: {error}")))),
        None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
    }
}

/// An id as a map key: its JSON text, so `1` and `"1"` stay apart.
fn id_key(id: &Value) -> Option<String> {
    RequestId::from_value(id).map(|_| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A record as the recorder writes it (the members the loader reads).
    fn record(seq: u64, t: u64, dir: &str, kind: &str, stream: Option<&str>, msg: Value) -> String {
        json!({
            "v": 2, "seq": seq, "t_ns": t, "dir": dir, "transport": "http", "conn": "s1",
            "stream": stream, "kind": kind, "method": msg["method"], "id": msg["id"], "msg": msg,
            "revision": "2025-11-25",
        })
        .to_string()
    }

    #[test]
    fn frames_are_filed_with_the_request_whose_stream_they_went_on() {
        let lines = [
            record(
                1,
                0,
                "in",
                "request",
                None,
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}}),
            ),
            record(
                2,
                10,
                "in",
                "request",
                None,
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "fast"}}),
            ),
            // On request 1's stream, though request 2 began last.
            record(
                3,
                20,
                "out",
                "notification",
                Some("1"),
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "one"}}),
            ),
            record(
                4,
                30,
                "out",
                "request",
                Some("1"),
                json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list"}),
            ),
            record(
                5,
                40,
                "in",
                "response",
                None,
                json!({"jsonrpc": "2.0", "id": 0, "result": {"roots": []}}),
            ),
            record(
                6,
                50,
                "out",
                "response",
                Some("2"),
                json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}),
            ),
            record(
                7,
                60,
                "out",
                "response",
                Some("1"),
                json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "done"}]}}),
            ),
            // The standalone stream, after request 1 was answered: follows that answer, 1 ms on.
            record(
                8,
                1_000_060,
                "out",
                "notification",
                Some("0"),
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            ),
        ];
        let dir = std::env::temp_dir().join(format!("replay-recording-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.jsonl");
        std::fs::write(&file, lines.join("\n")).unwrap();
        let recording = Recording::load(std::slice::from_ref(&file)).unwrap();
        let [slow, fast] = &recording.episodes[..] else {
            panic!("two episodes")
        };
        assert_eq!(slow.request["params"]["name"], "slow");
        assert_eq!(slow.steps.len(), 2);
        assert!(
            matches!(&slow.steps[0].sent, Sent::Notify { method, .. } if method == "notifications/message")
        );
        let Sent::Ask { method, answer, .. } = &slow.steps[1].sent else {
            panic!("an ask")
        };
        assert_eq!(method, "roots/list");
        assert_eq!(answer, &Some(Ok(json!({"roots": []}))));
        assert_eq!(
            slow.answer,
            Some(Ok(json!({"content": [{"type": "text", "text": "done"}]})))
        );
        assert!(fast.steps.is_empty() && fast.after.is_empty());
        assert_eq!(slow.after.len(), 1);
        assert!(slow.after[0].standalone);
        assert_eq!(slow.after[0].delay, Duration::from_millis(1));
        assert_eq!(recording.revisions, vec![Revision::V2025_11_25]);
        assert_eq!(
            recording.client,
            vec![ClientFrame::Request(0), ClientFrame::Request(1)]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
