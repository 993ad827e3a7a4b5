//! The S3 implementation of [`ObjectStore`], on Apache Arrow's `object_store` crate. It
//! speaks to AWS S3, Cloudflare R2 and MinIO (or any S3-compatible server) with path-style
//! addressing and an optional custom endpoint.
//!
//! Settings come from the usual environment variables (see [`S3Settings::from_env`]); only
//! static credentials are used, so a missing key is a clear error instead of a slow probe of
//! cloud metadata services.

use std::time::Duration;

use futures::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as StorePath;
use object_store::{
    Attribute, Attributes, BackoffConfig, ClientOptions, ObjectStore as _, ObjectStoreExt as _, PutOptions, PutPayload,
    RetryConfig,
};

use crate::error::{BuildError, Result};
use crate::store::{Mutability, ObjectMeta, ObjectStore};

/// Connection settings for S3 targets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Settings {
    /// `--endpoint`, else `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`; `None` means AWS.
    pub endpoint: Option<String>,
    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1` (R2 accepts `auto` or this).
    pub region: Option<String>,
    /// `AWS_ACCESS_KEY_ID` (required).
    pub access_key_id: Option<String>,
    /// `AWS_SECRET_ACCESS_KEY` (required).
    pub secret_access_key: Option<String>,
    /// `AWS_SESSION_TOKEN` (temporary credentials only).
    pub session_token: Option<String>,
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

impl S3Settings {
    /// Read the settings from the environment; `endpoint` (the `--endpoint` flag) wins over
    /// `AWS_ENDPOINT_URL_S3` and `AWS_ENDPOINT_URL`.
    pub fn from_env(endpoint: Option<String>) -> S3Settings {
        S3Settings {
            endpoint: endpoint.or_else(|| env_var("AWS_ENDPOINT_URL_S3")).or_else(|| env_var("AWS_ENDPOINT_URL")),
            region: env_var("AWS_REGION").or_else(|| env_var("AWS_DEFAULT_REGION")),
            access_key_id: env_var("AWS_ACCESS_KEY_ID"),
            secret_access_key: env_var("AWS_SECRET_ACCESS_KEY"),
            session_token: env_var("AWS_SESSION_TOKEN"),
        }
    }
}

/// An index under `s3://bucket/prefix`. Each call blocks on a private Tokio runtime, so the
/// store can be shared by the protocol's upload threads (`Runtime::block_on` takes `&self`).
pub struct S3Store {
    url: String,
    prefix: String,
    client: AmazonS3,
    runtime: tokio::runtime::Runtime,
}

impl S3Store {
    /// Connect to `bucket` (objects under `prefix`, which may be empty). Nothing is sent yet.
    pub fn new(url: &str, bucket: &str, prefix: &str, settings: &S3Settings) -> Result<S3Store> {
        let missing: Vec<&str> = [
            ("AWS_ACCESS_KEY_ID", &settings.access_key_id),
            ("AWS_SECRET_ACCESS_KEY", &settings.secret_access_key),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_none())
        .map(|(name, _)| name)
        .collect();
        if !missing.is_empty() {
            return Err(BuildError::MissingCredentials(format!(
                "set {} (and AWS_SESSION_TOKEN for temporary credentials)",
                missing.join(" and ")
            )));
        }
        let mut builder = AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region(settings.region.clone().unwrap_or_else(|| "us-east-1".to_string()))
            .with_access_key_id(settings.access_key_id.clone().unwrap_or_default())
            .with_secret_access_key(settings.secret_access_key.clone().unwrap_or_default())
            .with_virtual_hosted_style_request(false)
            .with_retry(RetryConfig {
                backoff: BackoffConfig { init_backoff: Duration::from_millis(200), max_backoff: Duration::from_secs(5), base: 2.0 },
                max_retries: 3,
                retry_timeout: Duration::from_secs(30),
            })
            .with_client_options(
                ClientOptions::new().with_connect_timeout(Duration::from_secs(5)).with_timeout(Duration::from_secs(120)),
            );
        if let Some(token) = &settings.session_token {
            builder = builder.with_token(token);
        }
        if let Some(endpoint) = &settings.endpoint {
            let parsed = url::Url::parse(endpoint).map_err(|e| BuildError::BadUrl {
                url: endpoint.clone(),
                reason: format!("not a valid endpoint URL ({e}); expected e.g. https://<account>.r2.cloudflarestorage.com"),
            })?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                return Err(BuildError::BadUrl {
                    url: endpoint.clone(),
                    reason: "the endpoint must be an http:// or https:// URL with a host".to_string(),
                });
            }
            builder = builder.with_endpoint(endpoint.trim_end_matches('/')).with_allow_http(parsed.scheme() == "http");
        }
        let client = builder.build().map_err(|e| BuildError::BadUrl { url: url.to_string(), reason: error_chain(&e) })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| BuildError::Invalid(format!("cannot start the S3 client's runtime: {e}")))?;
        Ok(S3Store { url: url.trim_end_matches('/').to_string(), prefix: prefix.to_string(), client, runtime })
    }

    fn key(&self, name: &str) -> StorePath {
        if self.prefix.is_empty() {
            StorePath::from(name)
        } else {
            StorePath::from(format!("{}/{name}", self.prefix))
        }
    }

    fn name_of(&self, key: &StorePath) -> String {
        let key = key.as_ref();
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            key.strip_prefix(&self.prefix).map(|k| k.trim_start_matches('/')).unwrap_or(key).to_string()
        }
    }

    fn fail(&self, op: &'static str, name: &str, err: object_store::Error) -> BuildError {
        BuildError::Store { store: self.url.clone(), op, name: name.to_string(), message: tidy(&error_chain(&err)) }
    }
}

