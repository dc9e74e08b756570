//! What the inbound seam's verdict on a frame becomes ([`super::seams`], the fault rules of
//! `crate::faults`): the work done instead of serving it (an error or result, a drop, an HTTP
//! answer), the serving started late or answered late ([`Delay`], on the server's clock), and
//! the frames a rule sends before the frame is served.

use super::exchange::{Exchange, Origin};
use super::model::Server;
use super::seams::{Inbound, InboundFrame, Instead, SendFirst, Verdict};
use super::serve::Work;
use super::sink::{Outgoing, Sink};
use crate::jsonrpc::{Message, RequestId};
use crate::protocol::method_names::ClientRequest;

impl Server {
    /// The inbound seam ([`super::seams`]): what its hooks decide for `message`.
    pub(super) fn inbound_seam(
        &self,
        origin: Origin<'_>,
        meta: &crate::traffic::FrameMeta,
        exchange: &Exchange,
        message: &Message,
    ) -> Verdict {
        let client = || match (&exchange.envelope, origin) {
            (Some(Ok(envelope)), _) => envelope
                .client_info
                .as_deref()
                .and_then(|c| c.get("name"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
            (_, Origin::Connection(conn)) => {
                conn.read(|s| s.declared.client_info.as_ref().and_then(|c| c.name()))
            }
            _ => None,
        };
        let frame = InboundFrame {
            conn: origin.conn(),
            transport: origin.transport(),
            era: exchange.era,
            revision: meta.revision,
            client: &client,
            message,
        };
        self.seams.inbound(&frame)
    }

    /// What becomes of serving `message` from `origin` after the inbound seam decided
    /// `inbound`: a drop is nothing (a request's exchange stays open until its connection
    /// ends); an answer is the error, for a request; a delay serves it, or answers its error,
    /// late; an HTTP answer replaces the POST's.
    pub(super) fn instead(
        &self,
        origin: Origin<'_>,
        message: &Message,
        exchange: &Exchange,
        inbound: Inbound,
    ) -> Seamed {
        // A result given instead is completed as the handler's would be: in the stateless era
        // with its `resultType` and the server's `_meta`.
        let stateless = match &exchange.envelope {
            Some(Ok(envelope)) => Some(envelope.revision),
            _ => None,
        };
        let answer = |instead: Instead| match message {
            Message::Request(r) => Work::Reply(match (instead, stateless) {
                (Instead::Error(error), _) => {
                    Outgoing::One(Message::error(Some(r.id.clone()), error))
                }
                (Instead::Result(result), Some(revision)) => super::outgoing::complete(
                    &self.identity(),
                    ClientRequest::parse(&r.method),
                    revision,
                    r.id.clone(),
                    result,
                ),
                (Instead::Result(result), None) => {
                    Outgoing::One(Message::response(r.id.clone(), result))
                }
            }),
            _ => Work::Nothing,
        };
        match inbound {
            Inbound::Pass => Seamed::Pass,
            Inbound::Drop => Seamed::Instead(match message {
                Message::Request(_) => {
                    let ended = match origin {
                        Origin::Connection(conn) => conn.closed.clone(),
                        Origin::Alone(alone) => alone.ended.clone(),
                    };
                    Work::Task(Box::pin(async move {
                        ended.cancelled().await;
                        None
                    }))
                }
                _ => Work::Nothing,
            }),
            Inbound::Answer(instead) => Seamed::Instead(answer(instead)),
            Inbound::Delay(by, Some(instead)) => {
                Seamed::Instead(self.delay(by).then(answer(instead)))
            }
            Inbound::Delay(by, None) => Seamed::Late(self.delay(by)),
            Inbound::Http(http) => Seamed::Instead(Work::Http(http)),
            Inbound::DelayAnswer(by) => Seamed::Answered(self.delay(by)),
            Inbound::AfterCancel(signal) => Seamed::Late(Delay {
                timer: None,
                wait: Box::pin(async move { signal.0.notified().await }),
            }),
        }
    }
}

impl Server {
    /// Sends what a fault rule sends before the frame it hit is served: its notifications,
    /// then its request (on a connection answered into the void: the answer is recorded, and
    /// nothing waits for it; outside one, with an id of its own).
    pub(super) fn send_first(&self, origin: Origin<'_>, sink: &Sink, first: &SendFirst) {
        if let Some((line, count)) = &first.stderr {
            use std::io::Write as _;
            let mut err = std::io::stderr().lock();
            for _ in 0..*count {
                let _ = writeln!(err, "{line}");
            }
        }
        if let Some(code) = first.exit {
            if self.faults.may_exit() {
                tracing::warn!(code, "a fault rule exits the process");
                self.recorder.flush();
                std::process::exit(code);
            }
        }
        if first.close_output || first.exit.is_some() {
            self.faults.close_output(origin.conn());
        }
        if let Some((method, params, count)) = &first.notify {
            for _ in 0..*count {
                sink.send(&Message::notification(method, params.clone()));
            }
        }
        let Some((method, params)) = first.ask.clone() else {
            return;
        };
        match origin {
            Origin::Connection(session) => {
                let (session, sink, clock) = (session.clone(), sink.clone(), self.clock.clone());
                tokio::spawn(async move {
                    let asked = session.request(&sink, &method, params);
                    let _ = clock.timeout(super::context::ASK_TIMEOUT, asked).await;
                });
            }
            Origin::Alone(alone) => {
                let id = RequestId::String(format!("fault-ask-{}", alone.conn));
                sink.send(&Message::request(id, &method, params));
            }
        }
    }
}

/// What the inbound seam made of a frame.
pub(super) enum Seamed {
    /// Served as usual.
    Pass,
    /// This instead of serving it.
    Instead(Work),
    /// Served after this delay.
    Late(Delay),
    /// Served at once, answered after this delay.
    Answered(Delay),
}

/// A fault's delay, its sleep set on the server's clock when the fault was decided.
pub(super) struct Delay {
    /// On the clock: held until the delayed work has run (to its first wait), so a manual
    /// clock's advance that ends the delay returns once the work has answered (or reached its
    /// first wait).
    timer: Option<crate::clock::Timer>,
    /// What is waited for: a sleep on the clock, or a signal (the client's cancellation).
    wait: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
}

impl Server {
    /// A delay of `by` on this server's clock, starting now.
    fn delay(&self, by: std::time::Duration) -> Delay {
        let mut timer = self.clock.timer();
        let sleep = timer.sleep(by);
        Delay {
            timer: Some(timer),
            wait: Box::pin(sleep),
        }
    }
}

impl Delay {
    /// `work` served now, what it answers sent after the delay (set when the fault was
    /// decided, so the delay counts from the request's arrival).
    pub(super) fn after(self, work: Work) -> Work {
        match work {
            Work::Task(serve) => {
                let Delay { timer, wait } = self;
                Work::Task(Box::pin(async move {
                    let out = serve.await;
                    wait.await;
                    drop(timer);
                    out
                }))
            }
            other => self.then(other),
        }
    }

    /// `work`, done after the delay: a reply sent late, a serving future started late.
    pub(super) fn then(self, work: Work) -> Work {
        let Delay { timer, wait: sleep } = self;
        match work {
            Work::Nothing => Work::Nothing,
            Work::Http(http) => Work::Http(http),
            Work::Reply(out) => Work::Task(Box::pin(async move {
                sleep.await;
                drop(timer);
                Some(out)
            })),
            Work::Task(mut serve) => Work::Task(Box::pin(async move {
                sleep.await;
                // Run until the serving first waits (an echo answers in that poll), then let
                // the advance go on: a request that waits on the client must not hold it.
                let first =
                    std::future::poll_fn(|cx| std::task::Poll::Ready(serve.as_mut().poll(cx)))
                        .await;
                drop(timer);
                match first {
                    std::task::Poll::Ready(out) => out,
                    std::task::Poll::Pending => serve.await,
                }
            })),
        }
    }
}
