//! Spin adapter (spin-sdk 7, `wasm32-wasip2`, WASI HTTP): a thin layer over the core.
//!
//! * shards come over outbound HTTP GET from `WIKANTIK_SHARDS_URL` (an S3/R2 bucket URL in
//!   path style, e.g. `https://<account>.r2.cloudflarestorage.com/<bucket>/<prefix>`, or any
//!   HTTPS origin serving the published objects); when `AWS_ACCESS_KEY_ID` and
//!   `AWS_SECRET_ACCESS_KEY` are set, every GET is SigV4-signed ([`sigv4`]);
//! * one instance-level [`IndexHandle`](wikantik_serve::reader::IndexHandle) in a `thread_local!`
//!   (reused while the host reuses the instance): pointer re-read at most every
//!   `WIKANTIK_POINTER_TTL_SECS`, decoded shards cached by content hash within
//!   `WIKANTIK_CACHE_MIB`; outbound GETs use `wasi:http@0.2` (see [`spin_impl`]'s `p2_get`)
//!   and so run one after the other;
//! * routes outside this build's features answer 404.
//!
//! Natively only the pure parts (URL handling, SigV4) compile, so they are unit-tested.

pub mod sigv4;

/// A base URL split into scheme+authority (`http://host:port`), authority and path prefix
/// (no trailing `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    pub origin: String,
    pub host: String,
    pub prefix: String,
}

impl BaseUrl {
    pub fn parse(url: &str) -> Result<BaseUrl, String> {
        let (scheme, rest) = url.split_once("://").ok_or_else(|| format!("WIKANTIK_SHARDS_URL {url:?} has no scheme"))?;
        if scheme != "http" && scheme != "https" {
            return Err(format!("WIKANTIK_SHARDS_URL {url:?}: only http and https are supported"));
        }
        let (host, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if host.is_empty() {
            return Err(format!("WIKANTIK_SHARDS_URL {url:?} has no host"));
        }
        Ok(BaseUrl { origin: format!("{scheme}://{host}"), host: host.to_string(), prefix: path.trim_end_matches('/').to_string() })
    }

    /// The encoded path of an object name.
    pub fn object_path(&self, name: &str) -> String {
        sigv4::uri_encode(&format!("{}/{}", self.prefix, name), true)
    }
}

#[cfg(target_os = "wasi")]
mod spin_impl {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;
    use std::time::{SystemTime, UNIX_EPOCH};

    use spin_sdk::http::body::IncomingBodyExt;
    use spin_sdk::http::{FullBody, IntoResponse, Request};
    use spin_sdk::http_service;
    use wikantik_serve::format::error::{Error as CoreError, Result as CoreResult};
    use wikantik_serve::http::{Request as CoreRequest, Response as CoreResponse};
    use wikantik_serve::reader::{IndexHandle, ShardCache, ShardStore};
    use wikantik_serve::routes::{self, Surfaces};
    use wikantik_serve::service::{self, ServiceConfig};
    use wikantik_serve::settings::Settings;

    use super::sigv4::{self, Credentials};
    use super::BaseUrl;

    const FETCHED_HEADER: &str = "x-wikantik-store-bytes";

    thread_local! {
        /// The instance's state, or why its settings are invalid: built and validated once per
        /// instance, on its first request.
        static STATE: RefCell<Option<Result<Rc<State>, String>>> = const { RefCell::new(None) };
        static FETCHED: Cell<u64> = const { Cell::new(0) };
    }

    struct State {
        index: IndexHandle<HttpStore>,
        config: ServiceConfig,
    }

    #[derive(Clone)]
    struct HttpStore {
        base: Rc<BaseUrl>,
        creds: Option<Rc<Credentials>>,
    }

