//! The client hooks (`clients/claude-code/briefing-hook.sh`, `clients/antigravity/
//! antigravity-briefing-hook.sh`) run as real processes against the native host serving the
//! sample wiki in-process on a free loopback port, and against small fake servers for the
//! failure modes (connection refused, a listener that never answers, a 200 that is not a
//! briefing) and for checking exactly what the hooks send.
//!
//! Needs `sh`, `awk` and `curl` on PATH (every developer machine and CI image has them); the
//! scripts also run under `bash` when it is present.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine;
use wikantik::auth::{mint_key_with, KeyRing, Scope};
use wikantik::settings::RestConfig;
use wikantik::service::ServiceConfig;
use wikantik_native::server::{bind, local_addr, serve, Host};
use wikantik_native::DirStore;
use wikantik_tests::http_client::get;
use wikantik_tests::{build_sample, repo_root, scratch};

// ---------------------------------------------------------------------------------------------
// The native host

struct Server {
    base: String,
    alice_key: String,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let index = build_sample("hooks");
        let (alice_key, alice) = mint_key_with([7; 32], &[Scope::McpRead], &["Alice"], Some("alice-hook")).unwrap();
        let keys = KeyRing::parse(&alice).unwrap();
        let config = ServiceConfig { rest: RestConfig { keys, ..RestConfig::default() }, ..ServiceConfig::default() };
        let host = Arc::new(Host::new(DirStore::new(&index), config, 0, 64 << 20));
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = local_addr(&listener).unwrap();
        std::thread::spawn(move || serve(host, listener, 2));
        Server { base: format!("http://{addr}"), alice_key }
    })
}

/// Percent-encode everything but the unreserved characters.
fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What the server itself answers for these briefing parameters (`format=md`).
fn server_markdown(params: &[(&str, &str)], auth: Option<&str>) -> String {
    let mut url = format!("{}/api/briefing?format=md", server().base);
    for (k, v) in params {
        url.push_str(&format!("&{k}={}", enc(v)));
    }
    let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
    let r = get(&url, &headers);
    assert_eq!(r.status, 200, "{url}: {}", r.text());
    assert_eq!(r.header("content-type"), Some("text/markdown; charset=UTF-8"));
    r.text()
}

// ---------------------------------------------------------------------------------------------
// Running the hooks

#[derive(Clone, Copy, Debug, PartialEq)]
enum Hook {
    Claude,
    Antigravity,
}

impl Hook {
    fn script(self) -> PathBuf {
        repo_root().join(match self {
            Hook::Claude => "clients/claude-code/briefing-hook.sh",
            Hook::Antigravity => "clients/antigravity/antigravity-briefing-hook.sh",
        })
    }

    /// Hook JSON for a turn of session `id` (Antigravity keys sessions by transcript path).
    fn input(self, id: &str, prompt: &str) -> String {
        match self {
            Hook::Claude => serde_json::json!({
                "session_id": id,
                "transcript_path": "/home/dev/.claude/projects/x/transcript.jsonl",
                "cwd": "/home/dev/project",
                "permission_mode": "default",
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
            }),
            Hook::Antigravity => serde_json::json!({
                "hookEventName": "PreInvocation",
                "sessionId": "not-the-key",
                "transcriptPath": id,
                "prompt": prompt,
            }),
        }
        .to_string()
    }

    /// What the hook prints when it injects nothing.
    fn silent(self) -> &'static str {
        match self {
            Hook::Claude => "",
            Hook::Antigravity => "{}\n",
        }
    }

    /// The markdown the hook's output injects, if any.
    fn injected(self, stdout: &str) -> Option<String> {
        match self {
            Hook::Claude => (!stdout.is_empty()).then(|| stdout.to_string()),
            Hook::Antigravity => {
                assert!(stdout.ends_with('\n') && stdout.matches('\n').count() == 1, "one line of JSON: {stdout:?}");
                let json: serde_json::Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout:?}"));
                let obj = json.as_object().unwrap();
                if obj.is_empty() {
                    return None;
                }
                assert_eq!(obj.len(), 1, "{stdout}");
                Some(obj["additionalContext"].as_str().expect("additionalContext is a string").to_string())
            }
        }
    }
}

