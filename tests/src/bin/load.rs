//! `load`: a bounded load test against a running Wikantik host on loopback.
//!
//! ```text
//! load --url http://127.0.0.1:PORT [--requests N] [--threads T] [--max-seconds S] [--key KEY] [--warmup PASSES] [--enforce-latency]
//! ```
//!
//! T threads (default 4), each with one keep-alive connection, send N requests in all (default
//! 2000) in a fixed round-robin mix of `GET /api/bundle` (several queries and modes),
//! `GET /api/briefing` (clusters + prompt, pins, Markdown) and `POST /knowledge-mcp`
//! (`assemble_bundle`, `list_pages`, `get_briefing`, `tools/list`), stopping early after S
//! seconds (default 60). `--warmup P` first sends the mix P times from one thread, unmeasured
//! (a fresh edge instance loads each route's shards on its first request); errors there count
//! as errors too. Only loopback URLs are accepted. Prints throughput, p50/p90/p99/max
//! latency per kind and overall, and errors (a non-2xx status, a transport error, or an MCP
//! reply that is a JSON-RPC or tool error). Exits 1 on any error, and with `--enforce-latency`
//! also when p99 > 5 × p50.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Bundle,
    Briefing,
    Mcp,
}

struct Call {
    kind: Kind,
    path: String,
    body: Option<Value>,
}

fn mix() -> Vec<Call> {
    let get = |kind, path: &str| Call { kind, path: path.to_string(), body: None };
    let tool = |name: &str, args: Value| Call {
        kind: Kind::Mcp,
        path: "/knowledge-mcp".into(),
        body: Some(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": args } })),
    };
    vec![
        get(Kind::Bundle, "/api/bundle?q=how+do+I+publish+a+new+index"),
        get(Kind::Bundle, "/api/bundle?q=hybrid+fusion+weights&mode=lexical"),
        get(Kind::Briefing, "/api/briefing?clusters=retrieval&prompt=coverage+confidence&budget=2000"),
        tool("assemble_bundle", json!({ "query": "what happens when a shard is corrupt" })),
        get(Kind::Bundle, "/api/bundle?q=rotate+an+api+key&k=5"),
        get(Kind::Briefing, "/api/briefing?pins=HybridFusion,Glossary&format=md"),
        tool("list_pages", json!({ "cluster": "retrieval", "limit": 10 })),
        get(Kind::Bundle, "/api/bundle?q=stateless+mcp+server"),
        tool("get_briefing", json!({ "clusters": ["operations"], "budget": 3000 })),
        Call { kind: Kind::Mcp, path: "/knowledge-mcp".into(), body: Some(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })) },
    ]
}

