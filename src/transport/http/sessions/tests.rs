//! One session's streams and event store, driven through [`HttpSession`]: resumption per
//! stream, the exclusive standalone stream, the store's bounds, and standalone events recorded
//! when a GET takes them.

use super::bounds::{StreamBounds, StreamCount};
use super::events::{parse_event_id, STANDALONE};
use super::outlet::StreamOutlet;
use super::session::{HttpSession, SessionKind};
use super::store::STORE_MAX_BYTES;
use super::streams::Attach;
use crate::clock::Clock;
use crate::lock::lock;
use crate::server::limits::{Limit, LimitHits};
use crate::server::session::Session;
use crate::server::sink::Sink;
use crate::traffic::{Recorder, TransportKind};
use std::sync::Arc;
use tokio::sync::mpsc;

fn session(capacity: usize) -> Arc<HttpSession> {
    bounded(StreamBounds::keeping(capacity, Arc::default()))
}

fn bounded(bounds: StreamBounds) -> Arc<HttpSession> {
    let (tx, _rx) = mpsc::unbounded_channel::<Arc<str>>();
    let recorder = Arc::new(Recorder::new(None, None).unwrap());
    let sink = Sink::new(
        Arc::new(tx),
        crate::server::seams::Wire::bare(recorder),
        TransportKind::Http,
        "s".into(),
    );
    HttpSession::new(
        Arc::new(Session::new("s".into(), TransportKind::Http, sink)),
        SessionKind::Streamable,
        bounds,
        Clock::Real,
    )
}

#[test]
fn resumes_only_the_named_stream() {
    let s = session(100);
    let (a, mut rx_a, _) = s.open_post_stream().ok().unwrap();
    let (b, _rx_b, _) = s.open_post_stream().ok().unwrap();
    let first = s.push(a, "a1".into());
    s.push(b, "b1".into());
    s.push(a, "a2".into());
    assert_eq!(rx_a.try_recv().unwrap().data.as_ref(), "a1");
    drop(rx_a); // the POST connection drops
    s.push(a, "a3".into()); // undeliverable live, kept for replay
    let Attach::Attached { replay, .. } = s.attach(parse_event_id(&first)) else {
        panic!()
    };
    let data: Vec<_> = replay.iter().map(|e| e.data.to_string()).collect();
    assert_eq!(data, ["a2", "a3"]);
    assert!(replay
        .iter()
        .all(|e| e.id.as_deref().unwrap().starts_with(&format!("{a}-"))));
}

#[test]
fn standalone_is_exclusive_and_gets_undelivered_events() {
    let s = session(100);
    s.push(STANDALONE, "early".into());
    let Attach::Attached {
        replay,
        conn,
        rx: _live,
    } = s.attach(None)
    else {
        panic!()
    };
    assert_eq!(replay.len(), 1);
    assert!(matches!(s.attach(None), Attach::Busy));
    s.detach(STANDALONE, conn);
    let Attach::Attached { replay, .. } = s.attach(None) else {
        panic!()
    };
    assert!(replay.is_empty(), "already delivered");
    assert!(matches!(s.attach(Some((99, 0))), Attach::Unknown));
}

#[test]
fn the_store_is_bounded() {
    let s = session(3);
    for i in 0..10 {
        s.push(STANDALONE, format!("{i}").into());
    }
    let Attach::Attached { replay, .. } = s.attach(Some((STANDALONE, 0))) else {
        panic!()
    };
    let data: Vec<_> = replay.iter().map(|e| e.data.to_string()).collect();
    assert_eq!(data, ["7", "8", "9"]);
}

#[test]
fn answered_streams_end_after_replay_and_ended_sessions_refuse() {
    let s = session(2);
    let (a, _rx, priming) = s.open_post_stream().ok().unwrap();
    s.push(a, "result".into());
    s.finish_stream(a);
    for _ in 0..20 {
        let (b, _rx, _) = s.open_post_stream().ok().unwrap();
        s.finish_stream(b);
    }
    let Attach::Attached { mut rx, .. } = s.attach(parse_event_id(&priming)) else {
        panic!()
    };
    assert!(
        rx.try_recv().is_none() && rx.is_closed(),
        "ends after the (evicted) replay"
    );
    s.end_streams();
    assert!(matches!(s.attach(None), Attach::Unknown));
    assert!(s.open_post_stream().is_err());
}

#[test]
fn the_store_is_bounded_in_bytes_too() {
    let s = session(1000);
    let big: Arc<str> = "x".repeat(STORE_MAX_BYTES / 2 + 1).into();
    s.push(STANDALONE, big.clone());
    s.push(STANDALONE, big);
    assert_eq!(lock(&s.streams).store.events.len(), 1);
    s.push(STANDALONE, "y".repeat(STORE_MAX_BYTES + 1).into());
    assert!(lock(&s.streams).store.bytes <= STORE_MAX_BYTES);
}