const BOTH: [Hook; 2] = [Hook::Claude, Hook::Antigravity];

/// A scratch home (HOME and XDG_CACHE_HOME) for one test.
struct Env {
    home: PathBuf,
    vars: BTreeMap<String, String>,
    shell: Option<&'static str>,
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Env {
    fn new(name: &str) -> Env {
        static TOOLS: OnceLock<()> = OnceLock::new();
        TOOLS.get_or_init(|| {
            for tool in ["sh", "awk", "sed", "curl"] {
                let found = Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().map(|o| o.status.success()).unwrap_or(false);
                assert!(found, "the hook tests need `{tool}` on PATH (the hooks themselves need sh, awk, sed and curl)");
            }
        });
        let home = scratch(&format!("hooks-{name}"));
        let mut vars = BTreeMap::new();
        vars.insert("PATH".into(), std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()));
        vars.insert("HOME".into(), home.display().to_string());
        vars.insert("XDG_CACHE_HOME".into(), home.join("cache").display().to_string());
        // Loopback must never go through a proxy configured on the machine.
        vars.insert("NO_PROXY".into(), "127.0.0.1,localhost".into());
        vars.insert("no_proxy".into(), "127.0.0.1,localhost".into());
        Env { home, vars, shell: None }
    }

    fn base(mut self, base: &str) -> Env {
        self.vars.insert("WIKANTIK_BASE_URL".into(), base.into());
        self
    }

    fn set(mut self, k: &str, v: &str) -> Env {
        self.vars.insert(k.into(), v.into());
        self
    }

    fn unset(mut self, k: &str) -> Env {
        self.vars.remove(k);
        self
    }

    fn state_dir(&self) -> PathBuf {
        self.home.join("cache/wikantik-briefing")
    }

    fn run(&self, hook: Hook, stdin: &str) -> Run {
        let script = hook.script();
        let mut cmd = match self.shell {
            Some(shell) => {
                let mut c = Command::new(shell);
                c.arg(&script);
                c
            }
            None => Command::new(&script),
        };
        cmd.env_clear().envs(&self.vars).current_dir(&self.home);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        let mut input = child.stdin.take().unwrap();
        let bytes = stdin.as_bytes().to_vec();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&bytes);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        Run {
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).expect("hook output is UTF-8"),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            elapsed: started.elapsed(),
        }
    }

    /// Run and require exit 0.
    fn ok(&self, hook: Hook, stdin: &str) -> Run {
        let r = self.run(hook, stdin);
        assert_eq!(r.code, Some(0), "{hook:?} exited {:?}; stderr: {}", r.code, r.stderr);
        r
    }

    /// Run and require exit 0 with the "nothing injected" output.
    fn silent(&self, hook: Hook, stdin: &str) -> Run {
        let r = self.ok(hook, stdin);
        assert_eq!(r.stdout, hook.silent(), "{hook:?} should inject nothing; stderr: {}", r.stderr);
        r
    }

    /// Run and return the injected markdown (which must be there).
    fn inject(&self, hook: Hook, stdin: &str) -> String {
        let r = self.ok(hook, stdin);
        hook.injected(&r.stdout).unwrap_or_else(|| panic!("{hook:?} injected nothing; stderr: {}", r.stderr))
    }
}

fn shells() -> Vec<Option<&'static str>> {
    let mut shells = vec![None];
    if Command::new("bash").arg("-c").arg("true").status().map(|s| s.success()).unwrap_or(false) {
        shells.push(Some("bash"));
    }
    shells
}

// ---------------------------------------------------------------------------------------------
// Fake servers

/// One request as a fake server saw it.
#[derive(Debug)]
struct Seen {
    path: String,
    query: BTreeMap<String, String>,
    headers: BTreeMap<String, String>,
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap(), 16).unwrap());
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).expect("query parameters are UTF-8")
}

