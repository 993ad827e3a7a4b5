//! Resources, prompts and completion through `handle`, in both protocol eras, with a fake host
//! whose pages are public or restricted to the principal `Finance`.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::jsonrpc::{HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND};
use super::resources::{META_VERSION, PAGE_URI_TEMPLATE, RESOURCE_NOT_FOUND};
use super::tests::{body, error_code, legacy, modern, open_config, result_of, run_with};
use super::*;
use wikantik_access::auth::{mint_key_with, AccessConfig, KeyRing, Scope};
use wikantik_http::{Request, Response};

/// One page of the fake wiki; `restricted` pages are visible to `Finance` only.
struct Page {
    slug: String,
    restricted: bool,
}

/// One `get_prompt` call: name, arguments, the caller's principals.
type PromptCall = (String, BTreeMap<String, String>, Vec<String>);

struct PagesHost {
    pages: Vec<Page>,
    prompt_calls: RefCell<Vec<PromptCall>>,
    /// Fail every resource call with this error.
    fault: Option<crate::Error>,
}

impl PagesHost {
    fn new(slugs: &[(&str, bool)]) -> PagesHost {
        let pages = slugs.iter().map(|(s, restricted)| Page { slug: s.to_string(), restricted: *restricted }).collect();
        PagesHost { pages, prompt_calls: RefCell::new(Vec::new()), fault: None }
    }

    /// Five public pages (one with a space, one with `&`) and two restricted ones, out of order.
    fn wiki() -> PagesHost {
        PagesHost::new(&[
            ("Runbooks Hub", false),
            ("Glossary", false),
            ("SecretLedger", true),
            ("Q&A", false),
            ("ShardFormat", false),
            ("Briefings", false),
            ("SecretPlans", true),
        ])
    }

    fn visible<'a>(&'a self, caller: &'a Caller) -> impl Iterator<Item = &'a Page> + 'a {
        self.pages.iter().filter(|p| !p.restricted || caller.principals().iter().any(|n| n == "Finance"))
    }

    fn resource(page: &Page) -> PageResource {
        PageResource {
            slug: page.slug.clone(),
            title: format!("Title of {}", page.slug),
            description: Some(format!("About {}", page.slug)),
            mime_type: "text/markdown".into(),
            canonical_id: format!("ID{}", page.slug.len()),
            version: 3,
            last_modified: Some("2026-11-28T21:07:04Z".into()),
        }
    }
}

impl ToolHost for PagesHost {
    fn tools(&self) -> Vec<ToolDefinition> {
        catalog::tools()
    }

    async fn call(&self, name: &str, _args: &Value, _caller: &Caller) -> ToolOutcome {
        ToolOutcome::Json(json!({ "tool": name }))
    }

    fn serves_resources(&self) -> bool {
        true
    }

    async fn list_resources(&self, caller: &Caller) -> crate::Result<Vec<PageResource>> {
        match &self.fault {
            Some(e) => Err(e.clone()),
            None => Ok(self.visible(caller).map(PagesHost::resource).collect()),
        }
    }

    async fn read_resource(&self, slug: &str, caller: &Caller) -> crate::Result<Option<PageContents>> {
        if let Some(e) = &self.fault {
            return Err(e.clone());
        }
        let page = self.visible(caller).find(|p| p.slug == slug);
        Ok(page.map(|p| PageContents { resource: PagesHost::resource(p), text: format!("# {}\n\nBody.\n", p.slug) }))
    }

    fn prompts(&self) -> Vec<PromptDefinition> {
        prompts::catalog()
    }

    async fn get_prompt(&self, name: &str, args: &BTreeMap<String, String>, caller: &Caller) -> crate::Result<PromptReply> {
        self.prompt_calls.borrow_mut().push((name.to_string(), args.clone(), caller.principals().to_vec()));
        if args.get("question").is_some_and(|q| q == "invalid") {
            return Err(crate::Error::Invalid("the question is invalid".into()));
        }
        Ok(PromptReply { description: format!("{name} prompt"), text: format!("{name}: {args:?}") })
    }
}

fn run(request: &Request, host: &PagesHost) -> Response {
    run_with(request, host, &open_config())
}

