//! The `briefing` and `ground` prompts ([`wikantik_mcp::prompts`]) over the index, gated like
//! the tools: `briefing` is the `get_briefing` tool with the prompt's string arguments, and
//! `ground` renders the context bundle of a question for an agent to answer from.

use std::collections::BTreeMap;

use serde_json::json;

use super::{retrieval, KnowledgeTools};
use wikantik_access::access::Caller;
use crate::bundle::{self, Bundle, BundleRequest};
use crate::coverage::Confidence;
use wikantik_format::error::{Error, Result};
use wikantik_mcp::prompts::{BRIEFING, GROUND};
use wikantik_mcp::resources::page_uri;
use wikantik_mcp::{PromptReply, ToolOutcome};
use crate::reader::ShardStore;

/// Render prompt `name` with checked arguments.
pub(super) async fn get<S: ShardStore>(tools: &KnowledgeTools<'_, S>, name: &str, args: &BTreeMap<String, String>, caller: &Caller) -> Result<PromptReply> {
    match name {
        BRIEFING => briefing(tools, args, caller).await,
        GROUND => ground(tools, args, caller).await,
        other => Err(Error::Invalid(format!("unknown prompt: {other}"))),
    }
}

/// A comma-separated list argument (slugs may hold spaces, so only commas and line breaks
/// separate items).
fn items(args: &BTreeMap<String, String>, name: &str) -> Vec<String> {
    args.get(name)
        .map(|v| v.split([',', '\n']).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

async fn briefing<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &BTreeMap<String, String>, caller: &Caller) -> Result<PromptReply> {
    let tool_args = json!({ "pins": items(args, "pins"), "clusters": items(args, "clusters"), "prompt": args.get("prompt") });
    match retrieval::get_briefing(tools, &tool_args, caller).await? {
        ToolOutcome::Markdown(text) => Ok(PromptReply { description: "Wiki context briefing".into(), text }),
        _ => Err(Error::Invalid("the briefing did not render as Markdown".into())),
    }
}

async fn ground<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &BTreeMap<String, String>, caller: &Caller) -> Result<PromptReply> {
    let question = args.get("question").cloned().ok_or_else(|| Error::Invalid("the question argument is required".into()))?;
    let request = BundleRequest { query: question, ..BundleRequest::default() };
    let bundle = bundle::assemble_bundle(tools.reader, &request, tools.bundle, caller).await?;
    Ok(PromptReply { description: format!("Wiki context for: {}", bundle.query), text: render_ground(&bundle) })
}

/// What to do with the sections, by coverage confidence (the wiki-context skill's branching).
fn guidance(confidence: Confidence) -> &'static str {
    match confidence {
        Confidence::Strong => "Coverage is **strong**: answer from these sections. A section that does not actually address the question is still not grounding.",
        Confidence::Partial => "Coverage is **partial**: the sections are related but may not answer the question. Check them; where they fall short, escalate (below) before answering.",
        Confidence::Weak => "Coverage is **weak**: little or nothing relevant was found. Do not claim grounding from these sections: rephrase with the wiki's own terms and escalate (below).",
        Confidence::Unknown => "Coverage is **unknown**: semantic similarity was unavailable, so nothing vouches for relevance. Check every section really answers before using it, and escalate (below) if none does.",
    }
}