/// Shorten an S3 client error for a person: the XML error document becomes `Code: Message`,
/// the message stays on one line, and a connection failure says what to check.
fn tidy(message: &str) -> String {
    let tag = |name: &str| -> Option<&str> {
        let open = format!("<{name}>");
        let start = message.find(&open)? + open.len();
        let len = message[start..].find(&format!("</{name}>"))?;
        Some(&message[start..start + len])
    };
    let mut out = match (message.find("<?xml").or_else(|| message.find("<Error>")), tag("Code")) {
        (Some(xml), Some(code)) => {
            format!("{}{code}: {}", &message[..xml], tag("Message").unwrap_or(""))
        }
        _ => message.to_string(),
    };
    out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = out.to_ascii_lowercase();
    if lower.contains("connect") || lower.contains("dns error") || lower.contains("timed out") {
        out.push_str(" (is the endpoint reachable? check --endpoint / AWS_ENDPOINT_URL)");
    }
    out
}

/// An error and its sources on one line, without repeating a message a source already gave.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

impl ObjectStore for S3Store {
    fn describe(&self) -> String {
        self.url.clone()
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        // object_store lists by whole path segments: list the directory, filter the rest.
        let dir = prefix.rfind('/').map(|i| &prefix[..i]).unwrap_or("");
        let dir_key = if dir.is_empty() {
            (!self.prefix.is_empty()).then(|| StorePath::from(self.prefix.as_str()))
        } else {
            Some(self.key(dir))
        };
        let listed: Vec<object_store::ObjectMeta> = self
            .runtime
            .block_on(self.client.list(dir_key.as_ref()).try_collect())
            .map_err(|e| self.fail("list", prefix, e))?;
        let mut out: Vec<ObjectMeta> = listed
            .into_iter()
            .map(|m| ObjectMeta { name: self.name_of(&m.location), size: m.size })
            .filter(|m| m.name.starts_with(prefix))
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn head(&self, name: &str) -> Result<Option<u64>> {
        match self.runtime.block_on(self.client.head(&self.key(name))) {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.fail("read the size of", name, e)),
        }
    }

    fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let result = self.runtime.block_on(async {
            let got = self.client.get(&self.key(name)).await?;
            got.bytes().await
        });
        match result {
            Ok(bytes) => Ok(Some(bytes.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.fail("read", name, e)),
        }
    }

    fn put(&self, name: &str, bytes: &[u8], mutability: Mutability) -> Result<()> {
        let mut attributes = Attributes::new();
        let content_type = if name.ends_with(".json") { "application/json" } else { "application/cbor" };
        attributes.insert(Attribute::ContentType, content_type.into());
        let cache_control = match mutability {
            Mutability::Immutable => "public, max-age=31536000, immutable",
            Mutability::Mutable => "no-cache",
        };
        attributes.insert(Attribute::CacheControl, cache_control.into());
        let options = PutOptions { attributes, ..PutOptions::default() };
        let payload = PutPayload::from(bytes.to_vec());
        self.runtime
            .block_on(self.client.put_opts(&self.key(name), payload, options))
            .map(|_| ())
            .map_err(|e| self.fail("upload", name, e))
    }

    fn delete(&self, name: &str) -> Result<()> {
        match self.runtime.block_on(self.client.delete(&self.key(name))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.fail("delete", name, e)),
        }
    }
}
