//! ACL leak suite. The test writes a 61-page wiki — 15 public pages and 46
//! pages restricted by 23 ACL patterns (users, groups, roles, `Authenticated`, every action
//! implying `view`, `Admin` only; directives in HTML comments on one line and several, an HTML
//! block, a block quote, a list item, a table cell, link text, without the trailing `()`; and
//! malformed directives, which restrict a page to `Admin`) — where every restricted page carries a secret word (`quill…`)
//! in its title, summary, tags, entity names and body, lives in a restricted-only cluster
//! (`zorbvault…`) or the shared `commons` cluster, and links to public pages and to restricted pages of the
//! same ACL. Every REST route and every MCP tool from `tools/list`, with arguments naming
//! the restricted pages, is called as eight kinds of caller (anonymous, a key without
//! principals (authenticated), keys holding one user, group or role, Admin). A secret word, restricted
//! canonical id, slug or cluster name reaching a caller who may not view the page fails the test,
//! as do counts that differ from what the caller may see and answers for a restricted page that
//! differ from those for a page that does not exist. SPARQL is probed through
//! `wikantik::sparql::execute` over a store built from the same pages. The MCP resources
//! (list, read, completion of the page template) and prompts (`briefing`, `ground`) go through
//! the same gate and the same oracles.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::OnceLock;

use serde_json::{json, Value};
use wikantik::access::Caller;
use wikantik::auth::{mint_key_with, AccessConfig, KeyRing, Scope};
use wikantik::http::{Request, Response};
use wikantik::mcp::McpConfig;
use wikantik::reader::IndexReader;
use wikantik::settings::RestConfig;
use wikantik::service::{handle, ServiceConfig};
use wikantik::sparql::{execute, QueryOptions, StoreBuilder, Term, Visibility};
use wikantik_native::DirStore;
use wikantik_tests::{block_on, build_wiki_modified_at, build_wiki_with_vectors_modified_at, open};

const PUBLIC_PAGES: usize = 15;
/// Two pages per ACL pattern.
const RESTRICTED_PAGES: usize = 46;

/// The ACL patterns (letter, the markup as the page carries it, right after its frontmatter).
/// Who may view each one is written by hand in [`Who::sees`].
const PATTERNS: [(char, &str); 23] = [
    ('a', "[{ALLOW view Alice}]()"),
    ('b', "[{ALLOW view Engineering}]()"),
    ('c', "[{ALLOW view Operators}]()"),
    ('d', "[{ALLOW edit Bob}]()"),
    ('e', "[{ALLOW view Admin}]()"),
    ('f', "[{ALLOW view Alice,Finance}]()"),
    ('g', "[{ALLOW view Authenticated}]()"),
    ('h', "[{ALLOW view Bob}]()\n\n[{ALLOW edit Engineering}]()"),
    // Where the markup sits: everywhere outside code counts.
    ('i', "<!-- [{ALLOW view Alice}]() -->"),
    // A comment opened inside a paragraph, spanning lines: CommonMark ends the paragraph at the
    // blank line and calls the indented line a code block, but it is inside the comment.
    ('j', "Review note <!-- access:\n[{ALLOW view Operators}]()\n\n    [{ALLOW comment Finance}]()\n-->"),
    ('k', "<div class=\"access\">\n  [{ALLOW view Engineering}]()\n    <span>ledger team</span>\n</div>"),
    ('l', "> Access: [{ALLOW view Finance}]()"),
    ('m', "- Readers:\n- [{ALLOW view Bob}]()"),
    ('n', "| Reader | Rule |\n|---|---|\n| Operators | [{ALLOW view Operators}]() |"),
    ('o', "See [the ledger rules [{ALLOW view Alice}]](https://example.invalid/rules)."),
    ('p', "[{ALLOW view Engineering}]"),
    // Every action implies view.
    ('q', "[{ALLOW comment Alice}]()"),
    ('r', "[{ALLOW modify Finance}]()"),
    ('s', "[{ALLOW rename Operators}]()"),
    ('t', "[{ALLOW upload Bob}]()"),
    ('u', "[{ALLOW delete Engineering}]()"),
    // Malformed markup fails closed: Admin only, even for the principals it names.
    ('v', "<!-- [{ALLOW veiw Alice}]() -->"),
    ('w', "[{ALLOW view All}]()\n[{DENY view Bob}]()"),
];

/// An entity declared only by the pages of ACL pattern `a`, whose name a public page mentions
/// (beside an entity of its own): the mention is public text, but the node, its type and its
/// co-mention edges exist only for callers who may view a declaring page.
const HIDDEN_ENTITY: &str = "Lantern Gadget";
const PUBLIC_ENTITY: &str = "Beacon Tool";
const MENTIONING_PAGE: usize = 5;

/// Who calls, with the patterns each may view (written from the ACL rules by hand, not computed
/// by the code under test).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Anonymous,
    /// A valid key with no principals: an authenticated caller holding only `All` and
    /// `Authenticated` (as a logged-in JSPWiki user in no group).
    NoPrincipals,
    Alice,
    Bob,
    Engineering,
    Operators,
    Finance,
    Admin,
}

const EVERYONE: [Who; 8] =
    [Who::Anonymous, Who::NoPrincipals, Who::Alice, Who::Bob, Who::Engineering, Who::Operators, Who::Finance, Who::Admin];

impl Who {
    fn sees(self, pattern: char) -> bool {
        match self {
            Who::Anonymous => false,
            Who::NoPrincipals => pattern == 'g',
            Who::Alice => "afgioq".contains(pattern),
            Who::Bob => "dhgmt".contains(pattern),
            Who::Engineering => "bhgkpu".contains(pattern),
            Who::Operators => "cgjns".contains(pattern),
            Who::Finance => "fgjlr".contains(pattern),
            Who::Admin => true,
        }
    }

    fn principals(self) -> &'static [&'static str] {
        match self {
            Who::Anonymous | Who::NoPrincipals => &[],
            Who::Alice => &["Alice"],
            Who::Bob => &["Bob"],
            Who::Engineering => &["Engineering"],
            Who::Operators => &["Operators"],
            Who::Finance => &["Finance"],
            Who::Admin => &["Admin"],
        }
    }
}

/// One generated page.
#[derive(Debug, Clone)]
struct Gen {
    slug: String,
    title: String,
    id: String,
    kind: &'static str,
    cluster: String,
    /// `None`: public; else the ACL pattern letter.
    pattern: Option<char>,
    /// The word only this page carries (restricted pages).
    secret: String,
    /// The word probes use to name it (restricted pages).
    marker: String,
}

fn letters(i: usize) -> String {
    let a = b'a' + (i / 26) as u8;
    let b = b'a' + (i % 26) as u8;
    format!("{}{}", a as char, b as char)
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
}

fn corpus() -> Vec<Gen> {
    let mut pages = Vec::new();
    for n in 0..PUBLIC_PAGES {
        pages.push(Gen {
            slug: format!("PublicTopic{n:02}"),
            title: format!("Public Topic {n:02}"),
            id: format!("01KZ{:022}", n),
            kind: if n == 0 { "hub" } else { ["article", "runbook", "design"][n % 3] },
            cluster: "commons".into(),
            pattern: None,
            secret: String::new(),
            marker: String::new(),
        });
    }
    for i in 0..RESTRICTED_PAGES {
        let (pattern, _) = PATTERNS[i % PATTERNS.len()];
        let marker = format!("zorb{}", letters(i));
        let first_of_pattern = i < PATTERNS.len();
        pages.push(Gen {
            slug: format!("{}Ledger", capital(&marker)),
            title: format!("{} Quill{} Ledger", capital(&marker), letters(i)),
            id: format!("01KZ{:022}", 1000 + i),
            kind: if first_of_pattern { "hub" } else { ["article", "runbook", "design"][i % 3] },
            cluster: if first_of_pattern || i % 2 == 0 { format!("zorbvault{pattern}") } else { "commons".into() },
            pattern: Some(pattern),
            secret: format!("quill{}", letters(i)),
            marker,
        });
    }
    pages
}

/// The pages a page links to (wikilinks and `related:`): a public page to the next public
/// page; a restricted page to a public page, to a restricted page of the same ACL (an author
/// linking across ACLs would put the other slug into this page's own text, which is no leak)
/// and to a public page seven steps further along the public chain, so a neighbour search that
/// stepped through a hidden page would find that page too early. The page text is written from
/// this, and the graph oracle walks it.
fn link_targets<'a>(p: &Gen, all: &'a [Gen]) -> Vec<&'a Gen> {
    let n = all.iter().position(|q| q.slug == p.slug).unwrap();
    match p.pattern {
        None => vec![&all[(n + 1) % PUBLIC_PAGES]],
        Some(_) => {
            let i = n - PUBLIC_PAGES;
            let other = PUBLIC_PAGES + if i + PATTERNS.len() < RESTRICTED_PAGES { i + PATTERNS.len() } else { i % PATTERNS.len() };
            vec![&all[n % PUBLIC_PAGES], &all[other], &all[(n + 7) % PUBLIC_PAGES]]
        }
    }
}

fn page_text(p: &Gen, all: &[Gen]) -> String {
    let n = all.iter().position(|q| q.slug == p.slug).unwrap();
    let targets = link_targets(p, all);
    let public_link = &targets[0].slug;
    let next_public = &targets[0].slug;
    match p.pattern {
        None => format!(
            "---\ncanonical_id: {id}\ntitle: {title}\ntype: {kind}\nstatus: active\ncluster: {cluster}\n\
summary: Public notes on ledger publishing and shard retrieval number {n} for every reader of the wiki.\n\
author: Pat Public\ndate: 2026-10-01\ntags:\n  - common\n  - topic{n:02}\n{entities}related:\n  - {next_public}\n---\n\n\
# {title}\n\nThis public page explains ledger publishing, shard retrieval and briefing budgets for everyone. \
It links to [{next_public}]() and mentions the engine that every reader may know about.{mention}\n\n\
## Ledger basics\n\nA ledger entry records one publish; the shards of a build are content addressed and \
the pointer moves last. Retrieval ranks sections lexically and fuses ranks.\n",
            id = p.id,
            title = p.title,
            kind = p.kind,
            cluster = p.cluster,
            entities = if n == MENTIONING_PAGE { format!("entities:\n  - name: {PUBLIC_ENTITY}\n    type: technology\n") } else { String::new() },
            mention = if n == MENTIONING_PAGE { format!(" The {PUBLIC_ENTITY} works with the {HIDDEN_ENTITY}.") } else { String::new() },
        ),
        Some(pattern) => {
            let acl = PATTERNS.iter().find(|(l, _)| *l == pattern).unwrap().1;
            let other = targets[1];
            format!(
                "---\ncanonical_id: {id}\ntitle: {title}\ntype: {kind}\nstatus: active\ncluster:\n  - {cluster}\n\
summary: Restricted {secret} ledger about {marker} publishing and shard retrieval for its principals only.\n\
author: {capsecret} Author\ndate: 2026-10-02\nconfidence: provisional\n\
key_facts:\n  - The {secret} ledger holds {marker} figures.\n\
tags:\n  - common\n  - {secret}\n  - {marker}\n\
entities:\n  - name: {capsecret} Engine\n    type: product\n{hidden_entity}\
related:\n  - {public_link}\n---\n\n{acl}\n\n\
# {title}\n\nThe {secret} ledger covers {marker} publishing, shard retrieval and briefing budgets. \
The {capsecret} Engine appears here. See [{public_link}](), [{other}]() and [{far_public}]().\n\n\
## {capsecret} details\n\nEvery {secret} figure is secret: ledger publishing of {marker} shards, retrieval of \
{marker} sections and fusion of {secret} ranks.\n",
                id = p.id,
                title = p.title,
                kind = p.kind,
                cluster = p.cluster,
                secret = p.secret,
                capsecret = capital(&p.secret),
                marker = p.marker,
                other = other.slug,
                far_public = targets[2].slug,
                hidden_entity = if pattern == 'a' { format!("  - name: {HIDDEN_ENTITY}\n    type: product\n") } else { String::new() },
            )
        }
    }
}

