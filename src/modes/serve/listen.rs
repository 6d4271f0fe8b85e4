//! Accepting connections under bounds: how many are open in all and per client address, how long
//! a request's headers and body may take, and how long a connection may go without a byte either
//! way. hyper serves each connection (its header-read timeout); the rest is here, because a
//! server that waits on a slow or silent client for ever is reachable by nobody else.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_http::add_extension::AddExtension;

use super::{ApiError, BODY_LIMIT, log};
use crate::cli::ServeLimits;

/// Descriptors kept for everything but client connections: the store, the model's connections,
/// commands' PTYs and pipes, the sandbox.
const OTHER_FILES: u64 = 128;
/// The header timeout of connections opened while the server is nearly full.
const PRESSED: Duration = Duration::from_secs(2);
/// Connections one address may hold when `--max-connections-per-ip` is not given.
const PER_IP: usize = 256;

/// The bounds, from `opsai serve`'s flags and the open-files limit.
#[derive(Debug, Clone)]
pub struct Limits {
    pub header: Duration,
    pub body: Duration,
    pub idle: Duration,
    pub connections: usize,
    pub per_ip: usize,
}

impl Limits {
    pub fn new(args: &ServeLimits) -> Self {
        let files = open_files();
        let room = usize::try_from(files.saturating_sub(OTHER_FILES).max(16)).unwrap_or(usize::MAX);
        let wanted = usize::try_from(args.max_connections).unwrap_or(usize::MAX);
        if room < wanted {
            log(&format!(
                "the open-files limit ({files}) allows {room} connections, not --max-connections {wanted}: raise it \
                 (`ulimit -n`, systemd LimitNOFILE=) for more"
            ));
        }
        let connections = wanted.min(room);
        // Unless told otherwise, one address never holds more than half: the other half stays
        // for everyone else while it keeps connections open.
        let per_ip = match args.max_connections_per_ip {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None => PER_IP.min((connections / 2).max(1)),
        };
        Self {
            header: Duration::from_secs(args.header_timeout),
            body: Duration::from_secs(args.body_timeout),
            idle: Duration::from_secs(args.idle_timeout),
            connections,
            per_ip,
        }
    }
}

/// The open-files limit, raised to its hard limit first (the usual for a server).
fn open_files() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else { return 1024 };
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return hard;
    }
    soft
}

/// Accepts connections until `shutdown`, then waits for the open ones to end (each is asked to
/// close once its current response is sent).
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: CancellationToken) {
    let open = Arc::new(Semaphore::new(limits.connections));
    let per_ip = Arc::new(PerIp::default());
    let mut failing = false;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => { failing = false; pair }
                Err(err) => {
                    // Out of descriptors (EMFILE) and the like: said once, and no busy loop.
                    if !failing {
                        log(&format!("cannot accept a connection: {err}"));
                    }
                    failing = true;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            refuse(stream, "the server has as many connections open as it takes (--max-connections)");
            continue;
        };
        let Some(slot) = PerIp::enter(&per_ip, peer.ip(), limits.per_ip) else {
            refuse(stream, "too many connections from your address (--max-connections-per-ip)");
            continue;
        };
        let header = header_timeout(limits.connections - open.available_permits(), limits.connections, limits.header);
        let (app, limits, shutdown) = (app.clone(), Limits { header, ..limits.clone() }, shutdown.clone());
        tokio::spawn(async move {
            connection(stream, peer, app, &limits, shutdown).await;
            drop((permit, slot));
        });
    }
    drop(listener);
    let all = u32::try_from(limits.connections).unwrap_or(u32::MAX);
    let _ = open.acquire_many(all).await;
}

/// The header timeout of a new connection when `open` of `cap` are open: under pressure (more than
/// three quarters open) at most [`PRESSED`], so connections that send nothing free their places
/// sooner while many are held.
fn header_timeout(open: usize, cap: usize, configured: Duration) -> Duration {
    if open.saturating_mul(4) > cap.saturating_mul(3) { configured.min(PRESSED) } else { configured }
}

