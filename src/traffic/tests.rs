use super::*;
use crate::protocol::{Era, Revision};
use serde_json::{json, Value};

#[test]
fn task_frames_name_their_task() {
    let of = |kind, method, msg: Value| task_of(kind, method, &msg).map(str::to_owned);
    let t = Some("t1".to_string());
    let related = json!({ "io.modelcontextprotocol/related-task": { "taskId": "t1" } });
    assert_eq!(
        of(
            Kind::Request,
            Some("tasks/get"),
            json!({ "params": { "taskId": "t1" } })
        ),
        t
    );
    let status = json!({ "params": { "taskId": "t1", "status": "working" } });
    assert_eq!(
        of(
            Kind::Notification,
            Some("notifications/tasks/status"),
            status
        ),
        t
    );
    let ask = json!({ "params": { "message": "?", "_meta": related } });
    assert_eq!(of(Kind::Request, Some("elicitation/create"), ask), t);
    let created = json!({ "result": { "task": { "taskId": "t1" } } });
    assert_eq!(of(Kind::Response, Some("tools/call"), created), t);
    let flat = json!({ "result": { "resultType": "task", "taskId": "t1" } });
    assert_eq!(of(Kind::Response, Some("tools/call"), flat), t);
    let result = json!({ "result": { "content": [], "_meta": related } });
    assert_eq!(of(Kind::Response, Some("tasks/result"), result), t);
    // Not about a task: a tool's own `taskId` argument or output is not a mark.
    let args = json!({ "params": { "name": "x", "arguments": { "taskId": "t1" } } });
    assert_eq!(of(Kind::Request, Some("tools/call"), args), None);
    let output = json!({ "result": { "taskId": "t1", "content": [] } });
    assert_eq!(of(Kind::Response, Some("tools/call"), output), None);
}

#[test]
fn a_tasks_request_marks_its_answer() {
    let r = Recorder::new(None, None).unwrap();
    let ask = r#"{"jsonrpc":"2.0","id":7,"method":"tasks/update","params":{"taskId":"t9","inputResponses":{}}}"#;
    r.record(
        &meta(Direction::In),
        ask,
        FrameSummary::request("tasks/update", 7.into()),
    );
    let answer = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
    r.record(
        &meta(Direction::Out),
        answer,
        FrameSummary::response(7.into()),
    );
    let written: Vec<Value> = r
        .since(0)
        .iter()
        .map(|rec| serde_json::from_str(&rec.to_json()).unwrap())
        .collect();
    assert_eq!(written[0]["task"], "t9");
    assert_eq!(written[1]["task"], "t9");
    assert_eq!(written[1]["method"], "tasks/update");
}

pub(super) fn meta(dir: Direction) -> FrameMeta {
    FrameMeta::new(dir, TransportKind::Stdio, "c1".into())
}

#[test]
fn responses_get_method_and_latency_of_their_request() {
    let r = Recorder::new(None, None).unwrap();
    let req = FrameSummary::request("tools/list", 1.into());
    r.record(&meta(Direction::In), "{}", req);
    r.record(
        &meta(Direction::Out),
        "{}",
        FrameSummary::response(1.into()),
    );
    let recs = r.since(0);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].method.as_deref(), Some("tools/list"));
    assert!(recs[1].latency_ms.is_some());
    assert_eq!(r.since(1).len(), 1);
    let line: Value = serde_json::from_str(&recs[1].to_json()).unwrap();
    assert_eq!(line["seq"], 2);
    assert_eq!(line["dir"], "out");
    assert_eq!(line["kind"], "response");
    assert_eq!(line["stream"], Value::Null);
}

#[test]
fn frames_carry_the_era_and_revision_of_their_exchange() {
    let r = Recorder::new(None, None).unwrap();
    // A stateless request tagged by its envelope; its answer inherits the tag.
    let tagged = meta(Direction::In).with_revision(Some(Revision::V2026_07_28));
    r.record(&tagged, "{}", FrameSummary::request("tools/list", 1.into()));
    r.record(
        &meta(Direction::Out),
        "{}",
        FrameSummary::response(1.into()),
    );
    // A handshake connection learns its revision from the initialize answer; its later
    // untagged frames (a notification the session sends) get it.
    let mut other = meta(Direction::In);
    other.conn = "c2".into();
    let init = other.clone().with_revision(Some(Revision::V2025_06_18));
    r.record(&init, "{}", FrameSummary::request("initialize", 0.into()));
    other.dir = Direction::Out;
    let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#;
    r.record(&other, answer, FrameSummary::response(0.into()));
    r.record(
        &other,
        "{}",
        FrameSummary::notification("notifications/message"),
    );
    // Nothing known: null.
    let invalid = FrameSummary::of_kind(Kind::Invalid);
    r.record(&meta(Direction::In), "x", invalid);
    let tags: Vec<(Option<Era>, Option<Revision>)> = r
        .since(0)
        .iter()
        .map(|rec| (rec.era, rec.revision))
        .collect();
    let stateless = (Some(Era::Stateless), Some(Revision::V2026_07_28));
    let handshake = (Some(Era::Handshake), Some(Revision::V2025_06_18));
    assert_eq!(
        tags,
        [
            stateless,
            stateless,
            handshake,
            handshake,
            handshake,
            (None, None)
        ]
    );
    let line: Value = serde_json::from_str(&r.since(0)[0].to_json()).unwrap();
    assert_eq!(
        (&line["era"], &line["revision"]),
        (&json!("stateless"), &json!("2026-07-28"))
    );
    assert_eq!(line["v"], 2);
    // A closed connection is forgotten.
    r.forget_conn("c2");
    r.record(&other, "{}", FrameSummary::notification("x"));
    assert_eq!(r.since(6)[0].revision, None);
}