/// A server answering every request with `status` and `body`, reporting what it saw.
fn fake_server(status: u16, content_type: &'static str, body: &'static str) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut raw = Vec::new();
            let mut buf = [0u8; 4096];
            while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => raw.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&raw).into_owned();
            let mut lines = head.split("\r\n");
            let target = lines.next().unwrap_or("").split(' ').nth(1).unwrap_or("").to_string();
            let (path, qs) = target.split_once('?').unwrap_or((&target, ""));
            let query = qs
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (percent_decode(k), percent_decode(v))
                })
                .collect();
            let headers = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect();
            let _ = tx.send(Seen { path: path.to_string(), query, headers });
            let response = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (base, rx)
}

/// A listener that accepts connections and never answers.
fn black_hole() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    base
}

/// An address nothing listens on.
fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    base
}

// ---------------------------------------------------------------------------------------------
// Against the native host

const PROMPT: &str = "How are the \"coverage\" thresholds chosen? C:\\path\\to & 100% = ok\n\tsecond line — naïve 検索 😀";

#[test]
fn first_turn_injects_the_servers_markdown_later_turns_are_silent_and_a_new_session_injects_again() {
    let params = [("pins", "Glossary,Nope"), ("clusters", "retrieval"), ("budget", "3000")];
    let expected = server_markdown(&[params[0], params[1], ("prompt", PROMPT), params[2]], None);
    assert!(expected.starts_with("# Wiki context briefing\n"));
    let other_prompt = "what does a shard manifest contain?";
    let expected_other = server_markdown(&[params[0], params[1], ("prompt", other_prompt), params[2]], None);
    assert_ne!(expected, expected_other, "the prompt matters, so the comparison checks it was sent");
    for shell in shells() {
        for hook in BOTH {
            let mut env = Env::new(&format!("first-turn-{hook:?}-{}", shell.unwrap_or("sh")))
                .base(&format!("{}/", server().base))
                .set("WIKANTIK_BRIEFING_PINS", params[0].1)
                .set("WIKANTIK_BRIEFING_CLUSTERS", params[1].1)
                .set("WIKANTIK_BRIEFING_BUDGET", params[2].1);
            env.shell = shell;
            let session = match hook {
                Hook::Claude => "0b6c2c1e-5f3a-4a57-9d1e-000000000001".to_string(),
                Hook::Antigravity => "/tmp/test-session-1.log".to_string(),
            };
            let md = env.inject(hook, &hook.input(&session, PROMPT));
            assert_eq!(md, expected, "{hook:?} under {shell:?}: byte-for-byte the server's markdown");
            let state = env.state_dir().join(match hook {
                Hook::Claude => "0b6c2c1e-5f3a-4a57-9d1e-000000000001.done",
                Hook::Antigravity => "_tmp_test-session-1.log.done",
            });
            assert!(state.is_file(), "state file {}", state.display());
            for _ in 0..2 {
                env.silent(hook, &hook.input(&session, "and another thing"));
            }
            // A second session gets its own briefing.
            let md = env.inject(hook, &hook.input(&format!("{session}-2"), other_prompt));
            assert_eq!(md, expected_other);
            env.silent(hook, &hook.input(&format!("{session}-2"), other_prompt));
        }
    }
}

#[test]
fn antigravity_session_key_falls_back_to_session_id() {
    let env = Env::new("ag-fallback").base(&server().base).set("WIKANTIK_BRIEFING_PINS", "Glossary");
    let expected = server_markdown(&[("pins", "Glossary"), ("prompt", "hello")], None);
    let input = serde_json::json!({ "sessionId": "abc/1", "prompt": "hello" }).to_string();
    assert_eq!(env.inject(Hook::Antigravity, &input), expected);
    assert!(env.state_dir().join("abc_1.done").is_file());
    env.silent(Hook::Antigravity, &input);
    let input = serde_json::json!({ "session_id": "snake", "prompt": "hello" }).to_string();
    assert_eq!(env.inject(Hook::Antigravity, &input), expected);
    assert!(env.state_dir().join("snake.done").is_file());
}

