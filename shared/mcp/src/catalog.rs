//! The 21 read-only tools of the Knowledge MCP server (REFERENCE §3.3) and the server's routing
//! `instructions`.
//!
//! Every `inputSchema` carries the reference's property names, types, defaults and limits, so a
//! [`ToolHost`](super::ToolHost) receives arguments that are already validated and defaulted and
//! only has to map them onto a service. Where the reference parses a value case-insensitively
//! (`mode`, `scope_mode`, `type`) the schema says `string` and the host keeps the reference's
//! error text; where it matches exactly (`format`, `direction`, `min_tier`,
//! `provenance_filter`) the schema declares an `enum`, so a typo becomes a readable validation
//! error rather than a silently empty result. No tool declares an `outputSchema`: the reference's
//! advertised ones name keys its payloads do not use (REFERENCE "⚠ output-schema examples"), and a
//! wrong `outputSchema` would make strict clients reject correct results.
//!
//! The order below is the escalation ladder of [`INSTRUCTIONS`] and is what `tools/list`
//! returns: deterministic, so clients and prompt caches can rely on it.

use serde_json::{json, Value};

use super::ToolDefinition;

/// The `instructions` string of `initialize` and `server/discover`: how to route between tools.
pub const INSTRUCTIONS: &str = "Wikantik Knowledge returns raw, citation-bearing context from a wiki; it never writes answers for you. \
To answer a question, climb this ladder and stop as soon as you have enough: \
(1) assemble_bundle with the question, then branch on coverage.confidence: 'strong' means answer from the returned sections and cite them; 'partial', 'weak' or 'unknown' means refine the query or escalate. \
(2) retrieve_context to see which pages cover the topic, optionally filtered by cluster, tags, type, author or dates. \
(3) read_pages (at most 20 slugs per call) for the full text of the pages that matter. \
(4) traverse, query_nodes, get_node, search_knowledge or find_similar (learn the vocabulary with discover_schema first) to follow entities and relationships in the knowledge graph. \
(5) sparql_query (vocabulary from get_ontology) for counts, totals and exhaustive lists: never estimate those from sections. \
For the wiki's structure use list_clusters, list_tags, list_pages_by_filter and get_page_by_id; get_page_for_agent condenses one page for an agent; \
get_briefing builds standing Markdown context from pinned pages, clusters or a prompt at the start of a task; list_pages and list_metadata_values browse page metadata; \
list_stale_citations lists citations whose target changed. Pages you may not view behave exactly like pages that do not exist.";

fn tool(name: &str, title: &str, description: &str, input_schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, title, description, input_schema)
}

fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn no_input() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

fn string(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

fn required_string(description: &str) -> Value {
    json!({ "type": "string", "minLength": 1, "description": description })
}

fn strings(description: &str) -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "description": description })
}

fn provenance_filter() -> Value {
    json!({
        "type": "array",
        "items": { "type": "string", "enum": ["human-authored", "human-curated", "ai-inferred", "ai-reviewed"] },
        "description": "Keep only nodes with one of these provenances."
    })
}

fn min_tier() -> Value {
    json!({
        "type": "string",
        "enum": ["machine", "human"],
        "default": "machine",
        "description": "'machine' includes machine-inferred nodes and edges; 'human' keeps only human-authored or human-curated ones."
    })
}

fn offset() -> Value {
    json!({ "type": "integer", "minimum": 0, "default": 0, "description": "Number of results to skip." })
}

