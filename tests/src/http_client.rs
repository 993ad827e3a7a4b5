//! A small blocking HTTP client for end-to-end tests (any target: native host, workerd,
//! wasmtime): status, lower-cased headers and body, never an error for non-2xx.

use std::collections::BTreeMap;

/// A response as the tests see it.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

fn collect(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Reply {
    let mut response = result.unwrap_or_else(|e| panic!("request failed: {e}"));
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_ascii_lowercase(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = response.body_mut().read_to_vec().unwrap_or_default();
    Reply { status, headers, body }
}

/// GET `url` with extra headers.
pub fn get(url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = agent().get(url);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    collect(request.call())
}

/// POST `body` to `url` with extra headers.
pub fn post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut request = agent().post(url);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    collect(request.send(body))
}

/// Any other method, without a body.
pub fn request(method: &str, url: &str) -> Reply {
    let agent = agent();
    let result = match method {
        "DELETE" => agent.delete(url).call(),
        "PUT" => agent.put(url).send(&[][..]),
        _ => agent.get(url).call(),
    };
    collect(result)
}
