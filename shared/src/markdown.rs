//! Small Markdown helpers shared by the markup scanners (`acl`, `links`, `citation`).
//!
//! * [`code_ranges`] finds the byte ranges of Markdown *code* — inline code spans, fenced code
//!   blocks and indented code blocks — with a real CommonMark parser (pulldown-cmark), so the
//!   ACL scanner can skip `[{ALLOW …}]` examples shown as code, exactly as the reference does
//!   with its bare CommonMark parse (REFERENCE §4.5).
//! * [`strip_frontmatter`] / [`split_frontmatter`] separate a leading YAML frontmatter block
//!   from the body using the reference's framing rule (REFERENCE §4.1): the block starts at
//!   offset 0 with a `---` line and ends at the next line that is exactly `---`.
//!
//! Everything here is total: any `&str` is accepted and nothing panics.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag};

/// Byte ranges `[start, end)` of every code span, fenced code block and indented code block
/// in `text`, in document order. Ranges of blocks include their fences; ranges of code spans
/// include their backticks. Nested structure (code inside lists, block quotes, …) is found.
///
/// The text is parsed as plain CommonMark (no extensions), which is what the reference uses to
/// decide whether an ACL directive is "inside code".
pub fn code_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Code(_) | Event::Start(Tag::CodeBlock(_)) => ranges.push(range),
            _ => {}
        }
    }
    ranges
}

/// True when byte `offset` lies inside one of `ranges` (as returned by [`code_ranges`]).
pub fn is_inside(ranges: &[Range<usize>], offset: usize) -> bool {
    ranges.iter().any(|r| r.contains(&offset))
}

/// Splits `text` into `(frontmatter, body)`.
///
/// A frontmatter block exists only when `text` starts at offset 0 with a line `---` (followed by
/// `\n` or `\r\n`) and a later line consists of exactly `---` (trailing spaces, tabs and a `\r`
/// are tolerated). The returned frontmatter is the YAML between the two fences; the body is
/// everything after the closing fence line. Without a complete block the whole text is the
/// body and the frontmatter is `None`.
pub fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
    let after_open = if let Some(rest) = text.strip_prefix("---\n") {
        rest
    } else if let Some(rest) = text.strip_prefix("---\r\n") {
        rest
    } else {
        return (None, text);
    };
    let yaml_start = text.len() - after_open.len();
    let mut line_start = yaml_start;
    while line_start <= text.len() {
        let rest = text.get(line_start..).unwrap_or("");
        let (line, next) = match rest.find('\n') {
            Some(nl) => (&rest[..nl], Some(line_start + nl + 1)),
            None => (rest, None),
        };
        if line.trim_end_matches([' ', '\t', '\r']) == "---" {
            let yaml = text.get(yaml_start..line_start).unwrap_or("");
            let body = match next {
                Some(n) => text.get(n..).unwrap_or(""),
                None => "",
            };
            return (Some(yaml), body);
        }
        match next {
            Some(n) => line_start = n,
            None => break,
        }
    }
    (None, text)
}

/// The body of `text` without its frontmatter block (see [`split_frontmatter`]).
pub fn strip_frontmatter(text: &str) -> &str {
    split_frontmatter(text).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered<'a>(text: &'a str, ranges: &[Range<usize>]) -> Vec<&'a str> {
        ranges.iter().filter_map(|r| text.get(r.clone())).collect()
    }

    #[test]
    fn finds_code_spans_and_blocks() {
        let text = "intro `span` text\n\n```rust\nfenced\n```\n\n    indented\n\npara ``two `ticks` here``\n";
        let ranges = code_ranges(text);
        let got = covered(text, &ranges);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], "`span`");
        assert!(got[1].starts_with("```rust") && got[1].contains("fenced"));
        assert!(got[2].contains("indented"));
        assert_eq!(got[3], "``two `ticks` here``");
    }

    #[test]
    fn code_nested_in_lists_and_quotes() {
        let text = "- item with `code`\n\n> quoted\n>\n> ```\n> block\n> ```\n";
        let ranges = code_ranges(text);
        let got = covered(text, &ranges);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], "`code`");
        assert!(got[1].contains("block"));
    }

    #[test]
    fn unclosed_backtick_is_not_code() {
        let text = "a ` b [{ALLOW view Admin}]";
        assert!(code_ranges(text).is_empty());
        assert!(!is_inside(&[], 3));
    }

    #[test]
    fn frontmatter_split() {
        let (fm, body) = split_frontmatter("---\ntitle: X\n---\n# Body\n");
        assert_eq!(fm, Some("title: X\n"));
        assert_eq!(body, "# Body\n");

        let (fm, body) = split_frontmatter("---\r\na: 1\r\n---\r\nrest");
        assert_eq!(fm, Some("a: 1\r\n"));
        assert_eq!(body, "rest");

        // Closing fence at end of file without a newline.
        assert_eq!(split_frontmatter("---\na: 1\n---"), (Some("a: 1\n"), ""));
        // Empty block.
        assert_eq!(split_frontmatter("---\n---\nbody"), (Some(""), "body"));
        // Not at offset 0, unclosed, or not a fence line: no frontmatter.
        assert_eq!(split_frontmatter(" ---\na\n---\n"), (None, " ---\na\n---\n"));
        assert_eq!(split_frontmatter("---\na: 1\n"), (None, "---\na: 1\n"));
        assert_eq!(split_frontmatter("----\na\n---\n"), (None, "----\na\n---\n"));
        assert_eq!(split_frontmatter("---"), (None, "---"));
        assert_eq!(strip_frontmatter("plain"), "plain");
        assert_eq!(strip_frontmatter(""), "");
    }
}