struct Fixture {
    pages: Vec<Gen>,
    index: PathBuf,
    /// Per caller, an index built from only the pages that caller may view: what the caller
    /// must see on the full index, byte for byte, on the graph and SPARQL routes.
    views: Vec<(Who, PathBuf)>,
    config: ServiceConfig,
    keys: Vec<(Who, String)>,
}

/// Under `--features acl-mutation` (scripts/acl-mutation.sh), switch on the deliberate ACL bug
/// named by `WIKANTIK_ACL_MUTATION` (default `none`): the suite must then fail.
fn select_mutation() {
    #[cfg(feature = "acl-mutation")]
    {
        use wikantik::access::mutation;
        let name = std::env::var("WIKANTIK_ACL_MUTATION").unwrap_or_else(|_| "none".into());
        let chosen = mutation::parse(&name).unwrap_or_else(|| panic!("WIKANTIK_ACL_MUTATION={name}: not a mutation of access::mutation::ALL"));
        mutation::set(chosen);
    }
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        select_mutation();
        let pages = corpus();
        let files: Vec<(String, String)> = pages.iter().map(|p| (format!("{}.md", p.slug), page_text(p, &pages))).collect();
        // One modification time for every page, so the per-caller builds agree on `updated`.
        let modified = Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_790_000_000));
        let index = build_wiki_with_vectors_modified_at("acl-leaks", &files, modified);
        let views = EVERYONE
            .iter()
            .map(|who| {
                let mine: Vec<(String, String)> = pages
                    .iter()
                    .zip(&files)
                    .filter(|(p, _)| p.pattern.is_none_or(|l| who.sees(l)))
                    .map(|(_, f)| f.clone())
                    .collect();
                (*who, build_wiki_modified_at(&format!("acl-leaks-view-{who:?}"), &mine, modified))
            })
            .collect();
        let mut lines = Vec::new();
        let mut keys = Vec::new();
        for (n, who) in EVERYONE.iter().enumerate().skip(1) {
            let (key, line) = mint_key_with([40 + n as u8; 32], &[Scope::McpRead], who.principals(), Some(&format!("{who:?}"))).unwrap();
            lines.push(line);
            keys.push((*who, key));
        }
        let ring = KeyRing::parse(&lines.join("\n")).unwrap();
        let config = ServiceConfig {
            rest: RestConfig { keys: ring.clone(), ..RestConfig::default() },
            // Small resources/list pages, so every caller's listing goes through cursors.
            mcp: McpConfig { access: AccessConfig { keys: ring, allow_unrestricted: true }, resource_page_size: 7, ..McpConfig::default() },
        };
        Fixture { pages, index, views, config, keys }
    })
}

fn restricted() -> impl Iterator<Item = &'static Gen> {
    fixture().pages.iter().filter(|p| p.pattern.is_some())
}

fn visible(who: Who) -> Vec<&'static Gen> {
    fixture().pages.iter().filter(|p| p.pattern.is_none_or(|l| who.sees(l))).collect()
}

/// Strings that must never reach `who`, except those the caller itself sent.
fn forbidden(who: Who, sent: &str) -> Vec<(String, String)> {
    let sent = sent.to_lowercase();
    let mut out = Vec::new();
    for p in restricted().filter(|p| !who.sees(p.pattern.unwrap())) {
        for s in [&p.secret, &p.marker, &p.id, &p.slug, &p.title] {
            let s = s.to_lowercase();
            if !sent.contains(&s) {
                out.push((s, p.slug.clone()));
            }
        }
        let vault = format!("zorbvault{}", p.pattern.unwrap());
        if !sent.contains(&vault) {
            out.push((vault, p.slug.clone()));
        }
    }
    out
}

fn authorize(who: Who, mut request: Request) -> Request {
    if let Some((_, key)) = fixture().keys.iter().find(|(w, _)| *w == who) {
        request = request.with_header("Authorization", &format!("Bearer {key}"));
    }
    request
}

fn serve(request: &Request) -> Response {
    serve_on(&fixture().index, request)
}

/// Serve `request` from the index in `dir` (one reader per index and test thread).
fn serve_on(dir: &Path, request: &Request) -> Response {
    thread_local! {
        static READERS: RefCell<HashMap<PathBuf, Rc<IndexReader<DirStore>>>> = RefCell::new(HashMap::new());
    }
    let reader = READERS.with(|r| r.borrow_mut().entry(dir.to_path_buf()).or_insert_with(|| Rc::new(open(dir))).clone());
    block_on(handle(Ok(&*reader), request, &fixture().config))
}

fn check_leaks(who: Who, label: &str, sent: &str, response: &Response) {
    let text = String::from_utf8_lossy(&response.body).to_lowercase();
    for (word, owner) in forbidden(who, sent) {
        if let Some(at) = text.find(&word) {
            let context: String = text[at.saturating_sub(200)..].chars().take(400).collect();
            panic!("{label} leaked {word:?} (from {owner}) to {who:?}: …{context}…");
        }
    }
}

fn rest(who: Who, target: &str) -> Response {
    let response = serve(&authorize(who, Request::new("GET", target)));
    let decoded = wikantik::http::parse_form(target.split_once('?').map_or("", |(_, q)| q));
    let sent: String = decoded.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    check_leaks(who, &format!("GET {target}"), &sent, &response);
    response
}

fn mcp_body(method: &str, params: Value) -> Request {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    Request::new("POST", "/knowledge-mcp")
        .with_header("content-type", "application/json")
        .with_header("accept", "application/json, text/event-stream")
        .with_header("mcp-protocol-version", "2025-06-18")
        .with_body(serde_json::to_vec(&body).unwrap())
}

/// Call a tool as `who`; returns (isError, structured content or text).
/// Tools whose answers depend on nothing but the pages the caller may view, so they must equal
/// the answers from an index of only those pages (the retrieval tools are left out: BM25
/// statistics cover the whole build, see docs/SECURITY.md, and their answers name the build).
const OWN_VIEW_TOOLS: [&str; 12] = [
    "get_page",
    "list_pages",
    "list_metadata_values",
    "list_clusters",
    "list_tags",
    "list_pages_by_filter",
    "get_page_by_id",
    "query_nodes",
    "get_node",
    "traverse",
    "discover_schema",
    "sparql_query",
];

fn tool(who: Who, name: &str, args: Value) -> (bool, Value) {
    let request = authorize(who, mcp_body("tools/call", json!({ "name": name, "arguments": args })));
    let response = serve(&request);
    assert_eq!(response.status, 200, "{name}: {}", String::from_utf8_lossy(&response.body));
    check_leaks(who, &format!("{name} {args}"), &args.to_string(), &response);
    if OWN_VIEW_TOOLS.contains(&name) {
        let own = serve_on(view_index(who), &request);
        assert_eq!(
            String::from_utf8_lossy(&response.body),
            String::from_utf8_lossy(&own.body),
            "{name} {args}: {who:?} gets a different answer than from an index of only the pages it may view"
        );
    }
    let reply: Value = serde_json::from_slice(&response.body).unwrap();
    let result = &reply["result"];
    let payload = result.get("structuredContent").cloned().unwrap_or_else(|| json!(result["content"][0]["text"]));
    (result["isError"].as_bool().unwrap_or(false), payload)
}

