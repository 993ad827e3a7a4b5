//! Cloudflare Workers adapter: a thin layer over the core.
//!
//! * shards come from the R2 binding `SHARDS` (`bucket.get(key)`: whole objects, since every
//!   shard is hash-verified as a whole; the lite encoder's `static-rows` blob is read by
//!   block with an R2 range get, each block verified against its head's hash);
//! * one instance-level [`IndexHandle`] per isolate (a `thread_local!`: an isolate is single
//!   threaded and keeps Rust statics alive across requests), so the pointer is re-read at most
//!   every `WIKANTIK_POINTER_TTL_SECS` and decoded shards stay cached by content hash within
//!   `WIKANTIK_CACHE_MIB` (isolates have 128 MB);
//! * the clock is the adapter's (`Date.now()`), passed to the core as `now_ms`;
//! * per request: platform request → [`wikantik_serve::http::Request`] →
//!   [`wikantik_serve::service::handle`] → platform response. Routes outside this build's
//!   features answer 404 (see ARCHITECTURE.md, "Per-function deployment").
//!
//! Natively this crate is empty (the `worker` crate is a wasm32-only dependency).

/// Routes served by this build, from its cargo features.
pub fn route_enabled(path: &str) -> bool {
    wikantik_serve::service::Surfaces::BUILT.serves(path)
}

#[cfg(target_arch = "wasm32")]
mod worker_impl {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;

    use wikantik_serve::format::error::{Error as CoreError, Result as CoreResult};
    use wikantik_serve::http::{Request as CoreRequest, Response as CoreResponse};
    use wikantik_serve::mcp::McpConfig;
    use wikantik_serve::reader::{IndexHandle, ShardCache, ShardStore};
    use wikantik_serve::rest::RestConfig;
    use wikantik_serve::service::{self, ServiceConfig};
    use worker::*;

    /// Header carrying the bytes this isolate has fetched from R2 so far (benchmarks read it).
    const FETCHED_HEADER: &str = "x-wikantik-store-bytes";
    const MAX_BODY_BYTES: usize = 1 << 20;

    thread_local! {
        static STATE: RefCell<Option<Rc<State>>> = const { RefCell::new(None) };
        static FETCHED: Cell<u64> = const { Cell::new(0) };
    }

    struct State {
        index: IndexHandle<R2Store>,
        config: ServiceConfig,
    }

    /// The R2 binding as a [`ShardStore`]; object keys are `<prefix><name>`.
    #[derive(Clone)]
    struct R2Store {
        bucket: Bucket,
        prefix: String,
    }

    impl R2Store {
        /// One R2 get of `<prefix><name>` (only `offset, len` of it when `range` is set); counts
        /// the bytes read. `Ok(None)` when the object does not exist.
        async fn read(&self, name: &str, range: Option<(u64, u64)>) -> CoreResult<Option<Vec<u8>>> {
            let key = format!("{}{}", self.prefix, name);
            let what = range.map_or_else(|| key.clone(), |(offset, len)| format!("{key} bytes {offset}+{len}"));
            let mut request = self.bucket.get(&key);
            if let Some((offset, length)) = range {
                request = request.range(Range::OffsetWithLength { offset, length });
            }
            let object = request.execute().await.map_err(|e| CoreError::Invalid(format!("R2 get {what}: {e}")))?;
            let Some(object) = object else { return Ok(None) };
            let Some(body) = object.body() else { return Ok(None) };
            let bytes = body.bytes().await.map_err(|e| CoreError::Invalid(format!("R2 read {what}: {e}")))?;
            FETCHED.with(|f| f.set(f.get() + bytes.len() as u64));
            Ok(Some(bytes))
        }
    }

    impl ShardStore for R2Store {
        async fn get(&self, name: &str) -> CoreResult<Option<Vec<u8>>> {
            self.read(name, None).await
        }

        async fn get_range(&self, name: &str, offset: u64, len: u64) -> CoreResult<Option<Vec<u8>>> {
            let bytes = self.read(name, Some((offset, len))).await?;
            if let Some(bytes) = &bytes {
                if bytes.len() as u64 != len {
                    return Err(CoreError::Invalid(format!("R2 get {}{name}: asked for {len} bytes at {offset}, got {}", self.prefix, bytes.len())));
                }
            }
            Ok(bytes)
        }
    }

