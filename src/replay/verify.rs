//! `verify`: a recording's client side sent again to a live server, and what it answers compared
//! with what the recording says it answered. Each recorded connection gets a connection of its
//! own, and its client frames in their recorded order: a request waits for its answer before the
//! next frame goes; the server's requests to the client on the way get the recorded client's
//! answers.

use super::matching::{differences, Difference, Ignore};
use super::recording::{ClientFrame, Episode, Recording, Sent};
use super::upstream::{Back, Target, Upstream};
use crate::jsonrpc::ErrorObject;
use serde::Serialize;
use serde_json::{json, Value};
use std::time::Duration;

/// How long one request may take to be answered.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// How many differences one answer's report names at most.
const SHOWN: usize = 20;

/// What one recorded request got from the live server, when it differs from the recording.
#[derive(Debug, Clone, Serialize)]
pub struct Differs {
    /// The request's record `seq`.
    pub seq: u64,
    /// Its recorded connection.
    pub conn: String,
    /// Its method.
    pub method: String,
    /// How the answers differ (paths into `{"result": …}` or `{"error": …}`).
    pub differences: Vec<Difference>,
}

/// The outcome of a verification.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verified {
    /// Requests sent.
    pub requests: usize,
    /// Those answered differently.
    pub differ: Vec<Differs>,
}

/// Sends `recording`'s client frames to `target` and compares each answer with the recorded
/// one, outside `ignore` (paths into the answer: `/result/_meta` is always left out).
pub async fn verify(
    recording: &Recording,
    target: &Target,
    ignore: &[String],
) -> Result<Verified, String> {
    let mut paths: Vec<String> = ignore.to_vec();
    paths.push("/result/_meta".into());
    let ignore = Ignore::new(&paths)?;
    let mut verified = Verified::default();
    let mut conns: Vec<&str> = Vec::new();
    for frame in &recording.client {
        let conn = conn_of(recording, *frame);
        if !conns.contains(&conn) {
            conns.push(conn);
        }
    }
    for conn in conns {
        let up = Upstream::connect(target, None)?;
        for frame in recording
            .client
            .iter()
            .filter(|f| conn_of(recording, **f) == conn)
        {
            match *frame {
                ClientFrame::Notification(i) => {
                    let t = &recording.triggers[i];
                    up.notify(&t.method, t.params.clone());
                }
                ClientFrame::Request(i) => {
                    let episode = &recording.episodes[i];
                    verified.requests += 1;
                    let got = ask(&up, episode).await;
                    let Some(recorded) = &episode.answer else {
                        continue;
                    };
                    let found = differences(&outcome(recorded), &outcome(&got), &ignore, SHOWN);
                    if !found.is_empty() {
                        verified.differ.push(Differs {
                            seq: episode.seq,
                            conn: episode.conn.split_once(':').map_or("", |c| c.1).to_string(),
                            method: episode.method.clone(),
                            differences: found,
                        });
                    }
                }
            }
        }
    }
    Ok(verified)
}

/// Sends `episode`'s request and waits for its answer, answering the server's requests on the
/// way with the recorded client's answers, in order.
async fn ask(up: &std::sync::Arc<Upstream>, episode: &Episode) -> Result<Value, ErrorObject> {
    let (_, mut rx) = up.call(&episode.method, episode.request.get("params").cloned());
    let mut asks = episode.steps.iter().filter_map(|s| match &s.sent {
        Sent::Ask { method, answer, .. } => Some((method, answer)),
        Sent::Notify { .. } => None,
    });
    let work = async {
        while let Some(back) = rx.recv().await {
            match back {
                Back::Answer(answer) => return answer,
                Back::Notify(..) => {}
                Back::Ask(id, method, _) => {
                    let reply = match asks.next() {
                        Some((recorded, Some(answer))) if *recorded == method => answer.clone(),
                        _ => Err(ErrorObject::new(
                            crate::jsonrpc::code::METHOD_NOT_FOUND,
                            format!("the recording has no answer to {method} here"),
                        )),
                    };
                    up.reply(id, reply);
                }
            }
        }
        Err(ErrorObject::internal("the server closed the connection"))
    };
    tokio::time::timeout(ANSWER_WITHIN, work)
        .await
        .unwrap_or_else(|_| Err(ErrorObject::internal("no answer within 30 s")))
}

/// The recorded connection of a client frame.
fn conn_of(recording: &Recording, frame: ClientFrame) -> &str {
    match frame {
        ClientFrame::Request(i) => &recording.episodes[i].conn,
        ClientFrame::Notification(i) => &recording.triggers[i].conn,
    }
}

/// An answer as compared.
fn outcome(answer: &Result<Value, ErrorObject>) -> Value {
    match answer {
        Ok(result) => json!({ "result": result }),
        Err(error) => json!({ "error": error }),
    }
}

impl Verified {
    /// The report, one line per difference, then a summary line.
    pub fn report(&self) -> String {
        let mut text = String::new();
        for d in &self.differ {
            for diff in &d.differences {
                let show =
                    |v: &Option<Value>| v.as_ref().map_or("(absent)".to_string(), Value::to_string);
                text.push_str(&format!(
                    "seq {} {} ({}): {}: recorded {}, got {}\n",
                    d.seq,
                    d.method,
                    d.conn,
                    diff.path,
                    show(&diff.recorded),
                    show(&diff.got)
                ));
            }
        }
        text.push_str(&format!(
            "{} requests sent, {} answered differently\n",
            self.requests,
            self.differ.len()
        ));
        text
    }
}