fn tool_names() -> Vec<String> {
    let response = serve(&mcp_body("tools/list", json!({})));
    let reply: Value = serde_json::from_slice(&response.body).unwrap();
    reply["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// Argument sets for a tool: generic ones and ones naming restricted pages.
fn tool_args(name: &str) -> Vec<Value> {
    let r: Vec<&Gen> = restricted().collect();
    let slugs: Vec<String> = r.iter().map(|p| p.slug.clone()).collect();
    let ids: Vec<String> = r.iter().map(|p| p.id.clone()).collect();
    let vaults: Vec<String> = PATTERNS.iter().map(|(l, _)| format!("zorbvault{l}")).collect();
    let per_page = |f: &dyn Fn(&Gen) -> Value| -> Vec<Value> { r.iter().step_by(5).map(|p| f(p)).collect() };
    let mut out = match name {
        "assemble_bundle" => vec![json!({ "query": "ledger publishing shard retrieval" }), json!({ "query": "engine figures secret", "k": 20 })],
        "get_briefing" => {
            let mut v = vec![json!({ "pins": slugs[..25], "budget": 24000 }), json!({ "pins": ids[..25] }), json!({ "clusters": ["commons"], "budget": 24000 })];
            v.extend(vaults.chunks(10).map(|chunk| json!({ "clusters": chunk, "prompt": "ledger publishing", "budget": 24000 })));
            v
        }
        "retrieve_context" => vec![json!({ "query": "ledger publishing shard retrieval", "maxPages": 20, "chunksPerPage": 5 })],
        "read_pages" => vec![json!({ "slugs": slugs[..20] }), json!({ "slugs": slugs[20..40] })],
        "get_page" => per_page(&|p| json!({ "slug": p.slug })),
        "list_pages" => vec![json!({ "limit": 100 }), json!({ "cluster": "commons", "limit": 100 }), json!({ "cluster": "zorbvaulta" })],
        "list_metadata_values" => ["type", "tags", "cluster", "author", "status", "confidence"].iter().map(|f| json!({ "field": f })).collect(),
        "list_clusters" => vec![json!({ "limit": 100 })],
        "list_tags" => vec![json!({ "limit": 200 })],
        "list_pages_by_filter" => vec![json!({ "type": "article" }), json!({ "cluster": "commons" }), json!({ "tag": "common" })],
        "get_page_by_id" => per_page(&|p| json!({ "id": p.id })),
        "get_page_for_agent" => per_page(&|p| json!({ "canonical_id": p.id })),
        "list_stale_citations" | "discover_schema" | "get_ontology" => vec![json!({})],
        "query_nodes" => vec![json!({ "limit": 200 }), json!({ "node_type": "product", "limit": 200 })],
        "get_node" => {
            let mut v = per_page(&|p| json!({ "node": p.slug }));
            v.extend([json!({ "node": "PublicTopic03" }), json!({ "node": HIDDEN_ENTITY }), json!({ "node": PUBLIC_ENTITY })]);
            v
        }
        "traverse" => vec![
            json!({ "start_node": PUBLIC_ENTITY, "max_depth": 2, "min_shared_chunks": 1 }),
            json!({ "start_node": HIDDEN_ENTITY, "max_depth": 2 }),
            json!({ "start_node": "PublicTopic03", "max_depth": 3 }),
            json!({ "start_node": "PublicTopic00", "max_depth": 2, "direction": "both" }),
            json!({ "start_node": slugs[0], "max_depth": 2 }),
        ],
        "search_knowledge" => vec![json!({ "query": "engine" }), json!({ "query": "ledger" }), json!({ "query": "gadget" })],
        "find_similar" => {
            let mut v = vec![json!({ "node": "PublicTopic03", "limit": 100 }), json!({ "node": slugs[1], "limit": 100 })];
            v.extend(per_page(&|p| json!({ "node": format!("{} Engine", capital(&p.secret)), "limit": 100 })));
            v
        }
        "sparql_query" => vec![
            json!({ "query": "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10000" }),
            json!({ "query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }" }),
        ],
        other => panic!("no arguments written for new tool {other}: add some to the ACL leak suite"),
    };
    out.push(json!({}));
    out
}

#[test]
fn the_generated_corpus_has_the_intended_visibility() {
    let f = fixture();
    assert_eq!(f.pages.len(), PUBLIC_PAGES + RESTRICTED_PAGES);
    let reader = open(&f.index);
    let table = block_on(reader.pages()).unwrap();
    assert_eq!(table.pages.len(), PUBLIC_PAGES + RESTRICTED_PAGES);
    for who in EVERYONE {
        let principals: Vec<String> = who.principals().iter().map(|s| s.to_string()).collect();
        let caller = if who == Who::Anonymous { Caller::anonymous() } else { Caller::for_key(&principals, None) };
        for p in &f.pages {
            let record = table.by_slug(&p.slug).unwrap();
            let markup = p.pattern.map_or("", |l| PATTERNS.iter().find(|(m, _)| *m == l).unwrap().1);
            assert_eq!(caller.can_view(record), p.pattern.is_none_or(|l| who.sees(l)), "{who:?} viewing {} ({markup:?})", p.slug);
        }
        let actual = table.pages.iter().filter(|p| caller.can_view(p)).count();
        assert_eq!(actual, visible(who).len(), "{who:?}");
    }
    assert_eq!(visible(Who::Anonymous).len(), PUBLIC_PAGES);
    assert!(PATTERNS.iter().all(|(l, _)| restricted().filter(|p| p.pattern == Some(*l)).count() == 2), "two pages per pattern");
}

/// The bug this guards against: a page whose only ACL sat in an HTML comment was compiled as
/// public (the compiler scanned the body after HTML blocks, comments included, were reduced to
/// text), so every surface served it to everyone.
#[test]
fn acl_inside_html_comment_restricts_the_page() {
    // Written out by hand: who may read the pages whose ACL sits in a comment.
    let readers = [('i', vec![Who::Alice, Who::Admin]), ('j', vec![Who::Operators, Who::Finance, Who::Admin])];
    for (letter, readers) in readers {
        for page in restricted().filter(|p| p.pattern == Some(letter)) {
            let pin = format!("/api/briefing?pins={}&budget=24000", page.slug);
            let bundle = format!("/api/bundle?q={}+ledger&mode=lexical", page.secret);
            for who in EVERYONE {
                // Each answer is searched for a name of the page the request did not carry.
                let body = |r: Response| String::from_utf8_lossy(&r.body).into_owned();
                let shown = vec![body(rest(who, &pin)).contains(&page.secret), body(rest(who, &bundle)).contains(&page.slug)];
                let reads = readers.contains(&who);
                assert_eq!(shown, vec![reads, reads], "{who:?} on {} (pattern {letter}: briefing pin, bundle)", page.slug);
            }
        }
    }
}

#[test]
fn no_rest_route_leaks() {
    let r: Vec<&Gen> = restricted().collect();
    let mut targets = vec![
        "/health".to_string(),
        "/".into(),
        "/llms.txt".into(),
        "/api/bundle?q=ledger+publishing+shard+retrieval&k=50".into(),
        "/api/bundle?q=engine+figures+secret&mode=lexical".into(),
        "/api/bundle?q=ledger+publishing&debug=rankings&k=1000".into(),
        "/api/briefing?clusters=commons&budget=24000".into(),
        "/api/briefing?prompt=ledger+publishing&budget=24000&format=md".into(),
    ];
    // Ten clusters per briefing (its limit).
    let vaults: Vec<String> = PATTERNS.iter().map(|(l, _)| format!("zorbvault{l}")).collect();
    for chunk in vaults.chunks(10) {
        targets.push(format!("/api/briefing?clusters={}&prompt=ledger&budget=24000", chunk.join(",")));
    }
    for page in &r {
        targets.push(format!("/pages/{}.md", page.slug));
    }
    for chunk in r.chunks(20) {
        let pins: Vec<&str> = chunk.iter().map(|p| p.slug.as_str()).collect();
        targets.push(format!("/api/briefing?pins={}&budget=24000", pins.join(",")));
        targets.push(format!("/api/briefing?pins={}&format=md", chunk.iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(",")));
    }
    for who in EVERYONE {
        for target in &targets {
            rest(who, target);
        }
    }
}

#[test]
fn no_mcp_tool_leaks() {
    let names = tool_names();
    assert_eq!(names.len(), 21, "{names:?}");
    for who in EVERYONE {
        for name in &names {
            for args in tool_args(name) {
                tool(who, name, args);
            }
        }
    }
}

/// The fixture carries vectors, so `find_similar` really ranks (the leak probes above are not
/// vacuous): every caller gets results for a public node, Admin's include restricted entities
/// (which the leak check keeps from everyone else), and a restricted entity is a similarity
/// target exactly for the callers who may view its page.
#[test]
fn find_similar_ranks_over_what_the_caller_may_see() {
    let secret_engine = restricted().next().map(|p| format!("{} Engine", capital(&p.secret))).unwrap();
    for who in EVERYONE {
        let (is_error, got) = tool(who, "find_similar", json!({ "node": "PublicTopic03", "limit": 200 }));
        assert!(!is_error, "{who:?}: {got}");
        let names: Vec<&str> = got["similar"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert!(!names.is_empty(), "{who:?}: {got}");
        let restricted_names = names.iter().filter(|n| n.starts_with("Quill") || n.starts_with("Zorb")).count();
        if who == Who::Admin {
            assert!(restricted_names > 0, "Admin sees restricted entities: {got}");
        }
        let (is_error, engine) = tool(who, "find_similar", json!({ "node": secret_engine }));
        let sees = restricted().next().unwrap().pattern.is_some_and(|l| who.sees(l));
        assert_eq!(!is_error, sees, "{who:?}: {engine}");
        if !sees {
            assert_eq!(engine["error"], json!(format!("Node not found: {secret_engine}")), "{who:?}");
        }
    }
}

/// A restricted page and a page that does not exist look the same: the answers for one are the
/// answers for the other with the name swapped (same length, so token totals match too).
#[test]
fn restricted_pages_look_exactly_like_missing_ones() {
    // Admin only, and a marker no other page's marker stems to ("zorbae" and "zorbas" both stem
    // to "zorba", so a query for one legitimately finds the other).
    let page = restricted().find(|p| p.pattern == Some('e') && p.marker == "zorbbb").unwrap();
    let ghost_slug = format!("Zorbzz{}", &page.slug[6..]);
    let ghost_id = format!("01KZ{:022}", 999_999);
    assert_eq!(ghost_slug.len(), page.slug.len());
    let swap = |s: &str| s.replace(&page.slug, &ghost_slug).replace(&page.id, &ghost_id).replace(&page.marker, "zorbzz");
    for who in EVERYONE.into_iter().filter(|w| *w != Who::Admin) {
        for target in [
            format!("/api/briefing?pins={},PublicTopic01", page.slug),
            format!("/api/briefing?pins={}&format=md", page.id),
            format!("/api/bundle?q={}", page.marker),
            format!("/pages/{}.md", page.slug),
        ] {
            let real = rest(who, &target);
            let ghost = rest(who, &swap(&target));
            assert_eq!(real.status, ghost.status, "{who:?} {target}");
            assert_eq!(swap(&String::from_utf8_lossy(&real.body)), String::from_utf8_lossy(&ghost.body), "{who:?} {target}");
        }
        for (name, args) in [
            ("get_page", json!({ "slug": page.slug })),
            ("read_pages", json!({ "slugs": [page.slug, "PublicTopic01"] })),
            ("get_page_by_id", json!({ "id": page.id })),
            ("get_page_for_agent", json!({ "canonical_id": page.id })),
            ("get_briefing", json!({ "pins": [page.slug, "PublicTopic01"] })),
            ("get_node", json!({ "node": page.slug })),
            ("traverse", json!({ "start_node": page.slug })),
            ("find_similar", json!({ "node": page.slug })),
            ("assemble_bundle", json!({ "query": page.marker })),
            ("search_knowledge", json!({ "query": page.marker })),
        ] {
            let real = tool(who, name, args.clone());
            let ghost = tool(who, name, serde_json::from_str(&swap(&args.to_string())).unwrap());
            assert_eq!(swap(&real.1.to_string()), ghost.1.to_string(), "{who:?} {name}");
            assert_eq!(real.0, ghost.0, "{who:?} {name}");
        }
        for (method, params) in [
            ("resources/read", json!({ "uri": format!("wiki://page/{}", page.slug) })),
            ("completion/complete", json!({ "ref": page_template_ref(), "argument": { "name": "slug", "value": page.slug } })),
            ("prompts/get", json!({ "name": "briefing", "arguments": { "pins": format!("{},PublicTopic01", page.slug) } })),
            ("prompts/get", json!({ "name": "briefing", "arguments": { "pins": page.id } })),
            ("prompts/get", json!({ "name": "ground", "arguments": { "question": page.marker } })),
        ] {
            let real = mcp(who, method, params.clone());
            let ghost = mcp(who, method, serde_json::from_str(&swap(&params.to_string())).unwrap());
            assert_eq!(swap(&real.to_string()), ghost.to_string(), "{who:?} {method} {params}");
        }
    }
}

#[test]
fn counts_match_what_the_caller_may_see() {
    for who in EVERYONE {
        let seen = visible(who);
        let (_, listed) = tool(who, "list_pages", json!({ "limit": 100 }));
        let total = listed["totalMatched"].as_u64().or_else(|| listed["total"].as_u64());
        assert_eq!(total, Some(seen.len() as u64), "{who:?} list_pages: {listed}");

        let articles = seen.iter().filter(|p| p.kind == "article").count();
        let (_, filtered) = tool(who, "list_pages_by_filter", json!({ "type": "article" }));
        assert_eq!(filtered["count"].as_u64(), Some(articles as u64), "{who:?} list_pages_by_filter: {filtered}");

        let (_, tags) = tool(who, "list_tags", json!({ "limit": 200 }));
        let common = tags["tags"].as_array().unwrap().iter().find(|t| t["tag"] == "common").expect("tag common");
        assert_eq!(common["count"].as_u64(), Some(seen.len() as u64), "{who:?} list_tags common");
        // Public tags topicNN, plus the secret and marker tags of each visible restricted page.
        let restricted_seen = seen.iter().filter(|p| p.pattern.is_some()).count();
        assert_eq!(tags["count"].as_u64(), Some((1 + PUBLIC_PAGES + 2 * restricted_seen) as u64), "{who:?} list_tags count");

        let clusters: BTreeSet<&str> = seen.iter().map(|p| p.cluster.as_str()).collect();
        let (_, listed) = tool(who, "list_clusters", json!({ "limit": 100 }));
        assert_eq!(listed["count"].as_u64(), Some(clusters.len() as u64), "{who:?} list_clusters: {listed}");

        let (_, types) = tool(who, "list_metadata_values", json!({ "field": "type" }));
        let sum: u64 = types["values"].as_array().unwrap().iter().map(|v| v["count"].as_u64().unwrap()).sum();
        assert_eq!(sum, seen.len() as u64, "{who:?} list_metadata_values type: {types}");
    }
}

#[test]
fn sparql_sees_only_what_the_caller_may_view() {
    let pages = &fixture().pages;
    let wk = |l: &str| Term::iri(format!("https://wiki.wikantik.com/ns/wikantik#{l}"));
    let mut builder = StoreBuilder::new();
    for (key, p) in pages.iter().enumerate() {
        let node = Term::iri(format!("https://wiki.wikantik.com/id/page/{}", p.id));
        let vis = if p.pattern.is_some() { Visibility::Page(key as u32) } else { Visibility::Public };
        builder.add(node.clone(), wk("title"), Term::string(p.title.clone()), vis);
        builder.add(node.clone(), wk("slug"), Term::string(p.slug.clone()), vis);
        builder.add(node.clone(), wk("cluster"), Term::string(p.cluster.clone()), vis);
        builder.add(node.clone(), Term::iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), wk("Page"), vis);
        if p.pattern.is_some() {
            builder.add(node.clone(), wk("tag"), Term::string(p.secret.clone()), vis);
        }
    }
    let store = builder.build().unwrap();
    let prefix = "PREFIX wk: <https://wiki.wikantik.com/ns/wikantik#>\n";
    for who in EVERYONE {
        let can_view = |key: u32| pages[key as usize].pattern.is_none_or(|l| who.sees(l));
        let run = |q: &str| execute(&store, &format!("{prefix}{q}"), &can_view, &QueryOptions::default()).unwrap().to_json();
        for q in [
            "SELECT ?s ?p ?o WHERE { ?s ?p ?o }",
            "SELECT ?t WHERE { ?s wk:title ?t FILTER(CONTAINS(LCASE(?t), \"quill\")) }",
            "SELECT ?c (COUNT(?s) AS ?n) WHERE { ?s wk:cluster ?c } GROUP BY ?c",
        ] {
            let text = run(q).to_string();
            for (word, owner) in forbidden(who, "") {
                assert!(!text.to_lowercase().contains(&word), "SPARQL {q} leaked {word} ({owner}) to {who:?}");
            }
        }
        let count = run("SELECT (COUNT(?s) AS ?n) WHERE { ?s a wk:Page }");
        let n = count["results"]["bindings"][0]["n"]["value"].as_str().unwrap().to_string();
        assert_eq!(n, visible(who).len().to_string(), "{who:?}");
        let ask = run("ASK { ?s wk:tag \"quillaa\" }");
        assert_eq!(ask["boolean"], json!(who.sees('a')), "{who:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Graph and SPARQL routes. Two oracles on every answer: the leak check above, and equality with
// the answer the same caller gets from an index built from only the pages it may view (so a
// count, a cluster, a neighbour or a triple that depends on a hidden page shows up as a
// difference). Hand-computed expectations from the generator then prove the answers carry data.
// ---------------------------------------------------------------------------------------------

use wikantik_tests::url_encode as encode;

fn view_index(who: Who) -> &'static Path {
    &fixture().views.iter().find(|(w, _)| *w == who).unwrap().1
}

/// A response body made comparable across two indexes: SPARQL result rows and Turtle
/// statements as sorted multisets (their order follows internal term ids), everything else as is.
fn comparable(response: &Response) -> String {
    let text = String::from_utf8_lossy(&response.body).into_owned();
    if response.header("content-type").is_some_and(|c| c.starts_with("text/turtle")) {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        return lines.join("\n");
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(mut v) => {
            // SPARQL JSON rows; compact answers are a top-level array of rows.
            for pointer in ["/results/bindings", ""] {
                if let Some(rows) = v.pointer_mut(pointer).and_then(Value::as_array_mut) {
                    rows.sort_by_cached_key(|r| r.to_string());
                }
            }
            v.to_string()
        }
        Err(_) => text,
    }
}

/// Send `request` as `who`: no leak, and the same answer as on `who`'s own view of the wiki.
fn probe(who: Who, request: Request, sent: &str, label: &str) -> Response {
    let request = authorize(who, request);
    let full = serve(&request);
    check_leaks(who, label, sent, &full);
    let own = serve_on(view_index(who), &request);
    assert_eq!(
        (full.status, comparable(&full)),
        (own.status, comparable(&own)),
        "{label}: {who:?} gets a different answer than from an index of only the pages it may view"
    );
    full
}

fn graph_get(who: Who, target: &str) -> Value {
    let decoded = wikantik::http::parse_form(target.split_once('?').map_or("", |(_, q)| q));
    let path = target.split('?').next().unwrap_or(target);
    let sent: String = decoded.iter().map(|(k, v)| format!("{k}={v} ")).chain([wikantik::markdown::url_decode(path, false)]).collect();
    let response = probe(who, Request::new("GET", target), &sent, &format!("GET {target}"));
    let body: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
    json!({ "status": response.status, "body": body })
}

/// Breadth-first search over the generator's links through pages `who` may view.
fn expected_neighbours(who: Who, start: &Gen, direction: &str, depth: u32) -> BTreeMap<String, u32> {
    let pages = &fixture().pages;
    let ok = |p: &Gen| p.pattern.is_none_or(|l| who.sees(l));
    let adjacent = |p: &Gen| -> Vec<&Gen> {
        let mut out = Vec::new();
        if direction != "in" {
            out.extend(link_targets(p, pages));
        }
        if direction != "out" {
            out.extend(pages.iter().filter(|q| link_targets(q, pages).iter().any(|t| t.slug == p.slug)));
        }
        out
    };
    let mut found = BTreeMap::new();
    let mut frontier = vec![start];
    for distance in 1..=depth {
        let mut next = Vec::new();
        for p in frontier {
            for q in adjacent(p) {
                if ok(q) && q.slug != start.slug && !found.contains_key(&q.slug) {
                    found.insert(q.slug.clone(), distance);
                    next.push(q);
                }
            }
        }
        frontier = next;
    }
    found
}

#[test]
fn no_graph_route_leaks() {
    let pages = &fixture().pages;
    let starts: Vec<&Gen> = pages.iter().filter(|p| p.pattern.is_none()).step_by(4).chain(restricted().step_by(4)).collect();
    let mut clusters: Vec<String> = PATTERNS.iter().map(|(l, _)| format!("zorbvault{l}")).collect();
    clusters.push("commons".into());
    let mut nodes: Vec<String> = vec!["PublicTopic03".into(), "common".into(), "topic03".into(), "Pat Public".into()];
    for p in restricted().step_by(3) {
        nodes.extend([p.slug.clone(), p.id.clone(), format!("{} Engine", capital(&p.secret)), p.secret.clone(), p.marker.clone()]);
    }
    for who in EVERYONE {
        let sees = |p: &Gen| p.pattern.is_none_or(|l| who.sees(l));
        for start in &starts {
            for direction in ["out", "in", "both"] {
                for depth in 1..=3 {
                    let target = format!("/api/graph/pages/{}/neighbours?direction={direction}&depth={depth}&limit=500", start.slug);
                    let answer = graph_get(who, &target);
                    if !sees(start) {
                        assert_eq!(answer["status"], 404, "{who:?} {target}: {answer}");
                        continue;
                    }
                    assert_eq!(answer["status"], 200, "{who:?} {target}: {answer}");
                    let got: BTreeMap<String, u32> = answer["body"]["neighbours"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| (n["slug"].as_str().unwrap().to_string(), n["distance"].as_u64().unwrap() as u32))
                        .collect();
                    assert_eq!(got, expected_neighbours(who, start, direction, depth), "{who:?} {target}");
                    assert_eq!(answer["body"]["count"], got.len(), "{who:?} {target}");
                }
            }
        }

        // The cluster spine: which clusters exist, their member counts, hubs and members.
        let seen = visible(who);
        let mut members: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for p in &seen {
            members.entry(p.cluster.as_str()).or_default().insert(p.slug.as_str());
        }
        let listed = graph_get(who, "/api/graph/clusters");
        assert_eq!(listed["status"], 200);
        let counts: BTreeMap<&str, u64> = listed["body"]["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap(), c["memberCount"].as_u64().unwrap()))
            .collect();
        let expected: BTreeMap<&str, u64> = members.iter().map(|(c, m)| (*c, m.len() as u64)).collect();
        assert_eq!(counts, expected, "{who:?} /api/graph/clusters");
        assert_eq!(listed["body"]["count"], expected.len(), "{who:?} /api/graph/clusters count");
        for cluster in &clusters {
            let answer = graph_get(who, &format!("/api/graph/clusters/{cluster}"));
            match members.get(cluster.as_str()) {
                None => assert_eq!(answer["status"], 404, "{who:?} cluster {cluster}: {answer}"),
                Some(expected) => {
                    let got: BTreeSet<&str> = answer["body"]["members"].as_array().unwrap().iter().map(|m| m["slug"].as_str().unwrap()).collect();
                    assert_eq!(&got, expected, "{who:?} cluster {cluster}");
                    let hub = seen.iter().find(|p| p.kind == "hub" && &p.cluster == cluster).map(|p| p.slug.as_str());
                    assert_eq!(answer["body"]["hub"]["slug"].as_str(), hub, "{who:?} hub of {cluster}");
                }
            }
        }

        // The knowledge graph: nodes by name or id, and traversals from public and hidden starts.
        for node in &nodes {
            graph_get(who, &format!("/api/graph/kg/nodes/{}", encode(node)));
        }
        for p in restricted().filter(|p| sees(p)).step_by(3) {
            let entity = format!("{} Engine", capital(&p.secret));
            let answer = graph_get(who, &format!("/api/graph/kg/nodes/{}", encode(&entity)));
            assert_eq!(answer["status"], 200, "{who:?} sees {entity}: {answer}");
        }
        for node in [HIDDEN_ENTITY, PUBLIC_ENTITY] {
            let answer = graph_get(who, &format!("/api/graph/kg/nodes/{}", encode(node)));
            let expected = if node == PUBLIC_ENTITY || who.sees('a') { 200 } else { 404 };
            assert_eq!(answer["status"], expected, "{who:?} {node}: {answer}");
        }
        for start in ["PublicTopic00", "PublicTopic03", "PublicTopic05", PUBLIC_ENTITY, HIDDEN_ENTITY, "common", &restricted().next().unwrap().slug, "Quillab Engine"] {
            for depth in [1, 3, 5] {
                graph_get(who, &format!("/api/graph/kg/traverse?start={}&max_depth={depth}", encode(start)));
            }
            graph_get(who, &format!("/api/graph/kg/traverse?start={}&max_depth=2&min_shared_chunks=1", encode(start)));
        }
    }
}

/// Run a SPARQL query as `who` over `GET /sparql` (probed); returns the JSON answer.
fn sparql_rest(who: Who, query: &str) -> Value {
    let label = format!("SPARQL {query}");
    let get = probe(who, Request::new("GET", &format!("/sparql?query={}", encode(query))), query, &label);
    assert_eq!(get.status, 200, "{label}: {}", String::from_utf8_lossy(&get.body));
    serde_json::from_slice(&get.body).unwrap_or_else(|_| json!({ "text": String::from_utf8_lossy(&get.body) }))
}

/// [`sparql_rest`], plus the same query over both POST encodings (same answer) and with
/// `format=compact` (probed). The encodings share one evaluation path, so the suite uses
/// this for a few queries only (it keeps the suite and its mutation check quick).
fn sparql_rest_every_encoding(who: Who, query: &str) -> Value {
    let label = format!("SPARQL {query}");
    let get = probe(who, Request::new("GET", &format!("/sparql?query={}", encode(query))), query, &label);
    assert_eq!(get.status, 200, "{label}: {}", String::from_utf8_lossy(&get.body));
    let form = Request::new("POST", "/sparql")
        .with_header("content-type", "application/x-www-form-urlencoded")
        .with_body(format!("query={}", encode(query)));
    let direct = Request::new("POST", "/sparql").with_header("content-type", "application/sparql-query").with_body(query.as_bytes().to_vec());
    for request in [form, direct] {
        let post = probe(who, request, query, &format!("POST {label}"));
        assert_eq!(comparable(&post), comparable(&get), "{label}: POST and GET differ");
    }
    probe(who, Request::new("GET", &format!("/sparql?format=compact&query={}", encode(query))), query, &format!("{label} (compact)"));
    serde_json::from_slice(&get.body).unwrap_or_else(|_| json!({ "text": String::from_utf8_lossy(&get.body) }))
}

/// The values of `var` in a SELECT answer.
fn column(answer: &Value, var: &str) -> Vec<String> {
    answer["results"]["bindings"].as_array().unwrap().iter().filter_map(|b| b[var]["value"].as_str().map(str::to_string)).collect()
}

#[test]
fn sparql_route_answers_only_from_viewable_pages() {
    for who in EVERYONE {
        let seen = visible(who);
        let hidden_seen: Vec<&&Gen> = seen.iter().filter(|p| p.pattern.is_some()).collect();

        // Enumerations: every triple, titles, tags, concepts, entities.
        let all = sparql_rest_every_encoding(who, "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10000");
        assert!(column(&all, "s").len() < 10000, "the enumeration is complete");
        let titles: BTreeSet<String> = column(&sparql_rest_every_encoding(who, "SELECT ?page ?title WHERE { ?page dct:title ?title }"), "title").into_iter().collect();
        assert_eq!(titles, seen.iter().map(|p| p.title.clone()).collect(), "{who:?} titles");
        let tags: BTreeSet<String> =
            column(&sparql_rest(who, "SELECT DISTINCT ?tag WHERE { ?page wk:hasTag ?c . ?c skos:prefLabel ?tag }"), "tag").into_iter().collect();
        let mut expected_tags: BTreeSet<String> = (0..PUBLIC_PAGES).map(|n| format!("topic{n:02}")).collect();
        expected_tags.insert("common".into());
        for p in &hidden_seen {
            expected_tags.extend([p.secret.clone(), p.marker.clone()]);
        }
        assert_eq!(tags, expected_tags, "{who:?} tags");
        sparql_rest(who, "SELECT ?c ?label WHERE { ?c a skos:Concept ; skos:prefLabel ?label }");
        let entities: BTreeSet<String> =
            column(&sparql_rest(who, "SELECT ?e ?label ?page WHERE { ?e rdfs:label ?label ; prov:wasDerivedFrom ?page }"), "label").into_iter().collect();
        let mut expected_entities: BTreeSet<String> = hidden_seen.iter().map(|p| format!("{} Engine", capital(&p.secret))).collect();
        expected_entities.insert(PUBLIC_ENTITY.into());
        if who.sees('a') {
            expected_entities.insert(HIDDEN_ENTITY.into());
        }
        assert_eq!(entities, expected_entities, "{who:?} entities");
        sparql_rest(who, "SELECT ?s ?rel ?o WHERE { ?s ?rel ?o . ?rel rdfs:domain wk:Entity }");

        // Counts, with and without GROUP BY, against the counts of the caller's pages.
        let count = |q: &str| column(&sparql_rest(who, q), "n").first().cloned().unwrap_or_default();
        assert_eq!(count("SELECT (COUNT(?page) AS ?n) WHERE { ?page a wk:Page }"), seen.len().to_string(), "{who:?} pages");
        assert_eq!(count("SELECT (COUNT(*) AS ?n) WHERE { ?page wk:hasTag ?c . ?c skos:prefLabel \"common\" }"), seen.len().to_string(), "{who:?} tagged common");
        let hubs = seen.iter().filter(|p| p.kind == "hub").count();
        assert_eq!(count("SELECT (COUNT(DISTINCT ?page) AS ?n) WHERE { ?page a wk:Hub }"), hubs.to_string(), "{who:?} hubs");
        let per_cluster = sparql_rest_every_encoding(who, "SELECT ?cluster (COUNT(?page) AS ?n) WHERE { ?page wk:inCluster ?c . ?c skos:prefLabel ?cluster } GROUP BY ?cluster");
        let got: BTreeMap<String, String> = column(&per_cluster, "cluster").into_iter().zip(column(&per_cluster, "n")).collect();
        let mut expected: BTreeMap<String, String> = BTreeMap::new();
        for p in &seen {
            let n = expected.entry(p.cluster.clone()).or_insert_with(|| "0".into());
            *n = (n.parse::<usize>().unwrap() + 1).to_string();
        }
        assert_eq!(got, expected, "{who:?} pages per cluster");
        sparql_rest(who, "SELECT ?type (COUNT(?page) AS ?n) WHERE { ?page dct:title ?t ; a ?type } GROUP BY ?type");
        sparql_rest(who, "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p");
        sparql_rest(who, "SELECT ?author (COUNT(?page) AS ?n) (SAMPLE(?title) AS ?one) WHERE { ?page dct:creator ?author ; dct:title ?title } GROUP BY ?author");

        // ASK and the graph forms name hidden things outright.
        for (letter, _) in PATTERNS {
            let secret = &restricted().find(|p| p.pattern == Some(letter)).unwrap().secret;
            let ask = sparql_rest(who, &format!("ASK {{ ?page wk:hasTag ?c . ?c skos:prefLabel \"{secret}\" }}"));
            assert_eq!(ask["boolean"], json!(who.sees(letter)), "{who:?} ASK {secret}");
        }
        let describe = restricted().next().unwrap();
        sparql_rest(who, &format!("DESCRIBE <https://wiki.wikantik.com/id/page/{}>", describe.id));
        sparql_rest_every_encoding(who, "CONSTRUCT { ?page dct:title ?title ; wk:hasTag ?c } WHERE { ?page dct:title ?title ; wk:hasTag ?c }");
    }
}

// ---------------------------------------------------------------------------------------------
// A second, smaller wiki for two rules the 60-page corpus does not exercise.
//
// 1. Structure does not depend on which member a caller can see: sub-clusters whose
//    alphabetically first member is restricted, one seen only through its hub, one no caller
//    but Admin sees, a parent whose hub is hidden but whose sub-cluster is public, a headless
//    parent whose first member is restricted. A cluster is visible iff the caller may view its
//    hub or a member, and the edges between a sub-cluster and its parent iff both are.
// 2. A principal means the same on every surface: pages granted only to `Anonymous` or only to
//    `Guest` are seen by anonymous callers and by no key holder — not even by one whose key
//    names those principals — on REST, the graph routes, SPARQL and every MCP tool.
//
// The oracles are those above: no leak, counts and structure written by hand from the table
// below, and "own view" equality with an index built from only the pages the caller may view.
// ---------------------------------------------------------------------------------------------

/// Who may view a page of the structure wiki.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grant {
    Public,
    Alice,
    Engineering,
    Admin,
    AnonymousOnly,
    GuestOnly,
}

impl Grant {
    fn markup(self) -> &'static str {
        match self {
            Grant::Public => "",
            Grant::Alice => "[{ALLOW view Alice}]()",
            Grant::Engineering => "[{ALLOW view Engineering}]()",
            Grant::Admin => "[{ALLOW view Admin}]()",
            Grant::AnonymousOnly => "[{ALLOW view Anonymous}]()",
            Grant::GuestOnly => "[{ALLOW view Guest}]()",
        }
    }
}

/// The callers of the structure wiki.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visitor {
    Anonymous,
    /// A key without principals.
    KeyHolder,
    Alice,
    Engineering,
    /// A key whose principal list names `Anonymous` and `Guest`: still a key holder.
    NotLoggedInKey,
    Admin,
}

const VISITORS: [Visitor; 6] = [Visitor::Anonymous, Visitor::KeyHolder, Visitor::Alice, Visitor::Engineering, Visitor::NotLoggedInKey, Visitor::Admin];

impl Visitor {
    /// Written from the principal rules (docs/SECURITY.md, "Principals") by hand.
    fn sees(self, grant: Grant) -> bool {
        match grant {
            Grant::Public => true,
            Grant::Alice => matches!(self, Visitor::Alice | Visitor::Admin),
            Grant::Engineering => matches!(self, Visitor::Engineering | Visitor::Admin),
            Grant::Admin => self == Visitor::Admin,
            Grant::AnonymousOnly | Grant::GuestOnly => matches!(self, Visitor::Anonymous | Visitor::Admin),
        }
    }

    fn principals(self) -> &'static [&'static str] {
        match self {
            Visitor::Anonymous | Visitor::KeyHolder => &[],
            Visitor::Alice => &["Alice"],
            Visitor::Engineering => &["Engineering"],
            Visitor::NotLoggedInKey => &["Anonymous", "Guest"],
            Visitor::Admin => &["Admin"],
        }
    }
}

/// (slug, type, cluster, grant). Cluster names with `quill` in them are known only to the
/// callers who see one of their pages. The first member by slug of `atlas/aardvark-first`,
/// `burrow` and `burrow/den` is restricted; `atlas/quillhubonly` is seen by Engineering only
/// through its hub; `vault`'s hub is Admin's, its sub-cluster public.
const STRUCTURE_PAGES: [(&str, &str, &str, Grant); 16] = [
    ("AtlasHub", "hub", "atlas", Grant::Public),
    ("AardvarkLedger", "article", "atlas/aardvark-first", Grant::Alice),
    ("BisonNotes", "article", "atlas/aardvark-first", Grant::Public),
    ("CondorHub", "hub", "atlas/quillhubonly", Grant::Engineering),
    ("AlbatrossLog", "article", "atlas/quillhubonly", Grant::Alice),
    ("AntelopeVault", "article", "atlas/quillsealed", Grant::Admin),
    ("AdderLobby", "article", "atlas/quillanonlobby", Grant::AnonymousOnly),
    ("BeetleLobby", "runbook", "atlas/quillanonlobby", Grant::GuestOnly),
    ("AardwolfMemo", "article", "burrow", Grant::Alice),
    ("BadgerMemo", "article", "burrow", Grant::Public),
    ("AnteaterDen", "article", "burrow/den", Grant::Engineering),
    ("CricketDen", "design", "burrow/den", Grant::Public),
    ("VaultHub", "hub", "vault", Grant::Admin),
    ("OpenPage", "article", "vault/open", Grant::Public),
    ("LobbyNotice", "article", "quillfoyer", Grant::AnonymousOnly),
    ("GuestNotice", "article", "quillfoyer", Grant::GuestOnly),
];

/// One page of the structure wiki.
struct StructurePage {
    slug: &'static str,
    kind: &'static str,
    cluster: &'static str,
    grant: Grant,
    id: String,
    title: String,
    /// The word only this page carries (restricted pages; empty for public ones).
    secret: String,
}

fn structure_pages() -> Vec<StructurePage> {
    STRUCTURE_PAGES
        .iter()
        .enumerate()
        .map(|(n, &(slug, kind, cluster, grant))| {
            let secret = if grant == Grant::Public { String::new() } else { format!("quill{}", slug.to_lowercase()) };
            StructurePage { slug, kind, cluster, grant, id: format!("01KY{n:022}"), title: format!("{slug} Notes {secret}").trim().to_string(), secret }
        })
        .collect()
}

fn structure_page_text(p: &StructurePage, all: &[StructurePage]) -> String {
    let public: Vec<&StructurePage> = all.iter().filter(|q| q.grant == Grant::Public).collect();
    let at = public.iter().position(|q| q.slug == p.slug).map_or(0, |i| i + 1);
    let link = public[at % public.len()].slug;
    let secret_tag = if p.secret.is_empty() { String::new() } else { format!("  - {}\n", p.secret) };
    format!(
        "---\ncanonical_id: {id}\ntitle: {title}\ntype: {kind}\ncluster: {cluster}\n\
summary: Notes on ledger publishing and shard retrieval {secret}.\ntags:\n  - structure\n{secret_tag}related:\n  - {link}\n---\n\n{acl}\n\n\
# {title}\n\nThe {secret} notes cover ledger publishing, shard retrieval and briefing budgets. See [{link}]().\n",
        id = p.id,
        title = p.title,
        kind = p.kind,
        cluster = p.cluster,
        secret = p.secret,
        acl = p.grant.markup(),
    )
}

struct StructureWiki {
    pages: Vec<StructurePage>,
    index: PathBuf,
    views: Vec<(Visitor, PathBuf)>,
    config: ServiceConfig,
    keys: Vec<(Visitor, String)>,
}

fn structure_wiki() -> &'static StructureWiki {
    static WIKI: OnceLock<StructureWiki> = OnceLock::new();
    WIKI.get_or_init(|| {
        select_mutation();
        let pages = structure_pages();
        let files: Vec<(String, String)> = pages.iter().map(|p| (format!("{}.md", p.slug), structure_page_text(p, &pages))).collect();
        let modified = Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_790_000_000));
        let index = build_wiki_with_vectors_modified_at("acl-structure", &files, modified);
        let views = VISITORS
            .iter()
            .map(|v| {
                let mine: Vec<(String, String)> = pages.iter().zip(&files).filter(|(p, _)| v.sees(p.grant)).map(|(_, f)| f.clone()).collect();
                (*v, build_wiki_modified_at(&format!("acl-structure-view-{v:?}"), &mine, modified))
            })
            .collect();
        let mut lines = Vec::new();
        let mut keys = Vec::new();
        for (n, v) in VISITORS.iter().enumerate().filter(|(_, v)| **v != Visitor::Anonymous) {
            let (key, line) = mint_key_with([90 + n as u8; 32], &[Scope::McpRead], v.principals(), Some(&format!("{v:?}"))).unwrap();
            lines.push(line);
            keys.push((*v, key));
        }
        let ring = KeyRing::parse(&lines.join("\n")).unwrap();
        let config = ServiceConfig {
            rest: RestConfig { keys: ring.clone(), ..RestConfig::default() },
            mcp: McpConfig { access: AccessConfig { keys: ring, allow_unrestricted: true }, ..McpConfig::default() },
        };
        StructureWiki { pages, index, views, config, keys }
    })
}