    impl HttpStore {
        /// One GET of an object, SigV4-signed when credentials are set (`range` included in
        /// the signed headers); `Ok(None)` when it does not exist, else the status and body.
        fn fetch(&self, name: &str, range: Option<&str>) -> CoreResult<Option<(u16, Vec<u8>)>> {
            let path = self.base.object_path(name);
            let url = format!("{}{path}", self.base.origin);
            let extra: Vec<(&str, &str)> = range.map(|r| ("range", r)).into_iter().collect();
            let mut headers: Vec<(String, String)> = extra.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            if let Some(creds) = &self.creds {
                let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
                headers = sigv4::sign_get(creds, &self.base.host, &path, &extra, &sigv4::amz_date(secs));
            }
            let (status, body) = p2_get(&self.base, &path, &headers).map_err(|e| CoreError::Invalid(format!("GET {url}: {e}")))?;
            if status == 404 || (status == 403 && self.creds.is_none()) {
                // Public buckets answer 403 for a missing key.
                return Ok(None);
            }
            FETCHED.with(|f| f.set(f.get() + body.len() as u64));
            Ok(Some((status, body)))
        }
    }

    impl ShardStore for HttpStore {
        async fn get(&self, name: &str) -> CoreResult<Option<Vec<u8>>> {
            match self.fetch(name, None)? {
                None => Ok(None),
                Some((200, body)) => Ok(Some(body)),
                Some((status, _)) => Err(CoreError::Invalid(format!("GET {name}: HTTP {status}"))),
            }
        }

        /// `Range: bytes=a-b`, answered with 206 and exactly those bytes (an origin that ignores
        /// ranges and answers 200 with the whole object is sliced, correct but not cheap).
        async fn get_range(&self, name: &str, offset: u64, len: u64) -> CoreResult<Option<Vec<u8>>> {
            if len == 0 {
                return Ok(Some(Vec::new()));
            }
            let range = format!("bytes={offset}-{}", offset.saturating_add(len - 1));
            match self.fetch(name, Some(&range))? {
                None => Ok(None),
                Some((206, body)) if body.len() as u64 == len => Ok(Some(body)),
                Some((200, body)) => wikantik_serve::reader::slice_range(name, &body, offset, len).map(Some),
                Some((206, body)) => Err(CoreError::Invalid(format!("GET {name} {range}: {} bytes, expected {len}", body.len()))),
                Some((status, _)) => Err(CoreError::Invalid(format!("GET {name} {range}: HTTP {status}, expected 206"))),
            }
        }
    }

    /// One GET over `wasi:http/outgoing-handler@0.2`. The WASIp3 client of spin-sdk 7
    /// (`spin_sdk::http::send`) returned empty or truncated bodies under wasmtime 49.0.3's
    /// `serve` (reproduced against moto and python's http.server), so outbound requests use the
    /// mature 0.2 interface, which both Spin and wasmtime provide. It blocks the instance
    /// while it waits: the shards of one request are fetched one after the other.
    fn p2_get(base: &BaseUrl, path: &str, headers: &[(String, String)]) -> Result<(u16, Vec<u8>), String> {
        use wasip2::http::outgoing_handler;
        use wasip2::http::types::{Fields, IncomingBody, Method, OutgoingRequest, Scheme};
        use wasip2::io::streams::StreamError;
        let list: Vec<(String, Vec<u8>)> = headers.iter().map(|(k, v)| (k.clone(), v.clone().into_bytes())).collect();
        let fields = Fields::from_list(&list).map_err(|e| format!("headers: {e:?}"))?;
        let request = OutgoingRequest::new(fields);
        request.set_method(&Method::Get).map_err(|()| "method")?;
        let scheme = if base.origin.starts_with("https://") { Scheme::Https } else { Scheme::Http };
        request.set_scheme(Some(&scheme)).map_err(|()| "scheme")?;
        request.set_authority(Some(&base.host)).map_err(|()| "authority")?;
        request.set_path_with_query(Some(path)).map_err(|()| "path")?;
        let body = request.body().map_err(|()| "request body")?;
        let pending = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
        wasip2::http::types::OutgoingBody::finish(body, None).map_err(|e| format!("finish: {e:?}"))?;
        pending.subscribe().block();
        let response = match pending.get() {
            Some(Ok(Ok(r))) => r,
            Some(Ok(Err(e))) => return Err(format!("{e:?}")),
            _ => return Err("no response".into()),
        };
        let status = response.status();
        let incoming = response.consume().map_err(|()| "response body")?;
        let mut out = Vec::new();
        {
            let stream = incoming.stream().map_err(|()| "response stream")?;
            loop {
                match stream.blocking_read(256 * 1024) {
                    Ok(chunk) => out.extend_from_slice(&chunk),
                    Err(StreamError::Closed) => break,
                    Err(e) => return Err(format!("read: {e:?}")),
                }
            }
        }
        drop(IncomingBody::finish(incoming));
        Ok((status, out))
    }