/// The bundle as Markdown: numbered sections headed by their heading path, each with the
/// `slug @ version` to cite and its resource URI, then how to answer and when to escalate.
fn render_ground(bundle: &Bundle) -> String {
    let c = &bundle.coverage;
    let mut out = String::from("# Grounding context from the wiki\n\n");
    out.push_str(&format!("Question: {}\n\n", bundle.query));
    out.push_str(&format!(
        "_Coverage: {} \u{2014} {} sections across {} pages._\n",
        c.confidence.as_str(),
        c.section_count,
        c.distinct_page_count
    ));
    if bundle.sections.is_empty() {
        out.push_str("\nNo section of the wiki you may view matched this question.\n");
    }
    for (n, s) in bundle.sections.iter().enumerate() {
        let path: Vec<&str> = std::iter::once(s.slug.as_str()).chain(s.heading_path.iter().map(String::as_str)).collect();
        out.push_str(&format!(
            "\n## {}. {}\n\nCite as `{} @ {}` \u{2014} whole page: `{}`\n\n{}\n",
            n + 1,
            path.join(" \u{203a} "),
            s.slug,
            s.citation.version,
            page_uri(&s.slug),
            s.text
        ));
    }
    out.push_str("\n## How to answer\n\n");
    out.push_str(&format!("- {}\n", guidance(c.confidence)));
    out.push_str(
        "- State as documented only what a section above says, and cite each such claim right after it as `slug @ version` \
         (the citation under the section's heading). Never claim grounding without a retrieved section.\n\
         - To escalate, climb only as far as needed: `retrieve_context` (which pages cover the topic), `read_pages` or \
         `resources/read` of the page URIs (full text, at most 20 pages per `read_pages` call), `traverse` / `query_nodes` \
         (related entities), `sparql_query` (counts and exhaustive lists).\n\
         - If nothing retrieved supports an answer, say that the wiki does not document it; label anything from general \
         knowledge as such.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{BundleSection, Citation};
    use crate::coverage::Coverage;

    fn bundle(sections: Vec<BundleSection>, confidence: Confidence) -> Bundle {
        let coverage = Coverage { section_count: sections.len(), distinct_page_count: sections.len(), top_similarity: 0.6, confidence };
        Bundle { query: "how do I publish?".into(), sections, coverage, index_build: "b1".into() }
    }

    fn section(slug: &str, path: &[&str], version: u32, text: &str) -> BundleSection {
        let heading_path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        BundleSection {
            canonical_id: format!("ID-{slug}"),
            slug: slug.into(),
            heading_path: heading_path.clone(),
            text: text.into(),
            score: 0.7,
            citation: Citation { canonical_id: format!("ID-{slug}"), version, heading_path, span: text.into(), span_sha256: String::new() },
        }
    }

    #[test]
    fn sections_carry_their_citation_and_uri() {
        let text = render_ground(&bundle(vec![section("Runbooks Hub", &["Runbooks", "Publish"], 3, "Run the publisher.")], Confidence::Strong));
        assert!(text.starts_with("# Grounding context from the wiki\n\nQuestion: how do I publish?\n"), "{text}");
        assert!(text.contains("_Coverage: strong \u{2014} 1 sections across 1 pages._"), "{text}");
        assert!(text.contains("## 1. Runbooks Hub \u{203a} Runbooks \u{203a} Publish\n\nCite as `Runbooks Hub @ 3` \u{2014} whole page: `wiki://page/Runbooks%20Hub`\n\nRun the publisher.\n"), "{text}");
        assert!(text.contains("Coverage is **strong**"), "{text}");
    }

    #[test]
    fn weak_and_unknown_coverage_ask_to_escalate() {
        for confidence in [Confidence::Weak, Confidence::Unknown, Confidence::Partial] {
            let text = render_ground(&bundle(Vec::new(), confidence));
            assert!(text.contains(&format!("Coverage is **{}**", confidence.as_str())), "{text}");
            assert!(text.contains("escalate") && text.contains("retrieve_context"), "{text}");
            assert!(text.contains("No section of the wiki you may view matched this question."), "{text}");
        }
    }

    #[test]
    fn list_arguments_split_on_commas_only() {
        let args = BTreeMap::from([("pins".to_string(), "Architecture Hub, Q&A,,\nShardFormat ".to_string())]);
        assert_eq!(items(&args, "pins"), ["Architecture Hub", "Q&A", "ShardFormat"]);
        assert!(items(&args, "clusters").is_empty());
    }
}
