//! REST query strings through `service::handle` on the sample wiki: any query string gets a
//! 2xx/4xx/503 JSON answer, never a panic or a 500.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikantik::http::Request;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let query = String::from_utf8_lossy(rest);
    let path = match mode % 4 {
        0 | 1 => "/api/bundle",
        2 => "/api/briefing",
        _ => "/health",
    };
    let method = if mode & 0x80 != 0 { "HEAD" } else { "GET" };
    let _ = wikantik_fuzz::serve(&Request::new(method, &format!("{path}?{query}")));
});