    fn setting(name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }

    fn build_state() -> Result<State, String> {
        let settings = Settings::from_vars(setting).map_err(|e| e.to_string())?;
        let base = BaseUrl::parse(&setting("WIKANTIK_SHARDS_URL").ok_or("WIKANTIK_SHARDS_URL is not set")?)?;
        let creds = match (setting("AWS_ACCESS_KEY_ID"), setting("AWS_SECRET_ACCESS_KEY")) {
            (Some(access_key), Some(secret_key)) => Some(Rc::new(Credentials {
                access_key,
                secret_key,
                session_token: setting("AWS_SESSION_TOKEN"),
                region: setting("AWS_REGION").or_else(|| setting("AWS_DEFAULT_REGION")).unwrap_or_else(|| "us-east-1".into()),
            })),
            _ => None,
        };
        let store = HttpStore { base: Rc::new(base), creds };
        let index = IndexHandle::new(store, Arc::new(ShardCache::new(settings.cache_bytes)), settings.pointer_ttl_ms);
        Ok(State { index, config: settings.service })
    }

    fn state() -> Result<Rc<State>, String> {
        STATE.with(|s| s.borrow_mut().get_or_insert_with(|| build_state().map(Rc::new)).clone())
    }

    fn reply(core: CoreResponse, head: bool) -> impl IntoResponse {
        let mut builder = http::Response::builder().status(core.status);
        for (name, value) in &core.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder = builder.header(FETCHED_HEADER, FETCHED.with(|f| f.get()).to_string());
        let body = if head { Vec::new() } else { core.body };
        builder.body(FullBody::new(bytes::Bytes::from(body))).expect("valid response")
    }

    fn now_ms() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
    }

    #[http_service]
    async fn handle(req: Request) -> impl IntoResponse {
        let method = req.method().as_str().to_string();
        let head = method == "HEAD";
        let target = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
        let mut core = CoreRequest::new(&method, &target);
        if !Surfaces::BUILT.serves(&core.path) {
            return reply(routes::not_served(), head);
        }
        for (name, value) in req.headers() {
            if let Ok(v) = value.to_str() {
                core.set_header(name.as_str(), v);
            }
        }
        let state = match state() {
            Ok(s) => s,
            Err(e) => return reply(CoreResponse::error(500, &format!("configuration: {e}")), head),
        };
        let body = match req.into_body().bytes().await {
            Ok(b) => b,
            Err(_) => return reply(CoreResponse::error(400, "cannot read request body"), head),
        };
        if let Some(too_large) = routes::body_too_large(body.len()) {
            return reply(too_large, head);
        }
        core.body = body.to_vec();
        let response = match state.index.reader(now_ms()).await {
            Ok(reader) => service::handle(Ok(reader.as_ref()), &core, &state.config).await,
            Err(e) => service::handle::<HttpStore>(Err(&e), &core, &state.config).await,
        };
        reply(response, head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_base_urls() {
        let b = BaseUrl::parse("http://127.0.0.1:9000/bucket/wiki/").unwrap();
        assert_eq!(b.origin, "http://127.0.0.1:9000");
        assert_eq!(b.host, "127.0.0.1:9000");
        assert_eq!(b.object_path("shards/a b.cbor"), "/bucket/wiki/shards/a%20b.cbor");
        let b = BaseUrl::parse("https://cdn.example.com").unwrap();
        assert_eq!(b.object_path("current.json"), "/current.json");
        assert!(BaseUrl::parse("ftp://x/y").is_err());
        assert!(BaseUrl::parse("nohost").is_err());
    }
}