fn seen_by(v: Visitor) -> Vec<&'static StructurePage> {
    structure_wiki().pages.iter().filter(|p| v.sees(p.grant)).collect()
}

/// Every cluster (parents included) with the pages `v` may view among its transitive members,
/// written from the table: a cluster is visible iff that set is not empty (the hub is a member).
fn clusters_seen_by(v: Visitor) -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut out: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for p in &structure_wiki().pages {
        let mut names = vec![p.cluster.to_string()];
        if let Some((parent, _)) = p.cluster.split_once('/') {
            names.push(parent.to_string());
        }
        for name in names {
            let members = out.entry(name).or_default();
            if v.sees(p.grant) {
                members.insert(p.slug);
            }
        }
    }
    out.retain(|_, members| !members.is_empty());
    out
}

/// (sub-cluster, parent) pairs `v` sees: both clusters visible.
fn sub_cluster_pairs_seen_by(v: Visitor) -> BTreeSet<(String, String)> {
    let seen = clusters_seen_by(v);
    seen.keys()
        .filter_map(|name| name.split_once('/').map(|(parent, _)| (name.clone(), parent.to_string())))
        .filter(|(_, parent)| seen.contains_key(parent))
        .collect()
}

/// Strings that must never reach `v` (except what it sent): each hidden page's secret, slug,
/// title and id, and the `quill…` names of the clusters it does not see.
fn structure_forbidden(v: Visitor, sent: &str) -> Vec<String> {
    let sent = sent.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for p in structure_wiki().pages.iter().filter(|p| !v.sees(p.grant)) {
        out.extend([p.secret.clone(), p.slug.to_lowercase(), p.title.to_lowercase(), p.id.to_lowercase()]);
    }
    let seen = clusters_seen_by(v);
    for p in &structure_wiki().pages {
        if !seen.contains_key(p.cluster) {
            out.extend(p.cluster.split('/').filter(|s| s.starts_with("quill")).map(str::to_string));
        }
    }
    out.sort();
    out.dedup();
    out.retain(|s| !sent.contains(s.as_str()));
    out
}