    /// A setting from a secret or a plain var (secrets win), if set and non-empty.
    fn setting(env: &Env, name: &str) -> Option<String> {
        let value = env.secret(name).map(|s| s.to_string()).or_else(|_| env.var(name).map(|v| v.to_string())).ok()?;
        (!value.trim().is_empty()).then_some(value)
    }

    fn flag(env: &Env, name: &str) -> bool {
        matches!(setting(env, name).as_deref().map(str::trim), Some("1" | "true" | "yes" | "on"))
    }

    fn number(env: &Env, name: &str, default: u64) -> Result<u64> {
        match setting(env, name) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| Error::RustError(format!("{name}: not a number: {v:?}"))),
        }
    }

    fn build_state(env: &Env) -> Result<State> {
        let binding = setting(env, "WIKANTIK_R2_BINDING").unwrap_or_else(|| "SHARDS".into());
        let bucket = env.bucket(&binding)?;
        let mut prefix = setting(env, "WIKANTIK_SHARDS_PREFIX").unwrap_or_default();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        let ttl_secs = number(env, "WIKANTIK_POINTER_TTL_SECS", 2)?;
        let cache_mib = number(env, "WIKANTIK_CACHE_MIB", 64)?;
        let api_keys = setting(env, "WIKANTIK_API_KEYS").unwrap_or_default();
        let keys = wikantik_serve::auth::KeyRing::parse(&api_keys).map_err(|e| Error::RustError(format!("WIKANTIK_API_KEYS: {e}")))?;
        let origins = setting(env, "WIKANTIK_MCP_ALLOWED_ORIGINS").unwrap_or_default();
        let mcp = McpConfig::from_settings(Some(&api_keys), flag(env, "WIKANTIK_MCP_ALLOW_UNRESTRICTED"), Some(&origins))
            .map_err(|e| Error::RustError(format!("MCP settings: {e}")))?;
        let config = ServiceConfig {
            rest: RestConfig { keys, deny_anonymous: flag(env, "WIKANTIK_DENY_ANONYMOUS"), ..RestConfig::default() },
            mcp,
        };
        let store = R2Store { bucket, prefix };
        Ok(State { index: IndexHandle::new(store, Arc::new(ShardCache::new(cache_mib << 20)), ttl_secs * 1000), config })
    }

    fn state(env: &Env) -> Result<Rc<State>> {
        if let Some(s) = STATE.with(|s| s.borrow().clone()) {
            return Ok(s);
        }
        let fresh = Rc::new(build_state(env)?);
        STATE.with(|s| *s.borrow_mut() = Some(fresh.clone()));
        Ok(fresh)
    }

    async fn to_core(mut req: Request) -> Result<std::result::Result<CoreRequest, CoreResponse>> {
        let url = req.url()?;
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        let mut core = CoreRequest::new(req.method().as_ref(), &target);
        for (name, value) in req.headers().entries() {
            core.set_header(&name, &value);
        }
        let body = req.bytes().await.unwrap_or_default();
        if body.len() > MAX_BODY_BYTES {
            return Ok(Err(CoreResponse::error(413, &format!("request body larger than {MAX_BODY_BYTES} bytes"))));
        }
        core.body = body;
        Ok(Ok(core))
    }

    fn from_core(core: CoreResponse, head: bool) -> Result<Response> {
        let body = if head { Vec::new() } else { core.body };
        let mut resp = Response::from_bytes(body)?.with_status(core.status);
        let headers = resp.headers_mut();
        for (name, value) in &core.headers {
            headers.set(name, value)?;
        }
        headers.set(FETCHED_HEADER, &FETCHED.with(|f| f.get()).to_string())?;
        Ok(resp)
    }

    #[event(fetch)]
    async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
        let head = req.method() == Method::Head;
        if !super::route_enabled(&req.path()) {
            return from_core(CoreResponse::error(service::NOT_SERVED_STATUS, service::NOT_SERVED_MESSAGE), head);
        }
        let state = match state(&env) {
            Ok(s) => s,
            Err(e) => return from_core(CoreResponse::error(500, &format!("configuration: {e}")), head),
        };
        let request = match to_core(req).await? {
            Ok(r) => r,
            Err(resp) => return from_core(resp, head),
        };
        let now_ms = Date::now().as_millis();
        let response = match state.index.reader(now_ms).await {
            Ok(reader) => service::handle(Ok(reader.as_ref()), &request, &state.config).await,
            Err(e) => service::handle::<R2Store>(Err(&e), &request, &state.config).await,
        };
        from_core(response, head)
    }
}
