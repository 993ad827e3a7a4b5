//! HTML input reduced to headed Markdown-like text with `lol_html`.
//!
//! Two uses (CONTRACT §1): whole `.html` pages (a wiki or docs site exported as HTML) and HTML
//! blocks inside a Markdown body. Headings become ATX headings so the chunker sees the same
//! structure, `<pre>` becomes a fenced code block, list items become `- ` lines, table cells
//! are separated by ` | `, and `<script>`, `<style>`, `<template>`, `<noscript>` and
//! `<head>` content is dropped. Entities are decoded. The ACL scanner also uses
//! [`blank_code_elements`] to tell an HTML page's code from the rest of its raw text.

use lol_html::html_content::ContentType;
use lol_html::{element, rewrite_str, RewriteStrSettings};

use wikantik_format::error::{Error, Result};

/// The title of an exported HTML page: the text of its `<title>` or, failing that, of its
/// first `<h1>`.
pub fn html_title(html: &str) -> Option<String> {
    let mut title = String::new();
    let mut h1 = String::new();
    let mut in_title = false;
    let mut in_h1 = false;
    // A tiny scan is enough here: titles contain no markup.
    let lower = html.to_ascii_lowercase();
    if let (Some(s), Some(e)) = (lower.find("<title"), lower.find("</title>")) {
        if let Some(open_end) = lower.get(s..).and_then(|t| t.find('>')).map(|i| s + i + 1) {
            if open_end <= e {
                title = html.get(open_end..e).unwrap_or("").to_string();
                in_title = true;
            }
        }
    }
    if let (Some(s), Some(e)) = (lower.find("<h1"), lower.find("</h1>")) {
        if let Some(open_end) = lower.get(s..).and_then(|t| t.find('>')).map(|i| s + i + 1) {
            if open_end <= e {
                h1 = strip_tags(html.get(open_end..e).unwrap_or(""));
                in_h1 = true;
            }
        }
    }
    let pick = if in_title && !title.trim().is_empty() {
        title
    } else if in_h1 {
        h1
    } else {
        return None;
    };
    let text = collapse_spaces(&decode_entities(&pick));
    (!text.is_empty()).then_some(text)
}

/// Reduce an HTML document or fragment to headed text.
pub fn html_to_text(html: &str) -> Result<String> {
    let mut settings = RewriteStrSettings::new();
    for level in 1..=6usize {
        let selector = format!("h{level}");
        let marker = format!("\n\n{} ", "#".repeat(level));
        settings = settings.append_element_content_handler(element!(selector.as_str(), move |el| {
            el.before(&marker, ContentType::Html);
            el.after("\n\n", ContentType::Html);
            el.remove_and_keep_content();
            Ok(())
        }));
    }
    let settings = settings
        .append_element_content_handler(element!("script, style, template, noscript, head", |el| {
            el.remove();
            Ok(())
        }))
        .append_element_content_handler(element!("pre", |el| {
            el.before("\n\n```\n", ContentType::Html);
            el.after("\n```\n\n", ContentType::Html);
            el.remove_and_keep_content();
            Ok(())
        }))
        .append_element_content_handler(element!("p, div, section, article, header, footer, main, blockquote, ul, ol, table, details, summary, figure", |el| {
            el.before("\n\n", ContentType::Html);
            el.after("\n\n", ContentType::Html);
            el.remove_and_keep_content();
            Ok(())
        }))
        .append_element_content_handler(element!("li", |el| {
            el.before("\n- ", ContentType::Html);
            el.remove_and_keep_content();
            Ok(())
        }))
        .append_element_content_handler(element!("tr", |el| {
            el.before("\n", ContentType::Html);
            el.remove_and_keep_content();
            Ok(())
        }))
        .append_element_content_handler(element!("td, th", |el| {
            el.after(" | ", ContentType::Html);
            el.remove_and_keep_content();
            Ok(())
        }))
        .append_element_content_handler(element!("br", |el| {
            el.replace("\n", ContentType::Html);
            Ok(())
        }))
        .append_element_content_handler(element!("*", |el| {
            el.remove_and_keep_content();
            Ok(())
        }));
    let rewritten = rewrite_str(html, settings).map_err(|e| Error::Invalid(format!("cannot read HTML: {e}")))?;
    // Comments and doctype survive element handlers; strip any leftover markup.
    let text = decode_entities(&strip_tags(&rewritten));
    Ok(tidy_lines(&text))
}

/// `html` with the text inside `<code>` and `<pre>` elements (nested elements included) blanked
/// out: every character but a line break becomes a space, so byte offsets change but line
/// numbers do not. Everything else — tags, attributes, comments, other text — is kept as
/// written. The ACL scanner uses this to skip directives that an HTML page shows as code, the
/// way Markdown code is skipped (REFERENCE §4.5).
pub fn blank_code_elements(html: &str) -> Result<String> {
    use lol_html::text;
    let settings = RewriteStrSettings::new().append_element_content_handler(text!("code, pre", |chunk| {
        let blanked: String = chunk.as_str().chars().map(|c| if c == '\n' || c == '\r' { c } else { ' ' }).collect();
        chunk.replace(&blanked, ContentType::Text);
        Ok(())
    }));
    rewrite_str(html, settings).map_err(|e| Error::Invalid(format!("cannot read HTML: {e}")))
}