fn structure_serve_on(dir: &Path, request: &Request) -> Response {
    thread_local! {
        static READERS: RefCell<HashMap<PathBuf, Rc<IndexReader<DirStore>>>> = RefCell::new(HashMap::new());
    }
    let reader = READERS.with(|r| r.borrow_mut().entry(dir.to_path_buf()).or_insert_with(|| Rc::new(open(dir))).clone());
    block_on(handle(Ok(&*reader), request, &structure_wiki().config))
}

fn structure_view(v: Visitor) -> &'static Path {
    &structure_wiki().views.iter().find(|(w, _)| *w == v).unwrap().1
}

/// Send `request` as `v`: no leak, and (with `own_view`) the same answer as from `v`'s own
/// view of the wiki.
fn structure_probe(v: Visitor, request: Request, sent: &str, label: &str, own_view: bool) -> Response {
    let wiki = structure_wiki();
    let request = match wiki.keys.iter().find(|(w, _)| *w == v) {
        Some((_, key)) => request.with_header("Authorization", &format!("Bearer {key}")),
        None => request,
    };
    let full = structure_serve_on(&wiki.index, &request);
    let text = String::from_utf8_lossy(&full.body).to_lowercase();
    for word in structure_forbidden(v, sent) {
        if let Some(at) = text.find(&word) {
            let context: String = text[at.saturating_sub(200)..].chars().take(400).collect();
            panic!("{label} leaked {word:?} to {v:?}: …{context}…");
        }
    }
    if own_view {
        let own = structure_serve_on(structure_view(v), &request);
        assert_eq!(
            (full.status, comparable(&full)),
            (own.status, comparable(&own)),
            "{label}: {v:?} gets a different answer than from an index of only the pages it may view"
        );
    }
    full
}

