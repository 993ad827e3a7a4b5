//! The HTTP loop of the native host: `tiny_http` on loopback, a few worker threads, each
//! request mapped to the core's [`Request`], routed by the core, mapped back, and logged as
//! one JSON line on stderr.

use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use wikantik::http::{Request, Response};
use wikantik::reader::{IndexHandle, ShardCache};
use wikantik::routes;
use wikantik::service::{self, ServiceConfig};

use crate::store::DirStore;

/// Everything a worker thread needs.
pub struct Host {
    pub index: IndexHandle<DirStore>,
    pub config: ServiceConfig,
    started: Instant,
}

impl Host {
    pub fn new(store: DirStore, config: ServiceConfig, pointer_ttl_ms: u64, cache_bytes: u64) -> Host {
        Host { index: IndexHandle::new(store, Arc::new(ShardCache::new(cache_bytes)), pointer_ttl_ms), config, started: Instant::now() }
    }

    /// Serve one request: the same call every platform adapter makes.
    pub async fn serve(&self, request: &Request) -> Response {
        let now_ms = self.started.elapsed().as_millis() as u64;
        let reader = self.index.reader(now_ms).await;
        match &reader {
            Ok(r) => service::handle(Ok(r.as_ref()), request, &self.config).await,
            Err(e) => service::handle::<DirStore>(Err(e), request, &self.config).await,
        }
    }
}

/// Bind a listener (port 0 picks a free port; see [`local_addr`]).
///
/// The listener has `TCP_NODELAY`, which accepted connections inherit: `tiny_http` writes a
/// response as two segments (headers, then a body past its 1 KiB buffer), and with Nagle's
/// algorithm the body waited for the client's delayed ACK of the headers — a 40 ms floor on
/// every request after the first on a keep-alive connection (found by `scripts/load-test.sh`).
pub fn bind(addr: SocketAddr) -> Result<Arc<tiny_http::Server>, String> {
    let listener = std::net::TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    socket2::SockRef::from(&listener).set_tcp_nodelay(true).map_err(|e| format!("cannot set TCP_NODELAY on {addr}: {e}"))?;
    tiny_http::Server::from_listener(listener, None).map(Arc::new).map_err(|e| format!("cannot listen on {addr}: {e}"))
}

/// The address a bound listener actually uses.
pub fn local_addr(server: &tiny_http::Server) -> Option<SocketAddr> {
    server.server_addr().to_ip()
}

/// Bind and serve until the process is stopped.
pub fn run(host: Arc<Host>, addr: SocketAddr, threads: usize) -> Result<(), String> {
    serve(host, bind(addr)?, threads);
    Ok(())
}

/// Serve on a bound listener with `threads` workers until the listener is closed.
pub fn serve(host: Arc<Host>, server: Arc<tiny_http::Server>, threads: usize) {
    let workers: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let server = server.clone();
            let host = host.clone();
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    serve_one(&host, request);
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
}

fn serve_one(host: &Host, mut incoming: tiny_http::Request) {
    let started = Instant::now();
    let method = incoming.method().as_str().to_string();
    let target = incoming.url().to_string();
    let mut request = Request::new(&method, &target);
    for header in incoming.headers() {
        request.set_header(header.field.as_str().as_str(), header.value.as_str());
    }
    let mut body = Vec::new();
    let read = incoming.as_reader().take(wikantik::http::MAX_BODY_BYTES as u64 + 1).read_to_end(&mut body);
    let response = if read.is_err() {
        Response::error(400, "cannot read request body")
    } else if let Some(too_large) = routes::body_too_large(body.len()) {
        too_large
    } else {
        request.body = body;
        pollster::block_on(host.serve(&request))
    };
    log_line(&method, &request.path, &response, started);
    let mut out = tiny_http::Response::from_data(if method == "HEAD" { Vec::new() } else { response.body.clone() })
        .with_status_code(response.status);
    for (name, value) in &response.headers {
        if let Ok(header) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            out.add_header(header);
        }
    }
    let _ = incoming.respond(out);
}

fn log_line(method: &str, path: &str, response: &Response, started: Instant) {
    let ts = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let line = serde_json::json!({
        "ts": ts,
        "method": method,
        "path": path,
        "status": response.status,
        "ms": (started.elapsed().as_secs_f64() * 1000.0 * 100.0).round() / 100.0,
        "bytes": response.body.len(),
        "index": response.header(routes::INDEX_HEADER),
    });
    eprintln!("{line}");
}