#[test]
fn a_restricted_pin_needs_a_key_with_the_principal() {
    let pins = "EdgeRoadmap,Glossary";
    let prompt = "What is the Kestrel roadmap?";
    let alice = &server().alice_key;
    let anonymous = server_markdown(&[("pins", pins), ("prompt", prompt)], None);
    let as_alice = server_markdown(&[("pins", pins), ("prompt", prompt)], Some(&format!("Bearer {alice}")));
    assert!(as_alice.contains("(`EdgeRoadmap`)"), "{as_alice}");
    for hook in BOTH {
        let env = Env::new(&format!("acl-{hook:?}")).base(&server().base).set("WIKANTIK_BRIEFING_PINS", pins);
        let md = env.inject(hook, &hook.input("anon", prompt));
        assert_eq!(md, anonymous);
        assert!(!md.contains("(`EdgeRoadmap`)"), "{md}");
        let lower = md.to_lowercase();
        for secret in ["kestrel", "nightjar", "halcyon", "edge roadmap"] {
            assert!(!lower.contains(secret), "{secret} leaked to an anonymous hook: {md}");
        }

        let env = env.set("WIKANTIK_API_KEY", alice);
        assert_eq!(env.inject(hook, &hook.input("bearer", prompt)), as_alice);

        let env = env.unset("WIKANTIK_API_KEY").set("WIKANTIK_BASIC_AUTH", &format!("hook:{alice}"));
        assert_eq!(env.inject(hook, &hook.input("basic", prompt)), as_alice);

        // A wrong key is a 401, not anonymous: nothing is injected.
        let env = env.unset("WIKANTIK_BASIC_AUTH").set("WIKANTIK_API_KEY", "wkk_notarealkeynotarealkeynotarealkeynotareal1");
        env.silent(hook, &hook.input("wrong-key", prompt));
    }
}

#[test]
fn nothing_configured_and_an_empty_prompt_is_a_silent_400() {
    for hook in BOTH {
        let env = Env::new(&format!("400-{hook:?}")).base(&server().base);
        let r = env.silent(hook, &hook.input("s400", ""));
        assert!(r.stderr.contains("400"), "curl -fsS reports the status on stderr: {}", r.stderr);
        // One attempt per session: the state file was written before the fetch.
        assert!(env.state_dir().join("s400.done").is_file());
        env.silent(hook, &hook.input("s400", "now with a prompt"));
    }
}

// ---------------------------------------------------------------------------------------------
// Failure modes

#[test]
fn server_down_is_silent_and_not_retried_in_the_session() {
    for hook in BOTH {
        let env = Env::new(&format!("down-{hook:?}")).base(&closed_port()).set("WIKANTIK_BRIEFING_PINS", "Glossary");
        env.silent(hook, &hook.input("down-1", "hello"));
        assert!(env.state_dir().join("down-1.done").is_file());
        // Even once the wiki is back, the session does not try again.
        let env = env.base(&server().base);
        env.silent(hook, &hook.input("down-1", "hello"));
        assert!(hook.injected(&env.ok(hook, &hook.input("down-2", "hello")).stdout).is_some());
    }
}

#[test]
fn a_server_that_never_answers_times_out_quickly() {
    let base = black_hole();
    for hook in BOTH {
        let env = Env::new(&format!("timeout-{hook:?}")).base(&base).set("WIKANTIK_BRIEFING_PINS", "Glossary").set("WIKANTIK_BRIEFING_TIMEOUT", "1");
        let r = env.silent(hook, &hook.input("slow", "hello"));
        assert!(r.elapsed < Duration::from_secs(5), "took {:?}", r.elapsed);
        assert!(r.elapsed >= Duration::from_millis(900), "curl waited for the timeout: {:?}", r.elapsed);
    }
}

#[test]
fn the_timeout_is_capped_at_ten_seconds() {
    // Out-of-range values fall back to 10 s; the cap is in the script, checked statically.
    for hook in BOTH {
        let text = std::fs::read_to_string(hook.script()).unwrap();
        assert!(text.contains("[1-9] | 10) ;;") && text.contains("*) wk_timeout=10 ;;"), "{hook:?}");
        assert!(text.contains("--max-time \"$wk_timeout\""));
    }
}