/// `GET target` as `v` (own view checked on the graph and SPARQL routes); status and JSON body.
fn structure_get(v: Visitor, target: &str) -> (u16, Value) {
    let decoded = wikantik::http::parse_form(target.split_once('?').map_or("", |(_, q)| q));
    let path = target.split('?').next().unwrap_or(target);
    let sent: String = decoded.iter().map(|(k, v)| format!("{k}={v} ")).chain([wikantik::markdown::url_decode(path, false)]).collect();
    let own_view = path.starts_with("/api/graph/") || path == "/sparql";
    let response = structure_probe(v, Request::new("GET", target), &sent, &format!("GET {target}"), own_view);
    (response.status, serde_json::from_slice(&response.body).unwrap_or(Value::Null))
}

fn structure_sparql(v: Visitor, query: &str) -> Value {
    let (status, body) = structure_get(v, &format!("/sparql?query={}", encode(query)));
    assert_eq!(status, 200, "{v:?} {query}: {body}");
    body
}

/// Call a tool as `v` (own view checked for [`OWN_VIEW_TOOLS`]); (isError, payload).
fn structure_tool(v: Visitor, name: &str, args: Value) -> (bool, Value) {
    let own_view = OWN_VIEW_TOOLS.contains(&name);
    let response = structure_probe(v, mcp_body("tools/call", json!({ "name": name, "arguments": args })), &args.to_string(), &format!("{name} {args}"), own_view);
    assert_eq!(response.status, 200, "{name}: {}", String::from_utf8_lossy(&response.body));
    let reply: Value = serde_json::from_slice(&response.body).unwrap();
    let result = &reply["result"];
    let payload = result.get("structuredContent").cloned().unwrap_or_else(|| json!(result["content"][0]["text"]));
    (result["isError"].as_bool().unwrap_or(false), payload)
}

/// Argument sets naming the structure wiki's pages and clusters, for every tool.
fn structure_tool_args(name: &str) -> Vec<Value> {
    let pages = &structure_wiki().pages;
    let slugs: Vec<&str> = pages.iter().map(|p| p.slug).collect();
    let ids: Vec<&str> = pages.iter().map(|p| p.id.as_str()).collect();
    let clusters: Vec<String> = clusters_seen_by(Visitor::Admin).into_keys().collect();
    let mut out = match name {
        "assemble_bundle" => vec![json!({ "query": "ledger publishing shard retrieval", "k": 20 })],
        "get_briefing" => vec![json!({ "pins": slugs, "budget": 24000 }), json!({ "clusters": clusters[..10], "prompt": "ledger publishing", "budget": 24000 })],
        "retrieve_context" => vec![json!({ "query": "ledger publishing shard retrieval", "maxPages": 20, "chunksPerPage": 5 })],
        "read_pages" => vec![json!({ "slugs": slugs })],
        "get_page" => slugs.iter().map(|s| json!({ "slug": s })).collect(),
        "list_pages" => {
            let mut v = vec![json!({ "limit": 100 })];
            v.extend(clusters.iter().map(|c| json!({ "cluster": c, "limit": 100 })));
            v
        }
        "list_metadata_values" => ["type", "tags", "cluster", "title"].iter().map(|f| json!({ "field": f })).collect(),
        "list_clusters" => vec![json!({ "limit": 100 })],
        "list_tags" => vec![json!({ "limit": 200 })],
        "list_pages_by_filter" => clusters.iter().map(|c| json!({ "cluster": c })).chain([json!({ "tag": "structure" })]).collect(),
        "get_page_by_id" => ids.iter().map(|i| json!({ "id": i })).collect(),
        "get_page_for_agent" => ids.iter().map(|i| json!({ "canonical_id": i })).collect(),
        "list_stale_citations" | "discover_schema" | "get_ontology" => vec![json!({})],
        "query_nodes" => vec![json!({ "limit": 200 })],
        "get_node" => clusters.iter().map(String::as_str).chain(slugs.iter().copied()).map(|n| json!({ "node": n })).collect(),
        "traverse" => clusters
            .iter()
            .map(String::as_str)
            .chain(["BisonNotes", "AdderLobby"])
            .flat_map(|n| [json!({ "start_node": n, "max_depth": 2, "min_tier": "human" }), json!({ "start_node": n, "max_depth": 2 })])
            .collect(),
        "search_knowledge" => vec![json!({ "query": "ledger" }), json!({ "query": "atlas" })],
        "find_similar" => vec![json!({ "node": "BisonNotes", "limit": 100 }), json!({ "node": "AdderLobby", "limit": 100 })],
        "sparql_query" => vec![
            json!({ "query": "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10000" }),
            json!({ "query": "SELECT ?sub ?parent WHERE { ?sub dct:isPartOf ?parent . ?sub a skos:Concept }" }),
        ],
        other => panic!("no arguments written for new tool {other}: add some to the structure wiki of the ACL leak suite"),
    };
    out.push(json!({}));
    out
}