/// A 2026-07-28 request with `Mcp-Name` set for `resources/read` too.
fn modern_named(id: i64, method: &str, params: Value) -> Request {
    let uri = params.get("uri").and_then(Value::as_str).map(str::to_string);
    let request = modern(id, method, params);
    match uri {
        Some(uri) => request.with_header("Mcp-Name", &uri),
        None => request,
    }
}

/// Both eras' requests for one method.
fn both(method: &str, params: Value) -> [Request; 2] {
    [legacy("2025-11-25", 1, method, params.clone()), modern_named(1, method, params)]
}

/// The `Finance` key's config and header value.
fn finance() -> (McpConfig, String) {
    let (key, line) = mint_key_with([21; 32], &[Scope::McpRead], &["Finance"], Some("fin")).unwrap();
    let config = McpConfig { access: AccessConfig { keys: KeyRing::parse(&line).unwrap(), allow_unrestricted: true }, ..McpConfig::default() };
    (config, format!("Bearer {key}"))
}

fn slugs(result: &Value) -> Vec<String> {
    result["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_string()).collect()
}

/// Every resource, following `nextCursor`, with the config's page size.
fn list_all(host: &PagesHost, config: &McpConfig, auth: Option<&str>, modern_era: bool) -> (Vec<String>, usize) {
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({ "cursor": c }));
        let mut request = if modern_era { modern(1, "resources/list", params) } else { legacy("2025-06-18", 1, "resources/list", params) };
        if let Some(auth) = auth {
            request = request.with_header("Authorization", auth);
        }
        let result = result_of(&run_with(&request, host, config));
        pages += 1;
        all.extend(slugs(&result));
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_string()),
            None => return (all, pages),
        }
    }
}

#[test]
fn capabilities_follow_what_the_host_serves_in_both_eras() {
    let host = PagesHost::wiki();
    let want = json!({
        "tools": { "listChanged": false },
        "resources": { "subscribe": false, "listChanged": false },
        "prompts": { "listChanged": false },
        "completions": {},
    });
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let init = super::tests::post(&super::tests::rpc(1, "initialize", json!({ "protocolVersion": version })));
        assert_eq!(result_of(&run(&init, &host))["capabilities"], want, "{version}");
    }
    assert_eq!(result_of(&run(&modern(1, "server/discover", json!({})), &host))["capabilities"], want);
}

#[test]
fn resources_list_pages_through_the_callers_pages_in_slug_order() {
    let host = PagesHost::wiki();
    let mut config = open_config();
    config.resource_page_size = 2;
    let public = ["Briefings", "Glossary", "Q&A", "Runbooks Hub", "ShardFormat"];
    for modern_era in [false, true] {
        let (all, pages) = list_all(&host, &config, None, modern_era);
        assert_eq!((all, pages), (public.map(String::from).to_vec(), 3), "anonymous, modern: {modern_era}");
    }
    let (mut fin_config, auth) = finance();
    fin_config.resource_page_size = 3;
    let (all, pages) = list_all(&host, &fin_config, Some(&auth), true);
    assert_eq!(all, ["Briefings", "Glossary", "Q&A", "Runbooks Hub", "SecretLedger", "SecretPlans", "ShardFormat"]);
    assert_eq!(pages, 3);

    // One page by default; the wire shape per era.
    let old = result_of(&run(&legacy("2025-03-26", 1, "resources/list", json!({})), &host));
    assert!(old.get("nextCursor").is_none() && old.get("ttlMs").is_none());
    let first = &old["resources"][0];
    assert_eq!(first["uri"], "wiki://page/Briefings");
    assert!(first.get("title").is_none() && first.get("annotations").is_none());
    let new = result_of(&run(&modern(1, "resources/list", json!({})), &host));
    assert_eq!((new["cacheScope"].as_str(), new["ttlMs"].as_u64()), (Some("private"), Some(30_000)));
    assert_eq!(new["resultType"], "complete");
    let q = &new["resources"][2];
    assert_eq!(
        *q,
        json!({
            "uri": "wiki://page/Q%26A", "name": "Q&A", "title": "Title of Q&A", "description": "About Q&A",
            "mimeType": "text/markdown", "annotations": { "lastModified": "2026-11-28T21:07:04Z" },
            "_meta": { META_VERSION: 3, "com.wikantik/canonicalId": "ID3" },
        })
    );
}