fn ping(r: &Recorder) -> u64 {
    r.record(&meta(Direction::In), "{}", FrameSummary::notification("x"))
}

#[test]
fn since_counts_by_seq_after_clear_and_eviction() {
    let r = Recorder::new(None, None).unwrap();
    for _ in 0..4 {
        ping(&r);
    }
    r.clear();
    ping(&r);
    ping(&r);
    assert_eq!(r.since(4).iter().map(|x| x.seq).collect::<Vec<_>>(), [5, 6]);
    assert_eq!(r.since(5).iter().map(|x| x.seq).collect::<Vec<_>>(), [6]);
    assert_eq!(r.since(0).len(), 2);
    let r = Recorder::new(
        None,
        Some(RingBound {
            records: Some(2),
            bytes: None,
        }),
    )
    .unwrap();
    for _ in 0..5 {
        ping(&r);
    }
    assert_eq!(r.since(0).iter().map(|x| x.seq).collect::<Vec<_>>(), [4, 5]);
    assert_eq!(r.len(), 5);
}

#[test]
fn cancelled_and_closed_requests_are_forgotten() {
    let r = Recorder::new(None, None).unwrap();
    let req = |id: i64| FrameSummary::request("m", id.into());
    r.record(&meta(Direction::In), "{}", req(1));
    r.record(&meta(Direction::In), "{}", req(2));
    let cancel = FrameSummary::notification("notifications/cancelled");
    let text = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    r.record(&meta(Direction::In), text, cancel);
    assert_eq!(r.open_requests(), 1);
    r.forget_conn("c1");
    assert_eq!(r.open_requests(), 0);
}

fn sized(r: &Recorder, bytes: usize) -> u64 {
    r.record(
        &meta(Direction::In),
        "x".repeat(bytes),
        FrameSummary::notification("x"),
    )
}

#[test]
fn the_ring_keeps_the_newest_records_within_its_bytes_and_counts_what_it_dropped() {
    let footprint = |bytes: usize| {
        let r = Recorder::new(None, None).unwrap();
        sized(&r, bytes);
        r.stats().kept_bytes
    };
    let one = footprint(1000);
    assert!((1000..1000 + 512).contains(&one), "{one}");
    let bound = RingBound {
        records: Some(100),
        bytes: Some(3 * one),
    };
    let r = Recorder::new(None, Some(bound)).unwrap();
    for _ in 0..10 {
        sized(&r, 1000);
    }
    let stats = r.stats();
    assert_eq!(
        (stats.kept, stats.kept_bytes, stats.dropped),
        (3, 3 * one, 7)
    );
    assert_eq!(
        r.since(0).iter().map(|x| x.seq).collect::<Vec<_>>(),
        [8, 9, 10]
    );
    // One record over the whole bound is not kept, and takes the others with it.
    sized(&r, 4 * one);
    let stats = r.stats();
    assert_eq!((stats.kept, stats.kept_bytes, stats.dropped), (0, 0, 11));
    assert_eq!(r.len(), 11);
}

#[test]
fn a_reader_learns_what_the_bound_took_and_whether_clear_forgot() {
    let bound = RingBound {
        records: Some(2),
        bytes: None,
    };
    let r = Recorder::new(None, Some(bound)).unwrap();
    for _ in 0..5 {
        ping(&r);
    }
    let read = r.read_since(1);
    assert_eq!(
        read.records.iter().map(|x| x.seq).collect::<Vec<_>>(),
        [4, 5]
    );
    assert_eq!((read.missed, read.clears, read.through), (2, 0, 5)); // 2 and 3
    assert_eq!((r.read_since(5).missed, r.read_since(5).clears), (0, 0));
    r.clear();
    for _ in 0..3 {
        ping(&r); // 6, 7, 8: 6 is dropped by the bound
    }
    let read = r.read_since(5);
    assert_eq!(
        read.records.iter().map(|x| x.seq).collect::<Vec<_>>(),
        [7, 8]
    );
    assert_eq!((read.missed, read.clears), (1, 1));
    // Records 2..=5 were forgotten by `clear`, not missed.
    assert_eq!(r.read_since(2).missed, 1);
    // What `clear` forgot is not counted as dropped; `dropped` counts since the clear.
    let stats = r.stats();
    assert_eq!((stats.dropped, stats.dropped_total), (1, 4));
    r.clear();
    let read = r.read_since(8);
    assert_eq!(
        (read.records.len(), read.missed, read.through, read.clears),
        (0, 0, 8, 2)
    );
    assert_eq!((r.stats().dropped, r.stats().dropped_total), (0, 4));
}