#[test]
fn structure_wiki_has_the_intended_visibility() {
    let wiki = structure_wiki();
    let table = block_on(open(&wiki.index).pages()).unwrap();
    for v in VISITORS {
        let principals: Vec<String> = v.principals().iter().map(|s| s.to_string()).collect();
        let caller = if v == Visitor::Anonymous { Caller::anonymous() } else { Caller::for_key(&principals, None) };
        let actual: BTreeSet<&str> = table.pages.iter().filter(|p| caller.can_view(p)).map(|p| p.slug.as_str()).collect();
        let expected: BTreeSet<&str> = seen_by(v).iter().map(|p| p.slug).collect();
        assert_eq!(actual, expected, "{v:?}");
    }
    // The cases the wiki exists for are really there.
    let first = |cluster: &str| wiki.pages.iter().filter(|p| p.cluster == cluster).min_by_key(|p| p.slug).map(|p| (p.slug, p.grant));
    for cluster in ["atlas/aardvark-first", "burrow", "burrow/den"] {
        assert!(first(cluster).is_some_and(|(_, g)| g != Grant::Public), "{cluster}'s first member is restricted");
    }
    assert!(!sub_cluster_pairs_seen_by(Visitor::KeyHolder).contains(&("atlas/quillanonlobby".into(), "atlas".into())));
    assert!(sub_cluster_pairs_seen_by(Visitor::Anonymous).contains(&("atlas/quillanonlobby".into(), "atlas".into())));
}

#[test]
fn sub_cluster_edges_do_not_depend_on_the_first_members_acl() {
    let concept_names = |edges: &Value, end: &str, predicate: &str| -> BTreeSet<String> {
        edges.as_array().into_iter().flatten().filter(|e| e["relationshipType"] == predicate).filter_map(|e| e[end].as_str().map(str::to_string)).collect()
    };
    for v in VISITORS {
        let seen = clusters_seen_by(v);
        let pairs = sub_cluster_pairs_seen_by(v);

        // The cluster routes.
        let (status, listed) = structure_get(v, "/api/graph/clusters");
        assert_eq!(status, 200);
        let listed: BTreeMap<String, (u64, BTreeSet<String>)> = listed["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let subs = c["subClusters"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect();
                (c["name"].as_str().unwrap().to_string(), (c["memberCount"].as_u64().unwrap(), subs))
            })
            .collect();
        let expected: BTreeMap<String, (u64, BTreeSet<String>)> = seen
            .iter()
            .map(|(name, members)| {
                let subs = pairs.iter().filter(|(_, parent)| parent == name).map(|(sub, _)| sub.clone()).collect();
                (name.clone(), (members.len() as u64, subs))
            })
            .collect();
        assert_eq!(listed, expected, "{v:?} /api/graph/clusters");
        for name in clusters_seen_by(Visitor::Admin).keys() {
            let (status, _) = structure_get(v, &format!("/api/graph/clusters/{}", encode(name)));
            assert_eq!(status, if seen.contains_key(name) { 200 } else { 404 }, "{v:?} /api/graph/clusters/{name}");
        }

        // The knowledge graph: each cluster's concept and its edges to parent and sub-clusters.
        for name in clusters_seen_by(Visitor::Admin).keys() {
            let (status, node) = structure_get(v, &format!("/api/graph/kg/nodes/{}", encode(name)));
            if !seen.contains_key(name) {
                assert_eq!(status, 404, "{v:?} concept {name}: {node}");
                continue;
            }
            assert_eq!(status, 200, "{v:?} concept {name}: {node}");
            let subs: BTreeSet<String> = pairs.iter().filter(|(_, parent)| parent == name).map(|(sub, _)| sub.clone()).collect();
            let parents: BTreeSet<String> = pairs.iter().filter(|(sub, _)| sub == name).map(|(_, parent)| parent.clone()).collect();
            let direct: BTreeSet<String> = seen_by(v).iter().filter(|p| p.cluster == name).map(|p| p.slug.to_string()).collect();
            let contains = concept_names(&node["outbound_edges"], "targetName", "contains");
            assert_eq!(contains, subs.union(&direct).cloned().collect(), "{v:?} {name} contains");
            let part_of_me = concept_names(&node["inbound_edges"], "sourceName", "part_of");
            assert_eq!(part_of_me, subs.union(&direct).cloned().collect(), "{v:?} part_of {name}");
            assert_eq!(concept_names(&node["outbound_edges"], "targetName", "part_of"), parents, "{v:?} {name} part_of");
            assert_eq!(concept_names(&node["inbound_edges"], "sourceName", "contains"), parents, "{v:?} contains {name}");

            let (status, walk) = structure_get(v, &format!("/api/graph/kg/traverse?start={}&max_depth=1&min_tier=human", encode(name)));
            assert_eq!(status, 200, "{v:?} traverse {name}: {walk}");
            let reached: BTreeSet<String> = walk["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap().to_string()).collect();
            let mut expected: BTreeSet<String> = subs.union(&direct).chain(&parents).cloned().collect();
            expected.insert(name.clone());
            assert_eq!(reached, expected, "{v:?} traverse {name}");
        }

        // The RDF projection: every way of asking for the structure.
        let wanted: BTreeSet<(String, String)> = pairs.clone();
        for (pattern, label) in [
            ("?sub wk:partOf ?parent", "wk:partOf"),
            ("?sub dct:isPartOf ?parent", "dct:isPartOf"),
            ("?parent wk:contains ?sub", "wk:contains"),
            ("?parent dct:hasPart ?sub", "dct:hasPart"),
            ("?sub skos:broader ?parent", "skos:broader"),
        ] {
            let answer = structure_sparql(v, &format!("SELECT ?s ?p WHERE {{ {pattern} . ?sub a skos:Concept ; skos:prefLabel ?s . ?parent skos:prefLabel ?p }}"));
            let got: BTreeSet<(String, String)> = column(&answer, "s").into_iter().zip(column(&answer, "p")).collect();
            assert_eq!(got, wanted, "{v:?} SPARQL {label}");
        }
        let count = structure_sparql(v, "SELECT (COUNT(*) AS ?n) WHERE { ?sub wk:partOf ?parent . ?sub a skos:Concept }");
        assert_eq!(column(&count, "n"), vec![pairs.len().to_string()], "{v:?} SPARQL count of sub-cluster edges");

        // The same through the MCP tools (own view checked inside).
        for name in clusters_seen_by(Visitor::Admin).keys() {
            let (is_error, _) = structure_tool(v, "get_node", json!({ "node": name }));
            assert_eq!(!is_error, seen.contains_key(name), "{v:?} get_node {name}");
            structure_tool(v, "traverse", json!({ "start_node": name, "max_depth": 2, "min_tier": "human" }));
        }
        let (_, listed) = structure_tool(v, "list_clusters", json!({ "limit": 100 }));
        let names: BTreeSet<String> = listed["clusters"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect();
        assert_eq!(names, seen.keys().cloned().collect(), "{v:?} list_clusters");
    }
}

#[test]
fn sparql_hides_anonymous_only_pages_from_key_holders() {
    let pages = &structure_wiki().pages;
    for v in VISITORS {
        let seen: BTreeSet<String> = seen_by(v).iter().map(|p| p.title.clone()).collect();
        let titles: BTreeSet<String> = column(&structure_sparql(v, "SELECT ?t WHERE { ?page dct:title ?t }"), "t").into_iter().collect();
        assert_eq!(titles, seen, "{v:?} SPARQL titles");
        let count = structure_sparql(v, "SELECT (COUNT(?page) AS ?n) WHERE { ?page a wk:Page }");
        assert_eq!(column(&count, "n"), vec![seen.len().to_string()], "{v:?} SPARQL page count");
        let (_, sparql_tool) = structure_tool(v, "sparql_query", json!({ "query": "SELECT ?t WHERE { ?page dct:title ?t }", "format": "compact" }));
        let tool_titles: BTreeSet<String> = serde_json::from_str::<Value>(sparql_tool.as_str().unwrap_or("[]"))
            .unwrap_or(Value::Null)
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["t"].as_str().map(str::to_string))
            .collect();
        assert_eq!(tool_titles, seen, "{v:?} sparql_query titles");

        // Every surface agrees with SPARQL, page by page.
        for p in pages {
            let sees = v.sees(p.grant);
            let ask = structure_sparql(v, &format!("ASK {{ <https://wiki.wikantik.com/id/page/{}> ?p ?o }}", p.id));
            assert_eq!(ask["boolean"], json!(sees), "{v:?} SPARQL ASK {}", p.slug);
            let (_, got) = structure_tool(v, "get_page", json!({ "slug": p.slug }));
            assert_eq!(got.get("exists") != Some(&json!(false)), sees, "{v:?} get_page {}: {got}", p.slug);
            let (status, _) = structure_get(v, &format!("/api/graph/pages/{}/neighbours", p.slug));
            assert_eq!(status == 200, sees, "{v:?} neighbours of {}", p.slug);
            let (status, _) = structure_get(v, &format!("/api/graph/kg/nodes/{}", p.slug));
            assert_eq!(status == 200, sees, "{v:?} KG node {}", p.slug);
            if p.grant != Grant::Public {
                // The page's own secret word finds it for exactly the callers who may view it.
                let (_, bundle) = structure_get(v, &format!("/api/bundle?q={}&mode=lexical", encode(&p.secret)));
                let cited = bundle["sections"].as_array().into_iter().flatten().any(|s| s["canonicalId"] == json!(p.id));
                assert_eq!(cited, sees, "{v:?} bundle for {}: {bundle}", p.slug);
            }
        }
    }
    // A key holder's "not found" for an Anonymous-only page is that of a page that does not exist.
    for v in [Visitor::KeyHolder, Visitor::NotLoggedInKey] {
        let (_, real) = structure_tool(v, "get_page", json!({ "slug": "AdderLobby" }));
        let (_, ghost) = structure_tool(v, "get_page", json!({ "slug": "ZdderLobby" }));
        assert_eq!(real.to_string().replace("AdderLobby", "ZdderLobby"), ghost.to_string(), "{v:?}");
    }
}