#[test]
fn bad_cursors_are_invalid_params() {
    let host = PagesHost::wiki();
    for cursor in [json!("not a cursor!"), json!(""), json!(7), json!({})] {
        for request in both("resources/list", json!({ "cursor": cursor })) {
            assert_eq!(error_code(&run(&request, &host)), INVALID_PARAMS, "{cursor}");
        }
    }
    for method in ["resources/templates/list", "prompts/list"] {
        assert_eq!(error_code(&run(&modern(1, method, json!({ "cursor": "x" })), &host)), INVALID_PARAMS, "{method}");
    }
}

#[test]
fn resources_read_answers_text_with_the_version_pinned() {
    let host = PagesHost::wiki();
    for request in both("resources/read", json!({ "uri": "wiki://page/Runbooks%20Hub" })) {
        let result = result_of(&run(&request, &host));
        let contents = result["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 1);
        assert_eq!(contents[0]["uri"], "wiki://page/Runbooks%20Hub");
        assert_eq!(contents[0]["mimeType"], "text/markdown");
        assert_eq!(contents[0]["text"], "# Runbooks Hub\n\nBody.\n");
        assert_eq!(contents[0]["_meta"][META_VERSION], 3);
    }
    let new = result_of(&run(&modern_named(1, "resources/read", json!({ "uri": "wiki://page/Q%26A" })), &host));
    assert_eq!((new["cacheScope"].as_str(), new["ttlMs"].as_u64()), (Some("private"), Some(30_000)));
}

#[test]
fn restricted_unknown_and_foreign_uris_give_the_same_not_found() {
    let host = PagesHost::wiki();
    let (config, auth) = finance();
    let answer = |request: Request| {
        let r = run_with(&request, &host, &open_config());
        (r.status, body(&r))
    };
    for (era, code) in [("2025-11-25", RESOURCE_NOT_FOUND), ("2026-07-28", INVALID_PARAMS)] {
        let read = |uri: &str| {
            let params = json!({ "uri": uri });
            if era == "2026-07-28" { modern_named(1, "resources/read", params) } else { legacy(era, 1, "resources/read", params) }
        };
        let (status, secret) = answer(read("wiki://page/SecretLedger"));
        let (_, ghost) = answer(read("wiki://page/GhostLedger"));
        assert_eq!(status, 200);
        assert_eq!(secret["error"]["code"], code, "{era}");
        assert_eq!(secret["error"]["message"], "Resource not found");
        assert_eq!(secret["error"]["data"], json!({ "uri": "wiki://page/SecretLedger" }));
        assert_eq!(secret.to_string().replace("SecretLedger", "GhostLedger"), ghost.to_string(), "{era}");
        for foreign in ["file:///etc/passwd", "wiki://page/", "wiki://page/a/b", "wiki://page/Glossary?v=2"] {
            assert_eq!(answer(read(foreign)).1["error"]["code"], code, "{era} {foreign}");
        }
        // The principal that may view it reads it.
        let r = run_with(&read("wiki://page/SecretLedger").with_header("Authorization", &auth), &host, &config);
        assert_eq!(result_of(&r)["contents"][0]["text"], "# SecretLedger\n\nBody.\n");
    }
    for params in [json!({}), json!({ "uri": 5 })] {
        for request in both("resources/read", params.clone()) {
            assert_eq!(error_code(&run(&request, &host)), INVALID_PARAMS, "{params}");
        }
    }
    // 2026-07-28 routes on Mcp-Name = uri.
    let r = run(&modern(1, "resources/read", json!({ "uri": "wiki://page/Glossary" })).with_header("Mcp-Name", "wiki://page/Q%26A"), &host);
    assert_eq!((r.status, error_code(&r)), (400, HEADER_MISMATCH));
}

#[test]
fn templates_list_has_the_page_template() {
    let host = PagesHost::wiki();
    let old = result_of(&run(&legacy("2025-03-26", 1, "resources/templates/list", json!({})), &host));
    assert_eq!(old["resourceTemplates"][0]["uriTemplate"], PAGE_URI_TEMPLATE);
    assert!(old["resourceTemplates"][0].get("title").is_none() && old.get("ttlMs").is_none());
    let new = result_of(&run(&modern(1, "resources/templates/list", json!({})), &host));
    let templates = new["resourceTemplates"].as_array().unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!((templates[0]["name"].as_str(), templates[0]["title"].as_str()), (Some("page"), Some("Wiki page")));
    assert_eq!((new["cacheScope"].as_str(), new["ttlMs"].as_u64()), (Some("public"), Some(3_600_000)));
}

fn complete(host: &PagesHost, reference: Value, name: &str, value: &str) -> Response {
    run(&modern(1, "completion/complete", json!({ "ref": reference, "argument": { "name": name, "value": value } })), host)
}

fn completion_of(r: &Response) -> (Vec<String>, u64, bool) {
    let c = result_of(r)["completion"].clone();
    let values = c["values"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    (values, c["total"].as_u64().unwrap(), c["hasMore"].as_bool().unwrap())
}

#[test]
fn slugs_complete_over_what_the_caller_may_view() {
    let host = PagesHost::wiki();
    let template = json!({ "type": "ref/resource", "uri": PAGE_URI_TEMPLATE });
    assert_eq!(completion_of(&complete(&host, template.clone(), "slug", "s")), (vec!["ShardFormat".to_string()], 1, false));
    assert_eq!(completion_of(&complete(&host, template.clone(), "slug", "")).1, 5);
    assert_eq!(completion_of(&complete(&host, template.clone(), "slug", "SecretL")), (vec![], 0, false));
    let (config, auth) = finance();
    let request = modern(1, "completion/complete", json!({ "ref": template, "argument": { "name": "slug", "value": "secret" } }))
        .with_header("Authorization", &auth);
    assert_eq!(completion_of(&run_with(&request, &host, &config)).0, ["SecretLedger", "SecretPlans"]);

    // Capped at 100, with the total and hasMore.
    let many: Vec<(String, bool)> = (0..150).map(|n| (format!("Page{n:03}"), false)).collect();
    let many = PagesHost::new(&many.iter().map(|(s, r)| (s.as_str(), *r)).collect::<Vec<_>>());
    let (values, total, more) = completion_of(&complete(&many, template.clone(), "slug", "page"));
    assert_eq!((values.len(), values.first().map(String::as_str), total, more), (100, Some("Page000"), 150, true));

    // Prompt arguments: `pins` completes its last item; the others have no suggestions.
    let briefing = json!({ "type": "ref/prompt", "name": "briefing" });
    assert_eq!(completion_of(&complete(&host, briefing.clone(), "pins", "Glossary,ru")).0, ["Glossary, Runbooks Hub"]);
    assert_eq!(completion_of(&complete(&host, briefing.clone(), "pins", "Q")).0, ["Q&A"]);
    assert_eq!(completion_of(&complete(&host, briefing.clone(), "clusters", "op")), (vec![], 0, false));
    assert_eq!(completion_of(&complete(&host, json!({ "type": "ref/prompt", "name": "ground" }), "question", "how")).0, Vec::<String>::new());

    for (reference, name) in [
        (json!({ "type": "ref/resource", "uri": "wiki://page/Glossary" }), "slug"),
        (json!({ "type": "ref/resource", "uri": "test://template/{id}" }), "id"),
        (template.clone(), "id"),
        (json!({ "type": "ref/prompt", "name": "test_prompt_with_arguments" }), "arg1"),
        (briefing.clone(), "question"),
        (json!({ "type": "ref/other" }), "slug"),
        (json!({ "type": "ref/resource" }), "slug"),
        (json!({}), "slug"),
    ] {
        assert_eq!(error_code(&complete(&host, reference.clone(), name, "x")), INVALID_PARAMS, "{reference} {name}");
    }
    for params in [json!({}), json!({ "ref": "x", "argument": { "name": "slug", "value": "" } }), json!({ "ref": template, "argument": { "name": "slug" } })] {
        assert_eq!(error_code(&run(&modern(1, "completion/complete", params.clone()), &host)), INVALID_PARAMS, "{params}");
    }
}

#[test]
fn prompts_list_and_get_in_both_eras() {
    let host = PagesHost::wiki();
    let new = result_of(&run(&modern(1, "prompts/list", json!({})), &host));
    let names: Vec<&str> = new["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["briefing", "ground"]);
    assert_eq!((new["cacheScope"].as_str(), new["ttlMs"].as_u64()), (Some("public"), Some(3_600_000)));
    let ground = &new["prompts"][1];
    assert_eq!(ground["arguments"], json!([{ "name": "question", "title": "Question", "description": "The question to ground, in natural language.", "required": true }]));
    let old = result_of(&run(&legacy("2025-03-26", 1, "prompts/list", json!({})), &host));
    assert!(old["prompts"][0].get("title").is_none() && old.get("ttlMs").is_none());

    for request in both("prompts/get", json!({ "name": "ground", "arguments": { "question": " why? " } })) {
        let result = result_of(&run(&request, &host));
        assert_eq!(result["description"], "ground prompt");
        assert_eq!(result["messages"], json!([{ "role": "user", "content": { "type": "text", "text": "ground: {\"question\": \"why?\"}" } }]));
        assert!(result.get("ttlMs").is_none());
    }
    // Blank and null arguments count as absent; the caller's principals reach the host.
    let (config, auth) = finance();
    let request = modern(1, "prompts/get", json!({ "name": "briefing", "arguments": { "pins": "Glossary", "prompt": "  ", "clusters": null } }))
        .with_header("Authorization", &auth);
    result_of(&run_with(&request, &host, &config));
    let calls = host.prompt_calls.borrow();
    let (name, args, principals) = calls.last().unwrap();
    assert_eq!((name.as_str(), args.len(), args["pins"].as_str()), ("briefing", 1, "Glossary"));
    assert!(principals.iter().any(|p| p == "Finance"));
}

#[test]
fn bad_prompt_requests_are_invalid_params_never_panics() {
    let host = PagesHost::wiki();
    for params in [
        json!({}),
        json!({ "name": 3 }),
        json!({ "name": "test_simple_prompt" }),
        json!({ "name": "ground" }),
        json!({ "name": "ground", "arguments": { "question": "" } }),
        json!({ "name": "ground", "arguments": { "question": ["a"] } }),
        json!({ "name": "ground", "arguments": { "question": "q", "budget": "5" } }),
        json!({ "name": "ground", "arguments": "question=q" }),
        json!({ "name": "ground", "arguments": { "question": "invalid" } }),
    ] {
        for request in both("prompts/get", params.clone()) {
            let r = run(&request, &host);
            assert_eq!((r.status, error_code(&r)), (200, INVALID_PARAMS), "{params}");
        }
    }
    // 2026-07-28 routes on Mcp-Name = name.
    let r = run(&modern(1, "prompts/get", json!({ "name": "ground", "arguments": { "question": "q" } })).with_header("Mcp-Name", "briefing"), &host);
    assert_eq!((r.status, error_code(&r)), (400, HEADER_MISMATCH));
}

#[test]
fn index_faults_are_internal_errors_and_tools_only_hosts_stay_tools_only() {
    let mut host = PagesHost::wiki();
    host.fault = Some(crate::Error::MissingShard { name: "pages".into() });
    for method in ["resources/list", "resources/read"] {
        let r = run(&modern_named(1, method, json!({ "uri": "wiki://page/Glossary" })), &host);
        assert_eq!(error_code(&r), INTERNAL_ERROR, "{method}");
        assert_eq!(body(&r)["error"]["message"], "index unavailable: shard pages is missing");
    }
    let tools_only = super::tests::FakeHost::default();
    for (method, params) in [
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({ "uri": "wiki://page/Glossary" })),
        ("prompts/get", json!({ "name": "ground" })),
        ("completion/complete", json!({})),
        ("resources/subscribe", json!({})),
    ] {
        let r = run_with(&modern_named(1, method, params), &tools_only, &open_config());
        assert_eq!((r.status, error_code(&r)), (404, METHOD_NOT_FOUND), "{method}");
    }
    let r = run(&legacy("2025-11-25", 1, "resources/subscribe", json!({ "uri": "wiki://page/Glossary" })), &PagesHost::wiki());
    assert_eq!((r.status, error_code(&r)), (200, METHOD_NOT_FOUND));
}