/// One connection, served until it ends, goes idle too long, or (at shutdown) its response is sent.
async fn connection(stream: TcpStream, peer: SocketAddr, app: Router, limits: &Limits, shutdown: CancellationToken) {
    let _ = stream.set_nodelay(true);
    let activity = Arc::new(AtomicU64::new(now_ms()));
    let io = TokioIo::new(Watched { inner: stream, activity: activity.clone() });
    let service = TowerToHyperService::new(AddExtension::new(app, ConnectInfo(peer)));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header).keep_alive(true);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let mut closing = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => break,
            () = shutdown.cancelled(), if !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
            // Dropping the connection closes it.
            () = idle(&activity, limits.idle) => break,
        }
    }
}

/// Returns once no byte went either way for `limit`.
async fn idle(activity: &AtomicU64, limit: Duration) {
    let limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
    loop {
        let quiet = now_ms().saturating_sub(activity.load(Ordering::Relaxed));
        if quiet >= limit_ms {
            return;
        }
        tokio::time::sleep(Duration::from_millis(limit_ms - quiet)).await;
    }
}

/// A refused connection gets a 503 saying why (best effort, at most 2 s), then is closed.
fn refuse(mut stream: TcpStream, why: &str) {
    let body = serde_json::json!({"error": format!("{why}: try again in a few seconds")}).to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: \
         close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tokio::spawn(async move {
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            stream.write_all(response.as_bytes()).await?;
            stream.shutdown().await
        })
        .await;
    });
}

fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    u64::try_from(START.get_or_init(Instant::now).elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The socket, noting when a byte last went either way.
struct Watched {
    inner: TcpStream,
    activity: Arc<AtomicU64>,
}

impl Watched {
    fn moved(&self, bytes: usize) {
        if bytes > 0 {
            self.activity.store(now_ms(), Ordering::Relaxed);
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        self.moved(read);
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if let Poll::Ready(Ok(written)) = polled {
            self.moved(written);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(written)) = polled {
            self.moved(written);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Connections open per client address.
#[derive(Default)]
struct PerIp {
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection counted for its address until dropped.
struct Slot {
    table: Arc<PerIp>,
    ip: IpAddr,
}

impl PerIp {
    fn enter(table: &Arc<Self>, ip: IpAddr, limit: usize) -> Option<Slot> {
        let mut open = table.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = open.entry(ip).or_default();
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(Slot { table: table.clone(), ip })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.table.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Reads a request's whole body within `limit` (and [`BODY_LIMIT`]) before the handler runs: a
/// body trickled in a byte at a time is answered 408 and its connection closed.
pub async fn read_body(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > BODY_LIMIT as u64) {
        return too_large();
    }
    let (parts, body) = request.into_parts();
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(limit, async {
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|_| false)?;
            if bytes.len() + chunk.len() > BODY_LIMIT {
                return Err(true);
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(())
    })
    .await;
    match read {
        Ok(Ok(())) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Ok(Err(true)) => too_large(),
        Ok(Err(false)) => closing(ApiError::new(StatusCode::BAD_REQUEST, "the request body could not be read")),
        Err(_) => closing(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!("the request body did not arrive within {} s (--body-timeout)", limit.as_secs()),
        )),
    }
}

fn too_large() -> Response {
    closing(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large (64 KiB at most)"))
}

/// An error after which the connection is closed (its body was not read to the end).
fn closing(error: ApiError) -> Response {
    let mut response = error.into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nearly_full_server_gives_new_connections_less_time_for_their_headers() {
        let ten = Duration::from_secs(10);
        assert_eq!(header_timeout(10, 512, ten), ten);
        assert_eq!(header_timeout(384, 512, ten), ten);
        assert_eq!(header_timeout(385, 512, ten), PRESSED);
        assert_eq!(header_timeout(500, 512, Duration::from_secs(1)), Duration::from_secs(1), "never longer");
    }

    #[test]
    fn an_address_holds_at_most_its_share_and_gets_it_back() {
        let table = Arc::new(PerIp::default());
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let first = PerIp::enter(&table, ip, 2).unwrap();
        let _second = PerIp::enter(&table, ip, 2).unwrap();
        assert!(PerIp::enter(&table, ip, 2).is_none());
        assert!(PerIp::enter(&table, "10.0.0.2".parse().unwrap(), 2).is_some(), "another address");
        drop(first);
        assert!(PerIp::enter(&table, ip, 2).is_some());
    }
}