struct Args {
    url: String,
    requests: usize,
    threads: usize,
    max_seconds: u64,
    key: Option<String>,
    warmup: usize,
    enforce_latency: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { url: String::new(), requests: 2000, threads: 4, max_seconds: 60, key: None, warmup: 0, enforce_latency: false };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--url" => args.url = value()?.trim_end_matches('/').to_string(),
            "--requests" => args.requests = value()?.parse().map_err(|_| "--requests: a number")?,
            "--threads" => args.threads = value()?.parse().map_err(|_| "--threads: a number")?,
            "--max-seconds" => args.max_seconds = value()?.parse().map_err(|_| "--max-seconds: a number")?,
            "--key" => args.key = Some(value()?),
            "--warmup" => args.warmup = value()?.parse().map_err(|_| "--warmup: a number")?,
            "--enforce-latency" => args.enforce_latency = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let host = args.url.strip_prefix("http://").unwrap_or("").split(['/', ':']).next().unwrap_or("");
    if !matches!(host, "127.0.0.1" | "localhost" | "[") && !args.url.starts_with("http://[::1]") {
        return Err(format!("--url must be a loopback http:// URL, not {:?}", args.url));
    }
    Ok(args)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

fn line(label: &str, mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let (p50, p99) = (percentile(&samples, 0.5), percentile(&samples, 0.99));
    println!(
        "{label:<10} n={:<6} p50 {:>8.2} ms  p90 {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms",
        samples.len(),
        p50,
        percentile(&samples, 0.9),
        p99,
        samples.last().copied().unwrap_or(0.0)
    );
    (p50, p99)
}

/// One request; `Err` describes an error.
fn send(agent: &ureq::Agent, base: &str, call: &Call, key: Option<&str>) -> Result<(), String> {
    let url = format!("{base}{}", call.path);
    let auth = key.map(|k| format!("Bearer {k}"));
    let result = match &call.body {
        None => {
            let mut r = agent.get(&url);
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.call()
        }
        Some(body) => {
            let mut r = agent
                .post(&url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2025-06-18");
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.send(serde_json::to_vec(body).unwrap().as_slice())
        }
    };
    let mut response = result.map_err(|e| format!("{} {}: transport error {e}", call.path, call.kind as u8))?;
    let status = response.status().as_u16();
    let bytes = response.body_mut().read_to_vec().map_err(|e| format!("{}: body {e}", call.path))?;
    if !(200..300).contains(&status) {
        return Err(format!("{}: HTTP {status}: {}", call.path, String::from_utf8_lossy(&bytes).chars().take(200).collect::<String>()));
    }
    if call.body.is_some() {
        let reply: Value = serde_json::from_slice(&bytes).map_err(|e| format!("MCP reply not JSON: {e}"))?;
        if reply.get("error").is_some() || reply["result"]["isError"] == true {
            return Err(format!("MCP error: {}", reply.to_string().chars().take(200).collect::<String>()));
        }
    }
    Ok(())
}

fn new_agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(Duration::from_secs(30))).build().into()
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("load: {e}");
            std::process::exit(2);
        }
    };
    let calls = Arc::new(mix());
    let next = Arc::new(AtomicUsize::new(0));
    let samples: Arc<Mutex<Vec<(Kind, f64)>>> = Arc::default();
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    if args.warmup > 0 {
        let agent = new_agent();
        let t = Instant::now();
        let mut first = None;
        for call in calls.iter().cycle().take(args.warmup * calls.len()) {
            let one = Instant::now();
            if let Err(e) = send(&agent, &args.url, call, args.key.as_deref()) {
                errors.lock().unwrap().push(format!("warm-up: {e}"));
            }
            first.get_or_insert(one.elapsed().as_secs_f64() * 1000.0);
        }
        let n = args.warmup * calls.len();
        println!("warm-up: {n} requests in {:.0} ms (the first took {:.0} ms), not measured", t.elapsed().as_secs_f64() * 1000.0, first.unwrap_or(0.0));
    }
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..args.threads.max(1))
        .map(|_| {
            let (calls, next, samples, errors) = (calls.clone(), next.clone(), samples.clone(), errors.clone());
            let (base, key, total) = (args.url.clone(), args.key.clone(), args.requests);
            std::thread::spawn(move || {
                let agent = new_agent();
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    if n >= total || Instant::now() >= deadline {
                        break;
                    }
                    let call = &calls[n % calls.len()];
                    let t = Instant::now();
                    let outcome = send(&agent, &base, call, key.as_deref());
                    let ms = t.elapsed().as_secs_f64() * 1000.0;
                    match outcome {
                        Ok(()) => samples.lock().unwrap().push((call.kind, ms)),
                        Err(e) => errors.lock().unwrap().push(e),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let samples = samples.lock().unwrap().clone();
    let errors = errors.lock().unwrap().clone();
    let done = samples.len() + errors.iter().filter(|e| !e.starts_with("warm-up")).count();
    println!("target {}  threads {}  requests {done} in {elapsed:.2} s  throughput {:.1} req/s  errors {}", args.url, args.threads, done as f64 / elapsed, errors.len());
    for kind in [Kind::Bundle, Kind::Briefing, Kind::Mcp] {
        line(&format!("{kind:?}").to_lowercase(), samples.iter().filter(|(k, _)| *k == kind).map(|(_, ms)| *ms).collect());
    }
    let (p50, p99) = line("all", samples.iter().map(|(_, ms)| *ms).collect());
    for e in errors.iter().take(10) {
        println!("error: {e}");
    }
    let ratio = if p50 > 0.0 { p99 / p50 } else { 0.0 };
    let latency_ok = ratio <= 5.0;
    println!("p99/p50 = {ratio:.2} ({})", if latency_ok { "within the 5x target" } else { "OVER the 5x target" });
    if done < args.requests {
        println!("stopped at the {} s bound after {done} of {} requests", args.max_seconds, args.requests);
    }
    let failed = !errors.is_empty() || done == 0 || (args.enforce_latency && !latency_ok);
    println!("load: {}", if failed { "FAILED" } else { "ok" });
    std::process::exit(i32::from(failed));
}