#[test]
fn missing_base_url_session_id_or_input_is_a_silent_no_op() {
    for hook in BOTH {
        // No WIKANTIK_BASE_URL (and an empty one): nothing happens, not even a state file.
        for env in [Env::new(&format!("nobase-{hook:?}")), Env::new(&format!("emptybase-{hook:?}")).base("")] {
            let env = env.set("WIKANTIK_BRIEFING_PINS", "Glossary");
            env.silent(hook, &hook.input("s1", "hello"));
            assert!(!env.state_dir().exists());
        }
        let env = Env::new(&format!("nosession-{hook:?}")).base(&server().base).set("WIKANTIK_BRIEFING_PINS", "Glossary");
        for input in [
            r#"{"prompt":"hello"}"#,
            r#"{"session_id":"","transcriptPath":"","sessionId":"","prompt":"hello"}"#,
            r#"{"session_id":null,"transcriptPath":42,"prompt":"hello"}"#,
            r#"{"nested":{"session_id":"x","transcriptPath":"y","sessionId":"z"},"prompt":"hello"}"#,
            r#"{"session_id":"s1","prompt":"unterminated"#,
            "not json at all",
            "",
        ] {
            env.silent(hook, input);
        }
        assert!(!env.state_dir().exists() || std::fs::read_dir(env.state_dir()).unwrap().next().is_none());
        // No HOME and no XDG_CACHE_HOME: nowhere to keep state, so no fetch.
        let env = env.unset("HOME").unset("XDG_CACHE_HOME");
        env.silent(hook, &hook.input("s1", "hello"));
    }
}

#[test]
fn an_unwritable_state_directory_is_a_silent_no_op() {
    for hook in BOTH {
        let env = Env::new(&format!("rostate-{hook:?}")).base(&server().base).set("WIKANTIK_BRIEFING_PINS", "Glossary");
        // The cache "directory" is a file, so the state directory cannot be created.
        std::fs::write(env.home.join("cache"), b"").unwrap();
        env.silent(hook, &hook.input("s1", "hello"));
    }
}

#[test]
fn a_200_that_is_not_a_briefing_is_not_injected() {
    let (base, _seen) = fake_server(200, "text/html", "<html><body>Please sign in</body></html>");
    for hook in BOTH {
        let env = Env::new(&format!("html-{hook:?}")).base(&base).set("WIKANTIK_BRIEFING_PINS", "Glossary");
        env.silent(hook, &hook.input("s1", "hello"));
    }
}

// ---------------------------------------------------------------------------------------------
// What the hooks send and how they encode

const TRICKY_MD: &str = "# Wiki context briefing\n_Coverage: strong — 1 sections across 1 pages._\n\n\
    ### Quotes \"q\" and back\\slash \\n not a newline (`X` @ v1)\n\n\ttab, CR\r, bell\u{7}, esc\u{1b}, \
    del\u{7f}, nul-free; naïve 検索 😀 \u{2028} </script>\n\n\n";