/// The 21 tool definitions, in `tools/list` order.
pub fn tools() -> Vec<ToolDefinition> {
    vec![
        tool(
            "assemble_bundle",
            "Assemble Context Bundle",
            "PRIMARY grounding tool. Give it a question in natural language and it returns a citation-bearing context bundle: \
the best-matching wiki sections (12 by default) with page slug, canonical id, heading path, text, version and a citation handle, \
plus a coverage block. Branch on coverage.confidence: 'strong' = answer from these sections and cite them; \
'partial' or 'weak' = refine the query, widen with retrieve_context, or read whole pages with read_pages; \
'unknown' = semantic search was unavailable, treat as partial. For counts, totals or 'how many / which pages' questions do not \
estimate from sections: use sparql_query (vocabulary from get_ontology). The server never writes the answer.",
            object(
                json!({
                    "query": required_string("The question or topic, in natural language."),
                    "mode": { "type": "string", "description": "Retrieval mode: hybrid (default), dense or lexical (case-insensitive). lexical never returns sections found only semantically." },
                    "k": { "type": "integer", "minimum": 1, "maximum": 50, "description": "Number of sections to return (default 12)." },
                    "budget": { "type": "integer", "minimum": 1, "description": "Optional token budget for the returned sections (estimate: UTF-16 length / 4)." }
                }),
                &["query"],
            ),
        ),
        tool(
            "get_briefing",
            "Get Context Briefing",
            "Standing context for a session or task: a token-budgeted Markdown briefing built from pinned pages (slug or canonical id), \
whole clusters (e.g. 'machine-learning/mlops': hub first, then members) and/or a prompt (which adds a context bundle). \
Use it at the start of work on a topic; for a specific question use assemble_bundle. At least one of pins, clusters or prompt is required. \
budget is clamped to 200-24000 tokens (default 6000); at most 25 pins, 10 clusters and 200 members per cluster are used.",
            object(
                json!({
                    "pins": strings("Pages to include first, by slug or canonical id."),
                    "clusters": strings("Cluster paths whose hub and members to include, e.g. 'machine-learning/mlops'."),
                    "prompt": string("A task or question; adds the best-matching sections."),
                    "budget": { "type": "number", "description": "Token budget (truncated to an integer, clamped to 200-24000; default 6000)." },
                    "scope_mode": { "type": "string", "description": "prefer (default): in-scope sections first; strict: drop sections outside the given clusters. Case-insensitive." }
                }),
                &[],
            ),
        ),
        tool(
            "retrieve_context",
            "Retrieve Context (page-level)",
            "Page-level discovery: ranks whole pages for a query (lexical + semantic) and returns for each its summary, cluster, tags, \
the best-matching chunks and related pages. Use it when assemble_bundle's coverage is partial or weak and you need to see which \
pages exist on a topic, or to filter by cluster, tags, type, author or modification date. For answering questions prefer assemble_bundle.",
            object(
                json!({
                    "query": required_string("What to look for."),
                    "maxPages": { "type": "integer", "minimum": 1, "maximum": 20, "default": 5, "description": "Pages to return (1-20)." },
                    "chunksPerPage": { "type": "integer", "minimum": 1, "maximum": 5, "default": 3, "description": "Best chunks to include per page (1-5)." },
                    "filters": {
                        "type": "object",
                        "description": "Frontmatter filters applied after ranking.",
                        "properties": {
                            "cluster": string("Cluster path; sub-clusters match too."),
                            "tags": strings("Pages must carry all of these tags."),
                            "type": string("Exact frontmatter type."),
                            "author": string("Exact author."),
                            "modifiedAfter": string("ISO-8601 instant, e.g. 2026-01-31T00:00:00Z (inclusive)."),
                            "modifiedBefore": string("ISO-8601 instant (inclusive).")
                        },
                        "additionalProperties": false
                    }
                }),
                &["query"],
            ),
        ),
        tool(
            "read_pages",
            "Read Pages",
            "Read the full raw Markdown (frontmatter included) of up to 20 pages by slug in one call, typically the pages a bundle or \
retrieve_context pointed to. Blank and duplicate slugs are dropped; a missing page comes back as {slug, content: null, error: 'not_found'} \
instead of failing the call.",
            object(
                json!({
                    "slugs": { "type": "array", "items": { "type": "string" }, "minItems": 1, "maxItems": 20, "description": "Page slugs (1-20)." }
                }),
                &["slugs"],
            ),
        ),
        tool(
            "get_page",
            "Get Page Metadata",
            "Metadata of one page by slug: summary, cluster, tags, author, last modified. Returns {exists: false} when there is no such page. \
To read the text use read_pages.",
            object(json!({ "slug": string("The page slug, e.g. 'MathematicsHub'.") }), &[]),
        ),
        tool(
            "list_pages",
            "List Pages",
            "Browse pages by metadata: cluster (sub-clusters included), tags (all must match), exact type, author and modification bounds, \
paged with limit/offset. For questions use assemble_bundle.",
            object(
                json!({
                    "cluster": string("Cluster path; sub-clusters match too."),
                    "tags": strings("Pages must carry all of these tags."),
                    "type": string("Exact frontmatter type (case-sensitive)."),
                    "author": string("Exact author."),
                    "modifiedAfter": string("ISO-8601 instant (inclusive)."),
                    "modifiedBefore": string("ISO-8601 instant (inclusive)."),
                    "limit": { "type": "integer", "minimum": 0, "maximum": 200, "default": 50, "description": "Page size (0-200)." },
                    "offset": offset()
                }),
                &[],
            ),
        ),
        tool(
            "list_metadata_values",
            "List Metadata Values",
            "Distinct values of one frontmatter field (e.g. type, tags, cluster, author) with page counts, most frequent first. \
Use it to learn the vocabulary before filtering with list_pages or list_pages_by_filter.",
            object(
                json!({
                    "field": string("The frontmatter field name."),
                    "key": { "type": "string", "description": "Deprecated alias of field.", "deprecated": true }
                }),
                &[],
            ),
        ),
        tool(
            "list_clusters",
            "List Clusters",
            "Structure: every cluster (topic area) of the wiki with its hub page, transitive article count and last update, sorted by name. \
Start here to see how the wiki is organised.",
            object(
                json!({
                    "limit": { "type": "integer", "minimum": 1, "default": 50, "description": "Page size." },
                    "offset": offset()
                }),
                &[],
            ),
        ),
        tool(
            "list_tags",
            "List Tags",
            "Structure: tags with their page counts and up to 10 example canonical ids, most used first.",
            object(
                json!({
                    "min_pages": { "type": "integer", "default": 1, "description": "Hide tags on fewer pages (values below 1 count as 1)." },
                    "limit": { "type": "integer", "minimum": 1, "default": 50, "description": "Page size." },
                    "offset": offset()
                }),
                &[],
            ),
        ),
        tool(
            "list_pages_by_filter",
            "List Pages by Filter",
            "Structure: page descriptors (canonical id, slug, title, type, clusters, tags, summary, updated) filtered by type \
(hub, article, reference, runbook, design), cluster (sub-clusters included), tags (all must match) and updated_since, sorted by \
canonical id. Use the canonical ids with get_page_by_id or get_page_for_agent.",
            object(
                json!({
                    "type": string("hub, article, reference, runbook or design (case-insensitive); anything else matches untyped pages."),
                    "cluster": string("Cluster path; sub-clusters match too."),
                    "tag": { "type": ["array", "string"], "items": { "type": "string" }, "description": "Tag or tags; pages must carry all." },
                    "updated_since": string("ISO-8601 instant (inclusive)."),
                    "limit": { "type": "integer", "default": 100, "description": "Maximum results (<= 0 means 100; capped at 1000)." },
                    "cursor": string("Reserved; ignored.")
                }),
                &[],
            ),
        ),
        tool(
            "get_page_by_id",
            "Get Page by Canonical ID",
            "Structure: the descriptor of one page by canonical id (stable across renames): slug, title, type, clusters, tags, summary, updated.",
            object(
                json!({
                    "id": string("The page's canonical id."),
                    "canonical_id": { "type": "string", "description": "Deprecated alias of id.", "deprecated": true }
                }),
                &[],
            ),
        ),
        tool(
            "get_page_for_agent",
            "Get Page for Agent",
            "One page condensed for an agent, by canonical id: key facts, heading outline, recent changes, suggested tools, runbook block, \
verification state and stale citations, plus URLs of the full body. Cheaper than reading the whole page when you need its gist.",
            object(json!({ "canonical_id": required_string("The page's canonical id.") }), &["canonical_id"]),
        ),
        tool(
            "list_stale_citations",
            "List Stale Citations",
            "Citations between pages whose cited text changed ('stale') or whose target is gone ('target_missing'). With page, only that \
page's outbound and/or inbound citations.",
            object(
                json!({
                    "page": string("Canonical id of a page (optional)."),
                    "direction": { "type": "string", "enum": ["outbound", "inbound", "both"], "default": "both", "description": "With page: which citations to list." },
                    "limit": { "type": "integer", "minimum": 1, "default": 50, "description": "Maximum results." }
                }),
                &[],
            ),
        ),
        tool(
            "discover_schema",
            "Discover Knowledge Graph Schema",
            "Knowledge graph: its node types, relationship types, status values, property keys (with sample values) and size. \
Call it before query_nodes, traverse or search_knowledge to learn the vocabulary.",
            no_input(),
        ),
        tool(
            "query_nodes",
            "Query Knowledge Graph Nodes",
            "Knowledge graph: nodes filtered by exact node_type, source_page or status, or by a case-insensitive name substring, \
optionally by provenance; ordered by name, paged with limit/offset.",
            object(
                json!({
                    "filters": {
                        "type": "object",
                        "description": "Node filters.",
                        "properties": {
                            "node_type": string("Exact node type (see discover_schema)."),
                            "source_page": string("Exact slug of the page the node comes from."),
                            "name": string("Case-insensitive substring of the node name."),
                            "status": string("Exact value of the node's status property.")
                        }
                    },
                    "provenance_filter": provenance_filter(),
                    "limit": { "type": "integer", "minimum": 1, "default": 50, "description": "Page size." },
                    "offset": offset()
                }),
                &[],
            ),
        ),
        tool(
            "get_node",
            "Get Knowledge Graph Node",
            "Knowledge graph: one node, by name (or id), with its outbound and inbound edges.",
            object(json!({ "node": required_string("Node name or id.") }), &["node"]),
        ),
        tool(
            "traverse",
            "Traverse Knowledge Graph",
            "Knowledge graph: breadth-first neighbourhood of a node over the co-mention graph (two nodes are linked when the same \
section mentions both; the weight is the number of such sections), up to max_depth hops.",
            object(
                json!({
                    "start_node": required_string("Node name or id to start from."),
                    "max_depth": { "type": "integer", "minimum": 1, "maximum": 5, "default": 2, "description": "Hops to follow (1-5)." },
                    "min_shared_chunks": { "type": "integer", "default": 1, "description": "Minimum shared sections for an edge (values below 1 count as 1)." },
                    "min_tier": min_tier()
                }),
                &["start_node"],
            ),
        ),
        tool(
            "search_knowledge",
            "Search Knowledge Graph",
            "Knowledge graph: nodes whose name or properties contain the query (case-insensitive substring). Searches graph nodes only, \
not page text: for content use assemble_bundle.",
            object(
                json!({
                    "query": required_string("Text to find in node names and properties."),
                    "provenance_filter": provenance_filter(),
                    "limit": { "type": "integer", "minimum": 1, "default": 20, "description": "Maximum results." },
                    "min_tier": min_tier()
                }),
                &["query"],
            ),
        ),
        tool(
            "find_similar",
            "Find Similar Nodes",
            "Knowledge graph: the nodes most similar to a node, by cosine similarity of the centroids of the sections that mention them.",
            object(
                json!({
                    "node": required_string("Node name."),
                    "limit": { "type": "integer", "minimum": 1, "default": 10, "description": "Maximum results." }
                }),
                &["node"],
            ),
        ),
        tool(
            "get_ontology",
            "Get Ontology",
            "The RDF vocabulary (classes, object properties, concept schemes) behind sparql_query. Read it before writing SPARQL.",
            no_input(),
        ),
        tool(
            "sparql_query",
            "SPARQL Query",
            "Exact answers over the wiki's RDF graph with SPARQL 1.1 (SELECT/ASK subset, RDFS entailment applied, LIMIT at most 10000). \
Use it for counts, totals, exhaustive lists and 'how many / which pages' questions that sections cannot answer reliably, e.g. when \
assemble_bundle's coverage is weak or partial for an aggregate question. Vocabulary: get_ontology. format 'compact' returns a JSON \
array of rows; 'standard' returns W3C SPARQL results JSON.",
            object(
                json!({
                    "query": required_string("A SPARQL 1.1 query (no UPDATE, no SERVICE)."),
                    "format": { "type": "string", "enum": ["standard", "compact"], "default": "standard", "description": "Result format." }
                }),
                &["query"],
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::unsupported_keywords;

    #[test]
    fn twenty_one_unique_tools_with_well_formed_schemas() {
        let tools = tools();
        assert_eq!(tools.len(), 21);
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 21);
        for t in &tools {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert!(t.input_schema["properties"].is_object(), "{}", t.name);
            assert!(unsupported_keywords(&t.input_schema).is_empty(), "{}: {:?}", t.name, unsupported_keywords(&t.input_schema));
            assert!(!t.title.is_empty() && t.description.len() > 40, "{}", t.name);
            // Tool names are header-safe, so Mcp-Name never needs the base64 sentinel.
            assert!(t.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{}", t.name);
            // Every required property is declared.
            if let Some(required) = t.input_schema["required"].as_array() {
                for r in required {
                    assert!(t.input_schema["properties"].get(r.as_str().unwrap()).is_some(), "{}: {r}", t.name);
                }
            }
        }
    }

    #[test]
    fn descriptions_route_like_the_reference() {
        let tools = tools();
        let get = |n: &str| tools.iter().find(|t| t.name == n).unwrap();
        let bundle = &get("assemble_bundle").description;
        assert!(bundle.contains("PRIMARY") && bundle.contains("coverage") && bundle.contains("sparql_query") && bundle.contains("get_ontology"));
        assert!(get("sparql_query").description.contains("counts"));
        assert!(INSTRUCTIONS.contains("assemble_bundle") && INSTRUCTIONS.contains("coverage.confidence"));
        for t in &tools {
            assert!(INSTRUCTIONS.contains(t.name.as_str()), "instructions do not route to {}", t.name);
        }
        let ladder: Vec<usize> = ["assemble_bundle", "retrieve_context", "read_pages", "traverse", "sparql_query"]
            .iter()
            .map(|n| INSTRUCTIONS.find(n).unwrap())
            .collect();
        assert!(ladder.windows(2).all(|w| w[0] < w[1]), "ladder order");
    }

    #[test]
    fn reference_limits_are_in_the_schemas() {
        let tools = tools();
        let schema = |n: &str| tools.iter().find(|t| t.name == n).unwrap().input_schema.clone();
        let slugs = &schema("read_pages")["properties"]["slugs"];
        assert_eq!((slugs["minItems"].as_u64(), slugs["maxItems"].as_u64()), (Some(1), Some(20)));
        let rc = schema("retrieve_context");
        assert_eq!(rc["properties"]["maxPages"]["default"], 5);
        assert_eq!(rc["properties"]["maxPages"]["maximum"], 20);
        assert_eq!(rc["properties"]["chunksPerPage"]["maximum"], 5);
        assert_eq!(schema("list_pages")["properties"]["limit"]["maximum"], 200);
        assert_eq!(schema("list_pages_by_filter")["properties"]["limit"]["default"], 100);
        assert_eq!(schema("sparql_query")["properties"]["format"]["default"], "standard");
        assert_eq!(schema("traverse")["properties"]["min_tier"]["enum"], json!(["machine", "human"]));
        assert_eq!(schema("get_briefing")["properties"]["budget"]["type"], "number");
        assert_eq!(schema("get_node")["required"], json!(["node"]));
    }
}
