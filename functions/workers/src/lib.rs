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

#[cfg(target_arch = "wasm32")]
mod worker_impl {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;

    use wikantik_serve::format::error::{Error as CoreError, Result as CoreResult};
    use wikantik_serve::http::{Request as CoreRequest, Response as CoreResponse};
    use wikantik_serve::reader::{IndexHandle, ShardCache, ShardStore};
    use wikantik_serve::routes::{self, Surfaces};
    use wikantik_serve::service::{self, ServiceConfig};
    use wikantik_serve::settings::Settings;
    use worker::*;

    /// Header carrying the bytes this isolate has fetched from R2 so far (benchmarks read it).
    const FETCHED_HEADER: &str = "x-wikantik-store-bytes";

    thread_local! {
        /// The instance's state, or why its settings are invalid: built and validated once per
        /// isolate, on its first request.
        static STATE: RefCell<Option<std::result::Result<Rc<State>, String>>> = const { RefCell::new(None) };
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

    /// A setting from a secret or a plain var (secrets win), if set.
    fn setting(env: &Env, name: &str) -> Option<String> {
        env.secret(name).map(|s| s.to_string()).or_else(|_| env.var(name).map(|v| v.to_string())).ok()
    }

    fn build_state(env: &Env) -> std::result::Result<State, String> {
        let settings = Settings::from_vars(|name| setting(env, name)).map_err(|e| e.to_string())?;
        let binding = setting(env, "WIKANTIK_R2_BINDING").filter(|b| !b.trim().is_empty()).unwrap_or_else(|| "SHARDS".into());
        let bucket = env.bucket(&binding).map_err(|e| format!("WIKANTIK_R2_BINDING {binding:?}: {e}"))?;
        let mut prefix = setting(env, "WIKANTIK_SHARDS_PREFIX").unwrap_or_default().trim().to_string();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        let store = R2Store { bucket, prefix };
        let index = IndexHandle::new(store, Arc::new(ShardCache::new(settings.cache_bytes)), settings.pointer_ttl_ms);
        Ok(State { index, config: settings.service })
    }

    fn state(env: &Env) -> std::result::Result<Rc<State>, String> {
        STATE.with(|s| s.borrow_mut().get_or_insert_with(|| build_state(env).map(Rc::new)).clone())
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
        if let Some(too_large) = routes::body_too_large(body.len()) {
            return Ok(Err(too_large));
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
        if !Surfaces::BUILT.serves(&req.path()) {
            return from_core(routes::not_served(), head);
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