#[test]
fn parameters_are_url_encoded_and_credentials_sent() {
    let (base, seen) = fake_server(200, "text/markdown; charset=UTF-8", TRICKY_MD);
    let prompts = [
        PROMPT.to_string(),
        "quotes \" ' ` and backslashes \\ \\\\ \\n \\u0041 and %41 + & = ? # /".to_string(),
        "trailing newlines\n\n".to_string(),
        "  leading spaces".to_string(),
    ];
    for hook in BOTH {
        for (i, prompt) in prompts.iter().enumerate() {
            let env = Env::new(&format!("enc-{hook:?}-{i}"))
                .base(&format!("{base}//"))
                .set("WIKANTIK_BRIEFING_PINS", "Glossary, Nope & Co")
                .set("WIKANTIK_BRIEFING_CLUSTERS", "retrieval,operations/runbooks")
                .set("WIKANTIK_BRIEFING_BUDGET", "1234")
                .set("WIKANTIK_API_KEY", "wkk_key\"with\\odd chars");
            let md = env.inject(hook, &hook.input(&format!("enc-{i}"), prompt));
            assert_eq!(md, TRICKY_MD, "{hook:?}: the body is injected unchanged");
            let s = seen.recv_timeout(Duration::from_secs(5)).unwrap();
            assert_eq!(s.path, "/api/briefing");
            let expected: BTreeMap<String, String> = [
                ("pins", "Glossary, Nope & Co"),
                ("clusters", "retrieval,operations/runbooks"),
                ("budget", "1234"),
                ("format", "md"),
                ("prompt", prompt.as_str()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            assert_eq!(s.query, expected, "{hook:?}");
            assert_eq!(s.headers.get("authorization").map(String::as_str), Some("Bearer wkk_key\"with\\odd chars"));
        }
    }
}

#[test]
fn json_escapes_in_the_hook_input_are_decoded() {
    let (base, seen) = fake_server(200, "text/markdown; charset=UTF-8", "# Wiki context briefing\n");
    // Hand-written JSON with every escape form, including a surrogate pair and \/.
    let input = r#"{"session_id":"esc","transcriptPath":"esc","prompt":"a\"b\\c\/d\n\te\u00e9\u691c\ud83d\ude00\r\b\fz"}"#;
    for hook in BOTH {
        let env = Env::new(&format!("escapes-{hook:?}")).base(&base);
        assert_eq!(env.inject(hook, input), "# Wiki context briefing\n");
        let s = seen.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(s.query["prompt"], "a\"b\\c/d\n\teé検😀\r\u{8}\u{c}z");
        assert_eq!(s.query.len(), 2, "only prompt and format: {:?}", s.query);
    }
}

#[test]
fn basic_auth_and_long_prompts() {
    let (base, seen) = fake_server(200, "text/markdown; charset=UTF-8", "# Wiki context briefing\n");
    let long: String = "é".repeat(1500) + &"x".repeat(1500);
    for hook in BOTH {
        let env = Env::new(&format!("basic-{hook:?}")).base(&base).set("WIKANTIK_BASIC_AUTH", "hook:p@ss:w\"rd\\");
        env.inject(hook, &hook.input("long", &long));
        let s = seen.recv_timeout(Duration::from_secs(5)).unwrap();
        let basic = base64::engine::general_purpose::STANDARD.encode("hook:p@ss:w\"rd\\");
        assert_eq!(s.headers["authorization"], format!("Basic {basic}"));
        // The prompt is cut to 2000 characters, never inside a UTF-8 sequence.
        let expected: String = long.chars().take(2000).collect();
        assert_eq!(s.query["prompt"], expected);
        // A key with a line break could smuggle headers: refused, nothing sent.
        let env = env.unset("WIKANTIK_BASIC_AUTH").set("WIKANTIK_API_KEY", "wkk_a\r\nX-Evil: 1");
        env.silent(hook, &hook.input("crlf", "hello"));
        assert!(seen.recv_timeout(Duration::from_millis(300)).is_err());
    }
}

#[test]
fn the_key_is_not_on_the_command_line() {
    for hook in BOTH {
        let text = std::fs::read_to_string(hook.script()).unwrap();
        assert!(text.contains("curl -K - "), "{hook:?}: credentials go through a config on stdin");
        assert!(!text.contains("-u \"$WIKANTIK_BASIC_AUTH\"") && !text.contains("-H \"Authorization"));
    }
}

#[test]
fn the_shared_part_of_both_hooks_is_the_core_file() {
    // Each hook is one file users copy; the code both share is written once, in
    // clients/lib/briefing-hook-core.sh, and scripts/gen-hooks.sh copies it (everything after
    // its leading comment) between the hook's markers.
    fn shared(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        let start = text.find("# ---- shared part").expect("start marker");
        let start = start + text[start..].find('\n').unwrap() + 1;
        let end = text.find("# ---- end of the shared part").expect("end marker");
        text[start..end].to_string()
    }
    let core = std::fs::read_to_string(repo_root().join("clients/lib/briefing-hook-core.sh")).unwrap();
    let core = &core[core.find("\n\n").expect("the core's leading comment ends with a blank line") + 1..];
    for hook in BOTH {
        let part = shared(&hook.script());
        for (n, (x, y)) in part.lines().zip(core.lines()).enumerate() {
            assert_eq!(x, y, "{hook:?}: the shared part differs from the core at its line {} (run scripts/gen-hooks.sh)", n + 1);
        }
        assert_eq!(part, core, "{hook:?}: the shared part differs from the core in length (run scripts/gen-hooks.sh)");
    }
}

#[test]
fn the_scripts_are_executable_and_posix() {
    for hook in BOTH {
        let path = hook.script();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("#!/bin/sh\n"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o111 != 0, "{} is executable", path.display());
        }
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            assert!(!line.contains("jq"), "no jq dependency: {line}");
        }
    }
}

