//! Found by the load test (`scripts/load-test.sh`): on a keep-alive connection every request
//! after the first took ~40 ms on the native host. `tiny_http` writes a response as two
//! segments (headers, then a body larger than its 1 KiB buffer); with Nagle's algorithm the
//! body waited for the client's delayed ACK of the headers. The host now sets `TCP_NODELAY` on
//! its listener (inherited by accepted sockets). The median over 30 requests on one connection
//! must stay below the 40 ms delayed-ACK floor.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wikantik::service::ServiceConfig;
use wikantik_native::server::{bind, local_addr, serve, Host};
use wikantik_native::DirStore;
use wikantik_tests::build_sample;

#[test]
fn keep_alive_requests_do_not_wait_for_delayed_acks() {
    let index = build_sample("native-keepalive");
    let host = Arc::new(Host::new(DirStore::new(&index), ServiceConfig::default(), 60_000, 64 << 20));
    let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = local_addr(&listener).unwrap();
    std::thread::spawn(move || serve(host, listener, 2));
    // One agent: one pooled keep-alive connection reused for every request.
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let url = format!("http://{addr}/api/bundle?q=publish+a+new+index&k=3&mode=lexical");
    let mut times = Vec::new();
    for _ in 0..31 {
        let started = Instant::now();
        let mut response = agent.get(&url).call().expect("request");
        assert_eq!(response.status().as_u16(), 200);
        let body = response.body_mut().read_to_vec().unwrap();
        assert!(body.len() > 1024, "the body must exceed tiny_http's 1 KiB buffer for the test to mean anything");
        times.push(started.elapsed());
    }
    times.remove(0); // the first request opens the connection and warms the shard cache
    times.sort();
    let median = times[times.len() / 2];
    assert!(median < Duration::from_millis(35), "median {median:?} on a keep-alive connection: Nagle + delayed ACK is back");
}