/// Replace every HTML block of a Markdown body by its reduced text, leaving the rest as is.
pub fn reduce_html_blocks(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
    let mut open: Option<usize> = None;
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::HtmlBlock) => open = Some(range.start),
            Event::End(TagEnd::HtmlBlock) => {
                if let Some(start) = open.take() {
                    blocks.push(start..range.end);
                }
            }
            _ => {}
        }
    }
    if blocks.is_empty() {
        return markdown.to_string();
    }
    let mut out = String::with_capacity(markdown.len());
    let mut cursor = 0;
    for block in blocks {
        out.push_str(markdown.get(cursor..block.start).unwrap_or(""));
        let source = markdown.get(block.clone()).unwrap_or("");
        match html_to_text(source) {
            Ok(text) if !text.trim().is_empty() => {
                out.push_str(text.trim());
                out.push_str("\n\n");
            }
            Ok(_) => {}
            Err(_) => out.push_str(source),
        }
        cursor = block.end;
    }
    out.push_str(markdown.get(cursor..).unwrap_or(""));
    out
}

fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("<!--") {
            match rest.find("-->") {
                Some(end) => {
                    rest = &rest[end + 3..];
                    continue;
                }
                None => break,
            }
        }
        match c {
            '<' if rest[1..].starts_with(|n: char| n.is_ascii_alphabetic() || n == '/' || n == '!') => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail.find(';').filter(|e| *e <= 10);
        let decoded = end.and_then(|e| {
            let name = &tail[1..e];
            let ch = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                "copy" => Some('©'),
                _ if name.starts_with("#x") || name.starts_with("#X") => {
                    u32::from_str_radix(&name[2..], 16).ok().and_then(char::from_u32)
                }
                _ if name.starts_with('#') => name[1..].parse::<u32>().ok().and_then(char::from_u32),
                _ => None,
            }?;
            Some((ch, e + 1))
        });
        match decoded {
            Some((ch, len)) => {
                out.push(ch);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn collapse_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Trim trailing spaces, collapse runs of blank lines, keep code fences' content as is.
fn tidy_lines(s: &str) -> String {
    let mut out = String::new();
    let mut blank_run = 0;
    let mut in_code = false;
    for line in s.lines() {
        let trimmed_end = line.trim_end();
        if trimmed_end.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        let line = if in_code { trimmed_end } else { trimmed_end.trim_start() };
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_paragraphs_code_lists_and_entities() {
        let html = "<!doctype html><html><head><title>Legacy &amp; Old</title><style>p{}</style></head>\
            <body><h1>Legacy Export</h1><p>First &lt;para&gt; &#8212; here.</p>\
            <h2>Setup</h2><ul><li>one</li><li>two</li></ul><pre>let x = 1;\nlet y = 2;</pre>\
            <script>alert(1)</script><table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table></body></html>";
        let text = html_to_text(html).unwrap();
        assert!(text.starts_with("# Legacy Export\n"), "{text}");
        assert!(text.contains("First <para> — here."), "{text}");
        assert!(text.contains("## Setup"), "{text}");
        assert!(text.contains("- one\n- two"), "{text}");
        assert!(text.contains("```\nlet x = 1;\nlet y = 2;\n```"), "{text}");
        assert!(!text.contains("alert"), "{text}");
        assert!(!text.contains("p{}"), "{text}");
        assert!(text.contains("k | v |"), "{text}");
        assert_eq!(html_title(html).as_deref(), Some("Legacy & Old"));
    }

    #[test]
    fn title_falls_back_to_h1() {
        assert_eq!(html_title("<h1 class=x>Only <b>H1</b></h1>").as_deref(), Some("Only H1"));
        assert_eq!(html_title("<p>none</p>"), None);
    }

    #[test]
    fn html_blocks_in_markdown_are_reduced() {
        let md = "# Page\n\nIntro.\n\n<details>\n<summary>More</summary>\n<p>Hidden &amp; found</p>\n</details>\n\nAfter.\n";
        let out = reduce_html_blocks(md);
        assert!(out.contains("Hidden & found"), "{out}");
        assert!(!out.contains("<details>"), "{out}");
        assert!(out.starts_with("# Page\n\nIntro."), "{out}");
        assert!(out.contains("After."), "{out}");
        assert_eq!(reduce_html_blocks("plain\n"), "plain\n");
    }

    #[test]
    fn code_elements_are_blanked_and_lines_kept() {
        let html = "<p>[{a}]</p>\n<pre>[{b}]\n<code>[{c}]</code>\n<b>[{d}]</b></pre>\n\
                    <!-- <code> -->[{e}]<!-- </code> -->\n<CODE class=x>[{f}]</CODE> [{g}]";
        let out = blank_code_elements(html).unwrap_or_default();
        assert_eq!(out.lines().count(), html.lines().count(), "{out}");
        for kept in ["[{a}]", "[{e}]", "[{g}]", "<!-- <code> -->"] {
            assert!(out.contains(kept), "{kept} kept: {out}");
        }
        for blanked in ["[{b}]", "[{c}]", "[{d}]", "[{f}]"] {
            assert!(!out.contains(blanked), "{blanked} blanked: {out}");
        }
        for s in ["<code>unclosed [{x}]", "<pre", "<", "&#x;<pre>&amp;</pre>"] {
            let _ = blank_code_elements(s);
        }
    }

    #[test]
    fn broken_html_does_not_panic() {
        for s in ["<", "<<>>", "<p", "&#xZZZ;", "&#99999999999;", "<!-- open", "<pre>unclosed", "&"] {
            let _ = html_to_text(s);
            let _ = html_title(s);
            let _ = reduce_html_blocks(s);
        }
    }
}