#[test]
fn the_key_minting_recipe_in_the_instructions_works() {
    let readme = std::fs::read_to_string(repo_root().join("clients/instructions/README.md")).unwrap();
    let start = readme.find("```bash\n").expect("a bash block") + "```bash\n".len();
    let recipe = &readme[start..start + readme[start..].find("```").unwrap()];
    if Command::new("sha256sum").arg("--version").output().is_err() {
        eprintln!("SKIP: sha256sum is not installed; the key-minting recipe is not checked");
        return;
    }
    let out = Command::new("sh").arg("-c").arg(recipe).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let field = |label: &str| text.lines().find_map(|l| l.strip_prefix(label)).unwrap().trim().to_string();
    let key = field("give to the user:");
    let line = field("add to the key ring:");
    assert!(wikantik::auth::is_well_formed_key(&key), "{key}");
    let ring = KeyRing::parse(&line).unwrap();
    match ring.authenticate(Some(&format!("Bearer {key}"))) {
        wikantik::auth::AuthOutcome::Key { scopes, principals, label } => {
            assert_eq!(scopes, vec![Scope::McpRead]);
            assert_eq!(principals, vec!["Alice".to_string()]);
            assert_eq!(label.as_deref(), Some("alice-laptop"));
        }
        _ => panic!("the minted key does not authenticate against its own line"),
    }
}

#[test]
fn the_skill_has_valid_frontmatter_and_the_whole_protocol() {
    let text = std::fs::read_to_string(repo_root().join("clients/skills/wiki-context/SKILL.md")).unwrap();
    let rest = text.strip_prefix("---\n").expect("frontmatter first");
    let end = rest.find("\n---\n").expect("frontmatter closed");
    let mut fields = BTreeMap::new();
    for line in rest[..end].lines() {
        let (k, v) = line.split_once(':').expect("simple `key: value` lines");
        assert!(fields.insert(k.trim().to_string(), v.trim().to_string()).is_none(), "duplicate {k}");
    }
    assert_eq!(fields.keys().collect::<Vec<_>>(), vec!["description", "name"]);
    let name = &fields["name"];
    assert_eq!(name, "wiki-context", "the name matches the directory");
    assert!(name.len() <= 64 && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
    let description = &fields["description"];
    assert!(!description.is_empty() && description.len() <= 1024 && !description.contains('<') && !description.contains('>'));
    let body = &rest[end..];
    for must in [
        "get_briefing", "assemble_bundle", "coverage.confidence", "`strong`", "`partial`", "`weak`", "`unknown`",
        "retrieve_context", "read_pages", "at most 20", "traverse", "query_nodes", "sparql_query", "slug @ version",
        "Never claim grounding without a retrieved section", "MCP only", "exactly once",
    ] {
        assert!(body.contains(must), "SKILL.md lacks {must:?}");
    }
    // The ladder is in order.
    let at = |s: &str| body.find(&format!("**`{s}`**")).unwrap_or_else(|| panic!("ladder step {s}"));
    assert!(at("retrieve_context") < at("read_pages") && at("read_pages") < at("sparql_query"));
}

#[test]
fn the_instruction_snippets_name_the_tool_the_scope_and_the_endpoint() {
    for file in ["AGENTS.md", "CLAUDE.md"] {
        let text = std::fs::read_to_string(repo_root().join("clients/instructions").join(file)).unwrap();
        for must in ["get_briefing", "mcp_read", "/knowledge-mcp", "Authorization: Bearer", "once", "assemble_bundle", "wikantik-briefing:start", "wikantik-briefing:end"] {
            assert!(text.contains(must), "{file} lacks {must:?}");
        }
    }
}