#[test]
fn no_surface_leaks_the_structure_wiki() {
    let pages = &structure_wiki().pages;
    let clusters: Vec<String> = clusters_seen_by(Visitor::Admin).into_keys().collect();
    let mut targets: Vec<String> = vec![
        "/health".into(),
        "/api/bundle?q=ledger+publishing+shard+retrieval&k=50".into(),
        "/api/bundle?q=notes+ledger&mode=lexical&k=50".into(),
        format!("/api/briefing?clusters={}&budget=24000", clusters[..10].join(",")),
        "/api/briefing?prompt=ledger+publishing&budget=24000&format=md".into(),
        format!("/api/briefing?pins={}&budget=24000", pages.iter().map(|p| p.slug).collect::<Vec<_>>().join(",")),
        "/api/graph/clusters".into(),
    ];
    for name in &clusters {
        targets.push(format!("/api/graph/clusters/{}", encode(name)));
        targets.push(format!("/api/graph/kg/nodes/{}", encode(name)));
        targets.push(format!("/api/graph/kg/traverse?start={}&max_depth=3", encode(name)));
        targets.push(format!("/api/graph/kg/traverse?start={}&max_depth=3&min_tier=human", encode(name)));
    }
    for p in pages {
        targets.push(format!("/api/graph/pages/{}/neighbours?direction=both&depth=3&limit=500", p.slug));
        targets.push(format!("/api/graph/kg/nodes/{}", p.slug));
        targets.push(format!("/api/graph/kg/nodes/{}", p.id));
    }
    for query in [
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10000",
        "SELECT ?c ?label WHERE { ?c a skos:Concept ; skos:prefLabel ?label }",
        "SELECT ?cluster (COUNT(?page) AS ?n) WHERE { ?page wk:inCluster ?c . ?c skos:prefLabel ?cluster } GROUP BY ?cluster",
        "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p",
        "CONSTRUCT { ?s dct:isPartOf ?o } WHERE { ?s dct:isPartOf ?o }",
    ] {
        targets.push(format!("/sparql?query={}", encode(query)));
    }
    let tools = structure_probe(Visitor::Anonymous, mcp_body("tools/list", json!({})), "", "tools/list", false);
    let reply: Value = serde_json::from_slice(&tools.body).unwrap();
    let names: Vec<String> = reply["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names.len(), 21, "{names:?}");
    for v in VISITORS {
        for target in &targets {
            structure_get(v, target);
        }
        for name in &names {
            for args in structure_tool_args(name) {
                structure_tool(v, name, args);
            }
        }
    }
}

#[test]
fn structure_counts_match_what_the_caller_may_see() {
    for v in VISITORS {
        let seen = seen_by(v);
        let (_, listed) = structure_tool(v, "list_pages", json!({ "limit": 100 }));
        assert_eq!(listed["totalMatched"].as_u64(), Some(seen.len() as u64), "{v:?} list_pages: {listed}");
        let clusters = clusters_seen_by(v);
        let (_, listed) = structure_tool(v, "list_clusters", json!({ "limit": 100 }));
        let counts: BTreeMap<String, u64> =
            listed["clusters"].as_array().unwrap().iter().map(|c| (c["name"].as_str().unwrap().to_string(), c["articleCount"].as_u64().unwrap())).collect();
        let expected: BTreeMap<String, u64> = clusters.iter().map(|(c, m)| (c.clone(), m.len() as u64)).collect();
        assert_eq!(counts, expected, "{v:?} list_clusters");
        let (_, tags) = structure_tool(v, "list_tags", json!({ "limit": 200 }));
        let structure = tags["tags"].as_array().unwrap().iter().find(|t| t["tag"] == "structure").expect("tag structure");
        assert_eq!(structure["count"].as_u64(), Some(seen.len() as u64), "{v:?} list_tags structure");
        let (_, types) = structure_tool(v, "list_metadata_values", json!({ "field": "type" }));
        let sum: u64 = types["values"].as_array().unwrap().iter().map(|t| t["count"].as_u64().unwrap()).sum();
        assert_eq!(sum, seen.len() as u64, "{v:?} list_metadata_values type");
        let count = structure_sparql(v, "SELECT (COUNT(*) AS ?n) WHERE { ?page wk:hasTag ?c . ?c skos:prefLabel \"structure\" }");
        assert_eq!(column(&count, "n"), vec![seen.len().to_string()], "{v:?} SPARQL tagged structure");
    }
}

// ---------------------------------------------------------------------------------------------
// MCP resources, completion and prompts. Resources and slug completions depend on nothing but
// the pages the caller may view, so besides the leak check they must equal the answers from the
// caller's own view of the wiki (`probe`); prompts retrieve over the whole build's statistics
// (like the retrieval tools), so they get the leak check and hand-written expectations.
// ---------------------------------------------------------------------------------------------

/// The `ref` of the page template in `completion/complete`.
fn page_template_ref() -> Value {
    json!({ "type": "ref/resource", "uri": "wiki://page/{slug}" })
}

/// One MCP request as `who` (2025-06-18), leak-checked; the whole JSON-RPC reply.
fn mcp(who: Who, method: &str, params: Value) -> Value {
    let response = serve(&authorize(who, mcp_body(method, params.clone())));
    assert_eq!(response.status, 200, "{method}: {}", String::from_utf8_lossy(&response.body));
    check_leaks(who, &format!("{method} {params}"), &params.to_string(), &response);
    serde_json::from_slice(&response.body).unwrap()
}

/// [`mcp`] plus the own-view oracle.
fn mcp_probe(who: Who, method: &str, params: Value) -> Value {
    let response = probe(who, mcp_body(method, params.clone()), &params.to_string(), &format!("{method} {params}"));
    serde_json::from_slice(&response.body).unwrap()
}

/// The slugs `who` may view, in slug order.
fn visible_slugs(who: Who) -> Vec<String> {
    let mut slugs: Vec<String> = visible(who).iter().map(|p| p.slug.clone()).collect();
    slugs.sort();
    slugs
}

#[test]
fn resources_list_only_the_pages_the_caller_may_view() {
    for who in EVERYONE {
        let mut listed = Vec::new();
        let mut params = json!({});
        let mut pages = 0;
        loop {
            let reply = mcp_probe(who, "resources/list", params);
            let result = &reply["result"];
            let page = result["resources"].as_array().unwrap();
            assert!(page.len() <= 7, "{who:?}: page of {}", page.len());
            listed.extend(page.iter().map(|r| r["name"].as_str().unwrap().to_string()));
            pages += 1;
            match result.get("nextCursor") {
                Some(cursor) => params = json!({ "cursor": cursor }),
                None => break,
            }
        }
        let want = visible_slugs(who);
        assert_eq!(listed, want, "{who:?}");
        assert_eq!(pages, want.len().div_ceil(7), "{who:?}");
    }
    // A cursor naming a restricted slug continues exactly where a missing one would.
    let page = restricted().next().unwrap();
    let cursor = |slug: &str| json!({ "cursor": base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, slug) });
    for who in EVERYONE.into_iter().filter(|w| !w.sees(page.pattern.unwrap())) {
        let real = mcp_probe(who, "resources/list", cursor(&page.slug));
        let ghost = mcp_probe(who, "resources/list", cursor(&format!("{}0", page.slug)));
        assert_eq!(real["result"]["resources"], ghost["result"]["resources"], "{who:?}");
    }
}

#[test]
fn resources_read_reveals_a_page_only_to_a_caller_who_may_view_it() {
    for who in EVERYONE {
        for p in &fixture().pages {
            let reply = mcp_probe(who, "resources/read", json!({ "uri": format!("wiki://page/{}", p.slug) }));
            if p.pattern.is_none_or(|l| who.sees(l)) {
                let text = reply["result"]["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("{who:?} {}: {reply}", p.slug));
                assert!(text.contains(&p.title), "{who:?} {}", p.slug);
                assert!(p.secret.is_empty() || text.contains(&p.secret), "{who:?} {}", p.slug);
            } else {
                assert_eq!(reply["error"]["code"], -32002, "{who:?} {}: {reply}", p.slug);
            }
        }
    }
}

#[test]
fn page_slugs_complete_only_to_viewable_pages() {
    for who in EVERYONE {
        for prefix in ["", "z", "Zorb", "zorbaa", "PUBLIC", "quill"] {
            let params = json!({ "ref": page_template_ref(), "argument": { "name": "slug", "value": prefix } });
            let completion = mcp_probe(who, "completion/complete", params)["result"]["completion"].clone();
            let want: Vec<String> = visible_slugs(who).into_iter().filter(|s| s.to_lowercase().starts_with(&prefix.to_lowercase())).collect();
            assert_eq!(completion["total"], json!(want.len()), "{who:?} {prefix}");
            assert_eq!(completion["values"], json!(want), "{who:?} {prefix}");
        }
        // The briefing prompt's pins complete over the same slugs.
        let params = json!({ "ref": { "type": "ref/prompt", "name": "briefing" }, "argument": { "name": "pins", "value": "PublicTopic00, zorb" } });
        let values = mcp_probe(who, "completion/complete", params)["result"]["completion"]["values"].clone();
        let want: Vec<String> = visible_slugs(who).into_iter().filter(|s| s.starts_with("Zorb")).map(|s| format!("PublicTopic00, {s}")).collect();
        assert_eq!(values, json!(want), "{who:?}");
    }
}

/// The text of a `prompts/get` as `who`.
fn prompt_text(who: Who, name: &str, arguments: Value) -> String {
    let reply = mcp(who, "prompts/get", json!({ "name": name, "arguments": arguments }));
    reply["result"]["messages"][0]["content"]["text"].as_str().unwrap_or_else(|| panic!("{who:?} {name}: {reply}")).to_string()
}

#[test]
fn prompts_reveal_a_page_only_to_a_caller_who_may_view_it() {
    let r: Vec<&Gen> = restricted().collect();
    let slugs: Vec<&str> = r.iter().map(|p| p.slug.as_str()).collect();
    let vaults: Vec<String> = PATTERNS.iter().map(|(l, _)| format!("zorbvault{l}")).collect();
    for who in EVERYONE {
        prompt_text(who, "briefing", json!({ "pins": slugs[..25].join(","), "prompt": "ledger publishing" }));
        prompt_text(who, "briefing", json!({ "clusters": "commons", "prompt": "engine figures secret" }));
        for chunk in vaults.chunks(10) {
            prompt_text(who, "briefing", json!({ "clusters": chunk.join(", "), "prompt": "ledger publishing" }));
        }
        for question in ["ledger publishing shard retrieval", "engine figures secret", "quill ledger"] {
            prompt_text(who, "ground", json!({ "question": question }));
        }
        // Each caller who may view a page gets it: pinned, it is standing context with its secret
        // word; asked about by its marker, the grounding cites it.
        for p in r.iter().step_by(3) {
            let briefing = prompt_text(who, "briefing", json!({ "pins": p.slug }));
            let ground = prompt_text(who, "ground", json!({ "question": format!("{} ledger figures", p.marker) }));
            if who.sees(p.pattern.unwrap()) {
                assert!(briefing.contains(&p.secret), "{who:?} briefing pins {}: {briefing}", p.slug);
                assert!(ground.contains(&format!("Cite as `{} @ ", p.slug)), "{who:?} ground {}: {ground}", p.marker);
            } else {
                assert!(briefing.contains(&format!("unknown pin: {}", p.slug)), "{who:?} {}: {briefing}", p.slug);
            }
        }
    }
}