#[test]
fn a_standalone_event_is_recorded_when_a_get_takes_it() {
    use crate::jsonrpc::Message;
    use crate::traffic::{FrameMeta, FrameSummary, Kind};
    let recorder = Arc::new(Recorder::new(None, None).unwrap());
    let s = Arc::new_cyclic(|weak| {
        let outlet = StreamOutlet {
            session: weak.clone(),
            stream: STANDALONE,
            holds: true,
        };
        let sink = Sink::new(
            Arc::new(outlet),
            crate::server::seams::Wire::bare(recorder.clone()),
            TransportKind::Http,
            "s".into(),
        );
        HttpSession::new_inner(
            Arc::new(Session::new("s".into(), TransportKind::Http, sink)),
            SessionKind::Streamable,
            StreamBounds::keeping(100, Arc::default()),
            Clock::Real,
        )
    });
    let note = |m: &str| Message::notification(m, None);
    assert!(s.core.sink.send(&note("early")));
    assert_eq!(recorder.len(), 0, "nothing reached the wire yet");
    let Attach::Attached { replay, mut rx, .. } = s.attach(None) else {
        panic!()
    };
    // Sent while the GET attaches: on the wire after the replay, recorded after the GET.
    assert!(s.core.sink.send(&note("meanwhile")));
    assert_eq!(recorder.len(), 0);
    let get = FrameMeta::inbound(TransportKind::Http, "s".into());
    let parsed = FrameSummary::http_exchange(None);
    recorder.record(&get, "", parsed);
    s.record_held();
    assert!(s.core.sink.send(&note("live")));
    let mut wire: Vec<Arc<str>> = replay.iter().map(|e| e.data.clone()).collect();
    while let Some(e) = rx.try_recv() {
        wire.push(e.data);
    }
    let tape = recorder.since(0);
    assert_eq!(tape[0].kind, Kind::Http);
    let sent: Vec<Arc<str>> = tape[1..].iter().map(|r| r.raw.text.clone()).collect();
    assert_eq!(sent, wire);
    let ids: Vec<_> = tape[1..]
        .iter()
        .map(|r| r.event_id.as_deref().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["0-1", "0-2", "0-3"]);
    assert!(tape[1..]
        .iter()
        .all(|r| r.stream.as_deref() == Some("0") && r.error.is_none()));
}

#[test]
fn live_streams_are_bounded_per_session_and_in_all() {
    let hits = Arc::new(LimitHits::default());
    let total = Arc::new(StreamCount::new(3));
    let bounds = StreamBounds {
        per_session: 2,
        total: total.clone(),
        ..StreamBounds::keeping(100, hits.clone())
    };
    let (one, two) = (bounded(bounds.clone()), bounded(bounds));
    let (a, _rx_a, _) = one.open_post_stream().ok().unwrap();
    let _b = one.open_post_stream().ok().unwrap();
    assert!(matches!(
        one.open_post_stream(),
        Err(Attach::Refused(Limit::StreamsPerSession, 2))
    ));
    let _c = two.open_post_stream().ok().unwrap();
    assert!(matches!(
        two.open_post_stream(),
        Err(Attach::Refused(Limit::Streams, 3))
    ));
    assert_eq!(hits.get(Limit::StreamsPerSession), 1);
    assert_eq!(hits.get(Limit::Streams), 1);
    // A stream whose request was answered gives its place back.
    one.finish_stream(a);
    assert_eq!(total.live(), 2);
    assert!(two.open_post_stream().is_ok());
    // An ended session gives back all of its own.
    one.end_streams();
    assert_eq!(total.live(), 2);
}

#[tokio::test]
async fn a_slow_reader_loses_its_stream_and_the_events_wait_for_a_resume() {
    let hits = Arc::new(LimitHits::default());
    let s = bounded(StreamBounds {
        buffer_bytes: 100,
        ..StreamBounds::keeping(100, hits.clone())
    });
    let (stream, mut rx, _) = s.open_post_stream().ok().unwrap();
    let first = s.push(stream, "x".repeat(60).into());
    s.push(stream, "y".repeat(60).into());
    assert_eq!(hits.get(Limit::StreamBufferBytes), 1);
    assert!(rx.recv().await.is_none(), "the body ends at once");
    // The stream is still open (its request runs): a resume gets what the reader missed.
    let Attach::Attached { replay, .. } = s.attach(parse_event_id(&first)) else {
        panic!()
    };
    assert_eq!(replay.len(), 1);
    assert!(replay[0].data.starts_with('y'));
}

#[test]
fn the_store_byte_bound_is_configurable_and_counts_what_it_lets_go() {
    let hits = Arc::new(LimitHits::default());
    let s = bounded(StreamBounds {
        event_bytes: 10,
        ..StreamBounds::keeping(100, hits.clone())
    });
    s.push(STANDALONE, "123456".into());
    s.push(STANDALONE, "abcdef".into());
    assert_eq!(lock(&s.streams).store.events.len(), 1);
    s.push(STANDALONE, "x".repeat(11).into());
    assert_eq!(
        hits.get(Limit::EventStore),
        2,
        "one evicted, one too large to keep"
    );
}
