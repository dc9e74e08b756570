//! stdio: newline-delimited JSON-RPC on stdin/stdout (logs go to stderr, never stdout).
//! The server exits as soon as stdin closes, whatever timers or handlers are running.

use super::{drive, Inbound};
use crate::server::seams::{Seams, Transport, TransportEvent};
use crate::server::Server;
use crate::traffic::{TransportKind, OVERSIZED_PREFIX};
use bytes::Bytes;
use std::io::Read;
use std::sync::Arc;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter,
};
use tokio::sync::mpsc;
use tokio_util::io::StreamReader;
use tokio_util::sync::CancellationToken;

/// Serves the process's stdin/stdout until stdin closes or `shutdown` fires.
///
/// stdin is read on a plain thread of its own (not tokio's blocking pool): a read blocked on a
/// terminal or pipe cannot be interrupted, and a runtime waits for its blocking pool on
/// shutdown, so a pending read would delay exit on SIGTERM. The thread ends at EOF, or with the
/// process.
pub async fn serve_stdio(server: Arc<Server>, shutdown: CancellationToken) -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(4);
    std::thread::Builder::new()
        .name("everything-mcp-stdin".into())
        .spawn(move || read_stdin(&tx))?;
    let chunks = Box::pin(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|c| (c, rx))
    }));
    serve_io(
        server,
        StreamReader::new(chunks),
        ProcessStdout(tokio::io::stdout()),
        TransportKind::Stdio,
        shutdown,
    )
    .await
}

/// The process's stdout, whose shutdown closes it (a client reading it sees its end): tokio's
/// `Stdout` leaves the descriptor open when shut down, and a fault rule's `close_output` must
/// look to the client like a server that closed its output.
struct ProcessStdout(tokio::io::Stdout);

impl AsyncWrite for ProcessStdout {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let flushed = std::pin::Pin::new(&mut self.0).poll_flush(cx);
        if flushed.is_ready() {
            close_stdout();
        }
        flushed
    }
}

/// Closes the process's standard output (descriptor 1).
#[cfg(unix)]
fn close_stdout() {
    use std::os::fd::FromRawFd as _;
    // SAFETY: descriptor 1 is the process's stdout, open since the process started; only this
    // writer writes to it, and nothing uses it after it is shut down.
    drop(unsafe { std::os::fd::OwnedFd::from_raw_fd(1) });
}

/// Elsewhere stdout stays open (the output is only no longer written).
#[cfg(not(unix))]
fn close_stdout() {}

/// Copies stdin into `tx` in chunks until EOF, a read error, or the receiver is gone.
fn read_stdin(tx: &mpsc::Sender<std::io::Result<Bytes>>) {
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tx
                    .blocking_send(Ok(Bytes::copy_from_slice(&buf[..n])))
                    .is_err()
                {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.blocking_send(Err(e));
                return;
            }
        }
    }
}

/// Serves newline-delimited JSON-RPC over any reader/writer pair (stdin/stdout, a pipe, a
/// socket) until the reader ends or `shutdown` fires. Everything answered is flushed before
/// this returns.
pub async fn serve_io<R, W>(
    server: Arc<Server>,
    reader: R,
    writer: W,
    transport: TransportKind,
    shutdown: CancellationToken,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Arc<str>>();
    let session = server.open_session(transport, Arc::new(tx));
    let stop_writing = CancellationToken::new();
    let seam = (server.seams.clone(), session.id.clone());
    let stop = stop_writing.clone();
    let writer_task = tokio::spawn(async move {
        match write_lines(writer, rx, stop, seam).await {
            // The reader went away (a client that closed its end of our stdout): its end, not
            // the server's failure; what is sent from now on is recorded as not delivered.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                tracing::info!("the output's reader is gone: {e}");
                Ok(())
            }
            other => other,
        }
    });
    let limit = server.config.max_message_bytes;
    let reader = BufReader::with_capacity(64 * 1024, reader);
    let frames = futures::stream::unfold(reader, move |mut reader| async move {
        match read_line(&mut reader, limit).await {
            Ok(line) => line.map(|l| (l, reader)),
            Err(e) => {
                tracing::warn!("stdio: reading input failed, closing: {e}");
                None
            }
        }
    });
    drive(server, session, frames, shutdown).await;
    stop_writing.cancel();
    writer_task
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// Writes frames, one per line, flushing whenever the queue runs dry. When `stop` fires, what
/// is queued is still written, then the writer flushes and ends. Each write passes the
/// transport seam of connection `conn` first (`seam`), which may close the output instead.
async fn write_lines<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<Arc<str>>,
    stop: CancellationToken,
    (seams, conn): (Arc<Seams>, Arc<str>),
) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    loop {
        let frame = tokio::select! {
            biased;
            f = rx.recv() => f,
            () = stop.cancelled() => rx.try_recv().ok(),
        };
        let Some(frame) = frame else { break };
        if seams.armed()
            && seams.transport(&TransportEvent::StreamWrite { conn: &conn }) == Transport::Close
        {
            // The output is closed, as a crashed writer leaves it: what was written goes out,
            // then the writer shuts down (a socket's half is closed, the process's stdout too).
            w.flush().await?;
            return w.shutdown().await;
        }
        w.write_all(frame.as_bytes()).await?;
        w.write_all(b"\n").await?;
        while let Ok(more) = rx.try_recv() {
            w.write_all(more.as_bytes()).await?;
            w.write_all(b"\n").await?;
        }
        w.flush().await?;
    }
    w.flush().await
}

/// Reads one line (without its `\n` or `\r\n`). A line longer than `limit` is consumed to its
/// end without being kept. `None` at end of input (a final line without `\n` still counts).
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> std::io::Result<Option<Inbound>> {
    let mut line = Vec::new();
    let mut size = 0usize;
    let mut started = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if !started {
                return Ok(None);
            }
            break;
        }
        started = true;
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], true),
            None => (available, false),
        };
        size += chunk.len();
        if size <= limit {
            line.extend_from_slice(chunk);
        } else if line.len() < OVERSIZED_PREFIX {
            let room = OVERSIZED_PREFIX - line.len();
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        let used = chunk.len() + usize::from(found);
        reader.consume(used);
        if found {
            break;
        }
    }
    if line.last() == Some(&b'\r') && size <= limit {
        line.pop();
        size -= 1;
    }
    if size > limit {
        return Ok(Some(Inbound::Oversized { prefix: line, size }));
    }
    Ok(Some(Inbound::Frame(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize) -> Vec<Inbound> {
        let mut r = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(l) = read_line(&mut r, limit).await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_strips_crlf() {
        let got = lines(b"ab\r\n\ncdefgh\nlast", 100).await;
        let frames: Vec<_> = got
            .into_iter()
            .map(|i| match i {
                Inbound::Frame(b) => String::from_utf8(b).unwrap(),
                Inbound::Oversized { .. } => panic!(),
            })
            .collect();
        assert_eq!(frames, ["ab", "", "cdefgh", "last"]);
    }

    #[tokio::test]
    async fn oversized_lines_are_skipped_not_kept() {
        let mut input = vec![b'x'; 5000];
        input.extend_from_slice(b"\nok\n");
        let got = lines(&input, 100).await;
        assert!(
            matches!(&got[0], Inbound::Oversized { prefix, size: 5000 } if prefix.len() == OVERSIZED_PREFIX)
        );
        assert!(matches!(&got[1], Inbound::Frame(b) if b == b"ok"));
    }
}
